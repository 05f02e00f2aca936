#include "skills/sandbox/sandbox_runner.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <deque>
#include <filesystem>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "glog/logging.h"
#include "skills/sandbox/landlock_ruleset.h"
#include "skills/sandbox/sandboxed_spawn.h"
#include "skills/sandbox/scratch_folder.h"
#include "skills/sandbox/seccomp_filter.h"
#include "skills/sandbox/unique_fd.h"

namespace herald::skills::sandbox {
namespace {

constexpr size_t kReadChunkBytes = 64 << 10;
constexpr size_t kMaxStdinBytes = 1 << 20;  // what an unprivileged pipe can hold at once
// After the program exits, how long its pipes may stay open (only a process that escaped
// its group could hold them) before the run ends without them.
constexpr auto kPipeGrace = std::chrono::seconds(2);
// How long killed processes of a run's group that are Herald's children may take to die
// before the run ends without them (and without giving its uid back).
constexpr auto kReapPatience = std::chrono::seconds(30);
constexpr const char* kDevices[] = {"/dev/null", "/dev/zero", "/dev/full", "/dev/random",
                                    "/dev/urandom"};

// The uids a root Herald hands to runs, one per run at a time.
class UidPool {
 public:
  UidPool(uid_t base, int slots) : base_(base), used_(slots, false) {}

  std::optional<uid_t> Acquire() {
    std::lock_guard<std::mutex> lock(mu_);
    for (size_t i = 0; i < used_.size(); ++i) {
      // Round robin, so that a uid just released (whose killed processes may still be
      // exiting) is the last to be reused.
      const size_t slot = (next_ + i) % used_.size();
      if (!used_[slot]) {
        used_[slot] = true;
        next_ = (slot + 1) % used_.size();
        return base_ + static_cast<uid_t>(slot);
      }
    }
    return std::nullopt;
  }

  void Release(uid_t uid) {
    std::lock_guard<std::mutex> lock(mu_);
    used_[uid - base_] = false;
  }

 private:
  const uid_t base_;
  std::mutex mu_;
  std::vector<bool> used_;
  size_t next_ = 0;
};

bool IsVariableName(const std::string& name) {
  if (name.empty() || absl::ascii_isdigit(name[0])) return false;
  for (char c : name) {
    if (!absl::ascii_isalnum(c) && c != '_') return false;
  }
  return true;
}

// The runner trusts no caller with its limits: a manifest checks them too, with messages.
// Only interactive runs may go without a timeout.
absl::Status CheckLimits(const SandboxLimits& limits, bool interactive) {
  struct Range {
    const char* name;
    int64_t value;
    int64_t min;
    int64_t max;
  };
  for (const Range& range : {
           Range{"cpu_seconds", limits.cpu_seconds, 1, kMaxCpuSeconds},
           Range{"memory_mb", limits.memory_mb, 16, kMaxMemoryMb},
           Range{"max_output_bytes", limits.max_output_bytes, 1, kMaxOutputBytes},
           Range{"timeout_seconds", limits.timeout_seconds, interactive ? 0 : 1,
                 kMaxTimeoutSeconds},
           Range{"max_processes", limits.max_processes, 1, kMaxProcesses},
           Range{"max_open_files", limits.max_open_files, 8, kMaxOpenFiles},
           Range{"max_file_mb", limits.max_file_mb, 0, kMaxFileMb},
       }) {
    if (range.value < range.min || range.value > range.max) {
      return absl::InvalidArgumentError(absl::StrCat("sandbox limit ", range.name, " is ",
                                                     range.value, ", outside ", range.min, " to ",
                                                     range.max));
    }
  }
  return absl::OkStatus();
}

// Probes, at start-up, what the kernel and Herald's privileges allow: ProbeChild makes a child
// with `flags` (CLONE_NEWNET, say), which switches to `uid` when given, and says whether all
// of that worked.
struct ProbeArgs {
  std::optional<uid_t> uid;
};

__attribute__((no_sanitize("address", "thread", "undefined"))) int ProbeMain(void* raw) {
  const auto* args = static_cast<const ProbeArgs*>(raw);
  if (args->uid.has_value()) {
    if (::syscall(SYS_setgroups, 0, nullptr) != 0) return 1;
    if (::syscall(SYS_setresgid, *args->uid, *args->uid, *args->uid) != 0) return 1;
    if (::syscall(SYS_setresuid, *args->uid, *args->uid, *args->uid) != 0) return 1;
  }
  return 0;
}

bool ProbeChild(int flags, ProbeArgs args) {
  constexpr size_t kStack = 64 << 10;
  void* stack = ::mmap(nullptr, kStack, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (stack == MAP_FAILED) return false;
  sigset_t all;
  sigset_t previous;
  ::sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &previous);
  const pid_t pid = CloneDirect(ProbeMain, static_cast<char*>(stack) + kStack,
                                flags | CLONE_VM | CLONE_VFORK | SIGCHLD, &args);
  ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  ::munmap(stack, kStack);
  if (pid < 0) return false;
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return false;
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

}  // namespace

struct SandboxRunner::State {
  Options options;
  IsolationReport isolation;
  std::array<std::optional<SeccompProgram>, 4> filters;  // [network * 2 + processes]
  std::unique_ptr<UidPool> uids;                         // when isolation.separate_users

