// component/agent/registry_tools.cc
#include "component/agent/registry_tools.h"

#include <algorithm>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "component/agent/blocking_work.h"
#include "glog/logging.h"
#include "skills/json_schema.h"
#include "skills/mcp/mcp_protocol.h"
#include "skills/tool_search/tool_search.h"
#include "skills/tool_search/tool_search_skill.h"

namespace herald::agent {
namespace {

using Found = absl::StatusOr<std::vector<skills::ToolDefinition>>;

// Provider tool names: [a-z0-9_], at most 64 bytes (OpenAI's and Anthropic's rules).
std::string SafeName(std::string_view name) {
  std::string out;
  for (char c : name) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    const bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
    out.push_back(ok ? c : '_');
    if (out.size() == 48) break;
  }
  return out.empty() ? "tool" : out;
}

}  // namespace

std::vector<providers::ToolSpec> RegistryTools::Offered(
    std::vector<providers::ToolSpec> enabled) const {
  for (const std::string& name : order_) {
    const skills::ToolDefinition& tool = loaded_.at(name);
    enabled.push_back(
        {.name = name, .description = tool.description, .parameters = tool.input_schema});
  }
  return enabled;
}

std::string RegistryTools::NameFor(const skills::ToolDefinition& tool) const {
  const std::string base = SafeName(tool.name);
  std::string name = base;
  for (int n = 2; loaded_.contains(name) || services_.skills.IsEnabled(name) ||
                  name == skills::kToolSearchSkillName;
       ++n) {
    name = absl::StrCat(base, "_", n);
  }
  return name;
}

bool RegistryTools::active() const {
  return services_.tool_search != nullptr &&
         services_.skills.IsEnabled(skills::kToolSearchSkillName);
}

std::string RegistryTools::Add(skills::ToolDefinition tool) {
  for (const auto& [name, loaded] : loaded_) {
    if (loaded.id == tool.id) return name;  // found again: keeps its first name
  }
  std::string name = NameFor(tool);
  order_.push_back(name);
  if (tool.executor.kind == skills::ToolExecutor::Kind::kHttp && services_.http_tools != nullptr) {
    http_skills_.emplace(name, services_.http_tools->SkillFor(tool, name));
  }
  loaded_.emplace(name, std::move(tool));
  return name;
}

asio::awaitable<void> RegistryTools::Start(const std::string& owner) {
  if (!active()) co_return;
  using Started = absl::StatusOr<skills::ToolSearch::RunTools>;
  skills::ToolSearch* search = services_.tool_search;
  auto start = [search, owner, pinned = services_.turn.pinned_tools,
                blocked = services_.turn.blocked_tools](std::function<void(Started)> done) mutable {
    search->ToolsForRun(owner, std::move(pinned), std::move(blocked), std::move(done));
  };
  Started started = co_await AwaitCallbackOn<Started>(services_.io, std::move(start));
  if (!started.ok()) {
    LOG(WARNING) << "tool registry: the pinned tools of " << owner
                 << " could not be read: " << started.status();
    co_return;
  }
  blocked_ = std::move(started->blocked);
  for (skills::ToolDefinition& tool : started->pinned) Add(std::move(tool));
}

