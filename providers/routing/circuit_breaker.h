// providers/routing/circuit_breaker.h
//
// CircuitBreaker keeps a failing provider from being asked again and again (P2, P3). It is
// closed while calls succeed; after `failure_threshold` consecutive failures it opens and
// refuses calls, so the router falls over at once instead of waiting for timeouts; once
// `cooldown` has passed it lets exactly one trial call through (half-open): success closes
// it, failure opens it for another cooldown. The clock is injectable so tests can move time.
//
//   CircuitBreaker breaker({.failure_threshold = 5, .cooldown = absl::Seconds(30)});
//   CircuitBreaker::Admission admission = breaker.Admit();
//   if (admission == CircuitBreaker::Admission::kRejected) { /* fall over */ }
//   ... call the provider ...
//   breaker.Record(admission, CircuitBreaker::Outcome::kFailure);
//
// Every admitted call must be recorded exactly once, or a half-open breaker stays waiting
// for its trial. Thread-safe.
#pragma once

#include <functional>

#include "absl/base/thread_annotations.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "component/base/mutex.h"

namespace herald::providers {

class CircuitBreaker {
 public:
  using Clock = std::function<absl::Time()>;

  struct Options {
    int failure_threshold = 5;  // < 1 is treated as 1
    absl::Duration cooldown = absl::Seconds(30);
  };

  enum class State { kClosed, kOpen, kHalfOpen };

  // Which kind of call was let through: an ordinary one (closed) or the one trial call of a
  // half-open breaker. Record needs it so that a slow call admitted before the breaker opened
  // is never mistaken for the trial.
  enum class Admission { kRejected, kNormal, kTrial };

  // kNeutral: the call ended in a way that says nothing about the provider's health (the
  // caller cancelled it); a trial is released so the next call becomes the trial.
  enum class Outcome { kSuccess, kFailure, kNeutral };

  explicit CircuitBreaker(Options options, Clock clock = absl::Now);

  Admission Admit() ABSL_LOCKS_EXCLUDED(mu_);
  void Record(Admission admission, Outcome outcome) ABSL_LOCKS_EXCLUDED(mu_);

  State state() const ABSL_LOCKS_EXCLUDED(mu_);
  // While open: how long until the next trial is let through; zero otherwise.
  absl::Duration RemainingCooldown() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  const Options options_;
  const Clock clock_;
  mutable base::Mutex mu_;
  State state_ ABSL_GUARDED_BY(mu_) = State::kClosed;
  int consecutive_failures_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Time opened_at_ ABSL_GUARDED_BY(mu_);
  bool trial_in_flight_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace herald::providers
