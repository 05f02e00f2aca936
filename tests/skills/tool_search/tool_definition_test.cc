#include "skills/tool_search/tool_definition.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace herald::skills {
namespace {

using ::testing::HasSubstr;
using Json = nlohmann::json;

Json Valid() {
  return Json::parse(R"({
    "id": "weather.forecast", "name": "forecast", "description": "Weather forecast for a city",
    "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
    "tags": ["weather", "forecast"], "category": "network",
    "required_env": [{"name": "WEATHER_KEY", "description": "your key",
                      "url": "https://weather.example/keys"}],
    "executor": {"type": "http", "method": "get", "url": "https://weather.example/{city}"}})");
}

std::string Error(const Json& line) {
  auto tool = ParseToolDefinition(line.dump());
  return tool.ok() ? "" : std::string(tool.status().message());
}

TEST(ToolDefinitionTest, AFullLineParsesEveryField) {
  auto tool = ParseToolDefinition(Valid().dump());
  ASSERT_TRUE(tool.ok()) << tool.status();
  EXPECT_EQ(tool->id, "weather.forecast");
  EXPECT_EQ(tool->name, "forecast");
  EXPECT_THAT(tool->tags, testing::ElementsAre("weather", "forecast"));
  EXPECT_EQ(tool->category, "network");
  ASSERT_EQ(tool->required_env.size(), 1u);
  EXPECT_EQ(tool->required_env[0].name, "WEATHER_KEY");
  EXPECT_EQ(tool->required_env[0].where_to_get, "https://weather.example/keys");
  EXPECT_EQ(tool->executor.kind, ToolExecutor::Kind::kHttp);
  EXPECT_EQ(tool->executor.method, "GET");
}

TEST(ToolDefinitionTest, TheCanonicalJsonReadsBackToTheSameTool) {
  auto tool = ParseToolDefinition(Valid().dump());
  ASSERT_TRUE(tool.ok());
  const Json canonical = ToolDefinitionToJson(*tool);
  auto again = ParseToolDefinition(canonical.dump());
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(ToolDefinitionToJson(*again), canonical);
}

TEST(ToolDefinitionTest, EachExecutorKindIsReadAndTheTypeMayBeLeftOut) {
  Json line = Valid();
  line["executor"] = {{"type", "mcp"}, {"server", "files"}, {"tool", "read_file"}};
  auto mcp = ParseToolDefinition(line.dump());
  ASSERT_TRUE(mcp.ok()) << mcp.status();
  EXPECT_EQ(mcp->executor.kind, ToolExecutor::Kind::kMcp);
  EXPECT_EQ(mcp->executor.tool, "read_file");
  line["executor"] = {{"kind", "skill"}, {"skill", "web_search"}};
  auto skill = ParseToolDefinition(line.dump());
  ASSERT_TRUE(skill.ok()) << skill.status();
  EXPECT_EQ(skill->executor.skill, "web_search");
  line["executor"] = {{"server", "files"}, {"tool", "list"}};
  auto inferred = ParseToolDefinition(line.dump());
  ASSERT_TRUE(inferred.ok()) << inferred.status();
  EXPECT_EQ(inferred->executor.kind, ToolExecutor::Kind::kMcp);
}

TEST(ToolDefinitionTest, ABadLineIsRefusedNamingTheField) {
  EXPECT_THAT(Error(Json::array()), HasSubstr("not a JSON object"));
  EXPECT_THAT(ParseToolDefinition("{\"id\": ").status().message(), HasSubstr("not valid JSON"));
  Json line = Valid();
  line.erase("id");
  EXPECT_THAT(Error(line), HasSubstr("id: missing"));
  line = Valid();
  line["name"] = 7;
  EXPECT_THAT(Error(line), HasSubstr("name: must be a string"));
  line = Valid();
  line["description"] = "line one\nline two";
  EXPECT_THAT(Error(line), HasSubstr("description: must not contain control characters"));
  line = Valid();
  line["input_schema"] = {{"type", "string"}};
  EXPECT_THAT(Error(line), HasSubstr("input_schema"));
  line = Valid();
  line["tags"] = {1, 2};
  EXPECT_THAT(Error(line), HasSubstr("tags"));
  line = Valid();
  line["required_env"][0]["name"] = "lower case";
  EXPECT_THAT(Error(line), HasSubstr("required_env[0]"));
  line = Valid();
  line["executor"] = {{"type", "shell"}, {"command", "rm -rf /"}};
  EXPECT_THAT(Error(line), HasSubstr("executor: type must be mcp, skill or http"));
  line = Valid();
  line["executor"]["url"] = "file:///etc/passwd";
  EXPECT_THAT(Error(line), HasSubstr("executor: url must start with https://"));
  line = Valid();
  line["executor"]["method"] = "TRACE";
  EXPECT_THAT(Error(line), HasSubstr("method"));
  line = Valid();
  line.erase("executor");
  EXPECT_THAT(Error(line), HasSubstr("executor: missing"));
}

