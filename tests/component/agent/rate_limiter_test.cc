#include "component/agent/rate_limiter.h"

#include <deque>
#include <random>
#include <string>

#include "gtest/gtest.h"

namespace herald::agent {
namespace {

const absl::Time kStart = absl::FromUnixSeconds(1700000000);

TEST(RateLimiterTest, AllowsTheLimitPerWindowThenRefuses) {
  RateLimiter limiter(3);
  EXPECT_TRUE(limiter.Allow("alice", kStart));
  EXPECT_TRUE(limiter.Allow("alice", kStart + absl::Seconds(1)));
  EXPECT_TRUE(limiter.Allow("alice", kStart + absl::Seconds(2)));
  EXPECT_FALSE(limiter.Allow("alice", kStart + absl::Seconds(3)));
}

TEST(RateLimiterTest, SendersAreCountedApart) {
  RateLimiter limiter(1);
  EXPECT_TRUE(limiter.Allow("alice", kStart));
  EXPECT_TRUE(limiter.Allow("bob", kStart));
  EXPECT_FALSE(limiter.Allow("alice", kStart));
}

TEST(RateLimiterTest, TheWindowSlides) {
  RateLimiter limiter(2);
  EXPECT_TRUE(limiter.Allow("alice", kStart));
  EXPECT_TRUE(limiter.Allow("alice", kStart + absl::Seconds(30)));
  EXPECT_FALSE(limiter.Allow("alice", kStart + absl::Seconds(59)));
  EXPECT_TRUE(limiter.Allow("alice", kStart + absl::Seconds(61)));  // the first has left
}

// Over many windows, with refusals between the allowed attempts, every answer is the one a
// plain sliding log (every counted attempt kept in a deque) gives.
TEST(RateLimiterTest, AnswersAsASlidingLogDoesOverManyWindows) {
  constexpr int kLimit = 7;
  RateLimiter limiter(kLimit);
  std::deque<absl::Time> log;
  std::mt19937 random(9);
  std::uniform_int_distribution<int> gap_ms(0, 12000);
  absl::Time now = kStart;
  int allowed = 0;
  for (int i = 0; i < 5000; ++i) {
    now += absl::Milliseconds(gap_ms(random));
    while (!log.empty() && now - log.front() >= absl::Minutes(1)) log.pop_front();
    const bool expected = static_cast<int>(log.size()) < kLimit;
    if (expected) log.push_back(now);
    ASSERT_EQ(limiter.Allow("alice", now), expected) << "attempt " << i;
    allowed += expected;
  }
  // Both answers happened many times, so the window filled and emptied again and again.
  EXPECT_GT(allowed, 1000);
  EXPECT_LT(allowed, 4900);
}

TEST(RateLimiterTest, ZeroMeansUnlimited) {
  RateLimiter limiter(0);
  for (int i = 0; i < 10000; ++i) ASSERT_TRUE(limiter.Allow("alice", kStart));
}

TEST(RateLimiterTest, ForgetsIdleSendersSoAFloodOfNamesCannotGrowIt) {
  RateLimiter limiter(5);
  for (int i = 0; i < 1000; ++i) limiter.Allow("sender" + std::to_string(i), kStart);
  limiter.Allow("late", kStart + absl::Minutes(2));
  EXPECT_EQ(limiter.tracked_keys(), 1u);
}

}  // namespace
}  // namespace herald::agent
