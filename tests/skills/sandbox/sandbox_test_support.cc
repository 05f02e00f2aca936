#include "tests/skills/sandbox/sandbox_test_support.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <vector>

#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace herald::skills::sandbox::testing {

std::string HostileProgram(const std::string& name) {
  const char* runfiles = ::getenv("TEST_SRCDIR");
  return std::string(runfiles != nullptr ? runfiles : ".") +
         "/herald/tests/skills/sandbox/hostile/" + name;
}

PublicFolder::PublicFolder() {
  std::string pattern = "/tmp/herald-test-XXXXXX";
  std::vector<char> buffer(pattern.begin(), pattern.end());
  buffer.push_back('\0');
  if (::mkdtemp(buffer.data()) == nullptr) ADD_FAILURE() << "mkdtemp failed";
  path_ = buffer.data();
  ::chmod(path_.c_str(), 0755);
}

PublicFolder::~PublicFolder() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

std::string PublicFolder::CopyExecutable(const std::string& source, const std::string& name) const {
  const std::string target = path_ + "/" + name;
  std::error_code error;
  std::filesystem::copy_file(source, target, std::filesystem::copy_options::overwrite_existing,
                             error);
  EXPECT_FALSE(error) << "copying " << source << ": " << error.message();
  ::chmod(target.c_str(), 0755);
  return target;
}

std::string PublicFolder::Write(const std::string& name, const std::string& text, int mode) const {
  const std::string target = path_ + "/" + name;
  std::ofstream(target, std::ios::binary | std::ios::trunc) << text;
  ::chmod(target.c_str(), mode);
  return target;
}

SandboxRunner::Options TestRunnerOptions() {
  SandboxRunner::Options options;
  options.scratch_root = "/tmp";
  options.uid_slots = 16;
  options.uid_base = 2'000'000'000 + static_cast<uid_t>(::getpid() % 100'000) * 16;
  return options;
}

absl::StatusOr<SandboxResult> RunToEnd(asio::io_context& io, SandboxRunner& runner,
                                       SandboxRequest request, std::string* streamed) {
  std::optional<absl::StatusOr<SandboxResult>> outcome;
  io.restart();
  auto guard = asio::make_work_guard(io);
  runner.Run(
      std::move(request),
      [streamed](std::string_view chunk) {
        if (streamed != nullptr) streamed->append(chunk);
      },
      [&](absl::StatusOr<SandboxResult> result) {
        outcome = std::move(result);
        guard.reset();
      });
  io.run();
  if (!outcome.has_value()) return absl::InternalError("the run never finished");
  return *std::move(outcome);
}

bool RunUntil(asio::io_context& io, const std::function<bool()>& condition,
              absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (!condition() && absl::Now() < deadline) {
    io.restart();
    io.run_for(std::chrono::milliseconds(5));
  }
  return condition();
}

bool WaitUntil(const std::function<bool()>& condition, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (!condition() && absl::Now() < deadline) absl::SleepFor(absl::Milliseconds(10));
  return condition();
}

}  // namespace herald::skills::sandbox::testing
