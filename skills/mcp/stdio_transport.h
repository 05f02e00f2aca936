// skills/mcp/stdio_transport.h
//
// StdioTransport runs an MCP server as a sandboxed process (skills/sandbox, an interactive
// run: stdin kept open, no wall-clock timeout) and speaks newline-delimited JSON with it.
// A line longer than kMaxMessageBytes ends the process (its output cannot be trusted to
// resynchronise); a line that is not JSON-RPC is logged and skipped. Its stderr goes to the
// log when it exits, never to the model.
//
//   SandboxRequest request{.executable = "/usr/bin/node", .arguments = {"server.js"}};
//   request.keep_stdin_open = true;               // StdioTransport sets these itself
//   auto transport = std::make_unique<StdioTransport>("files", runner, std::move(request));
//   transport->Start(callbacks);
#pragma once

#include <memory>
#include <string>

#include "skills/mcp/mcp_transport.h"
#include "skills/sandbox/sandbox_runner.h"

namespace herald::skills::mcp {

class StdioTransport : public McpTransport {
 public:
  // `runner` must outlive the transport. `server` names it in the log.
  StdioTransport(std::string server, sandbox::SandboxRunner& runner,
                 sandbox::SandboxRequest request);
  ~StdioTransport() override;

  void Start(Callbacks callbacks) override;
  void Send(const nlohmann::json& message) override;
  void Close() override;

 private:
  struct State;
  std::string server_;
  sandbox::SandboxRunner& runner_;
  sandbox::SandboxRequest request_;
  std::shared_ptr<State> state_;
};

}  // namespace herald::skills::mcp