  const SeccompProgram* FilterFor(const SandboxPolicy& policy) const {
    const size_t index =
        (policy.network.empty() ? 0 : 2) + (policy.limits.max_processes > 1 ? 1 : 0);
    return filters[index].has_value() ? &*filters[index] : nullptr;
  }
};

// One run, from preparation to the result. Lives on the I/O loop (its asio objects and
// flags), apart from PrepareAndSpawn, which runs on the worker pool and touches only what
// it is given.
class SandboxRun : public std::enable_shared_from_this<SandboxRun> {
 public:
  SandboxRun(asio::io_context& io, asio::thread_pool& workers,
             std::shared_ptr<const SandboxRunner::State> state, SandboxRequest request,
             SandboxRunner::OnOutput on_output, SandboxRunner::OnDone done)
      : io_(io),
        workers_(workers),
        state_(std::move(state)),
        request_(std::move(request)),
        on_output_(std::move(on_output)),
        done_(std::move(done)),
        timer_(io) {}

  void Start() {
    started_at_ = absl::Now();
    asio::post(workers_, [self = shared_from_this()]() mutable {
      absl::StatusOr<Prepared> prepared = self->PrepareAndSpawn();
      asio::post(self->io_, [self, prepared = std::move(prepared)]() mutable {
        self->Started(std::move(prepared));
      });
    });
  }

  // Any thread (the handle posts to the loop).
  void Write(std::string bytes) {
    asio::post(io_, [self = shared_from_this(), bytes = std::move(bytes)]() mutable {
      if (!self->request_.keep_stdin_open || self->input_closing_ || bytes.empty()) return;
      self->queued_input_bytes_ += bytes.size();
      self->input_queue_.push_back(std::move(bytes));
      if (self->queued_input_bytes_ > kMaxQueuedInputBytes) {
        LOG(WARNING) << "sandbox: pid " << self->result_.pid
                     << " left too much of its input unread; killing it";
        self->result_.input_overflow = true;
        self->input_queue_.clear();
        self->queued_input_bytes_ = 0;
        self->KillGroup();
        return;
      }
      self->FlushInput();
    });
  }

  void CloseInput() {
    asio::post(io_, [self = shared_from_this()] {
      self->input_closing_ = true;
      self->FlushInput();
    });
  }

  // Any thread.
  void Cancel() {
    asio::post(io_, [self = shared_from_this()] {
      if (self->finished_) return;
      self->result_.cancelled = true;
      self->KillGroup();
    });
  }

  // The runner is going away (any thread): kill without waiting for the loop.
  void KillNow() {
    const pid_t pid = pid_.load();
    if (pid > 0) ::kill(-pid, SIGKILL);
  }

 private:
  struct Prepared {
    SpawnedProcess process;
    UniqueFd stdin_write;  // interactive runs only
    UniqueFd stdout_read;
    UniqueFd stderr_read;
    std::string scratch;
    std::optional<uid_t> uid;
  };

