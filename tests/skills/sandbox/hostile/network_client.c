// Hostile skill (and capability probe): opens a TCP socket and connects to 127.0.0.1:$PORT,
// then prints the line the server sends. Prints which step was refused, and why.
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int main(void) {
  const char* port = getenv("PORT");
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) {
    printf("socket refused: %s\n", strerror(errno));
    return 3;
  }
  if (port == NULL) return 2;
  struct sockaddr_in address;
  memset(&address, 0, sizeof(address));
  address.sin_family = AF_INET;
  address.sin_port = htons((unsigned short)atoi(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, (struct sockaddr*)&address, sizeof(address)) != 0) {
    printf("connect refused: %s\n", strerror(errno));
    return 4;
  }
  char line[256];
  const ssize_t size = read(fd, line, sizeof(line) - 1);
  line[size > 0 ? size : 0] = '\0';
  printf("connected: %s\n", line);
  return 0;
}
