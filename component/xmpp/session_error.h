// component/xmpp/session_error.h
//
// Why an XMPP session ended, as an absl::Status an operator can act on. A stream error from
// the server (RFC 6120 §4.9) or a failed negotiation becomes one status whose message is the
// log line ("the server refused the component secret (not-authorized) ..."), and which is
// marked permanent when reconnecting cannot help (a wrong secret, an unknown domain, another
// connection holding the same name, a refused password or certificate). The session stops
// on a permanent error instead of looping; the binary maps it to an exit status.
//
//   absl::Status s = StreamErrorStatus(mode, "not-authorized", text);
//   if (IsPermanent(s)) Stop(s);
//   return ExitCodeFor(s);   // 3
#pragma once

#include <string_view>

#include "absl/status/status.h"

namespace herald::xmpp {

enum class SessionMode { kComponent, kClient };

// A status for a <stream:error/> with `condition` (and the optional <text/>).
absl::Status StreamErrorStatus(SessionMode mode, std::string_view condition, std::string_view text);

// Exit statuses of the herald binary, documented in docs/operators.md.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;         // anything else permanent
inline constexpr int kExitConfig = 2;          // bad configuration
inline constexpr int kExitAuthentication = 3;  // secret or password refused
inline constexpr int kExitHostUnknown = 4;     // the server does not know the domain
inline constexpr int kExitConflict = 5;        // another connection holds the name
inline constexpr int kExitTls = 6;             // TLS required but unavailable or unverified

// Marks `status` as one that reconnecting cannot fix, ending Herald with `exit_code`.
absl::Status MakePermanent(absl::Status status, int exit_code = kExitFailure);
bool IsPermanent(const absl::Status& status);

// The exit status for a session that ended with `status` (kExitOk when it is ok).
int ExitCodeFor(const absl::Status& status);

}  // namespace herald::xmpp
