// tests/fakes/fake_mcp_server.h
//
// FakeMcpServer is a scriptable MCP server for tests of Herald's MCP client (skills/mcp):
// the protocol logic, fed one JSON-RPC message at a time, answering with the lines to send
// back. fake_mcp_main.cc runs it over stdio (as a sandboxed process would) or over
// Streamable HTTP (FakeHttpServer, JSON bodies or SSE streams). Its tools, each a lever for
// a test:
//
//   echo {text}      the text back            add {a, b}    their sum
//   fail             isError: true            image         a text item and an image item
//   slow {ms}        answers after ms          crash         the process exits (stdio)
//   garbage          a line that is not JSON, then the answer
//   flood            a line longer than Herald takes
//   change           adds or removes the tool "extra" and sends tools/list_changed
//   count            how many times tools/call ran in this process ("calls: N")
//
// and two it lists that Herald must refuse: "!!!" (no usable name) and "stringly" (an input
// schema that is not an object schema). Options add paging, a ping before tools/list, a
// different protocol revision and N numbered tools.
//
//   FakeMcpServer server({.page_size = 2});
//   FakeMcpServer::Output out = server.Handle(R"({"jsonrpc":"2.0","id":1,"method":"ping"})");
//   for (const std::string& line : out.lines) std::cout << line << "\n";
//
// It uses the standard library and nlohmann/json only, so that the program can be compiled
// without Bazel's sanitizer flags (a sanitizer runtime would not start under the sandbox's
// RLIMIT_AS); fake_mcp_http_server.h puts it behind Streamable HTTP.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace herald::fakes {

struct FakeMcpOptions {
  // The revision it answers initialize with; "" answers with the client's when it is one of
  // 2025-06-18, 2025-03-26, 2024-11-05.
  std::string protocol_version;
  int page_size = 0;              // tools per tools/list page; 0: all at once
  int numbered_tools = 0;         // tool_0 ... tool_<n-1> as well
  bool ping_before_list = false;  // tools/list is answered only after Herald answered a ping
};

class FakeMcpServer {
 public:
  struct Output {
    std::vector<std::string> lines;  // each one message (or garbage), without the newline
    int delay_ms = 0;                // before sending them
    bool crash = false;              // exit now instead (stdio)
  };

  explicit FakeMcpServer(FakeMcpOptions options) : options_(std::move(options)) {}

  Output Handle(const std::string& line);

  int calls() const { return calls_; }
  bool initialized() const { return initialized_; }

 private:
  std::vector<std::string> ToolNames() const;

  FakeMcpOptions options_;
  bool initialized_ = false;
  bool extra_ = false;
  int calls_ = 0;
  std::string deferred_list_;  // a tools/list waiting for the ping's answer
};

}  // namespace herald::fakes
