// skills/sandbox/process_group.h
//
// How a run's process group ends. A run's program leads a process group of its own (setsid),
// and seccomp keeps its processes in it, so the group is the run: it is killed whole, its
// leader is reaped for the run's exit status and CPU time, and any process of it that is
// Herald's own child (clone with CLONE_PARENT, where seccomp is off) is reaped too, so that
// no zombie stays under Herald and none counts against the uid's RLIMIT_NPROC when the uid
// goes to the next run. None of these block: the leader is reaped only once its pidfd said it
// exited, and the group's other children are only peeked at (WNOHANG).
//
//   KillProcessGroup(pid);                       // timeout, flood, cancel: SIGKILL to all
//   ReapGroupLeader(pid, result);                // once the pidfd is readable
//   while (!ReapGroupChildren(pid)) { /* wait a little on the loop, then ask again */ }
#pragma once

#include <sys/types.h>

#include "skills/sandbox/sandbox_policy.h"

namespace herald::skills::sandbox {

// SIGKILLs every process of the group led by `leader`; does nothing when leader <= 0.
void KillProcessGroup(pid_t leader);

// Kills what is left of the group (the leader has exited: as a zombie it keeps the group's id
// from being reused), then reaps the leader into result.exit_code, signal and cpu_time (of
// the leader and the children it reaped). False, logged, when it could not be reaped.
bool ReapGroupLeader(pid_t leader, SandboxResult& result);

// Reaps the exited processes of group `group` that are Herald's own children; true when none
// is left, false when some were killed but are not dead yet. Only the group is searched: a run
// without the seccomp filter could leave it first (setsid) and then make a child of Herald
// that this does not find — one reason [skills.sandbox] require keeps seccomp by default.
bool ReapGroupChildren(pid_t group);

}  // namespace herald::skills::sandbox
