#include "skills/credentials/credential_checks.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "component/base/absl_string_view.h"

namespace herald::skills {
namespace {

constexpr size_t kMaxApiNameBytes = 128;

bool IsUpper(char c) { return c >= 'A' && c <= 'Z'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

absl::Status CheckCredentialOwner(std::string_view owner) {
  constexpr char kRule[] =
      "credential owner must be a bare JID (\"alice@localhost\"), \"room:\" and a room's JID, "
      "or \"api:NAME\"";
  if (owner.empty() || owner.size() > kMaxCredentialOwnerBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(kRule, " of 1 to ", kMaxCredentialOwnerBytes, " bytes"));
  }
  if (owner.substr(0, 4) == "api:") {
    std::string_view api = owner.substr(4);
    const bool valid = !api.empty() && api.size() <= kMaxApiNameBytes &&
                       std::all_of(api.begin(), api.end(), [](char c) {
                         return IsUpper(c) || IsDigit(c) || (c >= 'a' && c <= 'z') || c == '.' ||
                                c == '_' || c == '-';
                       });
    if (!valid) {
      return absl::InvalidArgumentError(absl::StrCat(kRule, "; NAME is 1 to ", kMaxApiNameBytes,
                                                     " letters, digits, '.', '_' or '-'"));
    }
    return absl::OkStatus();
  }
  const size_t at = owner.find('@');
  const bool valid =
      owner.find('/') == std::string_view::npos &&
      std::none_of(owner.begin(), owner.end(),
                   [](char c) { return static_cast<unsigned char>(c) <= 0x20 || c == 0x7f; }) &&
      (at == std::string_view::npos ||
       (at > 0 && at + 1 < owner.size() && owner.find('@', at + 1) == std::string_view::npos));
  if (!valid) {
    return absl::InvalidArgumentError(
        absl::StrCat(kRule, " (no resource, spaces or control characters)"));
  }
  return absl::OkStatus();
}

absl::Status CheckCredentialName(std::string_view name) {
  const bool valid = !name.empty() && name.size() <= kMaxCredentialNameBytes &&
                     (IsUpper(name[0]) || name[0] == '_') &&
                     std::all_of(name.begin(), name.end(),
                                 [](char c) { return IsUpper(c) || IsDigit(c) || c == '_'; });
  if (!valid) {
    return absl::InvalidArgumentError(
        "credential name must be an environment-variable name: [A-Z_][A-Z0-9_]{0,63}");
  }
  return absl::OkStatus();
}

absl::Status CheckCredentialValue(std::string_view name, std::string_view value) {
  if (value.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("credential ", AbslView(name), " is empty"));
  }
  if (value.size() > kMaxCredentialValueBytes) {
    return absl::InvalidArgumentError(absl::StrCat("credential ", AbslView(name), " is ",
                                                   value.size(), " bytes; at most ",
                                                   kMaxCredentialValueBytes, " are stored"));
  }
  if (value.find('\0') != std::string_view::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("credential ", AbslView(name), " contains a NUL byte"));
  }
  return absl::OkStatus();
}

}  // namespace herald::skills