  // On the worker pool.
  absl::StatusOr<Prepared> PrepareAndSpawn() {
    const SandboxRunner::Options& options = state_->options;
    const SandboxPolicy& policy = request_.policy;
    if (absl::Status limits = CheckLimits(policy.limits, request_.keep_stdin_open); !limits.ok()) {
      return limits;
    }
    Prepared prepared;
    if (state_->uids != nullptr) {
      prepared.uid = state_->uids->Acquire();
      if (!prepared.uid.has_value()) {
        return absl::ResourceExhaustedError("too many sandboxed runs at once");
      }
    }
    absl::StatusOr<Prepared> spawned = Spawn(options, policy, prepared);
    if (!spawned.ok()) {
      if (!prepared.scratch.empty()) {
        absl::Status removed = RemoveScratchFolder(prepared.scratch);
        LOG_IF(WARNING, !removed.ok()) << "sandbox: " << removed;
      }
      if (prepared.uid.has_value()) state_->uids->Release(*prepared.uid);
    }
    return spawned;
  }

  absl::StatusOr<Prepared> Spawn(const SandboxRunner::Options& options, const SandboxPolicy& policy,
                                 Prepared& prepared) {
    char* resolved = ::realpath(request_.executable.c_str(), nullptr);
    if (resolved == nullptr) return absl::ErrnoToStatus(errno, "resolving the executable");
    const std::string executable(resolved);
    ::free(resolved);

    std::optional<std::pair<uid_t, gid_t>> owner;
    if (prepared.uid.has_value()) owner.emplace(*prepared.uid, *prepared.uid);
    absl::StatusOr<std::string> scratch = CreateScratchFolder(options.scratch_root, owner);
    if (!scratch.ok()) return scratch.status();
    prepared.scratch = *scratch;

    std::vector<std::string> environment = {
        "PATH=/usr/local/bin:/usr/bin:/bin",
        absl::StrCat("HOME=", prepared.scratch),
        absl::StrCat("TMPDIR=", prepared.scratch),
        "LANG=C.UTF-8",
    };
    for (const auto& [name, value] : request_.environment) {
      if (!IsVariableName(name) || name == "HOME" || name == "TMPDIR") {
        return absl::InvalidArgumentError("an environment variable name is not allowed");
      }
      environment.push_back(absl::StrCat(name, "=", value));
    }

    // stdin is written whole before the program starts, so Herald never blocks on it (and
    // never gets SIGPIPE from it). An interactive run keeps the write end, non-blocking, for
    // WriteSome.
    int stdin_pipe[2];
    int stdout_pipe[2];
    int stderr_pipe[2];
    if (::pipe2(stdin_pipe, O_CLOEXEC) != 0) return absl::ErrnoToStatus(errno, "pipe");
    UniqueFd stdin_read(stdin_pipe[0]);
    UniqueFd stdin_write(stdin_pipe[1]);
    if (::pipe2(stdout_pipe, O_CLOEXEC) != 0) return absl::ErrnoToStatus(errno, "pipe");
    prepared.stdout_read.reset(stdout_pipe[0]);
    UniqueFd stdout_write(stdout_pipe[1]);
    if (::pipe2(stderr_pipe, O_CLOEXEC) != 0) return absl::ErrnoToStatus(errno, "pipe");
    prepared.stderr_read.reset(stderr_pipe[0]);
    UniqueFd stderr_write(stderr_pipe[1]);
    if (!request_.stdin_data.empty()) {
      const size_t size = request_.stdin_data.size();
      if (size > kMaxStdinBytes) {
        return absl::InvalidArgumentError("the input is too large for the program's stdin");
      }
      if (size > 65536 && ::fcntl(stdin_write.get(), F_SETPIPE_SZ, static_cast<int>(size)) < 0) {
        return absl::InvalidArgumentError("the input is too large for the program's stdin");
      }
      if (::write(stdin_write.get(), request_.stdin_data.data(), size) !=
          static_cast<ssize_t>(size)) {
        return absl::ErrnoToStatus(errno, "writing stdin");
      }
    }
    if (request_.keep_stdin_open) {
      if (::fcntl(stdin_write.get(), F_SETFL, O_NONBLOCK) != 0)
        return absl::ErrnoToStatus(errno, "fcntl");
      prepared.stdin_write = std::move(stdin_write);
    }
    stdin_write.reset();

    UniqueFd ruleset;
    if (state_->isolation.landlock_abi > 0) {
      LandlockGrants grants;
      grants.read_execute = options.system_paths;
      grants.read_execute.push_back(std::filesystem::path(executable).parent_path().string());
      grants.read = policy.read_paths;
      grants.read_write = policy.write_paths;
      grants.read_write.push_back(prepared.scratch);
      grants.devices.assign(std::begin(kDevices), std::end(kDevices));
      grants.network = !policy.network.empty();
      if (grants.network) {
        grants.read.insert(grants.read.end(), options.network_paths.begin(),
                           options.network_paths.end());
        for (const NetworkGrant& grant : policy.network) grants.tcp_connect.push_back(grant.port);
      }
      absl::StatusOr<UniqueFd> built = BuildLandlockRuleset(state_->isolation.landlock_abi, grants);
      if (!built.ok()) return built.status();
      ruleset = *std::move(built);
    }

    const SandboxLimits& limits = policy.limits;
    auto limit = [](int resource, rlim_t value, rlim_t hard) {
      return std::pair<int, rlimit>(resource, rlimit{.rlim_cur = value, .rlim_max = hard});
    };
    std::vector<std::string> argv = {executable};
    argv.insert(argv.end(), request_.arguments.begin(), request_.arguments.end());
    SpawnSpec spec{
        .executable = executable,
        .argv = std::move(argv),
        .environment = std::move(environment),
        .working_directory = prepared.scratch,
        .stdin_fd = stdin_read.get(),
        .stdout_fd = stdout_write.get(),
        .stderr_fd = stderr_write.get(),
        .rlimits =
            {
                // SIGXCPU at the limit, SIGKILL a second later if it is caught.
                limit(RLIMIT_CPU, limits.cpu_seconds, limits.cpu_seconds + 1),
                limit(RLIMIT_AS, rlim_t{static_cast<rlim_t>(limits.memory_mb)} << 20,
                      rlim_t{static_cast<rlim_t>(limits.memory_mb)} << 20),
                limit(RLIMIT_NOFILE, limits.max_open_files, limits.max_open_files),
                limit(RLIMIT_FSIZE, rlim_t{static_cast<rlim_t>(limits.max_file_mb)} << 20,
                      rlim_t{static_cast<rlim_t>(limits.max_file_mb)} << 20),
                limit(RLIMIT_CORE, 0, 0),
            },
        .new_network_namespace = policy.network.empty() && state_->isolation.network_namespaces,
        .new_ipc_namespace = state_->isolation.ipc_namespaces,
        .uid = prepared.uid,
        .gid = prepared.uid,
        .landlock_ruleset_fd = ruleset.get(),
    };
    // RLIMIT_NPROC counts every process of the real uid: meaningful only for a uid of the
    // run's own. Without one, max_processes = 1 is still enforced by seccomp.
    if (prepared.uid.has_value()) {
      spec.rlimits.push_back(limit(RLIMIT_NPROC, limits.max_processes, limits.max_processes));
    }
    const SeccompProgram* filter = state_->FilterFor(policy);
    sock_fprog fprog{};
    if (filter != nullptr) {
      fprog = filter->fprog();
      spec.seccomp = &fprog;
    }
    absl::StatusOr<SpawnedProcess> process = SpawnSandboxed(spec);
    if (!process.ok()) return process.status();
    prepared.process = *std::move(process);
    return std::move(prepared);
  }

