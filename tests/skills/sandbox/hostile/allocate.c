// Hostile skill: asks for 10 GiB and touches every page of it.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void) {
  const size_t size = (size_t)10 << 30;
  char* memory = malloc(size);
  if (memory == NULL) {
    printf("allocation of 10 GiB refused\n");
    return 3;
  }
  memset(memory, 1, size);
  printf("allocated and touched 10 GiB\n");
  return 0;
}
