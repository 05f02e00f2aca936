#include "tests/skills/mcp/mcp_test_support.h"

#include <stdlib.h>

#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace herald::skills::mcp::testing {

McpTestEnvironment::McpTestEnvironment() {
  absl::StatusOr<std::unique_ptr<sandbox::SandboxRunner>> runner =
      sandbox::SandboxRunner::Create(io_, workers_, sandbox::testing::TestRunnerOptions());
  if (!runner.ok()) {
    ADD_FAILURE() << runner.status();
    return;
  }
  runner_ = *std::move(runner);
  const char* runfiles = ::getenv("TEST_SRCDIR");
  const std::string built =
      std::string(runfiles != nullptr ? runfiles : ".") + "/herald/tests/fakes/fake_mcp_main";
  fake_server_ = folder_.CopyExecutable(built, "fake_mcp_main");
}

McpTestEnvironment::~McpTestEnvironment() {
  // Let killed runs finish (their scratch folders go) before the runner does.
  RunFor(absl::Milliseconds(100));
  runner_.reset();
  workers_.join();
}

sandbox::SandboxRequest McpTestEnvironment::FakeServerRequest(
    const std::vector<std::string>& flags) const {
  sandbox::SandboxRequest request;
  request.executable = fake_server_;
  request.arguments = flags;
  request.keep_stdin_open = true;
  request.policy.limits.timeout_seconds = 0;
  request.policy.limits.memory_mb = 1024;
  request.policy.limits.cpu_seconds = 60;
  return request;
}

std::unique_ptr<StdioTransport> McpTestEnvironment::FakeServerTransport(
    const std::vector<std::string>& flags) {
  return std::make_unique<StdioTransport>("fake", *runner_, FakeServerRequest(flags));
}

bool McpTestEnvironment::RunUntil(const std::function<bool()>& done, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (!done() && absl::Now() < deadline) {
    io_.restart();
    io_.run_for(std::chrono::milliseconds(5));
  }
  return done();
}

void McpTestEnvironment::RunFor(absl::Duration duration) {
  const absl::Time deadline = absl::Now() + duration;
  while (absl::Now() < deadline) {
    io_.restart();
    io_.run_for(std::chrono::milliseconds(5));
  }
}

}  // namespace herald::skills::mcp::testing
