// component/base/exit_code.h
//
// The herald binary's exit statuses (docs/operators.md), and the mark a module puts on an
// error that retrying cannot fix, with the exit status it should end Herald with. The XMPP
// session marks a refused secret permanent with kExitAuthentication; main() maps whatever
// ended the session to the process's exit status without parsing messages.
//
//   return MakePermanent(absl::PermissionDeniedError("the server refused the secret"),
//                        kExitAuthentication);
//   if (IsPermanent(status)) Stop(status);
//   return ExitCodeFor(status);   // 3
#pragma once

#include "absl/status/status.h"

namespace herald::base {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;         // anything else permanent
inline constexpr int kExitConfig = 2;          // bad configuration
inline constexpr int kExitAuthentication = 3;  // secret or password refused
inline constexpr int kExitHostUnknown = 4;     // the server does not know the domain
inline constexpr int kExitConflict = 5;        // another connection holds the name
inline constexpr int kExitTls = 6;             // TLS required but unavailable or unverified

// Marks `status` as one that retrying cannot fix, ending Herald with `exit_code`.
absl::Status MakePermanent(absl::Status status, int exit_code = kExitFailure);
bool IsPermanent(const absl::Status& status);

// The exit status for a run that ended with `status` (kExitOk when it is ok).
int ExitCodeFor(const absl::Status& status);

}  // namespace herald::base
