// component/base/backoff.h
//
// Reconnect delays: exponential growth from `initial` to `max`, each delay drawn uniformly
// from the upper half of its step ("equal jitter"), so that many Heralds restarted with one
// server do not reconnect in lockstep and no delay collapses to zero.
//
//   Backoff backoff(absl::Seconds(1), absl::Minutes(1));
//   absl::Duration wait = backoff.Next();   // 0.5–1 s, then 1–2 s, 2–4 s ... ≤ 1 min
//   backoff.Reset();                        // after a connection that worked
#pragma once

#include "absl/random/random.h"
#include "absl/time/time.h"

namespace herald::base {

class Backoff {
 public:
  Backoff(absl::Duration initial, absl::Duration max);

  absl::Duration Next();
  void Reset() { attempt_ = 0; }
  int attempts() const { return attempt_; }

 private:
  absl::Duration initial_;
  absl::Duration max_;
  int attempt_ = 0;
  absl::BitGen rng_;
};

}  // namespace herald::base
