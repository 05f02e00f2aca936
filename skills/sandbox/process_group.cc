#include "skills/sandbox/process_group.h"

#include <errno.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <cstring>

#include "absl/time/time.h"
#include "glog/logging.h"

namespace herald::skills::sandbox {

void KillProcessGroup(pid_t leader) {
  if (leader > 0) ::kill(-leader, SIGKILL);
}

bool ReapGroupLeader(pid_t leader, SandboxResult& result) {
  // Whatever the leader left behind in the group dies with it.
  ::kill(-leader, SIGKILL);
  int status = 0;
  rusage usage{};
  pid_t reaped;
  do {
    reaped = ::wait4(leader, &status, 0, &usage);
  } while (reaped < 0 && errno == EINTR);
  if (reaped != leader) {
    LOG(WARNING) << "sandbox: wait4: " << std::strerror(errno);
    return false;
  }
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  result.cpu_time =
      absl::DurationFromTimeval(usage.ru_utime) + absl::DurationFromTimeval(usage.ru_stime);
  return true;
}

bool ReapGroupChildren(pid_t group) {
  for (;;) {
    siginfo_t info{};
    // Peek first: the one child of Herald whose pid is this group's number would be a new
    // run's leader in a group that reused the number after ours emptied (its status belongs
    // to that run's pidfd watch). __WALL: a child may have asked for no exit signal.
    if (::waitid(P_PGID, group, &info, WEXITED | WNOHANG | WNOWAIT | __WALL) != 0) {
      if (errno == EINTR) continue;
      return true;  // ECHILD: no child of Herald in the group
    }
    if (info.si_pid == 0) return false;  // killed, not dead yet
    if (info.si_pid == group) return true;
    siginfo_t reaped{};
    ::waitid(P_PID, info.si_pid, &reaped, WEXITED | WNOHANG | __WALL);
  }
}

}  // namespace herald::skills::sandbox
