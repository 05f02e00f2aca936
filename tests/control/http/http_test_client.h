// tests/control/http/http_test_client.h
//
// A blocking HTTP client of raw bytes for the tests of Herald's HTTP listener: what a test
// writes is exactly what the server reads (malformed requests included), and what it reads
// back is the server's bytes, head and all.
//
//   std::string answer = HttpExchange(port, "GET /metrics HTTP/1.1\r\nHost: h\r\n"
//                                           "Connection: close\r\n\r\n");
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace herald::control::http::testing {

// A connection to 127.0.0.1:`port` whose reads give up after 10 s; -1 when it fails.
inline int ConnectTo(uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    ::close(fd);
    return -1;
  }
  timeval timeout{.tv_sec = 10, .tv_usec = 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  return fd;
}

inline void SendAll(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n <= 0) return;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
}

// Everything until the server closes (or a read waits 10 s).
inline std::string ReadToClose(int fd) {
  std::string out;
  char buffer[8192];
  for (ssize_t n; (n = ::recv(fd, buffer, sizeof(buffer), 0)) > 0;) {
    out.append(buffer, static_cast<size_t>(n));
  }
  return out;
}

// Sends `request` on a new connection and returns all the server sent back.
inline std::string HttpExchange(uint16_t port, std::string_view request) {
  const int fd = ConnectTo(port);
  if (fd < 0) return "";
  SendAll(fd, request);
  std::string answer = ReadToClose(fd);
  ::close(fd);
  return answer;
}

}  // namespace herald::control::http::testing