asio::awaitable<std::string> RegistryTools::Load(const std::string& search_result) {
  const nlohmann::json listed =
      nlohmann::json::parse(search_result, nullptr, /*allow_exceptions=*/false);
  std::vector<std::string> ids;
  if (listed.is_object() && listed.contains("tools") && listed["tools"].is_array()) {
    for (const nlohmann::json& tool : listed["tools"]) {
      if (tool.is_object() && tool.contains("id") && tool["id"].is_string()) {
        ids.push_back(tool["id"].get<std::string>());
      }
    }
  }
  skills::ToolSearch* search = services_.tool_search;
  if (ids.empty() || search == nullptr) co_return R"({"tools": [], "note": "no tool matched"})";
  auto start = [search, ids](std::function<void(Found)> done) mutable {
    search->FindAll(std::move(ids), std::move(done));
  };
  Found found = co_await AwaitCallbackOn<Found>(services_.io, std::move(start));
  if (!found.ok()) co_return R"({"tools": [], "note": "the tool registry could not be read"})";
  nlohmann::json tools = nlohmann::json::array();
  for (skills::ToolDefinition& tool : *found) {
    if (std::find(blocked_.begin(), blocked_.end(), tool.id) != blocked_.end()) continue;
    nlohmann::json listed_tool = {{"description", tool.description},
                                  {"parameters", tool.input_schema}};
    listed_tool["name"] = Add(std::move(tool));
    tools.push_back(std::move(listed_tool));
  }
  if (tools.empty()) co_return R"({"tools": [], "note": "no tool matched"})";
  co_return nlohmann::json(
      {{"tools", std::move(tools)}, {"note", "these tools can be called now, by these names"}})
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

absl::StatusOr<providers::ToolCall> RegistryTools::Resolve(const providers::ToolCall& call) const {
  auto found = loaded_.find(call.name);
  if (found == loaded_.end()) return absl::NotFoundError(absl::StrCat("unknown tool ", call.name));
  const skills::ToolDefinition& tool = found->second;
  if (absl::Status fits = skills::ValidateAgainstSchema(tool.input_schema, call.arguments);
      !fits.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("invalid arguments: ", fits.message()));
  }
  providers::ToolCall runs = call;
  switch (tool.executor.kind) {
    case skills::ToolExecutor::Kind::kMcp: {
      // The name the MCP client registered the server's tool under (skills/mcp).
      std::optional<std::string> name =
          skills::mcp::RegistryName(tool.executor.server, tool.executor.tool);
      if (!name.has_value()) {
        return absl::FailedPreconditionError("this tool's MCP server or tool name is not usable");
      }
      runs.name = *std::move(name);
      return runs;
    }
    case skills::ToolExecutor::Kind::kSkill:
      runs.name = tool.executor.skill;
      return runs;
    case skills::ToolExecutor::Kind::kHttp:
      if (http_skills_.contains(call.name)) return runs;
      break;
  }
  return absl::FailedPreconditionError(
      "this tool runs over HTTP, which this Herald does not call; choose another tool");
}

asio::awaitable<providers::ToolResult> RegistryTools::Run(const ToolCallTurn& turn,
                                                          const providers::ToolCall& call) {
  trace::Span span(services_.tracer, turn.run_id, absl::StrCat("tool ", call.name));
  if (span.id().empty()) co_return co_await RunUntraced(turn, call);
  span.Set("gen_ai.tool.name", call.name);
  span.Set("gen_ai.tool.call.id", call.id);
  span.Set("herald.tool.arguments",
           call.arguments.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  ToolCallTurn traced = turn;
  traced.trace_span = span.id();
  providers::ToolResult result = co_await RunUntraced(traced, call);
  span.Set("herald.tool.result", result.content);
  span.End(result.is_error ? absl::UnknownError("the tool answered with an error")
                           : absl::OkStatus());
  co_return result;
}

asio::awaitable<providers::ToolResult> RegistryTools::RunUntraced(const ToolCallTurn& turn,
                                                                  const providers::ToolCall& call) {
  if (loaded_.contains(call.name)) {
    absl::StatusOr<providers::ToolCall> runs = Resolve(call);
    if (!runs.ok()) {
      co_return providers::ToolResult{.tool_call_id = call.id,
                                      .name = call.name,
                                      .content = std::string(runs.status().message()),
                                      .is_error = true};
    }
    if (auto http = http_skills_.find(call.name); http != http_skills_.end()) {
      // The run's own skill, checked like a registered one (RunToolCall looks it up again
      // after a pause: it lives as long as this run).
      ToolCallTurn http_turn = turn;
      http_turn.find_skill =
          [skill = http->second.get()](
              const std::string&,
              const nlohmann::json& arguments) -> absl::StatusOr<skills::Skill*> {
        if (absl::Status fits = skills::ValidateAgainstSchema(skill->spec().parameters, arguments);
            !fits.ok()) {
          return absl::InvalidArgumentError(absl::StrCat("invalid arguments: ", fits.message()));
        }
        return skill;
      };
      co_return co_await RunToolCall(http_turn, *runs);
    }
    providers::ToolResult result = co_await RunToolCall(turn, *runs);
    result.name = call.name;  // the model knows it by its loaded name
    co_return result;
  }
  providers::ToolResult result = co_await RunToolCall(turn, call);
  if (!result.is_error && call.name == skills::kToolSearchSkillName && active()) {
    const std::string listed = std::move(result.content);
    result.content = co_await Load(listed);
  }
  co_return result;
}

}  // namespace herald::agent
