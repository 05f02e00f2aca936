// component/base/field_template.h
//
// The text templates an operator writes for messages Herald builds from someone else's data
// (SPEC §11 `[[webhooks.in]] template`): `{{field}}` is replaced by a field of the data,
// `{{a.b}}` by a nested one, and nothing else is evaluated — no expressions, no loops, no
// code — so a template cannot be made to do more than substitute.
//
//   absl::StatusOr<FieldTemplate> t = FieldTemplate::Parse("Build {{status}} on {{repo.name}}");
//   std::string text = t->Fill([&](std::string_view path) { return Lookup(body, path); });
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace herald::base {

class FieldTemplate {
 public:
  // InvalidArgument, saying where, for a "{{" never closed, an empty field, or a field that is
  // not names of letters, digits, '_' and '-' joined by '.'. A lone '{' or '}' is text.
  static absl::StatusOr<FieldTemplate> Parse(std::string_view text);

  // The text with each field replaced by what `lookup` says of its path ("repo.name").
  std::string Fill(const std::function<std::string(std::string_view path)>& lookup) const;

  // The fields named, in order (repeats included).
  std::vector<std::string> fields() const;

 private:
  struct Part {
    bool field = false;
    std::string text;  // literal text, or the field's path
  };
  std::vector<Part> parts_;
};

}  // namespace herald::base
