// skills/tool_search/url_template.cc
#include "skills/tool_search/url_template.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "component/base/absl_string_view.h"

namespace herald::skills {
namespace {

bool IsArgumentName(std::string_view name) {
  return !name.empty() && name.size() <= 128 && std::all_of(name.begin(), name.end(), [](char c) {
    return absl::ascii_isalnum(c) || c == '_' || c == '-' || c == '.';
  });
}

bool IsCredentialName(std::string_view name) {
  return !name.empty() && name.size() <= 128 && !absl::ascii_isdigit(name[0]) &&
         std::all_of(name.begin(), name.end(), [](char c) {
           return absl::ascii_isupper(c) || absl::ascii_isdigit(c) || c == '_';
         });
}

}  // namespace

absl::StatusOr<std::vector<TemplatePart>> ParseUrlTemplate(std::string_view text) {
  std::vector<TemplatePart> parts;
  std::string literal;
  size_t i = 0;
  while (i < text.size()) {
    const bool secret = text.compare(i, 2, "${") == 0;
    if (text[i] == '}') {
      return absl::InvalidArgumentError(absl::StrCat("a '}' at byte ", i, " closes nothing"));
    }
    if (text[i] != '{' && !secret) {
      literal.push_back(text[i++]);
      continue;
    }
    const size_t open = i + (secret ? 2 : 1);
    const size_t close = text.find('}', open);
    if (close == std::string_view::npos) {
      return absl::InvalidArgumentError(absl::StrCat("the '{' at byte ", i, " is never closed"));
    }
    const std::string_view name = text.substr(open, close - open);
    if (secret ? !IsCredentialName(name) : !IsArgumentName(name)) {
      return absl::InvalidArgumentError(
          absl::StrCat(secret ? "${...} must name a credential like ${API_KEY}"
                              : "{...} must name an argument (letters, digits, '_', '-', '.')",
                       "; got '", AbslView(text.substr(i, close + 1 - i)), "'"));
    }
    if (!literal.empty()) parts.push_back({.text = std::move(literal)});
    literal.clear();
    parts.push_back({.kind = secret ? TemplatePart::Kind::kSecret : TemplatePart::Kind::kArgument,
                     .text = std::string(name)});
    i = close + 1;
  }
  if (!literal.empty()) parts.push_back({.text = std::move(literal)});
  return parts;
}

std::string PercentEncode(std::string_view value) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(value.size());
  for (const char c : value) {
    if (absl::ascii_isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
      out.push_back(c);
      continue;
    }
    const auto byte = static_cast<unsigned char>(c);
    out.push_back('%');
    out.push_back(kHex[byte >> 4]);
    out.push_back(kHex[byte & 0xF]);
  }
  return out;
}

}  // namespace herald::skills
