// Hostile skill (and capability probe): reads or creates the file $TARGET_PATH, as $MODE says
// ("read" or "write"). Prints what happened, never the file's contents.
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(void) {
  const char* mode = getenv("MODE");
  const char* path = getenv("TARGET_PATH");
  if (mode == NULL || path == NULL) return 2;
  if (strcmp(mode, "read") == 0) {
    const int fd = open(path, O_RDONLY);
    if (fd < 0) {
      printf("open refused: %s\n", strerror(errno));
      return 3;
    }
    char buffer[4096];
    const ssize_t size = read(fd, buffer, sizeof(buffer));
    printf("read %zd bytes\n", size);
    return 0;
  }
  const int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) {
    printf("create refused: %s\n", strerror(errno));
    return 3;
  }
  const ssize_t size = write(fd, "written by a skill\n", 19);
  printf("wrote %zd bytes\n", size);
  return 0;
}
