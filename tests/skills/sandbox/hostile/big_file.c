// Hostile skill: writes a 100 MiB file into its scratch folder.
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(void) {
  const int fd = open("big.bin", O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (fd < 0) return 2;
  char block[65536];
  memset(block, 'x', sizeof(block));
  for (int i = 0; i < 1600; ++i) {
    if (write(fd, block, sizeof(block)) < 0) {
      printf("write refused\n");
      return 3;
    }
  }
  printf("wrote 100 MiB\n");
  return 0;
}
