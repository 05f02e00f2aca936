#include "skills/json_schema.h"

#include <string>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace herald::skills {
namespace {

using Json = nlohmann::json;

// The message of validating `value`, or "ok".
std::string Verdict(const Json& schema, const Json& value) {
  absl::Status status = ValidateAgainstSchema(schema, value);
  if (status.ok()) return "ok";
  EXPECT_TRUE(absl::IsInvalidArgument(status)) << status;
  return std::string(status.message());
}

Json Object(Json properties) { return {{"type", "object"}, {"properties", std::move(properties)}}; }

TEST(JsonSchemaTest, NamesTheArgumentTheExpectedTypeAndTheTypeGot) {
  const Json schema = Object({{"timezone", {{"type", "string"}}}});
  EXPECT_EQ(Verdict(schema, {{"timezone", "UTC"}}), "ok");
  EXPECT_EQ(Verdict(schema, {{"timezone", 5}}),
            "argument 'timezone': expected string, got integer");
  EXPECT_EQ(Verdict(schema, Json::array()), "arguments: expected object, got array");
}

TEST(JsonSchemaTest, ChecksEveryType) {
  const Json values = {{"object", Json::object()},
                       {"array", Json::array()},
                       {"string", "s"},
                       {"integer", 3},
                       {"number", 2.5},
                       {"boolean", true},
                       {"null", nullptr}};
  for (const auto& [type, good] : values.items()) {
    EXPECT_EQ(Verdict({{"type", type}}, good), "ok") << type;
    for (const auto& [other, bad] : values.items()) {
      if (other == type || (type == "number" && other == "integer")) continue;
      EXPECT_EQ(Verdict({{"type", type}}, bad), "arguments: expected " + type + ", got " + other);
    }
  }
}

TEST(JsonSchemaTest, TakesAWholeFloatAsAnIntegerAndAnIntegerAsANumber) {
  EXPECT_EQ(Verdict({{"type", "integer"}}, 3.0), "ok");
  EXPECT_EQ(Verdict({{"type", "integer"}}, 3.5), "arguments: expected integer, got number");
  EXPECT_EQ(Verdict({{"type", "number"}}, 3), "ok");
  EXPECT_EQ(Verdict({{"type", "integer"}}, Json::parse("18446744073709551615")), "ok");
}

TEST(JsonSchemaTest, AcceptsAnyTypeOfATypeArray) {
  const Json schema = {{"type", {"string", "null"}}};
  EXPECT_EQ(Verdict(schema, "x"), "ok");
  EXPECT_EQ(Verdict(schema, nullptr), "ok");
  EXPECT_EQ(Verdict(schema, 1), "arguments: expected string or null, got integer");
}

TEST(JsonSchemaTest, NamesAMissingRequiredArgument) {
  Json schema = Object({{"query", {{"type", "string"}}}});
  schema["required"] = {"query"};
  EXPECT_EQ(Verdict(schema, Json::object()), "missing required argument 'query'");
  EXPECT_EQ(Verdict(schema, {{"query", "x"}}), "ok");
}

TEST(JsonSchemaTest, ListsTheAllowedValuesOfAnEnum) {
  const Json schema = Object({{"unit", {{"enum", {"celsius", "fahrenheit"}}}}});
  EXPECT_EQ(Verdict(schema, {{"unit", "celsius"}}), "ok");
  EXPECT_EQ(Verdict(schema, {{"unit", "kelvin"}}),
            "argument 'unit': expected one of \"celsius\", \"fahrenheit\"; got \"kelvin\"");
  EXPECT_EQ(Verdict({{"enum", {1, 2}}}, 2.0), "ok");
}

TEST(JsonSchemaTest, EnforcesMinimumAndMaximum) {
  const Json schema = Object({{"limit", {{"type", "integer"}, {"minimum", 1}, {"maximum", 10}}}});
  EXPECT_EQ(Verdict(schema, {{"limit", 1}}), "ok");
  EXPECT_EQ(Verdict(schema, {{"limit", 10}}), "ok");
  EXPECT_EQ(Verdict(schema, {{"limit", 0}}), "argument 'limit': must be at least 1, got 0");
  EXPECT_EQ(Verdict(schema, {{"limit", 50}}), "argument 'limit': must be at most 10, got 50");
  EXPECT_EQ(Verdict({{"minimum", 0.5}}, 0.25), "arguments: must be at least 0.5, got 0.25");
  EXPECT_EQ(Verdict({{"maximum", 9223372036854775806}}, 9223372036854775807),
            "arguments: must be at most 9223372036854775806, got 9223372036854775807");
}

TEST(JsonSchemaTest, CountsStringLengthsInCodePoints) {
  const Json schema = {{"type", "string"}, {"minLength", 2}, {"maxLength", 3}};
  EXPECT_EQ(Verdict(schema, "\xC3\xA9\xC3\xA9\xC3\xA9"), "ok");  // 3 code points, 6 bytes
  EXPECT_EQ(Verdict(schema, "\xF0\x9F\x8E\x89"),
            "arguments: must have at least 2 characters, got 1");
  EXPECT_EQ(Verdict(schema, "abcd"), "arguments: must have at most 3 characters, got 4");
  EXPECT_EQ(Verdict({{"maxLength", 1}}, "ab"), "arguments: must have at most 1 character, got 2");
}

TEST(JsonSchemaTest, ValidatesEachItemOfAnArrayAndItsSize) {
  const Json schema =
      Object({{"tags", {{"type", "array"}, {"items", {{"type", "string"}}}, {"maxItems", 2}}}});
  EXPECT_EQ(Verdict(schema, {{"tags", {"a", "b"}}}), "ok");
  EXPECT_EQ(Verdict(schema, {{"tags", {"a", 2}}}),
            "argument 'tags[1]': expected string, got integer");
  EXPECT_EQ(Verdict(schema, {{"tags", {"a", "b", "c"}}}),
            "argument 'tags': must have at most 2 items, got 3");
  EXPECT_EQ(Verdict({{"minItems", 1}}, Json::array()),
            "arguments: must have at least 1 item, got 0");
}

TEST(JsonSchemaTest, FollowsNestedObjectsAndArrays) {
  Json point = Object({{"x", {{"type", "number"}}}, {"y", {{"type", "number"}}}});
  point["required"] = {"x", "y"};
  Json schema = Object({{"options", Object({{"points", {{"type", "array"}, {"items", point}}}})}});
  EXPECT_EQ(Verdict(schema, {{"options", {{"points", {{{"x", 1}, {"y", 2}}}}}}}), "ok");
  EXPECT_EQ(Verdict(schema, {{"options", {{"points", {{{"x", 1}, {"y", "2"}}}}}}}),
            "argument 'options.points[0].y': expected number, got string");
  EXPECT_EQ(Verdict(schema, {{"options", {{"points", {{{"x", 1}}}}}}}),
            "missing required argument 'options.points[0].y'");
}

TEST(JsonSchemaTest, RefusesUnexpectedArgumentsWhenAdditionalPropertiesIsFalse) {
  Json schema = Object({{"timezone", {{"type", "string"}}}});
  EXPECT_EQ(Verdict(schema, {{"tz", "UTC"}}), "ok");  // allowed by default
  schema["additionalProperties"] = false;
  EXPECT_EQ(Verdict(schema, {{"tz", "UTC"}}), "unexpected argument 'tz' (expected: timezone)");
  EXPECT_EQ(Verdict({{"type", "object"}, {"additionalProperties", false}}, {{"a", 1}}),
            "unexpected argument 'a' (none are expected)");
}

TEST(JsonSchemaTest, ValidatesAdditionalPropertiesAgainstTheirSchema) {
  const Json schema = {{"type", "object"}, {"additionalProperties", {{"type", "integer"}}}};
  EXPECT_EQ(Verdict(schema, {{"a", 1}, {"b", 2}}), "ok");
  EXPECT_EQ(Verdict(schema, {{"a", 1}, {"b", "2"}}), "argument 'b': expected integer, got string");
}

TEST(JsonSchemaTest, HonoursBooleanSchemas) {
  EXPECT_EQ(Verdict(true, {{"anything", 1}}), "ok");
  EXPECT_EQ(Verdict(Object({{"never", false}}), {{"never", 1}}),
            "argument 'never': is not allowed");
}

TEST(JsonSchemaTest, IgnoresUnknownKeywords) {
  const Json schema = {{"type", "string"},      {"format", "date-time"}, {"description", "a time"},
                       {"$schema", "whatever"}, {"pattern", "^x$"},      {"x-custom", {1, 2}}};
  EXPECT_TRUE(CheckSchema(schema).ok());
  EXPECT_EQ(Verdict(schema, "not a date"), "ok");
}

TEST(JsonSchemaTest, CutsLongValuesInMessages) {
  const std::string long_value(500, 'v');
  const std::string message = Verdict({{"enum", {"a"}}}, long_value);
  EXPECT_LT(message.size(), 120u);
}

TEST(JsonSchemaTest, RefusesMalformedKeywordsOfTheSubset) {
  for (const Json& bad :
       {Json{{"type", "text"}}, Json{{"type", Json::array()}}, Json{{"properties", {{"a", 5}}}},
        Json{{"required", "a"}}, Json{{"enum", Json::array()}}, Json{{"minimum", "1"}},
        Json{{"maxLength", -1}}, Json{{"maxLength", 1.5}}, Json{{"items", 3}},
        Json{{"additionalProperties", "no"}}, Json("not a schema")}) {
    EXPECT_TRUE(absl::IsInvalidArgument(CheckSchema(bad))) << bad.dump();
  }
  EXPECT_EQ(CheckSchema({{"properties", {{"a", {{"type", "strin"}}}}}}).message(),
            "property 'a': schema keyword 'type' must be one of object, array, string, integer, "
            "number, boolean, null, or a non-empty array of them");
}

TEST(JsonSchemaTest, CapsNestingDepth) {
  Json schema = {{"type", "string"}};
  for (int i = 0; i < kMaxSchemaDepth + 5; ++i) schema = {{"items", schema}};
  EXPECT_TRUE(absl::IsInvalidArgument(CheckSchema(schema)));
  Json value = "x";
  for (int i = 0; i < kMaxSchemaDepth + 5; ++i) value = Json::array({value});
  EXPECT_TRUE(absl::IsInvalidArgument(ValidateAgainstSchema(schema, value)));

  Json shallow = {{"type", "string"}};
  for (int i = 0; i < kMaxSchemaDepth; ++i) shallow = {{"items", shallow}};
  EXPECT_TRUE(CheckSchema(shallow).ok());
}

}  // namespace
}  // namespace herald::skills
