// tests/fakes/fake_mcp_http_server.h
//
// FakeMcpHttpServer puts the fake MCP server (fake_mcp_server.h) behind MCP's Streamable HTTP
// transport on a loopback port (FakeHttpServer): POST /mcp, answers as a JSON body or an SSE
// stream, an Mcp-Session-Id handed out on initialize and required (400 without it, with
// MCP-Protocol-Version too) afterwards, 404 for a session EndSessions ended (so that the client
// must initialize again), 202 for notifications and answers. fake_mcp_http_main runs it as a
// program.
//
//   auto http = FakeMcpHttpServer::Start({.page_size = 2}, /*event_stream=*/true);
//   std::string url = (*http)->url();   // sessions "session-1", "session-2" ...
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tests/fakes/fake_http_server.h"
#include "tests/fakes/fake_mcp_server.h"

namespace herald::fakes {

class FakeMcpHttpServer {
 public:
  static absl::StatusOr<std::unique_ptr<FakeMcpHttpServer>> Start(FakeMcpOptions options,
                                                                  bool event_stream);

  std::string url() const { return http_->base_url() + "/mcp"; }
  std::vector<FakeHttpRequest> requests() const { return http_->requests(); }
  void EndSessions();
  int sessions() const;

 private:
  struct State {
    std::mutex mu;
    FakeMcpOptions options;
    bool event_stream = false;
    std::unique_ptr<FakeMcpServer> server;  // of the current session
    int session = 0;
  };
  std::shared_ptr<State> state_;
  std::unique_ptr<FakeHttpServer> http_;
};

}  // namespace herald::fakes