TEST(ToolDefinitionTest, OversizedFieldsAreRefused) {
  Json line = Valid();
  line["id"] = std::string(kMaxToolIdBytes + 1, 'x');
  EXPECT_THAT(Error(line), HasSubstr("id: longer than"));
  line = Valid();
  line["description"] = std::string(kMaxToolDescriptionBytes + 1, 'x');
  EXPECT_THAT(Error(line), HasSubstr("description: longer than"));
}

TEST(ToolDefinitionTest, AnHttpExecutorsHeadersAreReadAndWrittenBack) {
  Json line = Valid();
  line["executor"]["url"] = "https://weather.example/{city}?key=${WEATHER_KEY}";
  line["executor"]["headers"] = {{"Authorization", "Bearer ${WEATHER_KEY}"}, {"X-City", "{city}"}};
  auto tool = ParseToolDefinition(line.dump());
  ASSERT_TRUE(tool.ok()) << tool.status();
  EXPECT_THAT(tool->executor.headers,
              testing::ElementsAre(testing::Pair("Authorization", "Bearer ${WEATHER_KEY}"),
                                   testing::Pair("X-City", "{city}")));
  EXPECT_EQ(ToolDefinitionToJson(*tool)["executor"]["headers"], line["executor"]["headers"]);
}

TEST(ToolDefinitionTest, AnHttpTemplateThatCouldNeverBeFilledInIsRefusedAtImport) {
  Json line = Valid();
  line["executor"]["url"] = "https://weather.example/{town}";
  EXPECT_THAT(Error(line), HasSubstr("{town} is not a property of input_schema"));
  line["executor"]["url"] = "https://weather.example/?key=${OTHER_KEY}";
  EXPECT_THAT(Error(line), HasSubstr("${OTHER_KEY} is not listed in required_env"));
  line["executor"]["url"] = "https://weather.example/{city";
  EXPECT_THAT(Error(line), HasSubstr("is never closed"));
  line["executor"]["url"] = "https://weather.example/city}";
  EXPECT_THAT(Error(line), HasSubstr("closes nothing"));
  line["executor"]["url"] = "https://weather.example/{city}";
  line["executor"]["headers"] = {{"X-Key", "${missing_lower}"}};
  EXPECT_THAT(Error(line), HasSubstr("header X-Key: ${...} must name a credential"));
}

TEST(ToolDefinitionTest, HeadersHeraldSetsOrThatAreNotHeadersAreRefused) {
  Json line = Valid();
  for (const char* reserved : {"Host", "content-length", "Transfer-Encoding", "User-Agent"}) {
    line["executor"]["headers"] = {{reserved, "x"}};
    EXPECT_THAT(Error(line), HasSubstr("header is Herald's to set")) << reserved;
  }
  line["executor"]["headers"] = {{"Bad Name", "x"}};
  EXPECT_THAT(Error(line), HasSubstr("is not a header name"));
  line["executor"]["headers"] = {{"X-Ok", "line\r\nInjected: yes"}};
  EXPECT_THAT(Error(line), HasSubstr("without control characters"));
  line["executor"]["headers"] = {{"X-Ok", 5}};
  EXPECT_THAT(Error(line), HasSubstr("must be a string"));
  line["executor"]["headers"] = Json::array();
  EXPECT_THAT(Error(line), HasSubstr("headers must be an object"));
}

}  // namespace
}  // namespace herald::skills
