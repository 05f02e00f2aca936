#include "skills/sandbox/sandbox_runner.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <mqueue.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/resource.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <asio.hpp>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/skills/sandbox/sandbox_test_support.h"

namespace herald::skills::sandbox {
namespace {

using ::testing::AllOf;
using ::testing::Contains;
using ::testing::HasSubstr;
using testing::HostileProgram;
using ::testing::Not;
using testing::PublicFolder;
using testing::RunToEnd;
using testing::TestRunnerOptions;

// A TCP listener on 127.0.0.1 at a port the kernel picks, answering every connection with
// "hello\n" from a thread of its own; closed at the end of the test.
class HelloServer {
 public:
  HelloServer() : acceptor_(io_, asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)) {
    Accept();
    thread_ = std::thread([this] { io_.run(); });
  }
  ~HelloServer() {
    io_.stop();
    thread_.join();
  }
  uint16_t port() const { return acceptor_.local_endpoint().port(); }

 private:
  void Accept() {
    acceptor_.async_accept([this](const asio::error_code& error, asio::ip::tcp::socket socket) {
      if (error) return;
      auto shared = std::make_shared<asio::ip::tcp::socket>(std::move(socket));
      asio::async_write(*shared, asio::buffer("hello\n", 6),
                        [shared](const asio::error_code&, size_t) {});
      Accept();
    });
  }

  asio::io_context io_;
  asio::ip::tcp::acceptor acceptor_;
  std::thread thread_;
};

class SandboxRunnerTest : public ::testing::Test {
 protected:
  std::unique_ptr<SandboxRunner> MakeRunner(SandboxRunner::Options options = TestRunnerOptions()) {
    absl::StatusOr<std::unique_ptr<SandboxRunner>> runner =
        SandboxRunner::Create(io_, workers_, std::move(options));
    EXPECT_TRUE(runner.ok()) << runner.status();
    return runner.ok() ? *std::move(runner) : nullptr;
  }

  SandboxRequest Request(const std::string& program) {
    return SandboxRequest{.executable = folder_.CopyExecutable(HostileProgram(program), program)};
  }

  SandboxResult Run(SandboxRunner& runner, SandboxRequest request) {
    absl::StatusOr<SandboxResult> result = RunToEnd(io_, runner, std::move(request));
    EXPECT_TRUE(result.ok()) << result.status();
    return result.ok() ? *std::move(result) : SandboxResult{};
  }

  SandboxResult Run(SandboxRequest request) {
    std::unique_ptr<SandboxRunner> runner = MakeRunner();
    return Run(*runner, std::move(request));
  }

  asio::io_context io_;
  asio::thread_pool workers_{2};
  PublicFolder folder_;
};

// A process of the test's own user that a skill must not be able to touch — it stands for
// Herald. `sleep` in a process group of its own, killed and reaped at the end of the test.
class Bystander {
 public:
  Bystander() {
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attributes, 0);
    char* argv[] = {const_cast<char*>("sleep"), const_cast<char*>("600"), nullptr};
    char* envp[] = {nullptr};
    EXPECT_EQ(::posix_spawn(&pid_, "/bin/sleep", nullptr, &attributes, argv, envp), 0);
    posix_spawnattr_destroy(&attributes);
  }
  ~Bystander() {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  pid_t pid() const { return pid_; }

  // What a skill might have changed.
  struct Settings {
    rlimit cpu{};
    rlimit files{};
    int nice = 0;
    int policy = 0;
    int cpus = 0;
    bool operator==(const Settings& other) const {
      return cpu.rlim_cur == other.cpu.rlim_cur && cpu.rlim_max == other.cpu.rlim_max &&
             files.rlim_cur == other.files.rlim_cur && files.rlim_max == other.files.rlim_max &&
             nice == other.nice && policy == other.policy && cpus == other.cpus;
    }
  };
  Settings Read() const {
    Settings settings;
    ::prlimit(pid_, RLIMIT_CPU, nullptr, &settings.cpu);
    ::prlimit(pid_, RLIMIT_NOFILE, nullptr, &settings.files);
    errno = 0;
    settings.nice = ::getpriority(PRIO_PROCESS, pid_);
    settings.policy = ::sched_getscheduler(pid_);
    cpu_set_t cpus;
    CPU_ZERO(&cpus);
    ::sched_getaffinity(pid_, sizeof(cpus), &cpus);
    settings.cpus = CPU_COUNT(&cpus);
    return settings;
  }

 private:
  pid_t pid_ = -1;
};

// Whether nothing is left of the process group `pgid`, waiting for SIGKILLed processes to be
// reaped by init (no event says when: it is asked again every few milliseconds).
bool GroupIsGone(pid_t pgid) {
  return testing::WaitUntil([pgid] { return ::kill(-pgid, 0) != 0 && errno == ESRCH; });
}

TEST_F(SandboxRunnerTest, RunsAProgramAndReturnsWhatItPrinted) {
  std::string streamed;
  std::unique_ptr<SandboxRunner> runner = MakeRunner();
  absl::StatusOr<SandboxResult> result =
      RunToEnd(io_, *runner,
               SandboxRequest{.executable = "/bin/cat", .stdin_data = "hello sandbox"}, &streamed);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->output, "hello sandbox");
  EXPECT_EQ(streamed, "hello sandbox");
  EXPECT_EQ(result->exit_code, 0);
  EXPECT_EQ(result->signal, 0);
  EXPECT_FALSE(result->timed_out);
  EXPECT_FALSE(result->output_truncated);
}

