// skills/sandbox/sandboxed_spawn.h
//
// Starts one program under every layer the sandbox prepared. The child is created with
// clone(CLONE_VM | CLONE_VFORK): it borrows Herald's memory until it calls execve, so starting
// it costs the same whether Herald holds 50 MB or 5 GB (fork would copy the page tables), and
// Herald's calling thread waits the few hundred microseconds that takes. Between clone and
// exec the child makes raw system calls only (no allocation, no locks, no libc state): it
//
//   1. becomes a session and process-group leader (setsid), so that the group can be killed;
//   2. sets its rlimits (prlimit64), core dumps off;
//   3. enters its scratch folder;
//   4. drops to the run's own uid and gid, with no supplementary groups (when given);
//   5. asks to be killed if the spawning thread dies (PR_SET_PDEATHSIG);
//   6. sets no_new_privs and enforces the Landlock ruleset (when given);
//   7. puts the pipes on 0, 1 and 2 and closes every other descriptor;
//   8. installs the seccomp filter (when given) and execs the program.
//
// A new network namespace and a new IPC namespace come from CLONE_NEWNET and CLONE_NEWIPC on
// the clone itself. The Landlock ruleset
// and the seccomp program are built beforehand, in Herald's process (landlock_ruleset.h,
// seccomp_filter.h). A step that fails is reported with its name and errno.
//
//   SpawnSpec spec{.executable = path, .argv = {path}, .environment = {"HOME=/tmp/x"}, ...};
//   absl::StatusOr<SpawnedProcess> child = SpawnSandboxed(spec);
//   // child->pid leads its own process group; child->pidfd is readable when it exits.
#pragma once

#include <linux/filter.h>
#include <sys/resource.h>
#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "skills/sandbox/unique_fd.h"

namespace herald::skills::sandbox {

struct SpawnSpec {
  std::string executable;  // absolute path
  std::vector<std::string> argv;
  std::vector<std::string> environment;  // "NAME=value"
  std::string working_directory;
  int stdin_fd = -1;  // the child's ends; the caller keeps (and closes) its own copies
  int stdout_fd = -1;
  int stderr_fd = -1;
  std::vector<std::pair<int, rlimit>> rlimits;
  bool new_network_namespace = false;
  bool new_ipc_namespace = false;
  std::optional<uid_t> uid;  // switch to this uid and gid (Herald is root)
  std::optional<gid_t> gid;
  int landlock_ruleset_fd = -1;         // -1: no Landlock
  const sock_fprog* seccomp = nullptr;  // nullptr: no filter
};

struct SpawnedProcess {
  pid_t pid = -1;  // also the process group id
  UniqueFd pidfd;  // readable once the process has exited (it stays a zombie until reaped)
};

// clone(2) through the C library's own entry point. Sanitizer runtimes intercept `clone` and
// treat every call as a fork (ThreadSanitizer resets its bookkeeping in the child, which
// with CLONE_VM is Herald's own memory), so the sandbox never goes through them. `fn` runs in
// the child; with CLONE_PIDFD, *pidfd receives the child's pidfd.
pid_t CloneDirect(int (*fn)(void*), void* stack_top, int flags, void* arg, int* pidfd = nullptr);

// Runs `fn(arg)` in a child made with clone(CLONE_VM | CLONE_VFORK | SIGCHLD | `flags`) on a
// stack of its own, and returns its pid once it has exec'd or exited. Every signal is blocked
// in the calling thread meanwhile, and the child starts with that mask: Herald's handlers must
// not run on the memory the child borrows. With CLONE_PIDFD in `flags`, *pidfd receives the
// child's pidfd. Fails naming "mmap" or "clone" and the errno.
absl::StatusOr<pid_t> CloneVforkChild(int (*fn)(void*), int flags, void* arg, int* pidfd = nullptr);

// Fails naming the step that failed ("setsid", "landlock_restrict_self", "execve", ...) and
// its errno; the child has then exited and been reaped.
absl::StatusOr<SpawnedProcess> SpawnSandboxed(const SpawnSpec& spec);

}  // namespace herald::skills::sandbox
