#include "component/base/field_template.h"

#include <map>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace herald::base {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string Fill(std::string_view text, const std::map<std::string, std::string>& values) {
  absl::StatusOr<FieldTemplate> parsed = FieldTemplate::Parse(text);
  EXPECT_TRUE(parsed.ok()) << parsed.status();
  return parsed->Fill([&](std::string_view path) {
    auto found = values.find(std::string(path));
    return found == values.end() ? std::string("?") : found->second;
  });
}

TEST(FieldTemplateTest, FieldsAreReplacedAndTheRestIsText) {
  EXPECT_EQ(
      Fill("Build {{status}} on {{ repo.name }}!", {{"status", "passed"}, {"repo.name", "h"}}),
      "Build passed on h!");
  EXPECT_EQ(Fill("no fields {here} } {", {}), "no fields {here} } {");
  EXPECT_EQ(Fill("", {}), "");
  EXPECT_THAT(FieldTemplate::Parse("{{a}}{{b.c}}{{a}}")->fields(), ElementsAre("a", "b.c", "a"));
}

TEST(FieldTemplateTest, AValueIsNeverReadAsATemplate) {
  EXPECT_EQ(Fill("{{a}}", {{"a", "{{b}}"}, {"b", "secret"}}), "{{b}}");
}

TEST(FieldTemplateTest, WhatIsNotAFieldIsRefusedSayingWhere) {
  EXPECT_THAT(FieldTemplate::Parse("Build {{status").status().message(),
              HasSubstr("the '{{' at byte 6 is never closed"));
  EXPECT_THAT(FieldTemplate::Parse("{{}}").status().message(), HasSubstr("must name a field"));
  EXPECT_THAT(FieldTemplate::Parse("{{a b}}").status().message(), HasSubstr("'{{a b}}' at byte 0"));
  EXPECT_FALSE(FieldTemplate::Parse("{{a..b}}").ok());
  EXPECT_FALSE(FieldTemplate::Parse("{{.a}}").ok());
  EXPECT_FALSE(FieldTemplate::Parse("{{a.}}").ok());
  EXPECT_FALSE(FieldTemplate::Parse("{{system('x')}}").ok());
}

}  // namespace
}  // namespace herald::base