  void Started(absl::StatusOr<Prepared> prepared) {
    if (!prepared.ok()) {
      finished_ = true;
      SandboxRunner::OnDone done = std::move(done_);
      done(prepared.status());
      return;
    }
    pid_.store(prepared->process.pid);
    group_ = prepared->process.pid;
    result_.pid = prepared->process.pid;
    uid_ = prepared->uid;
    result_.scratch_path = prepared->scratch;
    stdout_.emplace(io_, prepared->stdout_read.release());
    stderr_.emplace(io_, prepared->stderr_read.release());
    exit_watch_.emplace(io_, prepared->process.pidfd.release());
    if (prepared->stdin_write.valid()) stdin_.emplace(io_, prepared->stdin_write.release());
    ReadStdout();
    ReadStderr();
    WaitForExit();
    if (request_.policy.limits.timeout_seconds > 0) {
      timer_.expires_after(std::chrono::seconds(request_.policy.limits.timeout_seconds));
      timer_.async_wait([self = shared_from_this()](const asio::error_code& error) {
        if (error || self->exited_) return;
        self->result_.timed_out = true;
        self->KillGroup();
      });
    }
    if (result_.cancelled) KillGroup();
    FlushInput();
  }

  void ReadStdout() {
    stdout_->async_read_some(
        asio::buffer(stdout_buffer_),
        [self = shared_from_this()](const asio::error_code& error, size_t size) {
          if (error) {
            self->stdout_open_ = false;
            self->MaybeFinish();
            return;
          }
          self->TakeOutput(std::string_view(self->stdout_buffer_.data(), size));
          self->ReadStdout();
        });
  }

