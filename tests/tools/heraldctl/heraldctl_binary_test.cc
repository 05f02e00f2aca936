// The heraldctl binary as a script runs it: HERALD_TARGET and HERALD_TOKEN from the
// environment, exit statuses, help, and Ctrl-C (SIGINT) ending an `events` stream cleanly.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "proto/herald/v1/admin.pb.h"
#include "proto/herald/v1/session.pb.h"
#include "proto/herald/v1/skill.pb.h"
#include "tests/tools/heraldctl/fake_herald.h"

extern char** environ;

namespace herald::heraldctl {
namespace {

using testing::FakeHerald;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kToken[] = "binary-test-token-0123";

std::string BinaryPath() {
  const char* runfiles = std::getenv("TEST_SRCDIR");
  std::string root = runfiles != nullptr ? std::string(runfiles) + "/herald/" : "";
  return root + "tools/heraldctl/heraldctl";
}

// A running heraldctl with its stdout and stderr on pipes.
class Process {
 public:
  // With `input`, stdin is a pipe that holds it and then ends; without, the test's own.
  Process(const std::vector<std::string>& args, const std::vector<std::string>& environment,
          const std::optional<std::string>& input = std::nullopt) {
    int out[2];
    int err[2];
    int in[2] = {-1, -1};
    EXPECT_EQ(pipe(out), 0);
    EXPECT_EQ(pipe(err), 0);
    if (input) {
      EXPECT_EQ(pipe(in), 0);
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    if (input) {
      posix_spawn_file_actions_adddup2(&actions, in[0], STDIN_FILENO);
      posix_spawn_file_actions_addclose(&actions, in[1]);
    }
    posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&actions, err[1], STDERR_FILENO);
    posix_spawn_file_actions_addclose(&actions, out[0]);
    posix_spawn_file_actions_addclose(&actions, err[0]);
    std::string binary = BinaryPath();
    std::vector<char*> argv = {binary.data()};
    std::vector<std::string> args_copy = args;
    for (std::string& arg : args_copy) argv.push_back(arg.data());
    argv.push_back(nullptr);
    // The test's own environment without HERALD_*, plus `environment`.
    std::vector<std::string> env_copy = environment;
    for (char** entry = environ; *entry != nullptr; ++entry) {
      if (std::string(*entry).rfind("HERALD_", 0) != 0) env_copy.push_back(*entry);
    }
    std::vector<char*> envp;
    for (std::string& entry : env_copy) envp.push_back(entry.data());
    envp.push_back(nullptr);
    EXPECT_EQ(posix_spawn(&pid_, binary.c_str(), &actions, nullptr, argv.data(), envp.data()), 0)
        << binary;
    posix_spawn_file_actions_destroy(&actions);
    close(out[1]);
    close(err[1]);
    if (input) {
      close(in[0]);
      EXPECT_EQ(write(in[1], input->data(), input->size()), static_cast<ssize_t>(input->size()));
      close(in[1]);
    }
    out_ = out[0];
    err_ = err[0];
  }

  ~Process() {
    if (out_ >= 0) close(out_);
    if (err_ >= 0) close(err_);
  }

  // Reads stdout until it holds `text` (or ends); returns everything read so far.
  std::string ReadStdoutUntil(const std::string& text) {
    char buffer[4096];
    while (stdout_.find(text) == std::string::npos) {
      ssize_t n = read(out_, buffer, sizeof(buffer));
      if (n <= 0) break;
      stdout_.append(buffer, static_cast<size_t>(n));
    }
    return stdout_;
  }

  void Signal(int signal_number) { kill(pid_, signal_number); }

