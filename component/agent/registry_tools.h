// component/agent/registry_tools.h
//
// The external registry's tools within one run (S6). The model never sees the registry: it
// sees the `tool_search` skill, and once a search has found tools, those tools too, for the
// rest of the run. Each loaded tool gets a name the model can call (the registry's name made
// safe for providers, unique in the run); a call of it is checked against the registry's
// input schema and then becomes a call of what executes it — an MCP server's tool
// ("<server>__<tool>"), a skill, or an HTTP request (skills/tool_search/http_tool.h, a skill
// of the run's own) — which goes through RunToolCall like any other: enabled, its own schema,
// approval (an HTTP tool's category is the registry line's, "http" when it names none),
// credentials (an HTTP tool's required_env). A registry tool whose executor is not enabled is
// refused there, with the message the model reads for any tool that is not enabled.
//
// Pinned tools ([skills] pinned_tools, /tools pin) are loaded when the run starts; blocked ones
// ([skills] blocked_tools, /tools block) are never loaded, whatever a search finds.
//
//   RegistryTools registry_tools(services_);
//   co_await registry_tools.Start(owner);          // pinned tools in, blocked ones out
//   request.tools = registry_tools.Offered(services_.skills.EnabledTools());
//   providers::ToolResult result = co_await registry_tools.Run(tool_turn, call);
#pragma once

#include <asio.hpp>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "component/agent/conversation.h"
#include "component/agent/tool_call.h"
#include "providers/provider.h"
#include "skills/tool_search/tool_definition.h"

namespace herald::agent {

class RegistryTools {
 public:
  explicit RegistryTools(RuntimeServices& services) : services_(services) {}

  // Whether this run may use the registry: there is one and tool_search is enabled.
  bool active() const;

  // At the start of a run of `owner` (a bare JID, "room:JID", "api:NAME"; must outlive the
  // co_await): loads the tools the operator and `owner` pinned, and learns which they blocked.
  // A registry that cannot be read loads nothing (the run goes on without it).
  asio::awaitable<void> Start(const std::string& owner);

  // `enabled` (the registry's enabled skills) and the tools loaded in this run.
  std::vector<providers::ToolSpec> Offered(std::vector<providers::ToolSpec> enabled) const;

  // After a successful tool_search call: loads the tools its result lists and returns what
  // the model reads instead, naming each loaded tool as it must be called. Runs on the I/O
  // loop (the lookups go to the registry's strand).
  // `search_result` must outlive the co_await.
  asio::awaitable<std::string> Load(const std::string& search_result);

  // Runs one tool call of the run (both arguments must outlive the co_await): a loaded tool
  // as its executor, anything else through RunToolCall; what a tool_search found is loaded
  // and the model reads the loaded names instead of the search's own listing.
  asio::awaitable<providers::ToolResult> Run(const ToolCallTurn& turn,
                                             const providers::ToolCall& call);

  // How many distinct tool definitions the model has been shown in this run.
  size_t definitions_shown() const { return shown_; }
  void CountShown(size_t offered) { shown_ = std::max(shown_, offered); }

 private:
  asio::awaitable<providers::ToolResult> RunUntraced(const ToolCallTurn& turn,
                                                     const providers::ToolCall& call);
  // The call that runs a loaded tool: its arguments checked against the registry's schema,
  // its name replaced by its executor's (an HTTP tool keeps its own). InvalidArgument (bad
  // arguments) or FailedPrecondition (an executor Herald cannot call), with a message for the
  // model.
  absl::StatusOr<providers::ToolCall> Resolve(const providers::ToolCall& call) const;
  std::string NameFor(const skills::ToolDefinition& tool) const;
  // Loads `tool` (once per run); the name the model calls it by.
  std::string Add(skills::ToolDefinition tool);

  RuntimeServices& services_;
  absl::flat_hash_map<std::string, skills::ToolDefinition> loaded_;  // by the model's name
  // The loaded tools whose executor is HTTP, as skills (services_.http_tools made them).
  absl::flat_hash_map<std::string, std::unique_ptr<skills::Skill>> http_skills_;
  std::vector<std::string> order_;  // names, as loaded
  size_t shown_ = 0;
  std::vector<std::string> blocked_;  // ids
};

}  // namespace herald::agent