  void ReadStderr() {
    stderr_->async_read_some(
        asio::buffer(stderr_buffer_),
        [self = shared_from_this()](const asio::error_code& error, size_t size) {
          if (error) {
            self->stderr_open_ = false;
            self->MaybeFinish();
            return;
          }
          std::string& kept = self->result_.error_output;
          const size_t taken = std::min(size, kMaxErrorOutputBytes - kept.size());
          kept.append(self->stderr_buffer_.data(), taken);
          if (taken < size) self->result_.error_output_truncated = true;
          self->ReadStderr();
        });
  }

  // Writes what the pipe takes now, then waits until it takes more. SIGPIPE is blocked on
  // this thread around the write (a program that closed its stdin must not kill Herald) and a
  // pending one is consumed.
  void FlushInput() {
    if (!stdin_.has_value() || input_waiting_) return;
    while (!input_queue_.empty()) {
      const std::string& front = input_queue_.front();
      sigset_t pipe_signal;
      sigset_t previous;
      ::sigemptyset(&pipe_signal);
      ::sigaddset(&pipe_signal, SIGPIPE);
      ::pthread_sigmask(SIG_BLOCK, &pipe_signal, &previous);
      const ssize_t written = ::write(stdin_->native_handle(), front.data() + input_offset_,
                                      front.size() - input_offset_);
      const int write_errno = errno;
      if (written < 0 && write_errno == EPIPE) {
        const timespec zero{};
        while (::sigtimedwait(&pipe_signal, nullptr, &zero) == SIGPIPE) {
        }
      }
      ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
      if (written < 0) {
        if (write_errno == EINTR) continue;
        if (write_errno == EAGAIN) {
          input_waiting_ = true;
          stdin_->async_wait(asio::posix::stream_descriptor::wait_write,
                             [self = shared_from_this()](const asio::error_code& error) {
                               self->input_waiting_ = false;
                               if (error) return;
                               self->FlushInput();
                             });
          return;
        }
        // The program closed its stdin (or exited): what is queued can never arrive.
        input_queue_.clear();
        queued_input_bytes_ = 0;
        input_offset_ = 0;
        asio::error_code ignored;
        stdin_->close(ignored);
        stdin_.reset();
        return;
      }
      input_offset_ += static_cast<size_t>(written);
      if (input_offset_ == front.size()) {
        queued_input_bytes_ -= front.size();
        input_queue_.pop_front();
        input_offset_ = 0;
      }
    }
    if (input_closing_) {
      asio::error_code ignored;
      stdin_->close(ignored);
      stdin_.reset();
    }
  }

  void TakeOutput(std::string_view chunk) {
    if (request_.keep_stdin_open) {  // streamed only; the caller bounds what it reads
      if (on_output_ && !chunk.empty()) on_output_(chunk);
      return;
    }
    if (result_.output_truncated) return;  // draining until the killed group's pipe closes
    const size_t limit = static_cast<size_t>(request_.policy.limits.max_output_bytes);
    const size_t room = limit - result_.output.size();
    if (chunk.size() > room) {
      chunk = chunk.substr(0, room);
      result_.output_truncated = true;
      KillGroup();
    }
    result_.output.append(chunk);
    if (on_output_ && !chunk.empty()) on_output_(chunk);
  }

  void WaitForExit() {
    exit_watch_->async_wait(asio::posix::stream_descriptor::wait_read,
                            [self = shared_from_this()](const asio::error_code& error) {
                              if (error == asio::error::operation_aborted) return;
                              self->Exited();
                            });
  }

