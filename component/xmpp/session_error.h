// component/xmpp/session_error.h
//
// Why an XMPP session ended, as an absl::Status an operator can act on. A stream error from
// the server (RFC 6120 §4.9) or a failed negotiation becomes one status whose message is the
// log line ("the server refused the component secret (not-authorized) ..."), and which is
// marked permanent when reconnecting cannot help (a wrong secret, an unknown domain, another
// connection holding the same name, a refused password or certificate). The session stops
// on a permanent error instead of looping (component/base/exit_code.h); the binary maps it to
// an exit status.
//
//   absl::Status s = StreamErrorStatus(mode, "not-authorized", text);
//   if (IsPermanent(s)) Stop(s);
//   return ExitCodeFor(s);   // 3
#pragma once

#include <string_view>

#include "absl/status/status.h"
#include "component/base/exit_code.h"

namespace herald::xmpp {

enum class SessionMode { kComponent, kClient };

// A status for a <stream:error/> with `condition` (and the optional <text/>).
absl::Status StreamErrorStatus(SessionMode mode, std::string_view condition, std::string_view text);

}  // namespace herald::xmpp