TEST_F(SandboxRunnerTest, RunsInAPrivateScratchFolderThatIsRemovedAfterwards) {
  SandboxRequest request{.executable = "/usr/bin/env",
                         .environment = {{"SKILL_TOKEN", "secret-value"}}};
  SandboxResult result = Run(std::move(request));
  ASSERT_FALSE(result.scratch_path.empty());
  EXPECT_THAT(result.output, HasSubstr("HOME=" + result.scratch_path + "\n"));
  EXPECT_THAT(result.output, HasSubstr("TMPDIR=" + result.scratch_path + "\n"));
  EXPECT_THAT(result.output, HasSubstr("SKILL_TOKEN=secret-value\n"));
  // Nothing of the test process's own environment.
  EXPECT_THAT(result.output, Not(HasSubstr("TEST_SRCDIR")));
  EXPECT_TRUE(result.scratch_removed);
  EXPECT_FALSE(std::filesystem::exists(result.scratch_path));
}

TEST_F(SandboxRunnerTest, RefusesEveryForkWhenOneProcessIsAllowed) {
  SandboxRequest request = Request("fork_bomb");
  request.policy.limits.max_processes = 1;
  SandboxResult result = Run(std::move(request));
  EXPECT_EQ(result.output, "fork refused after 0 forks: Resource temporarily unavailable\n");
  EXPECT_EQ(result.exit_code, 3);
  EXPECT_TRUE(GroupIsGone(result.pid));
}

TEST_F(SandboxRunnerTest, StopsAForkBombAtMaxProcessesAndKillsTheWholeGroup) {
  std::unique_ptr<SandboxRunner> runner = MakeRunner();
  if (!runner->isolation().separate_users) {
    GTEST_SKIP() << "RLIMIT_NPROC is enforced per run only when runs get their own uid (root)";
  }
  SandboxRequest request = Request("fork_bomb");
  request.policy.limits.max_processes = 4;
  request.policy.limits.timeout_seconds = 1;
  SandboxResult result = Run(*runner, std::move(request));
  // The first process made at most 3 children (4 processes in all), then was refused and
  // waited; the children kept trying until the timeout killed the group.
  EXPECT_THAT(result.output, HasSubstr("forks: Resource temporarily unavailable"));
  int forks = -1;
  ASSERT_EQ(std::sscanf(result.output.c_str(), "fork refused after %d", &forks), 1);
  EXPECT_LE(forks, 3);
  EXPECT_TRUE(result.timed_out);
  EXPECT_TRUE(GroupIsGone(result.pid));
}

