// tests/skills/mcp/mcp_test_support.h
//
// What the MCP client's tests share: an I/O loop with a worker pool and a sandbox runner,
// the fake MCP server program (tests/fakes/fake_mcp_main) copied where a run's own uid can
// execute it, stdio transports running it with flags, and running the loop until something
// happened.
//
//   McpTestEnvironment env;
//   auto transport = env.FakeServerTransport({"--page_size=2"});
//   ASSERT_TRUE(env.RunUntil([&] { return done; }));
#pragma once

#include <asio.hpp>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "skills/mcp/stdio_transport.h"
#include "skills/sandbox/sandbox_runner.h"
#include "tests/skills/sandbox/sandbox_test_support.h"

namespace herald::skills::mcp::testing {

class McpTestEnvironment {
 public:
  McpTestEnvironment();
  ~McpTestEnvironment();

  asio::io_context& io() { return io_; }
  sandbox::SandboxRunner& runner() { return *runner_; }

  // The sandbox request that runs the fake server with `flags`.
  sandbox::SandboxRequest FakeServerRequest(const std::vector<std::string>& flags) const;
  std::unique_ptr<StdioTransport> FakeServerTransport(const std::vector<std::string>& flags);

  // Runs the loop until `done` returns true or `timeout` passes; returns done().
  bool RunUntil(const std::function<bool()>& done, absl::Duration timeout = absl::Seconds(10));
  // Runs the loop for `duration`.
  void RunFor(absl::Duration duration);

 private:
  asio::io_context io_;
  asio::thread_pool workers_{2};
  std::unique_ptr<sandbox::SandboxRunner> runner_;
  sandbox::testing::PublicFolder folder_;
  std::string fake_server_;
};

}  // namespace herald::skills::mcp::testing
