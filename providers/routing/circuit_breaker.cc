#include "providers/routing/circuit_breaker.h"

#include <algorithm>
#include <utility>

namespace herald::providers {

CircuitBreaker::CircuitBreaker(Options options, Clock clock)
    : options_{std::max(options.failure_threshold, 1),
               std::max(options.cooldown, absl::ZeroDuration())},
      clock_(std::move(clock)) {}

CircuitBreaker::Admission CircuitBreaker::Admit() {
  base::MutexLock lock(&mu_);
  switch (state_) {
    case State::kClosed:
      return Admission::kNormal;
    case State::kOpen:
      if (clock_() - opened_at_ < options_.cooldown) return Admission::kRejected;
      state_ = State::kHalfOpen;
      trial_in_flight_ = true;
      return Admission::kTrial;
    case State::kHalfOpen:
      // One trial at a time: a provider that is still down should cost one timeout, not one
      // per waiting conversation.
      if (trial_in_flight_) return Admission::kRejected;
      trial_in_flight_ = true;
      return Admission::kTrial;
  }
  return Admission::kRejected;
}

void CircuitBreaker::Record(Admission admission, Outcome outcome) {
  base::MutexLock lock(&mu_);
  switch (admission) {
    case Admission::kRejected:
      return;
    case Admission::kTrial:
      if (state_ != State::kHalfOpen) return;
      trial_in_flight_ = false;
      if (outcome == Outcome::kSuccess) {
        state_ = State::kClosed;
        consecutive_failures_ = 0;
      } else if (outcome == Outcome::kFailure) {
        state_ = State::kOpen;
        opened_at_ = clock_();
      }
      return;
    case Admission::kNormal:
      // Calls admitted before the breaker opened may end after it did; their outcome is old
      // news and must not close an open breaker nor extend its cooldown.
      if (state_ != State::kClosed) return;
      if (outcome == Outcome::kSuccess) {
        consecutive_failures_ = 0;
      } else if (outcome == Outcome::kFailure) {
        if (++consecutive_failures_ >= options_.failure_threshold) {
          state_ = State::kOpen;
          opened_at_ = clock_();
        }
      }
      return;
  }
}

CircuitBreaker::State CircuitBreaker::state() const {
  base::MutexLock lock(&mu_);
  return state_;
}

absl::Duration CircuitBreaker::RemainingCooldown() const {
  base::MutexLock lock(&mu_);
  if (state_ != State::kOpen) return absl::ZeroDuration();
  return std::max(options_.cooldown - (clock_() - opened_at_), absl::ZeroDuration());
}

}  // namespace herald::providers
