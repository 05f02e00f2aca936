// skills/mcp/mcp_servers.h
//
// McpServers starts the MCP servers of [[skills.mcp]] (mcp_server_options.h) and keeps
// them: a `command` server runs in the skill sandbox (an interactive run with its
// capabilities, environment, memory_mb and max_processes; the program is looked up in PATH
// when not absolute), a `url` server is reached over Streamable HTTP. Each server reserves
// its "<name>__" namespace in the registry at once, so [skills] enabled may name its tools
// ("files__read_file", or "files__*" for all) before they are listed; the tools appear once
// the server answered (mcp_server.h). A server that cannot start is a notice, not a failure:
// Herald runs on without it and keeps trying. A command server is not started at all when the
// runner refuses every run (a layer [skills.sandbox] require names is missing).
//
//   std::vector<std::string> notices;
//   std::unique_ptr<McpServers> mcp = McpServers::Start(io, registry, runner, http,
//                                                       config.skills.mcp, &notices);
//   for (const std::string& notice : notices) LOG(WARNING) << notice;
//   registry.SetEnabled(config.skills.enabled);
#pragma once

#include <asio.hpp>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "providers/http/http_client.h"
#include "skills/mcp/mcp_server.h"
#include "skills/mcp/mcp_server_options.h"
#include "skills/registry.h"
#include "skills/sandbox/sandbox_runner.h"

namespace herald::skills::mcp {

// The sandbox request for a command server: the program (resolved in PATH when it has no
// '/'), its arguments, environment and capabilities, and limits fit for a long-lived
// interpreter. NotFound when the program is not found; InvalidArgument for a bad capability.
absl::StatusOr<sandbox::SandboxRequest> CommandRequest(const McpServerOptions& config);

class McpServers {
 public:
  // Call on the I/O loop. `registry`, `runner` and `http` must outlive the result; destroy it
  // (it shuts every server down, calling back no call still in flight) before them.
  static std::unique_ptr<McpServers> Start(asio::io_context& io, SkillRegistry& registry,
                                           sandbox::SandboxRunner& runner,
                                           providers::HttpClient& http,
                                           const std::vector<McpServerOptions>& configs,
                                           std::vector<std::string>* notices);
  ~McpServers();

  const std::vector<std::shared_ptr<McpServer>>& servers() const { return servers_; }

 private:
  std::vector<std::shared_ptr<McpServer>> servers_;
};

}  // namespace herald::skills::mcp
