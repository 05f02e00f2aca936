// tools/heraldctl/target.h
//
// The address heraldctl dials: "unix:PATH" (Herald's default, a socket under its data dir)
// or "HOST:PORT" ("127.0.0.1:50051", "[::1]:50051", "herald.example.org:50051"). Whether a
// host is loopback decides whether plaintext is allowed without --insecure.
//
//   absl::StatusOr<Target> target = ParseTarget("127.0.0.1:50051");
//   if (target->is_unix || target->IsLoopback()) { ...plaintext is fine... }
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace herald::heraldctl {

struct Target {
  bool is_unix = false;
  std::string path;  // unix: the socket path
  std::string host;  // TCP: as written, IPv6 with its brackets
  int port = 0;

  // 127.0.0.0/8, [::1] or localhost.
  bool IsLoopback() const;
};

// InvalidArgument says what is wrong with the address.
absl::StatusOr<Target> ParseTarget(std::string_view text);

}  // namespace herald::heraldctl
