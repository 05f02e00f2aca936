// tests/tools/heraldctl/wait_until.h
//
// How a heraldctl test waits for something another thread does when nothing tells it: the
// reader of a pipe has taken every byte in it (and so waits for more), a terminal's echo has
// been turned off. WaitUntil looks again every millisecond until the condition holds or the
// timeout passes, so a test takes as long as the condition does, and fails instead of hanging
// when it never comes.
//
//   ASSERT_TRUE(WaitUntil([&] { return UnreadBytes(fd) == 0; }));
#pragma once

#include <sys/ioctl.h>

#include <functional>

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace herald::heraldctl::testing {

// True once `condition` holds; false when `timeout` passed first.
inline bool WaitUntil(const std::function<bool()>& condition,
                      absl::Duration timeout = absl::Seconds(10)) {
  absl::Time deadline = absl::Now() + timeout;
  while (!condition()) {
    if (absl::Now() >= deadline) return false;
    absl::SleepFor(absl::Milliseconds(1));
  }
  return true;
}

// The bytes written into a pipe that its reader has not taken yet (`fd` is the pipe's read
// end); -1 when that cannot be told.
inline int UnreadBytes(int fd) {
  int unread = 0;
  return ioctl(fd, FIONREAD, &unread) == 0 ? unread : -1;
}

}  // namespace herald::heraldctl::testing