  void Exited() {
    // The program is a zombie: its pid, and so its process group id, cannot be reused yet.
    // Whatever it left behind in the group dies with it.
    const pid_t pid = pid_.load();
    ::kill(-pid, SIGKILL);
    int status = 0;
    rusage usage{};
    pid_t reaped;
    do {
      reaped = ::wait4(pid, &status, 0, &usage);
    } while (reaped < 0 && errno == EINTR);
    pid_.store(-1);
    exited_ = true;
    if (reaped == pid) {
      if (WIFEXITED(status)) result_.exit_code = WEXITSTATUS(status);
      if (WIFSIGNALED(status)) result_.signal = WTERMSIG(status);
      result_.cpu_time =
          absl::DurationFromTimeval(usage.ru_utime) + absl::DurationFromTimeval(usage.ru_stime);
    } else {
      LOG(WARNING) << "sandbox: wait4: " << std::strerror(errno);
    }
    exit_watch_.reset();
    input_queue_.clear();
    queued_input_bytes_ = 0;
    if (stdin_.has_value()) {
      asio::error_code ignored;
      stdin_->close(ignored);
      stdin_.reset();
    }
    // The pipes close once the group is dead; a process that escaped it must not hold the
    // run open forever.
    timer_.cancel();
    timer_.expires_after(kPipeGrace);
    timer_.async_wait([self = shared_from_this()](const asio::error_code& error) {
      if (error || self->finished_) return;
      LOG(WARNING) << "sandbox: a process outside the run's group kept its pipes open";
      asio::error_code ignored;
      if (self->stdout_open_) self->stdout_->close(ignored);
      if (self->stderr_open_) self->stderr_->close(ignored);
    });
    MaybeFinish();
  }

  void KillGroup() {
    const pid_t pid = pid_.load();
    if (pid > 0) ::kill(-pid, SIGKILL);
  }

  void MaybeFinish() {
    if (finished_ || !exited_ || stdout_open_ || stderr_open_) return;
    finished_ = true;
    timer_.cancel();
    result_.wall_time = absl::Now() - started_at_;
    stdout_.reset();
    stderr_.reset();
    reap_deadline_ = std::chrono::steady_clock::now() + kReapPatience;
    ReapGroupThenFinish(std::chrono::milliseconds(1));
  }

  // Herald's own children in the run's process group: what clone(CLONE_PARENT) made (seccomp
  // refuses it; this covers runs without the filter). They were killed with the group; reaped
  // here, they leave no zombie under Herald and no process counting against the uid's
  // RLIMIT_NPROC when the uid is handed to the next run. Herald's other children are never in
  // the group. Only the group is searched: a run without the filter could leave it first
  // (setsid) and then make a child of Herald that this does not find — which is one reason
  // [skills.sandbox] require keeps seccomp by default. Returns whether none is left.
  bool ReapGroup() {
    for (;;) {
      siginfo_t info{};
      // Peek first: the one child of Herald whose pid is this group's number would be a new
      // run's leader in a group that reused the number after ours emptied (its status belongs
      // to that run's pidfd watch). __WALL: a child may have asked for no exit signal.
      if (::waitid(P_PGID, group_, &info, WEXITED | WNOHANG | WNOWAIT | __WALL) != 0) {
        if (errno == EINTR) continue;
        return true;  // ECHILD: no child of Herald in the group
      }
      if (info.si_pid == 0) return false;  // killed, not dead yet
      if (info.si_pid == group_) return true;
      siginfo_t reaped{};
      ::waitid(P_PID, info.si_pid, &reaped, WEXITED | WNOHANG | __WALL);
    }
  }

  void ReapGroupThenFinish(std::chrono::milliseconds delay) {
    const bool reaped = ReapGroup();
    if (!reaped && std::chrono::steady_clock::now() < reap_deadline_) {
      timer_.expires_after(delay);
      timer_.async_wait([self = shared_from_this(), delay](const asio::error_code&) {
        self->ReapGroupThenFinish(std::min(delay * 2, std::chrono::milliseconds(64)));
      });
      return;
    }
    if (!reaped) {
      LOG(WARNING) << "sandbox: a killed process of run " << group_
                   << " would not die; its uid stays out of use";
    }
    asio::post(workers_, [self = shared_from_this(), release_uid = reaped] {
      absl::Status removed = RemoveScratchFolder(self->result_.scratch_path);
      self->result_.scratch_removed = removed.ok();
      LOG_IF(WARNING, !removed.ok()) << "sandbox: " << removed;
      if (self->uid_.has_value() && release_uid) self->state_->uids->Release(*self->uid_);
      asio::post(self->io_, [self] {
        SandboxRunner::OnDone done = std::move(self->done_);
        done(std::move(self->result_));
      });
    });
  }

  asio::io_context& io_;
  asio::thread_pool& workers_;
  const std::shared_ptr<const SandboxRunner::State> state_;
  const SandboxRequest request_;
  SandboxRunner::OnOutput on_output_;
  SandboxRunner::OnDone done_;