// Whether this test process has a child that exited and was never reaped (a zombie).
bool HasAZombieChild() {
  siginfo_t info{};
  return ::waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT | __WALL) == 0 && info.si_pid != 0;
}

// Issue 16, finding 3: clone(CLONE_PARENT) made children of Herald that nobody reaped.
TEST_F(SandboxRunnerTest, RefusesCloneParent) {
  SandboxRequest request = Request("clone_parent");
  request.policy.limits.max_processes = 4;  // forking is allowed; a child of Herald is not
  SandboxResult result = Run(std::move(request));
  EXPECT_EQ(result.output,
            "clone_parent: Operation not permitted\nclone_parent_quiet: Operation not permitted\n");
  EXPECT_FALSE(HasAZombieChild());
}

// Without the filter, what a run made with CLONE_PARENT is killed with its group and reaped,
// and the run's uid serves the next run (a zombie would count against its RLIMIT_NPROC).
TEST_F(SandboxRunnerTest, ReapsHeraldsChildrenThatARunLeftBehind) {
  SandboxRunner::Options options = TestRunnerOptions();
  options.use_seccomp = false;
  options.uid_slots = 1;  // every run gets the same uid
  std::unique_ptr<SandboxRunner> runner = MakeRunner(options);
  SandboxRequest request = Request("clone_parent");
  request.policy.limits.max_processes = 4;
  SandboxResult result = Run(*runner, std::move(request));
  EXPECT_EQ(result.output, "clone_parent: ok\nclone_parent_quiet: ok\n");
  EXPECT_FALSE(HasAZombieChild());
  EXPECT_TRUE(GroupIsGone(result.pid));

  absl::StatusOr<SandboxResult> next =
      RunToEnd(io_, *runner, SandboxRequest{.executable = "/bin/true"});
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_EQ(next->exit_code, 0);
}

// The System V key and message queue name of one test, unique to this test process; whatever
// is left under them in the test's (Herald's) IPC namespace is removed at the end.
class IpcNames {
 public:
  IpcNames()
      : key_(0x48520000 | (::getpid() & 0xffff)),
        queue_(absl::StrCat("/herald-test-", ::getpid())) {}
  ~IpcNames() {
    if (const int shm = ::shmget(key_, 0, 0); shm >= 0) ::shmctl(shm, IPC_RMID, nullptr);
    if (const int msg = ::msgget(key_, 0); msg >= 0) ::msgctl(msg, IPC_RMID, nullptr);
    if (const int sem = ::semget(key_, 0, 0); sem >= 0) ::semctl(sem, 0, IPC_RMID);
    ::mq_unlink(queue_.c_str());
  }
  std::map<std::string, std::string> Environment(const std::string& mode) const {
    return {{"MODE", mode}, {"KEY", std::to_string(key_)}, {"QUEUE", queue_}};
  }
  // Whether an object of a run outlived it in the test's own IPC namespace.
  bool AnyLeftHere() const {
    const mqd_t queue = ::mq_open(queue_.c_str(), O_RDONLY);
    if (queue >= 0) ::mq_close(queue);
    return ::shmget(key_, 0, 0) >= 0 || ::msgget(key_, 0) >= 0 || ::semget(key_, 0, 0) >= 0 ||
           queue >= 0;
  }

 private:
  const key_t key_;
  const std::string queue_;
};

// Issue 16, finding 4: one run left "alice's API_TOKEN=sk-secret" in a System V segment and a
// later run read it; the segment outlived the run.
TEST_F(SandboxRunnerTest, RunsShareNoSystemVIpcOrMessageQueues) {
  IpcNames names;
  std::unique_ptr<SandboxRunner> runner = MakeRunner();
  SandboxRequest leave = Request("ipc");
  leave.environment = names.Environment("leave");
  const SandboxResult left = Run(*runner, leave);
  EXPECT_EQ(left.output,
            "shmget: Function not implemented\nmsgget: Function not implemented\n"
            "semget: Function not implemented\nmq_open: Function not implemented\n");
  SandboxRequest find = Request("ipc");
  find.environment = names.Environment("find");
  const SandboxResult found = Run(*runner, find);
  EXPECT_THAT(found.output, Not(HasSubstr("sk-secret")));
  EXPECT_FALSE(names.AnyLeftHere());
}

