// skills/sandbox/seccomp_filter.h
//
// The system-call filter every sandboxed run gets, compiled with libseccomp into a classic
// BPF program ahead of time, so that the child only has to install it (one seccomp(2) call,
// safe between clone and exec). It allows by default and denies what no skill needs and what
// the skill's capabilities do not grant:
//
//   always     ptrace, process_vm_* and process_madvise, mount and the new mount API,
//              pivot_root, chroot, kexec, module loading, bpf, perf_event_open, userfaultfd,
//              keyrings, unshare and setns (and clone with namespace flags), clone with
//              CLONE_PARENT (its child would be Herald's), setsid and setpgid (a run cannot
//              leave its process group), io_uring (it would bypass this filter),
//              clock and host changes, reboot, swap, quotas, acct, open_by_handle_at, TIOCSTI,
//              mknod of devices — EPERM; clone3 — ENOSYS (so that clone's flags can be
//              inspected); System V IPC (shm*, msg*, sem*) and POSIX message queues (mq_*) —
//              ENOSYS (objects that outlive the run and whose memory RLIMIT_AS does not count)
//   not self   prlimit64, setpriority, ioprio_set, sched_setaffinity, sched_setparam,
//              sched_setscheduler, sched_setattr, migrate_pages and move_pages aimed at any
//              pid but 0 (the caller), and setpriority/ioprio_set for a whole user — EPERM
//   no network socket() of any family — EACCES (socketpair(AF_UNIX) stays)
//   network    socket() of families other than AF_INET and AF_INET6, and raw sockets — EACCES
//   1 process  fork, vfork and clone without CLONE_THREAD — EAGAIN (threads stay)
//
// A system call of another architecture (x32, i386) kills the process.
//
//   absl::StatusOr<SeccompProgram> program = BuildSeccompFilter({.network = false});
//   sock_fprog fprog = program->fprog();   // install with seccomp(SECCOMP_SET_MODE_FILTER)
#pragma once

#include <linux/filter.h>

#include <vector>

#include "absl/status/statusor.h"

namespace herald::skills::sandbox {

struct SeccompOptions {
  bool network = false;    // a network: capability was granted
  bool processes = false;  // max_processes > 1: fork and clone allowed
};

class SeccompProgram {
 public:
  explicit SeccompProgram(std::vector<sock_filter> instructions)
      : instructions_(std::move(instructions)) {}

  // Points into this object: keep it alive until the filter is installed.
  sock_fprog fprog() const {
    return sock_fprog{.len = static_cast<unsigned short>(instructions_.size()),
                      .filter = const_cast<sock_filter*>(instructions_.data())};
  }
  size_t size() const { return instructions_.size(); }

 private:
  std::vector<sock_filter> instructions_;
};

// Fails only when libseccomp does (out of memory, an unknown architecture).
absl::StatusOr<SeccompProgram> BuildSeccompFilter(const SeccompOptions& options);

}  // namespace herald::skills::sandbox