  absl::Time started_at_;
  std::atomic<pid_t> pid_{-1};  // the process group while it may be killed
  pid_t group_ = -1;            // its process group, for reaping what is left of it
  std::chrono::steady_clock::time_point reap_deadline_;
  std::optional<uid_t> uid_;
  std::optional<asio::posix::stream_descriptor> stdout_;
  std::optional<asio::posix::stream_descriptor> stderr_;
  std::optional<asio::posix::stream_descriptor> exit_watch_;  // the pidfd
  std::optional<asio::posix::stream_descriptor> stdin_;       // interactive runs, until closed
  std::deque<std::string> input_queue_;
  size_t input_offset_ = 0;  // of input_queue_.front() already written
  size_t queued_input_bytes_ = 0;
  bool input_waiting_ = false;  // for the pipe to take more
  bool input_closing_ = false;  // CloseInput was called
  asio::steady_timer timer_;    // the timeout, then the pipes' grace period
  std::array<char, kReadChunkBytes> stdout_buffer_;
  std::array<char, 4096> stderr_buffer_;
  bool stdout_open_ = true;
  bool stderr_open_ = true;
  bool exited_ = false;
  bool finished_ = false;
  SandboxResult result_;
};

void RunHandle::Cancel() {
  if (std::shared_ptr<SandboxRun> run = run_.lock()) run->Cancel();
}

void RunHandle::Write(std::string bytes) {
  if (std::shared_ptr<SandboxRun> run = run_.lock()) run->Write(std::move(bytes));
}

void RunHandle::CloseInput() {
  if (std::shared_ptr<SandboxRun> run = run_.lock()) run->CloseInput();
}

absl::StatusOr<std::unique_ptr<SandboxRunner>> SandboxRunner::Create(asio::io_context& io,
                                                                     asio::thread_pool& workers,
                                                                     Options options) {
  const long pidfd = ::syscall(SYS_pidfd_open, ::getpid(), 0);
  if (pidfd < 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "skills sandbox: this kernel cannot watch a process with a pidfd (Linux 5.3 or later "
        "is needed): ",
        std::strerror(errno)));
  }
  ::close(static_cast<int>(pidfd));
  if (::access(options.scratch_root.c_str(), W_OK | X_OK) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("skills sandbox: the scratch root ", options.scratch_root,
                     " is not a writable folder: ", std::strerror(errno)));
  }
  if (options.uid_slots < 1 || options.uid_slots > 1'000'000) {
    return absl::InvalidArgumentError("skills sandbox: uid_slots must be 1 to 1000000");
  }

  auto state = std::make_shared<State>();
  IsolationReport& isolation = state->isolation;
  std::vector<std::string> notices;

  if (options.use_landlock) {
    isolation.landlock_abi = LandlockAbi();
    if (isolation.landlock_abi > 0) {
      absl::StatusOr<UniqueFd> probe = BuildLandlockRuleset(isolation.landlock_abi, {});
      if (!probe.ok()) {
        notices.push_back(absl::StrCat("skills sandbox: Landlock refused a ruleset (",
                                       probe.status().message(), "); file-system rules are off"));
        isolation.landlock_abi = 0;
      }
    }
  }
  if (isolation.landlock_abi == 0) {
    notices.push_back(
        "skills sandbox: no Landlock (the kernel lacks it or it is turned off): skills can "
        "read and write whatever their user can, not only their scratch folder and fs: paths");
  } else if (isolation.landlock_abi < 4) {
    notices.push_back(absl::StrCat(
        "skills sandbox: Landlock ABI ", isolation.landlock_abi,
        " has no network rules: skills with a network capability may connect to any port"));
  }

  if (options.use_seccomp) {
    isolation.seccomp = ::prctl(PR_GET_SECCOMP, 0, 0, 0, 0) >= 0;
  }
  if (isolation.seccomp) {
    for (int network = 0; network < 2; ++network) {
      for (int processes = 0; processes < 2; ++processes) {
        absl::StatusOr<SeccompProgram> program =
            BuildSeccompFilter({.network = network == 1, .processes = processes == 1});
        if (!program.ok()) return program.status();
        state->filters[network * 2 + processes] = *std::move(program);
      }
    }
  } else {
    notices.push_back(
        "skills sandbox: no seccomp filter: skills may create sockets without a network "
        "capability, fork when max_processes is 1, and use ptrace, mount and the like as far as "
        "their privileges allow");
  }

  if (options.use_network_namespaces) {
    isolation.network_namespaces = ProbeChild(CLONE_NEWNET, {});
  }
  if (!isolation.network_namespaces) {
    notices.push_back(
        "skills sandbox: cannot create network namespaces: skills without a network capability "
        "are kept off the network by the seccomp filter alone");
  }

  if (options.use_ipc_namespaces) {
    isolation.ipc_namespaces = ProbeChild(CLONE_NEWIPC, {});
  }
  if (!isolation.ipc_namespaces) {
    notices.push_back(
        "skills sandbox: cannot create IPC namespaces: System V IPC and POSIX message queues "
        "are kept from skills by the seccomp filter alone");
  }

  if (::geteuid() == 0 && options.use_separate_users) {
    isolation.separate_users =
        ProbeChild(0, {.uid = options.uid_base + static_cast<uid_t>(options.uid_slots - 1)});
    if (!isolation.separate_users) {
      notices.push_back(absl::StrCat("skills sandbox: cannot switch to uid ", options.uid_base,
                                     " and up: skills run as root, limited by seccomp and "
                                     "Landlock only, and max_processes above 1 is not enforced"));
    }
  } else if (::geteuid() != 0) {
    notices.push_back(
        "skills sandbox: Herald does not run as root, so skills run as Herald's own user: "
        "max_processes above 1 is not enforced per run (RLIMIT_NPROC counts all of that user's "
        "processes)");
  }
  if (!isolation.separate_users && isolation.landlock_abi < 6) {
    notices.push_back(
        "skills sandbox: skills run as Herald's user without Landlock signal scoping (ABI 6): "
        "a skill could signal Herald's own processes");
  }
  if (isolation.separate_users) {
    state->uids = std::make_unique<UidPool>(options.uid_base, options.uid_slots);
  }
  std::vector<std::string> missing;
  for (SandboxLayer layer : options.required_layers) {
    const std::string name(NameOf(layer));
    if (!HasLayer(isolation, layer) &&
        std::find(missing.begin(), missing.end(), name) == missing.end()) {
      missing.push_back(name);
    }
  }
  absl::Status available;
  if (!missing.empty()) {
    available = absl::FailedPreconditionError(absl::StrCat(
        "skills sandbox: ", missing.size() == 1 ? "a required layer is" : "required layers are",
        " missing on this host (", absl::StrJoin(missing, ", "),
        "), so external skills and MCP servers that run in the sandbox are disabled; Herald "
        "runs on with its builtin skills. Give the host the layer, or leave it out of "
        "[skills.sandbox] require to run skills without it"));
    notices.push_back(std::string(available.message()));
  }
  for (const std::string& notice : notices) LOG(WARNING) << notice;

  state->options = std::move(options);
  auto runner = std::unique_ptr<SandboxRunner>(new SandboxRunner(io, workers, std::move(state)));
  runner->notices_ = std::move(notices);
  runner->available_ = std::move(available);
  return runner;
}