// Where the seccomp filter is off, the IPC namespace alone keeps each run's objects to itself
// and removes them when the run ends. (Landlock is off too: it refuses mq_open by itself.)
TEST_F(SandboxRunnerTest, TheIpcNamespaceAloneKeepsEachRunsObjectsToItself) {
  IpcNames names;
  SandboxRunner::Options options = TestRunnerOptions();
  options.use_seccomp = false;
  options.use_landlock = false;
  std::unique_ptr<SandboxRunner> runner = MakeRunner(options);
  if (!runner->isolation().ipc_namespaces) GTEST_SKIP() << "this host cannot make IPC namespaces";
  SandboxRequest leave = Request("ipc");
  leave.environment = names.Environment("leave");
  const SandboxResult left = Run(*runner, leave);
  EXPECT_EQ(left.output,
            "shmget: ok\nshmat: ok\nmsgget: ok\nmsgsnd: ok\nsemget: ok\nmq_open: ok\n"
            "mq_send: ok\n");
  SandboxRequest find = Request("ipc");
  find.environment = names.Environment("find");
  const SandboxResult found = Run(*runner, find);
  EXPECT_EQ(found.output,
            "shm: No such file or directory\nmsg: No such file or directory\n"
            "sem: No such file or directory\nmq: No such file or directory\n");
  EXPECT_FALSE(names.AnyLeftHere());
}

TEST_F(SandboxRunnerTest, RefusesTenGibibytesOfMemory) {
  SandboxRequest request = Request("allocate");
  request.policy.limits.memory_mb = 256;
  SandboxResult result = Run(std::move(request));
  EXPECT_EQ(result.output, "allocation of 10 GiB refused\n");
  EXPECT_EQ(result.exit_code, 3);
}

TEST_F(SandboxRunnerTest, KillsASpinnerAtTheWallClockTimeout) {
  SandboxRequest request = Request("spin");
  request.policy.limits.timeout_seconds = 1;
  request.policy.limits.cpu_seconds = 60;
  SandboxResult result = Run(std::move(request));
  EXPECT_TRUE(result.timed_out);
  EXPECT_EQ(result.signal, SIGKILL);
  EXPECT_EQ(result.exit_code, -1);
  EXPECT_TRUE(GroupIsGone(result.pid));
}

TEST_F(SandboxRunnerTest, StopsASpinnerAtItsCpuLimit) {
  SandboxRequest request = Request("spin");
  request.policy.limits.cpu_seconds = 1;
  request.policy.limits.timeout_seconds = 60;
  SandboxResult result = Run(std::move(request));
  EXPECT_FALSE(result.timed_out);
  EXPECT_EQ(result.signal, SIGXCPU);
  // It ran until the limit (rusage's accounting is coarser than the limit's).
  EXPECT_GE(result.cpu_time, absl::Milliseconds(500));
}

