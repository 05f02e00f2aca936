#include "providers/http/http_syntax.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/string_view.h"
#include "component/base/absl_string_view.h"

namespace herald::providers::http_internal {
namespace {

bool IsTokenChar(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) ||
         std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

}  // namespace

bool IsToken(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), IsTokenChar);
}

bool IsSafeHeaderValue(std::string_view text) {
  return text.find_first_of(std::string_view("\r\n\0", 3)) == std::string_view::npos;
}

std::string MediaType(std::string_view content_type) {
  absl::string_view type = AbslView(content_type);
  type = type.substr(0, type.find(';'));
  return absl::AsciiStrToLower(absl::StripAsciiWhitespace(type));
}

bool IsAcceptedMediaType(std::string_view type, const std::vector<std::string>& accepted) {
  for (const std::string& pattern : accepted) {
    if (pattern == type) return true;
    if (absl::EndsWith(pattern, "/*") && type.size() > pattern.size() - 1 &&
        type.compare(0, pattern.size() - 1, pattern, 0, pattern.size() - 1) == 0) {
      return true;
    }
  }
  return false;
}

}  // namespace herald::providers::http_internal
