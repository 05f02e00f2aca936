// skills/tool_search/tool_definition.h
//
// One tool of an external registry, as a line of a JSON Lines registry file (SPEC §11)
// describes it, checked field by field so that a bad line is refused whole:
//
//   {"id": "weather.forecast", "name": "forecast", "description": "Weather forecast for a city",
//    "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
//    "tags": ["weather"], "category": "network",
//    "required_env": [{"name": "WEATHER_KEY", "description": "...", "url": "https://..."}],
//    "executor": {"type": "http", "method": "GET", "url": "https://api.example.org/{city}"}}
//
// The executor is one of
//   {"type": "mcp", "server": "<a [[skills.mcp]] name>", "tool": "<that server's tool>"}
//   {"type": "skill", "skill": "<a skill Herald has: builtin or manifest>"}
//   {"type": "http", "method": "GET|POST|PUT|PATCH|DELETE", "url": "https://...{param}...",
//    "headers": {"Authorization": "Bearer ${API_KEY}"}}
// ("kind" is read as "type", and the type may be left out when the fields say it). The URL
// and header values are templates (url_template.h): `{param}` is an argument the input schema
// lists, `${NAME}` a credential the tool's required_env lists; http_tool.h says how a call
// fills them in.
//
//   absl::StatusOr<ToolDefinition> tool = ParseToolDefinition(line);
//   if (!tool.ok()) report(line_number, tool.status().message());
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "skills/manifest/manifest.h"

namespace herald::skills {

struct ToolExecutor {
  enum class Kind { kMcp, kSkill, kHttp };
  Kind kind = Kind::kSkill;
  std::string server;  // kMcp
  std::string tool;    // kMcp
  std::string skill;   // kSkill
  std::string method;  // kHttp, upper case
  std::string url;     // kHttp: {name} is replaced by that argument, URL-encoded
  std::vector<std::pair<std::string, std::string>> headers;  // kHttp, names as written
};

struct ToolDefinition {
  std::string id;
  std::string name;
  std::string description;
  nlohmann::json input_schema;  // a JSON Schema of "type": "object"
  std::vector<std::string> tags;
  std::string category;  // "" when not given
  std::vector<CredentialRequirement> required_env;
  ToolExecutor executor;
};

// Limits that keep one line from costing the index more than a tool is worth.
inline constexpr size_t kMaxToolIdBytes = 256;
inline constexpr size_t kMaxToolNameBytes = 128;
inline constexpr size_t kMaxToolDescriptionBytes = 8192;
inline constexpr size_t kMaxToolLineBytes = 256 * 1024;

// Parses and checks one registry line. The error names the field and what was wrong.
absl::StatusOr<ToolDefinition> ParseToolDefinition(std::string_view line);

// The canonical JSON of a tool (what ParseToolDefinition reads back to the same value).
nlohmann::json ToolDefinitionToJson(const ToolDefinition& tool);

std::string_view ExecutorKindName(ToolExecutor::Kind kind);

}  // namespace herald::skills