TEST_F(SandboxRunnerTest, KillsAFloodOfOutputAtTheLimit) {
  std::string streamed;
  SandboxRequest request = Request("flood");
  request.policy.limits.max_output_bytes = 100'000;
  std::unique_ptr<SandboxRunner> runner = MakeRunner();
  absl::StatusOr<SandboxResult> result = RunToEnd(io_, *runner, std::move(request), &streamed);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE(result->output_truncated);
  EXPECT_EQ(result->output.size(), 100'000u);
  EXPECT_EQ(streamed.size(), 100'000u);
  EXPECT_EQ(result->signal, SIGKILL);
  EXPECT_FALSE(result->timed_out);
}

TEST_F(SandboxRunnerTest, StopsAFileLargerThanTheLimit) {
  SandboxRequest request = Request("big_file");
  request.policy.limits.max_file_mb = 1;
  SandboxResult result = Run(std::move(request));
  EXPECT_EQ(result.signal, SIGXFSZ);
  EXPECT_TRUE(result.scratch_removed);
}

TEST_F(SandboxRunnerTest, DeniesASocketWithoutANetworkCapability) {
  HelloServer server;
  SandboxRequest request = Request("network_client");
  request.environment["PORT"] = std::to_string(server.port());
  SandboxResult result = Run(std::move(request));
  EXPECT_EQ(result.output, "socket refused: Permission denied\n");
  EXPECT_EQ(result.exit_code, 3);
}

TEST_F(SandboxRunnerTest, KeepsASkillOutOfEtcShadow) {
  SandboxRequest request = Request("file_access");
  request.environment = {{"MODE", "read"}, {"TARGET_PATH", "/etc/shadow"}};
  SandboxResult result = Run(std::move(request));
  EXPECT_EQ(result.output, "open refused: Permission denied\n");
  EXPECT_EQ(result.exit_code, 3);
}

TEST_F(SandboxRunnerTest, KeepsASkillFromWritingOutsideItsScratchFolder) {
  PublicFolder outside;
  ::chmod(outside.path().c_str(), 0777);  // only the sandbox may stop it, not the folder's mode
  const std::string target = outside.path() + "/planted.txt";
  std::unique_ptr<SandboxRunner> runner = MakeRunner();
  if (runner->isolation().landlock_abi == 0) {
    GTEST_SKIP() << "without Landlock a world-writable folder is writable by any skill";
  }
  SandboxRequest request = Request("file_access");
  request.environment = {{"MODE", "write"}, {"TARGET_PATH", target}};
  SandboxResult result = Run(*runner, std::move(request));
  EXPECT_EQ(result.output, "create refused: Permission denied\n");
  EXPECT_FALSE(std::filesystem::exists(target));
}

TEST_F(SandboxRunnerTest, DeniesLeavingTheGroupTracingNamespacesMountsBpfAndIoUring) {
  SandboxResult result = Run(Request("forbidden_calls"));
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_THAT(result.output, AllOf(HasSubstr("setsid: Operation not permitted\n"),
                                   HasSubstr("setpgid: Operation not permitted\n"),
                                   HasSubstr("ptrace: Operation not permitted\n"),
                                   HasSubstr("unshare: Operation not permitted\n"),
                                   HasSubstr("mount: Operation not permitted\n"),
                                   HasSubstr("bpf: Operation not permitted\n"),
                                   HasSubstr("io_uring_setup: Operation not permitted\n")));
  // Herald (here: this test) cannot be signalled: another uid, or Landlock's signal scope.
  EXPECT_THAT(result.output, HasSubstr("kill_parent: Operation not permitted\n"));
  // Issue 16, finding 10: the kernel reads an ioctl request as 32 bits, so bits above them
  // must not get TIOCSTI past the filter (stdin is a pipe: the kernel itself would say ENOTTY).
  EXPECT_THAT(result.output, AllOf(HasSubstr("tiocsti: Operation not permitted\n"),
                                   HasSubstr("tiocsti_high_bits: Operation not permitted\n")));
}

// Issue 16, finding 10: a host that lacks a layer the operator requires runs no skill at all,
// rather than one with less isolation (here Landlock, turned off).
TEST_F(SandboxRunnerTest, RefusesEveryRunWhenARequiredLayerIsMissing) {
  SandboxRunner::Options options = TestRunnerOptions();
  options.use_landlock = false;
  options.required_layers = {SandboxLayer::kSeccomp, SandboxLayer::kLandlock};
  std::unique_ptr<SandboxRunner> runner = MakeRunner(options);
  ASSERT_NE(runner, nullptr);  // Herald itself goes on
  ASSERT_TRUE(runner->isolation().seccomp);
  EXPECT_EQ(runner->available().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(runner->available().message(),
              AllOf(HasSubstr("a required layer is missing on this host (landlock)"),
                    HasSubstr("external skills and MCP servers that run in the sandbox are "
                              "disabled"),
                    HasSubstr("[skills.sandbox] require")));
  EXPECT_THAT(runner->notices(), Contains(std::string(runner->available().message())));
  absl::StatusOr<SandboxResult> refused =
      RunToEnd(io_, *runner, SandboxRequest{.executable = "/bin/true"});
  EXPECT_EQ(refused.status(), runner->available());
}

TEST_F(SandboxRunnerTest, RunsWhenEveryRequiredLayerIsThere) {
  SandboxRunner::Options options = TestRunnerOptions();
  for (const SandboxLayerName& layer : kSandboxLayerNames) {
    options.required_layers.push_back(layer.layer);
  }
  std::unique_ptr<SandboxRunner> runner = MakeRunner(options);
  for (const SandboxLayerName& layer : kSandboxLayerNames) {
    if (!HasLayer(runner->isolation(), layer.layer)) {
      GTEST_SKIP() << "this host lacks " << layer.name;
    }
  }
  EXPECT_TRUE(runner->available().ok()) << runner->available();
  absl::StatusOr<SandboxResult> result =
      RunToEnd(io_, *runner, SandboxRequest{.executable = "/bin/true"});
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->exit_code, 0);
}

// Issue 16, finding 2: a skill running as Herald's user could SIGKILL Herald with
// prlimit64(RLIMIT_CPU) or starve it with RLIMIT_NOFILE, renice it, pin it, or make it idle.
// The run here has the test's own uid (no uid switch), as a skill of a non-root Herald has,
// and no Landlock (whose ptrace scoping stops migrate_pages and move_pages by itself): the
// seccomp filter alone must refuse each call.
TEST_F(SandboxRunnerTest, ASkillCannotChangeTheLimitsOrSchedulingOfAnotherProcess) {
  SandboxRunner::Options options = TestRunnerOptions();
  options.use_separate_users = false;
  options.use_landlock = false;
  std::unique_ptr<SandboxRunner> runner = MakeRunner(options);
  ASSERT_TRUE(runner->isolation().seccomp) << "this test is about the seccomp filter";
  Bystander herald;
  const Bystander::Settings before = herald.Read();
  SandboxRequest request = Request("other_process");
  request.environment = {{"TARGET_PID", std::to_string(herald.pid())}};
  SandboxResult result = Run(*runner, std::move(request));
  EXPECT_EQ(result.exit_code, 0) << result.output;
  for (const char* call : {"prlimit_cpu", "prlimit_nofile", "setpriority", "setpriority_group",
                           "sched_setaffinity", "sched_setscheduler", "sched_setparam",
                           "sched_setattr", "ioprio_set", "migrate_pages", "move_pages"}) {
    EXPECT_THAT(result.output, HasSubstr(absl::StrCat(call, "_other: Operation not permitted\n")));
    // The same call aimed at itself still works.
    EXPECT_THAT(result.output, HasSubstr(absl::StrCat(call, "_self: ok\n")));
  }
  EXPECT_THAT(result.output, AllOf(HasSubstr("setrlimit: ok\n"), HasSubstr("nice: ok\n")));
  EXPECT_TRUE(herald.Read() == before) << "the skill changed another process's settings";
}

TEST_F(SandboxRunnerTest, ASkillCannotReniceEveryProcessOfItsUser) {
  std::unique_ptr<SandboxRunner> runner = MakeRunner();
  // Only with a uid of its own is this safe to try: otherwise, on a broken filter, it would
  // renice every process of the test's user.
  if (!runner->isolation().separate_users) GTEST_SKIP() << "runs get their own uid only as root";
  SandboxRequest request = Request("other_process");
  request.environment = {{"MODE", "user"}};
  SandboxResult result = Run(*runner, std::move(request));
  EXPECT_THAT(result.output, AllOf(HasSubstr("setpriority_user: Operation not permitted\n"),
                                   HasSubstr("ioprio_set_user: Operation not permitted\n")));
}

TEST_F(SandboxRunnerTest, ANetworkCapabilityOpensItsPortAndNoOther) {
  HelloServer granted;
  HelloServer other;
  std::unique_ptr<SandboxRunner> runner = MakeRunner();

  SandboxRequest request = Request("network_client");
  request.policy.network.push_back({.host = "127.0.0.1", .port = granted.port()});
  request.environment["PORT"] = std::to_string(granted.port());
  SandboxResult allowed = Run(*runner, request);
  EXPECT_EQ(allowed.output, "connected: hello\n\n");
  EXPECT_EQ(allowed.exit_code, 0);

  if (runner->isolation().landlock_abi < 4) {
    GTEST_SKIP() << "Landlock ABI " << runner->isolation().landlock_abi
                 << " has no network rules: other ports are not refused";
  }
  request.environment["PORT"] = std::to_string(other.port());
  SandboxResult refused = Run(*runner, request);
  EXPECT_EQ(refused.output, "connect refused: Permission denied\n");
  EXPECT_EQ(refused.exit_code, 4);
}

TEST_F(SandboxRunnerTest, TheNetworkNamespaceAloneKeepsASkillOffTheNetwork) {
  SandboxRunner::Options options = TestRunnerOptions();
  options.use_seccomp = false;
  options.use_landlock = false;
  std::unique_ptr<SandboxRunner> runner = MakeRunner(options);
  if (!runner->isolation().network_namespaces) {
    GTEST_SKIP() << "this host cannot create network namespaces";
  }
  HelloServer server;
  SandboxRequest request = Request("network_client");
  request.environment["PORT"] = std::to_string(server.port());
  SandboxResult result = Run(*runner, std::move(request));
  EXPECT_EQ(result.output, "connect refused: Network is unreachable\n");
}

TEST_F(SandboxRunnerTest, LandlockAloneKeepsRootOutOfEtcShadow) {
  SandboxRunner::Options options = TestRunnerOptions();
  options.use_separate_users = false;
  std::unique_ptr<SandboxRunner> runner = MakeRunner(options);
  if (runner->isolation().landlock_abi == 0) GTEST_SKIP() << "this kernel has no Landlock";
  SandboxRequest request = Request("file_access");
  request.environment = {{"MODE", "read"}, {"TARGET_PATH", "/etc/shadow"}};
  SandboxResult result = Run(*runner, std::move(request));
  EXPECT_EQ(result.output, "open refused: Permission denied\n");
}

TEST_F(SandboxRunnerTest, ARunsOwnUidAloneKeepsItOutOfEtcShadow) {
  SandboxRunner::Options options = TestRunnerOptions();
  options.use_landlock = false;
  std::unique_ptr<SandboxRunner> runner = MakeRunner(options);
  if (!runner->isolation().separate_users) GTEST_SKIP() << "runs get their own uid only as root";
  SandboxRequest request = Request("file_access");
  request.environment = {{"MODE", "read"}, {"TARGET_PATH", "/etc/shadow"}};
  SandboxResult result = Run(*runner, std::move(request));
  EXPECT_EQ(result.output, "open refused: Permission denied\n");
}

TEST_F(SandboxRunnerTest, FileSystemCapabilitiesGrantReadingAndWriting) {
  PublicFolder readable;
  const std::string data = readable.Write("data.txt", "twelve bytes");
  PublicFolder writable;
  ::chmod(writable.path().c_str(), 0777);
  std::unique_ptr<SandboxRunner> runner = MakeRunner();

  SandboxRequest read = Request("file_access");
  read.policy.read_paths = {readable.path()};
  read.environment = {{"MODE", "read"}, {"TARGET_PATH", data}};
  EXPECT_EQ(Run(*runner, read).output, "read 12 bytes\n");

  SandboxRequest write = Request("file_access");
  write.policy.write_paths = {writable.path()};
  write.environment = {{"MODE", "write"}, {"TARGET_PATH", writable.path() + "/out.txt"}};
  EXPECT_EQ(Run(*runner, write).output, "wrote 19 bytes\n");
  EXPECT_TRUE(std::filesystem::exists(writable.path() + "/out.txt"));

  if (runner->isolation().landlock_abi == 0) GTEST_SKIP() << "this kernel has no Landlock";
  // Read access is not write access.
  SandboxRequest write_to_readable = Request("file_access");
  write_to_readable.policy.read_paths = {writable.path()};
  write_to_readable.environment = {{"MODE", "write"},
                                   {"TARGET_PATH", writable.path() + "/other.txt"}};
  EXPECT_EQ(Run(*runner, write_to_readable).output, "create refused: Permission denied\n");
  EXPECT_FALSE(std::filesystem::exists(writable.path() + "/other.txt"));
}

TEST_F(SandboxRunnerTest, CancelKillsTheRun) {
  std::unique_ptr<SandboxRunner> runner = MakeRunner();
  SandboxRequest request = Request("spin");
  std::optional<absl::StatusOr<SandboxResult>> outcome;
  io_.restart();
  auto guard = asio::make_work_guard(io_);
  std::shared_ptr<RunHandle> handle =
      runner->Run(std::move(request), nullptr, [&](absl::StatusOr<SandboxResult> result) {
        outcome = std::move(result);
        guard.reset();
      });
  handle->Cancel();
  io_.run();
  ASSERT_TRUE(outcome.has_value() && outcome->ok());
  EXPECT_TRUE((*outcome)->cancelled);
  EXPECT_EQ((*outcome)->signal, SIGKILL);
  EXPECT_FALSE((*outcome)->timed_out);
}

TEST_F(SandboxRunnerTest, ManyRunsAtOnceEachGetTheirResult) {
  std::unique_ptr<SandboxRunner> runner = MakeRunner();
  constexpr int kRuns = 6;
  int finished = 0;
  io_.restart();
  auto guard = asio::make_work_guard(io_);
  for (int i = 0; i < kRuns; ++i) {
    const std::string text = absl::StrCat("run ", i);
    runner->Run(SandboxRequest{.executable = "/bin/cat", .stdin_data = text}, nullptr,
                [&, text](absl::StatusOr<SandboxResult> result) {
                  EXPECT_TRUE(result.ok()) << result.status();
                  if (result.ok()) EXPECT_EQ(result->output, text);
                  if (++finished == kRuns) guard.reset();
                });
  }
  io_.run();
  EXPECT_EQ(finished, kRuns);
}

TEST_F(SandboxRunnerTest, AProgramThatCannotStartIsAnError) {
  std::unique_ptr<SandboxRunner> runner = MakeRunner();
  absl::StatusOr<SandboxResult> missing =
      RunToEnd(io_, *runner, SandboxRequest{.executable = folder_.path() + "/missing"});
  EXPECT_FALSE(missing.ok());
  const std::string not_executable = folder_.Write("data.txt", "not a program", 0644);
  absl::StatusOr<SandboxResult> refused =
      RunToEnd(io_, *runner, SandboxRequest{.executable = not_executable});
  EXPECT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(), HasSubstr("execve: Permission denied"));
}

TEST_F(SandboxRunnerTest, RefusesLimitsOutOfRange) {
  SandboxRequest request{.executable = "/bin/true"};
  request.policy.limits.timeout_seconds = 0;
  std::unique_ptr<SandboxRunner> runner = MakeRunner();
  absl::StatusOr<SandboxResult> result = RunToEnd(io_, *runner, std::move(request));
  EXPECT_EQ(result.status().message(), "sandbox limit timeout_seconds is 0, outside 1 to 3600");
}

TEST_F(SandboxRunnerTest, SaysWhichLayersAreOff) {
  SandboxRunner::Options options = TestRunnerOptions();
  options.use_landlock = false;
  options.use_seccomp = false;
  options.use_network_namespaces = false;
  options.use_ipc_namespaces = false;
  std::unique_ptr<SandboxRunner> runner = MakeRunner(options);
  EXPECT_EQ(runner->isolation().landlock_abi, 0);
  EXPECT_FALSE(runner->isolation().seccomp);
  EXPECT_FALSE(runner->isolation().network_namespaces);
  EXPECT_FALSE(runner->isolation().ipc_namespaces);
  const std::string notices = absl::StrJoin(runner->notices(), "\n");
  EXPECT_THAT(notices, AllOf(HasSubstr("no Landlock"), HasSubstr("no seccomp filter"),
                             HasSubstr("cannot create network namespaces"),
                             HasSubstr("cannot create IPC namespaces")));
}

}  // namespace
}  // namespace herald::skills::sandbox
