#include "control/paging.h"

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "component/base/absl_string_view.h"

namespace herald::control {

absl::StatusOr<int> PageSize(int requested) {
  if (requested == 0) return kDefaultPageSize;
  if (requested < 0 || requested > kMaxPageSize) {
    return absl::InvalidArgumentError(absl::StrCat("page_size must be between 1 and ", kMaxPageSize,
                                                   " (0 = ", kDefaultPageSize, "); got ",
                                                   requested));
  }
  return requested;
}

std::string EncodePageToken(std::string_view list, std::string_view cursor) {
  return absl::WebSafeBase64Escape(absl::StrCat(AbslView(list), "|", AbslView(cursor)));
}

absl::StatusOr<std::string> DecodePageToken(std::string_view list, std::string_view token) {
  if (token.empty()) return std::string();
  std::string decoded;
  const std::string prefix = absl::StrCat(AbslView(list), "|");
  if (!absl::WebSafeBase64Unescape(AbslView(token), &decoded) ||
      decoded.compare(0, prefix.size(), prefix) != 0) {
    return absl::InvalidArgumentError(
        "page_token is not one this server gave for this list; start again without it");
  }
  return decoded.substr(prefix.size());
}

}  // namespace herald::control
