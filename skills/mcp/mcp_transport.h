// skills/mcp/mcp_transport.h
//
// McpTransport carries JSON-RPC messages between Herald's MCP client (mcp_client.h) and one
// server. Two implementations: StdioTransport (a sandboxed process speaking newline-delimited
// JSON on stdin/stdout) and HttpTransport (Streamable HTTP: each message a POST, answers as a
// JSON body or an SSE stream). Everything happens on the I/O loop; callbacks run there too.
// Whatever a server sends is untrusted: transports cap what they buffer and parse each message
// with ParseMessage before handing it on.
//
//   transport->Start({.on_message = [](nlohmann::json m) {...},
//                     .on_failed = [](std::optional<int64_t> id, absl::Status why) {...},
//                     .on_closed = [](absl::Status why) {...}});
//   transport->Send(Request(1, "tools/list", nullptr));
//   transport->Close();
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "nlohmann/json.hpp"

namespace herald::skills::mcp {

class McpTransport {
 public:
  struct Callbacks {
    // A message from the server: a response, a request or a notification.
    std::function<void(nlohmann::json message)> on_message;
    // A message Herald sent did not get through (HTTP: the POST failed); `id` is its request
    // id, if it was a request. The transport stays usable.
    std::function<void(std::optional<int64_t> id, absl::Status why)> on_failed;
    // The transport is gone for good (the process exited, the session ended); every request
    // in flight is lost. Runs at most once, never after Close.
    std::function<void(absl::Status why)> on_closed;
  };

  virtual ~McpTransport() = default;

  // Starts the transport (a process is spawned); messages may be sent at once, they are
  // queued until it is up.
  virtual void Start(Callbacks callbacks) = 0;

  virtual void Send(const nlohmann::json& message) = 0;

  // The revision agreed in initialize; HTTP sends it as MCP-Protocol-Version from then on.
  virtual void SetProtocolVersion(const std::string& version) {}

  // Stops the transport; no callback runs afterwards.
  virtual void Close() = 0;
};

}  // namespace herald::skills::mcp