  // Waits for the exit; stdout and stderr in full.
  int Wait(std::string* out, std::string* err) {
    ReadAll(out_, &stdout_);
    std::string error_text;
    ReadAll(err_, &error_text);
    int status = 0;
    waitpid(pid_, &status, 0);
    *out = stdout_;
    *err = error_text;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

 private:
  static void ReadAll(int fd, std::string* text) {
    char buffer[4096];
    ssize_t n;
    while ((n = read(fd, buffer, sizeof(buffer))) > 0) text->append(buffer, static_cast<size_t>(n));
  }

  pid_t pid_ = -1;
  int out_ = -1;
  int err_ = -1;
  std::string stdout_;
};

struct Result {
  int code;
  std::string out;
  std::string err;
};

Result RunBinary(const std::vector<std::string>& args,
                 const std::vector<std::string>& environment = {},
                 const std::optional<std::string>& input = std::nullopt) {
  Process process(args, environment, input);
  Result result;
  result.code = process.Wait(&result.out, &result.err);
  return result;
}

TEST(HeraldctlBinaryTest, HelpExitsZeroAndDocumentsTheExitCodes) {
  Result result = RunBinary({"--help"});
  EXPECT_EQ(result.code, 0);
  EXPECT_THAT(result.out, HasSubstr("Exit codes:"));
  EXPECT_EQ(result.err, "");
}

TEST(HeraldctlBinaryTest, AnUnknownCommandExitsTwo) {
  Result result = RunBinary({"statsu"});
  EXPECT_EQ(result.code, 2);
  EXPECT_THAT(result.err, HasSubstr("heraldctl: unknown command 'statsu'"));
}

TEST(HeraldctlBinaryTest, ANonexistentSocketExitsThree) {
  Result result = RunBinary({"--target", "unix:/nonexistent/heraldctl/control.sock", "status"});
  EXPECT_EQ(result.code, 3);
  EXPECT_THAT(result.err, HasSubstr("UNAVAILABLE"));
}

TEST(HeraldctlBinaryTest, ReadsTargetAndTokenFromTheEnvironment) {
  FakeHerald herald;
  v1::GetStatusResponse status;
  status.set_version("9.8.7");
  herald.Answer("GetStatus", status);
  Result result = RunBinary(
      {"status"}, {"HERALD_TARGET=" + herald.target(), std::string("HERALD_TOKEN=") + kToken});
  EXPECT_EQ(result.code, 0) << result.err;
  EXPECT_THAT(result.out, HasSubstr("9.8.7"));
  EXPECT_EQ(herald.Received("GetStatus").authorization, std::string("Bearer ") + kToken);
  EXPECT_THAT(result.out + result.err, Not(HasSubstr(kToken)));
}

TEST(HeraldctlBinaryTest, ServerRefusalExitsWithItsClass) {
  FakeHerald herald;
  herald.Fail("GetStatus", grpc::Status(grpc::StatusCode::PERMISSION_DENIED, "needs read"));
  Result result = RunBinary({"--target", herald.target(), "status"});
  EXPECT_EQ(result.code, 4);
  EXPECT_EQ(result.err.substr(0, 41), "heraldctl: PERMISSION_DENIED: needs read\n");
}

TEST(HeraldctlBinaryTest, SkillsCredentialsReadsTheValuesFromStdin) {
  FakeHerald herald;
  const std::string secret = "binary-secret-value-42";
  Result result = RunBinary({"--target", herald.target(), "skills", "credentials", "--owner",
                             "alice@example.org", "API_KEY", "ORG_ID"},
                            {}, secret + "\norg-7\n");
  EXPECT_EQ(result.code, 0) << result.err;
  EXPECT_EQ(result.out, "stored API_KEY, ORG_ID for alice@example.org\n");
  EXPECT_EQ(result.err, "");
  auto request = herald.Received("ProvideCredentials").As<v1::ProvideCredentialsRequest>();
  EXPECT_EQ(request.credentials().at("API_KEY"), secret);
  EXPECT_EQ(request.credentials().at("ORG_ID"), "org-7");
  EXPECT_THAT(result.out + result.err, Not(HasSubstr(secret)));

  Result empty = RunBinary({"--target", herald.target(), "skills", "credentials", "--owner",
                            "alice@example.org", "API_KEY"},
                           {}, "\n");
  EXPECT_EQ(empty.code, 2);
  EXPECT_EQ(empty.err, "heraldctl: the value of API_KEY is empty\n");
  EXPECT_EQ(herald.CallCount("ProvideCredentials"), 1u);
}

TEST(HeraldctlBinaryTest, CtrlCEndsAnEventStreamWithExitZero) {
  FakeHerald herald;
  v1::Event event;
  event.set_type(v1::EVENT_TYPE_MESSAGE_RECEIVED);
  event.set_conversation("direct:alice@example.org");
  event.set_summary("hello");
  herald.Answer("Subscribe", event);
  herald.HoldOpen("Subscribe");

  Process process({"events", "--target", herald.target()}, {});
  std::string printed = process.ReadStdoutUntil("hello\n");
  EXPECT_THAT(printed, HasSubstr("message_received"));
  process.Signal(SIGINT);
  std::string out;
  std::string err;
  EXPECT_EQ(process.Wait(&out, &err), 0) << err;
  EXPECT_EQ(err, "");
  EXPECT_TRUE(herald.SawCancellation("Subscribe"));
}

TEST(HeraldctlBinaryTest, CtrlCCancelsAConverseRunWithExit130) {
  FakeHerald herald;
  v1::RunEvent delta;
  delta.mutable_text_delta()->set_text("thinking...");
  herald.Answer("Converse", delta);
  herald.HoldOpen("Converse");

  Process process({"--target", herald.target(), "converse", "a long question"}, {});
  process.ReadStdoutUntil("thinking...");
  process.Signal(SIGINT);
  std::string out;
  std::string err;
  EXPECT_EQ(process.Wait(&out, &err), 130);
  EXPECT_EQ(out, "thinking...\n");
  EXPECT_THAT(err, HasSubstr("heraldctl: interrupted"));
  EXPECT_TRUE(herald.SawCancellation("Converse"));
}

}  // namespace
}  // namespace herald::heraldctl
