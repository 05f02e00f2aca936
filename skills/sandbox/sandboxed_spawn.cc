#include "skills/sandbox/sandboxed_spawn.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>

#include "absl/status/status.h"

namespace herald::skills::sandbox {
namespace {

constexpr size_t kChildStackBytes = 64 << 10;

// Everything the child reads, prepared by the parent; the child writes only the failure
// fields (the parent is suspended until the child execs or exits, so there is no race).
struct ChildArgs {
  const char* executable;
  char* const* argv;
  char* const* envp;
  const char* working_directory;
  int fds[3];
  const std::pair<int, rlimit>* rlimits;
  size_t rlimit_count;
  bool switch_user;
  uid_t uid;
  gid_t gid;
  int landlock_ruleset_fd;
  const sock_fprog* seccomp;
  unsigned int close_from_limit;  // fallback bound when close_range is missing

  const char* failed_step;
  int failed_errno;
};

// The kernel's struct sigaction on x86-64 and arm64 (no restorer needed for SIG_DFL).
struct KernelSigaction {
  void (*handler)(int);
  unsigned long flags;
  void (*restorer)();
  uint64_t mask;
};

#define HERALD_CHILD_CODE __attribute__((no_sanitize("address", "thread", "undefined")))

[[noreturn]] HERALD_CHILD_CODE void Fail(ChildArgs* args, const char* step) {
  args->failed_step = step;
  args->failed_errno = errno;
  ::syscall(SYS_exit_group, 127);
  __builtin_unreachable();
}

// Runs in the child, on its own stack but in Herald's memory: raw system calls only.
HERALD_CHILD_CODE int ChildMain(void* raw) {
  auto* args = static_cast<ChildArgs*>(raw);

  // Signal handlers are Herald's and would run on this borrowed memory: back to defaults
  // (the mask, set by the parent, blocks everything until exec).
  KernelSigaction default_action{};
  default_action.handler = SIG_DFL;
  for (int signal = 1; signal < 65; ++signal) {
    if (signal == SIGKILL || signal == SIGSTOP) continue;
    ::syscall(SYS_rt_sigaction, signal, &default_action, nullptr, sizeof(uint64_t));
  }

  if (::syscall(SYS_setsid) < 0) Fail(args, "setsid");
  for (size_t i = 0; i < args->rlimit_count; ++i) {
    if (::syscall(SYS_prlimit64, 0, args->rlimits[i].first, &args->rlimits[i].second, nullptr) !=
        0) {
      Fail(args, "prlimit64");
    }
  }
  if (::syscall(SYS_chdir, args->working_directory) != 0) Fail(args, "chdir");
  if (args->switch_user) {
    if (::syscall(SYS_setgroups, 0, nullptr) != 0) Fail(args, "setgroups");
    if (::syscall(SYS_setresgid, args->gid, args->gid, args->gid) != 0) Fail(args, "setresgid");
    if (::syscall(SYS_setresuid, args->uid, args->uid, args->uid) != 0) Fail(args, "setresuid");
  }
  // After the uid change, which clears it.
  if (::syscall(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) Fail(args, "pdeathsig");
  if (::syscall(SYS_prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) Fail(args, "no_new_privs");
  if (args->landlock_ruleset_fd >= 0 &&
      ::syscall(SYS_landlock_restrict_self, args->landlock_ruleset_fd, 0) != 0) {
    Fail(args, "landlock_restrict_self");
  }
  for (int target = 0; target < 3; ++target) {
    if (::syscall(SYS_dup2, args->fds[target], target) < 0) Fail(args, "dup2");
  }
  if (::syscall(SYS_close_range, 3, ~0U, 0) != 0) {
    for (unsigned int fd = 3; fd < args->close_from_limit; ++fd) ::syscall(SYS_close, fd);
  }
  uint64_t empty_mask = 0;
  if (args->seccomp != nullptr &&
      ::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, args->seccomp) != 0) {
    Fail(args, "seccomp");
  }
  ::syscall(SYS_rt_sigprocmask, SIG_SETMASK, &empty_mask, nullptr, sizeof(empty_mask));
  ::syscall(SYS_execve, args->executable, args->argv, args->envp);
  Fail(args, "execve");
}

// A copy of `fd` numbered 3 or above, so that dup2 onto 0-2 never meets itself.
absl::StatusOr<UniqueFd> AboveStdio(int fd) {
  const int copy = ::fcntl(fd, F_DUPFD_CLOEXEC, 3);
  if (copy < 0) return absl::ErrnoToStatus(errno, "fcntl");
  return UniqueFd(copy);
}

}  // namespace

pid_t CloneDirect(int (*fn)(void*), void* stack_top, int flags, void* arg, int* pidfd) {
  using CloneFunction = int (*)(int (*)(void*), void*, int, void*, ...);
  static const CloneFunction libc_clone = [] {
    void* libc = ::dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
    void* symbol = libc != nullptr ? ::dlsym(libc, "clone") : nullptr;
    return symbol != nullptr ? reinterpret_cast<CloneFunction>(symbol) : &::clone;
  }();
  return libc_clone(fn, stack_top, flags, arg, pidfd);
}

absl::StatusOr<pid_t> CloneVforkChild(int (*fn)(void*), int flags, void* arg, int* pidfd) {
  void* stack = ::mmap(nullptr, kChildStackBytes, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (stack == MAP_FAILED) return absl::ErrnoToStatus(errno, "mmap");
  sigset_t all;
  sigset_t previous;
  ::sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &previous);
  const pid_t pid = CloneDirect(fn, static_cast<char*>(stack) + kChildStackBytes,
                                flags | CLONE_VM | CLONE_VFORK | SIGCHLD, arg, pidfd);
  const int clone_errno = errno;
  ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  ::munmap(stack, kChildStackBytes);
  if (pid < 0) return absl::ErrnoToStatus(clone_errno, "clone");
  return pid;
}

absl::StatusOr<SpawnedProcess> SpawnSandboxed(const SpawnSpec& spec) {
  std::vector<char*> argv;
  for (const std::string& arg : spec.argv) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (const std::string& entry : spec.environment) {
    envp.push_back(const_cast<char*>(entry.c_str()));
  }
  envp.push_back(nullptr);

  UniqueFd fds[3];
  const int given[3] = {spec.stdin_fd, spec.stdout_fd, spec.stderr_fd};
  for (int i = 0; i < 3; ++i) {
    absl::StatusOr<UniqueFd> copy = AboveStdio(given[i]);
    if (!copy.ok()) return copy.status();
    fds[i] = *std::move(copy);
  }
  rlimit files{};
  ::getrlimit(RLIMIT_NOFILE, &files);

  ChildArgs args{
      .executable = spec.executable.c_str(),
      .argv = argv.data(),
      .envp = envp.data(),
      .working_directory = spec.working_directory.c_str(),
      .fds = {fds[0].get(), fds[1].get(), fds[2].get()},
      .rlimits = spec.rlimits.data(),
      .rlimit_count = spec.rlimits.size(),
      .switch_user = spec.uid.has_value() && spec.gid.has_value(),
      .uid = spec.uid.value_or(0),
      .gid = spec.gid.value_or(0),
      .landlock_ruleset_fd = spec.landlock_ruleset_fd,
      .seccomp = spec.seccomp,
      .close_from_limit = static_cast<unsigned int>(
          files.rlim_cur == RLIM_INFINITY ? 65536 : std::min<rlim_t>(files.rlim_cur, 1 << 20)),
      .failed_step = nullptr,
      .failed_errno = 0,
  };

  int flags = CLONE_PIDFD;
  if (spec.new_network_namespace) flags |= CLONE_NEWNET;
  if (spec.new_ipc_namespace) flags |= CLONE_NEWIPC;
  int pidfd = -1;
  const absl::StatusOr<pid_t> pid = CloneVforkChild(ChildMain, flags, &args, &pidfd);
  if (!pid.ok()) return pid.status();

  SpawnedProcess process{.pid = *pid, .pidfd = UniqueFd(pidfd)};
  if (args.failed_step != nullptr) {
    int status = 0;
    while (::waitpid(*pid, &status, 0) < 0 && errno == EINTR) {
    }
    return absl::ErrnoToStatus(args.failed_errno, args.failed_step);
  }
  return process;
}

}  // namespace herald::skills::sandbox
