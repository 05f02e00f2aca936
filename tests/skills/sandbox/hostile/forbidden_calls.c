// Hostile skill: tries what no skill may do and prints, one line each, "NAME: ok" or
// "NAME: <error>" — leave the process group, look at or signal its parent (Herald), make
// namespaces, mount, load BPF, set up io_uring, type into a terminal (TIOCSTI, also with bits
// above the 32 the kernel reads).
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <unistd.h>

static void Report(const char* name, long rc) {
  printf("%s: %s\n", name, rc < 0 ? strerror(errno) : "ok");
}

int main(void) {
  const pid_t parent = getppid();
  Report("setsid", setsid());
  Report("setpgid", setpgid(0, 0));
  Report("ptrace", ptrace(PTRACE_ATTACH, parent, NULL, NULL));
  Report("kill_parent", kill(parent, 0));  // signal 0: only asks whether it could
  Report("unshare", unshare(CLONE_NEWUSER));
  Report("mount", mount("none", "/tmp", "tmpfs", 0, NULL));
  Report("bpf", syscall(SYS_bpf, 0, NULL, 0));
  Report("io_uring_setup", syscall(SYS_io_uring_setup, 1, NULL));
  const char typed = 'x';
  Report("tiocsti", syscall(SYS_ioctl, 0, (unsigned long)TIOCSTI, &typed));
  Report("tiocsti_high_bits", syscall(SYS_ioctl, 0, (unsigned long)TIOCSTI | (1UL << 32), &typed));
  return 0;
}
