// Hostile skill: forks without end; every child forks too. Prints how many forks the first
// process managed before one was refused, then waits to be killed (it never exits by itself
// once a fork succeeded).
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(void) {
  const pid_t leader = getpid();
  int forks = 0;
  for (;;) {
    const pid_t pid = fork();
    if (pid > 0 && getpid() == leader) ++forks;
    if (pid < 0 && getpid() == leader) {
      printf("fork refused after %d forks: %s\n", forks, strerror(errno));
      fflush(stdout);
      if (forks == 0) return 3;
      for (;;) pause();
    }
  }
}