SandboxRunner::SandboxRunner(asio::io_context& io, asio::thread_pool& workers,
                             std::shared_ptr<State> state)
    : io_(io), workers_(workers), state_(std::move(state)), isolation_(state_->isolation) {}

SandboxRunner::~SandboxRunner() {
  std::lock_guard<std::mutex> lock(mu_);
  for (const std::weak_ptr<SandboxRun>& weak : runs_) {
    if (std::shared_ptr<SandboxRun> run = weak.lock()) run->KillNow();
  }
}

std::shared_ptr<RunHandle> SandboxRunner::Run(SandboxRequest request, OnOutput on_output,
                                              OnDone done) {
  if (!available_.ok()) {
    asio::post(io_, [done = std::move(done), refused = available_] { done(refused); });
    return std::make_shared<RunHandle>(std::weak_ptr<SandboxRun>());
  }
  auto run = std::make_shared<SandboxRun>(io_, workers_, state_, std::move(request),
                                          std::move(on_output), std::move(done));
  {
    std::lock_guard<std::mutex> lock(mu_);
    // Forget runs that are over, so the list stays as long as the runs in flight.
    std::erase_if(runs_, [](const std::weak_ptr<SandboxRun>& weak) { return weak.expired(); });
    runs_.push_back(run);
  }
  run->Start();
  return std::make_shared<RunHandle>(run);
}

}  // namespace herald::skills::sandbox
