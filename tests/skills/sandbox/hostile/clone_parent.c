// Hostile skill: makes two processes whose parent is not itself but Herald (clone with
// CLONE_PARENT) and prints, one line each, "NAME: ok" or "NAME: <error>". The first exits at
// once — a zombie under Herald unless Herald reaps it; the second asks for no exit signal
// (only a __WALL wait finds it) and waits to be killed. Then it exits itself.
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static void Report(const char* name, long rc) {
  printf("%s: %s\n", name, rc < 0 ? strerror(errno) : "ok");
  fflush(stdout);  // before the next clone, which would copy what is buffered
}

int main(void) {
  fflush(stdout);
  const long exits = syscall(SYS_clone, CLONE_PARENT | SIGCHLD, 0, 0, 0, 0);
  if (exits == 0) _exit(0);
  Report("clone_parent", exits);
  const long waits = syscall(SYS_clone, CLONE_PARENT, 0, 0, 0, 0);
  if (waits == 0) {
    for (;;) pause();
  }
  Report("clone_parent_quiet", waits);
  return 0;
}
