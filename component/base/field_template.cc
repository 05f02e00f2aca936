// component/base/field_template.cc
#include "component/base/field_template.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace herald::base {
namespace {

bool IsFieldPath(std::string_view path) {
  if (path.empty() || path.size() > 256 || path.front() == '.' || path.back() == '.') return false;
  char previous = 0;
  for (const char c : path) {
    const bool ok = absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' ||
                    (c == '.' && previous != '.');
    if (!ok) return false;
    previous = c;
  }
  return true;
}

}  // namespace

absl::StatusOr<FieldTemplate> FieldTemplate::Parse(std::string_view text) {
  FieldTemplate parsed;
  std::string literal;
  size_t i = 0;
  while (i < text.size()) {
    if (text.compare(i, 2, "{{") != 0) {
      literal.push_back(text[i++]);
      continue;
    }
    const size_t close = text.find("}}", i + 2);
    if (close == std::string_view::npos) {
      return absl::InvalidArgumentError(absl::StrCat("the '{{' at byte ", i, " is never closed"));
    }
    std::string path(text.substr(i + 2, close - i - 2));
    const std::string trimmed(absl::StripAsciiWhitespace(path));
    if (!IsFieldPath(trimmed)) {
      return absl::InvalidArgumentError(
          absl::StrCat("'{{", path, "}}' at byte ", i,
                       " must name a field: letters, digits, '_' and '-', joined by '.'"));
    }
    if (!literal.empty()) parsed.parts_.push_back({.text = std::move(literal)});
    literal.clear();
    parsed.parts_.push_back({.field = true, .text = trimmed});
    i = close + 2;
  }
  if (!literal.empty()) parsed.parts_.push_back({.text = std::move(literal)});
  return parsed;
}

std::string FieldTemplate::Fill(
    const std::function<std::string(std::string_view path)>& lookup) const {
  std::string out;
  for (const Part& part : parts_) out += part.field ? lookup(part.text) : part.text;
  return out;
}

std::vector<std::string> FieldTemplate::fields() const {
  std::vector<std::string> names;
  for (const Part& part : parts_) {
    if (part.field) names.push_back(part.text);
  }
  return names;
}

}  // namespace herald::base
