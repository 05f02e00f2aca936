// Hostile skill: writes to stdout without end.
#include <string.h>
#include <unistd.h>

int main(void) {
  char block[65536];
  memset(block, 'x', sizeof(block));
  for (;;) {
    if (write(1, block, sizeof(block)) < 0) return 3;
  }
}
