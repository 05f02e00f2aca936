// Interactive sandboxed runs (SandboxRequest::keep_stdin_open): what MCP servers need.
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "skills/sandbox/sandbox_runner.h"
#include "tests/skills/sandbox/sandbox_test_support.h"

namespace herald::skills::sandbox {
namespace {

using ::testing::HasSubstr;

class SandboxInteractiveTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<SandboxRunner>> runner =
        SandboxRunner::Create(io_, workers_, testing::TestRunnerOptions());
    ASSERT_TRUE(runner.ok()) << runner.status();
    runner_ = *std::move(runner);
  }

  void TearDown() override {
    runner_.reset();
    workers_.join();
  }

  bool RunUntil(const std::function<bool()>& done) { return testing::RunUntil(io_, done); }

  // Runs the loop until everything posted to it so far has run: a marker posted now runs after
  // those handlers (one thread runs the loop, in order).
  bool RunPosted() {
    bool reached = false;
    asio::post(io_, [&reached] { reached = true; });
    return RunUntil([&reached] { return reached; });
  }

  SandboxRequest Cat() {
    SandboxRequest request{.executable = "/bin/cat"};
    request.keep_stdin_open = true;
    request.policy.limits.timeout_seconds = 0;
    return request;
  }

  asio::io_context io_;
  asio::thread_pool workers_{2};
  std::unique_ptr<SandboxRunner> runner_;
};

TEST_F(SandboxInteractiveTest, WritesOverTimeAndStreamsTheAnswers) {
  std::string streamed;
  std::optional<absl::StatusOr<SandboxResult>> result;
  std::shared_ptr<RunHandle> run = runner_->Run(
      Cat(), [&](std::string_view chunk) { streamed.append(chunk); },
      [&](absl::StatusOr<SandboxResult> r) { result = std::move(r); });
  run->Write("one\n");
  ASSERT_TRUE(RunUntil([&] { return streamed == "one\n"; }));
  run->Write("two\n");
  ASSERT_TRUE(RunUntil([&] { return streamed == "one\ntwo\n"; }));
  EXPECT_FALSE(result.has_value());  // still running: no timeout
  run->CloseInput();
  ASSERT_TRUE(RunUntil([&] { return result.has_value(); }));
  ASSERT_TRUE(result->ok()) << result->status();
  EXPECT_EQ((*result)->exit_code, 0);
  EXPECT_EQ((*result)->output, "");  // streamed only
  EXPECT_FALSE((*result)->timed_out);
}

TEST_F(SandboxInteractiveTest, ALargeWriteIsQueuedWithoutBlockingTheLoop) {
  // More than a pipe holds: written as cat drains it.
  const std::string big(1 << 20, 'x');
  size_t received = 0;
  std::optional<absl::StatusOr<SandboxResult>> result;
  std::shared_ptr<RunHandle> run = runner_->Run(
      Cat(), [&](std::string_view chunk) { received += chunk.size(); },
      [&](absl::StatusOr<SandboxResult> r) { result = std::move(r); });
  run->Write(big);
  run->Write(big);
  run->CloseInput();
  ASSERT_TRUE(RunUntil([&] { return result.has_value(); }));
  EXPECT_EQ(received, 2 * big.size());
}

TEST_F(SandboxInteractiveTest, WritingToAProgramThatExitedIsHarmless) {
  SandboxRequest request{.executable = "/bin/true"};
  request.keep_stdin_open = true;
  request.policy.limits.timeout_seconds = 0;
  std::optional<absl::StatusOr<SandboxResult>> result;
  std::shared_ptr<RunHandle> run = runner_->Run(
      std::move(request), nullptr, [&](absl::StatusOr<SandboxResult> r) { result = std::move(r); });
  ASSERT_TRUE(RunUntil([&] { return result.has_value(); }));
  run->Write("too late\n");  // no SIGPIPE, no crash
  run->CloseInput();
  // Write and CloseInput post to the loop; once what they posted has run, they did all they
  // will ever do.
  ASSERT_TRUE(RunPosted());
  EXPECT_EQ((*result)->exit_code, 0);
}

TEST_F(SandboxInteractiveTest, ArgumentsReachTheProgram) {
  SandboxRequest request{.executable = "/bin/echo", .arguments = {"a", "b c"}};
  std::string streamed;
  std::optional<absl::StatusOr<SandboxResult>> result;
  runner_->Run(std::move(request), nullptr,
               [&](absl::StatusOr<SandboxResult> r) { result = std::move(r); });
  ASSERT_TRUE(RunUntil([&] { return result.has_value(); }));
  ASSERT_TRUE(result->ok());
  EXPECT_EQ((*result)->output, "a b c\n");
}

TEST_F(SandboxInteractiveTest, NoTimeoutIsForInteractiveRunsOnly) {
  SandboxRequest request{.executable = "/bin/true"};
  request.policy.limits.timeout_seconds = 0;
  std::optional<absl::StatusOr<SandboxResult>> result;
  runner_->Run(std::move(request), nullptr,
               [&](absl::StatusOr<SandboxResult> r) { result = std::move(r); });
  ASSERT_TRUE(RunUntil([&] { return result.has_value(); }));
  EXPECT_THAT(result->status().message(), HasSubstr("timeout_seconds is 0"));
}

TEST_F(SandboxInteractiveTest, CancelEndsALongLivedRun) {
  std::string streamed;
  std::optional<absl::StatusOr<SandboxResult>> result;
  std::shared_ptr<RunHandle> run = runner_->Run(
      Cat(), [&](std::string_view chunk) { streamed.append(chunk); },
      [&](absl::StatusOr<SandboxResult> r) { result = std::move(r); });
  // Cancelled once it is up and serving (its echo says so), not while it is being prepared.
  run->Write("ready\n");
  ASSERT_TRUE(RunUntil([&] { return streamed == "ready\n"; }));
  run->Cancel();
  ASSERT_TRUE(RunUntil([&] { return result.has_value(); }));
  ASSERT_TRUE(result->ok());
  EXPECT_TRUE((*result)->cancelled);
  EXPECT_TRUE((*result)->scratch_removed);
}

}  // namespace
}  // namespace herald::skills::sandbox
