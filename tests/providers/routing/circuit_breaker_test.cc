#include "providers/routing/circuit_breaker.h"

#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace herald::providers {
namespace {

using Admission = CircuitBreaker::Admission;
using Outcome = CircuitBreaker::Outcome;
using State = CircuitBreaker::State;

class CircuitBreakerTest : public ::testing::Test {
 protected:
  CircuitBreaker MakeBreaker(int failures, absl::Duration cooldown) {
    return CircuitBreaker({.failure_threshold = failures, .cooldown = cooldown},
                          [this] { return now_; });
  }
  void Fail(CircuitBreaker& breaker) { breaker.Record(breaker.Admit(), Outcome::kFailure); }

  absl::Time now_ = absl::FromUnixSeconds(1700000000);
};

TEST_F(CircuitBreakerTest, StaysClosedBelowTheFailureThreshold) {
  CircuitBreaker breaker = MakeBreaker(3, absl::Seconds(30));
  Fail(breaker);
  Fail(breaker);
  EXPECT_EQ(breaker.state(), State::kClosed);
  EXPECT_EQ(breaker.Admit(), Admission::kNormal);
}

TEST_F(CircuitBreakerTest, OpensAfterConsecutiveFailuresAndRefusesCalls) {
  CircuitBreaker breaker = MakeBreaker(3, absl::Seconds(30));
  Fail(breaker);
  Fail(breaker);
  Fail(breaker);
  EXPECT_EQ(breaker.state(), State::kOpen);
  EXPECT_EQ(breaker.Admit(), Admission::kRejected);
  EXPECT_EQ(breaker.RemainingCooldown(), absl::Seconds(30));
}

TEST_F(CircuitBreakerTest, ASuccessResetsTheFailureCount) {
  CircuitBreaker breaker = MakeBreaker(3, absl::Seconds(30));
  Fail(breaker);
  Fail(breaker);
  breaker.Record(breaker.Admit(), Outcome::kSuccess);
  Fail(breaker);
  Fail(breaker);
  EXPECT_EQ(breaker.state(), State::kClosed);
}

TEST_F(CircuitBreakerTest, LetsOneTrialThroughOnceTheCooldownHasPassed) {
  CircuitBreaker breaker = MakeBreaker(1, absl::Seconds(30));
  Fail(breaker);
  now_ += absl::Seconds(29);
  EXPECT_EQ(breaker.Admit(), Admission::kRejected);
  EXPECT_EQ(breaker.RemainingCooldown(), absl::Seconds(1));
  now_ += absl::Seconds(1);
  EXPECT_EQ(breaker.Admit(), Admission::kTrial);
  EXPECT_EQ(breaker.state(), State::kHalfOpen);
  // Only one trial at a time.
  EXPECT_EQ(breaker.Admit(), Admission::kRejected);
}

TEST_F(CircuitBreakerTest, ClosesWhenTheTrialSucceeds) {
  CircuitBreaker breaker = MakeBreaker(2, absl::Seconds(30));
  Fail(breaker);
  Fail(breaker);
  now_ += absl::Seconds(30);
  breaker.Record(breaker.Admit(), Outcome::kSuccess);
  EXPECT_EQ(breaker.state(), State::kClosed);
  EXPECT_EQ(breaker.Admit(), Admission::kNormal);
  // The failure count starts over: one failure does not reopen a threshold-2 breaker.
  Fail(breaker);
  EXPECT_EQ(breaker.state(), State::kClosed);
}

TEST_F(CircuitBreakerTest, ReopensForAFullCooldownWhenTheTrialFails) {
  CircuitBreaker breaker = MakeBreaker(1, absl::Seconds(30));
  Fail(breaker);
  now_ += absl::Seconds(45);
  Admission trial = breaker.Admit();
  ASSERT_EQ(trial, Admission::kTrial);
  now_ += absl::Seconds(5);
  breaker.Record(trial, Outcome::kFailure);
  EXPECT_EQ(breaker.state(), State::kOpen);
  EXPECT_EQ(breaker.RemainingCooldown(), absl::Seconds(30));
  now_ += absl::Seconds(29);
  EXPECT_EQ(breaker.Admit(), Admission::kRejected);
}

TEST_F(CircuitBreakerTest, ACancelledTrialHandsTheTrialToTheNextCall) {
  CircuitBreaker breaker = MakeBreaker(1, absl::Seconds(30));
  Fail(breaker);
  now_ += absl::Seconds(30);
  breaker.Record(breaker.Admit(), Outcome::kNeutral);
  EXPECT_EQ(breaker.state(), State::kHalfOpen);
  EXPECT_EQ(breaker.Admit(), Admission::kTrial);
}

TEST_F(CircuitBreakerTest, ALateResultOfACallAdmittedBeforeOpeningIsIgnored) {
  CircuitBreaker breaker = MakeBreaker(1, absl::Seconds(30));
  Admission slow = breaker.Admit();
  Fail(breaker);
  ASSERT_EQ(breaker.state(), State::kOpen);
  now_ += absl::Seconds(30);
  Admission trial = breaker.Admit();
  ASSERT_EQ(trial, Admission::kTrial);
  // The slow call's success is not the trial's: the breaker keeps waiting for the trial.
  breaker.Record(slow, Outcome::kSuccess);
  EXPECT_EQ(breaker.state(), State::kHalfOpen);
  breaker.Record(trial, Outcome::kFailure);
  EXPECT_EQ(breaker.state(), State::kOpen);
}

}  // namespace
}  // namespace herald::providers
