// tests/skills/sandbox/sandbox_test_support.h
//
// What the sandbox and external-skill tests share: the hostile programs Bazel built, a
// world-readable folder under /tmp to run them from (a run's own uid cannot reach Bazel's
// output tree under /root), a runner whose uid range is this test process's own (test
// binaries run in parallel), running one request to its end, and waiting for a condition
// instead of sleeping.
//
//   PublicFolder folder;
//   std::string spin = folder.CopyExecutable(HostileProgram("spin"), "spin");
//   absl::StatusOr<SandboxResult> result = RunToEnd(io, *runner, std::move(request));
//   ASSERT_TRUE(RunUntil(io, [&] { return streamed == "one\n"; }));
#pragma once

#include <asio.hpp>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "glog/logging.h"
#include "skills/sandbox/sandbox_runner.h"
#include "tests/support/captured_log.h"

namespace herald::skills::sandbox::testing {

// The path of a program built in //tests/skills/sandbox/hostile.
std::string HostileProgram(const std::string& name);

// A folder /tmp/herald-test-XXXXXX with mode 0755, removed with its contents at the end.
class PublicFolder {
 public:
  PublicFolder();
  ~PublicFolder();
  const std::string& path() const { return path_; }
  // Copies `source` to `name` in the folder with mode 0755; returns the new path.
  std::string CopyExecutable(const std::string& source, const std::string& name) const;
  // Writes `text` to `name` with `mode`; returns the new path.
  std::string Write(const std::string& name, const std::string& text, int mode = 0644) const;

 private:
  std::string path_;
};

// Options for tests: scratch under /tmp and uids no other test process uses.
SandboxRunner::Options TestRunnerOptions();

using ::herald::testing::CapturedLog;  // tests/support/captured_log.h

// Runs the request on `io` until `done`; `streamed` (optional) collects on_output.
absl::StatusOr<SandboxResult> RunToEnd(asio::io_context& io, SandboxRunner& runner,
                                       SandboxRequest request, std::string* streamed = nullptr);

// Runs `io` until `condition` holds (checked between slices of a few milliseconds) or
// `timeout` passes; answers condition(). The timeout is generous: it bounds a failing test,
// a passing one returns as soon as the condition holds.
bool RunUntil(asio::io_context& io, const std::function<bool()>& condition,
              absl::Duration timeout = absl::Seconds(10));

// For conditions no loop reports (a killed process group that init has yet to reap): asks
// `condition` every few milliseconds until it holds or `timeout` passes; answers condition().
bool WaitUntil(const std::function<bool()>& condition, absl::Duration timeout = absl::Seconds(10));

}  // namespace herald::skills::sandbox::testing
