// skills/credentials/credential_checks.h
//
// What the credential store accepts, in one place: an owner is a bare JID, "room:" and a
// room's JID, or "api:NAME"; a name is an environment-variable name ([A-Z_][A-Z0-9_]{0,63});
// a value is 1 to 8192 bytes without NUL. Each check is InvalidArgument with the rule when it
// fails, and no message quotes what was refused: a caller that swapped its arguments would
// otherwise put a secret in an error.
//
//   if (absl::Status s = CheckCredentialOwner(owner); !s.ok()) return s;
//   if (absl::Status s = CheckCredentialName(name); !s.ok()) return s;
//   if (absl::Status s = CheckCredentialValue(name, value); !s.ok()) return s;
#pragma once

#include <cstddef>
#include <string_view>

#include "absl/status/status.h"

namespace herald::skills {

// The limits the checks enforce.
inline constexpr size_t kMaxCredentialValueBytes = 8192;
inline constexpr size_t kMaxCredentialNameBytes = 64;
inline constexpr size_t kMaxCredentialOwnerBytes = 3071;  // a JID's longest

absl::Status CheckCredentialOwner(std::string_view owner);
absl::Status CheckCredentialName(std::string_view name);
// The message names `name` (already checked), never the value.
absl::Status CheckCredentialValue(std::string_view name, std::string_view value);

}  // namespace herald::skills
