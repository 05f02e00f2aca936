// skills/mcp/mcp_client.h
//
// McpClient is one JSON-RPC 2.0 session with one MCP server over a transport
// (mcp_transport.h): the initialize handshake with version negotiation (Herald asks for
// 2025-06-18 and accepts 2025-03-26 or 2024-11-05 when the server answers with one of them;
// anything else ends the session), tools/list across all its pages, tools/call, answers to the
// server's ping, and notifications/tools/list_changed passed on. Each request has its own
// timeout; responses are matched by id; a server's malformed or unexpected messages are
// skipped, never trusted. Everything runs on the I/O loop; callbacks run there, once each.
//
//   std::shared_ptr<McpClient> client = McpClient::Create(io, std::move(transport),
//                                                         {.server = "files"});
//   client->SetHandlers({.on_tools_changed = [] {...}, .on_closed = [](absl::Status) {...}});
//   client->Connect([](absl::Status ready) {...});
//   client->ListTools([](absl::StatusOr<ToolList> tools) {...});
//   client->CallTool("read_file", {{"path", "/srv/a.txt"}},
//                    [](absl::StatusOr<std::string> text) {...});
#pragma once

#include <asio.hpp>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "nlohmann/json.hpp"
#include "skills/mcp/mcp_protocol.h"
#include "skills/mcp/mcp_transport.h"

namespace herald::skills::mcp {

struct ToolList {
  std::vector<McpTool> tools;
  std::vector<std::string> refused;  // why each refused tool was refused, for the log
};

class McpClient : public std::enable_shared_from_this<McpClient> {
 public:
  struct Options {
    std::string server;  // its configured name, for messages and registry names
    absl::Duration request_timeout = absl::Seconds(30);
    std::string client_version;  // clientInfo.version; Herald's own when empty
  };
  struct Handlers {
    std::function<void()> on_tools_changed;
    // The transport closed (the process exited, the session ended) or Close was called
    // from elsewhere; every request in flight has failed with Unavailable before.
    std::function<void(absl::Status why)> on_closed;
  };

  static std::shared_ptr<McpClient> Create(asio::io_context& io,
                                           std::unique_ptr<McpTransport> transport,
                                           Options options);
  ~McpClient();

  void SetHandlers(Handlers handlers) { handlers_ = std::move(handlers); }

  // Starts the transport, sends initialize and, once the server agreed on a revision,
  // notifications/initialized. FailedPrecondition for a revision Herald does not speak.
  void Connect(std::function<void(absl::Status)> done);

  // Every tool the server lists, following nextCursor; tools that cannot be registered are
  // in `refused`, and so are names that collide after mapping.
  void ListTools(std::function<void(absl::StatusOr<ToolList>)> done);

  // The text the model reads (ToolResultText; the files the result carries go to `files`
  // when it is not null). Errors: Unavailable (the transport failed: worth retrying),
  // DeadlineExceeded (no answer in time), Unknown (the tool or server reported an error; its
  // message is for the model).
  void CallTool(const std::string& name, const nlohmann::json& arguments,
                std::function<void(absl::StatusOr<std::string>)> done,
                std::shared_ptr<FileOutbox> files = nullptr);

  // Ends the session; requests in flight fail with Cancelled. No handler runs afterwards.
  void Close();
  // Ends the session without calling anything back, not even the requests in flight (at
  // shutdown, when their owners may be gone).
  void Abandon();

  bool connected() const { return connected_; }
  const std::string& protocol_version() const { return protocol_version_; }

 private:
  using Reply = std::function<void(absl::StatusOr<nlohmann::json> result)>;
  struct Pending {
    Reply reply;
    std::unique_ptr<asio::steady_timer> timer;
  };

  McpClient(asio::io_context& io, std::unique_ptr<McpTransport> transport, Options options);

  void SendRequest(const std::string& method, nlohmann::json params, Reply reply);
  void Settle(int64_t id, absl::StatusOr<nlohmann::json> result);
  void OnMessage(nlohmann::json message);
  void OnClosed(absl::Status why);
  void FailAll(const absl::Status& why);
  void ListPage(std::string cursor, int page, std::shared_ptr<ToolList> list,
                std::function<void(absl::StatusOr<ToolList>)> done);

  asio::io_context& io_;
  std::unique_ptr<McpTransport> transport_;
  Options options_;
  Handlers handlers_;
  std::map<int64_t, Pending> pending_;
  int64_t next_id_ = 1;
  bool started_ = false;
  bool connected_ = false;
  bool closed_ = false;
  bool server_lists_tools_ = true;
  std::string protocol_version_;
};

}  // namespace herald::skills::mcp
