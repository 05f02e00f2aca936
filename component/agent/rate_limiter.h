// component/agent/rate_limiter.h
//
// RateLimiter bounds how many messages one sender may send per minute (A6), so that a
// flooding client — or a bot in a loop — costs one log line per minute instead of a model
// call per message. A sliding window per key; keys idle for a window are forgotten, so a
// flood of distinct senders cannot grow it without bound.
//
//   RateLimiter limiter(20);                     // 20 per minute; 0 = unlimited
//   if (!limiter.Allow("alice@localhost", absl::Now())) Reply("Slow down, please.");
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/time/time.h"

namespace herald::agent {

class RateLimiter {
 public:
  explicit RateLimiter(int per_minute, absl::Duration window = absl::Minutes(1));

  // Records an attempt at `now`; false when the key is over its limit (not counted then).
  bool Allow(std::string_view key, absl::Time now);

  size_t tracked_keys() const { return recent_.size(); }

 private:
  // One key's attempts, oldest first; those before `first` have left the window. A vector
  // (one allocation of a few bytes for a sender who wrote once) rather than a deque, which
  // allocates half a kilobyte for its first element: every sender active in the last window
  // has one.
  struct Attempts {
    std::vector<absl::Time> times;
    size_t first = 0;

    size_t in_window() const { return times.size() - first; }
  };

  void ForgetIdle(absl::Time now);

  int limit_;
  absl::Duration window_;
  absl::flat_hash_map<std::string, Attempts> recent_;
  absl::Time last_sweep_ = absl::InfinitePast();
};

}  // namespace herald::agent
