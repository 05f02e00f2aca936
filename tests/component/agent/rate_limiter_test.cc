#include "component/agent/rate_limiter.h"

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
