#include "component/base/backoff.h"

#include <set>

#include "gtest/gtest.h"

namespace herald::base {
namespace {

TEST(BackoffTest, GrowsExponentiallyWithinTheUpperHalfOfEachStep) {
  Backoff backoff(absl::Seconds(1), absl::Seconds(60));
  const absl::Duration steps[] = {absl::Seconds(1), absl::Seconds(2), absl::Seconds(4),
                                  absl::Seconds(8)};
  for (absl::Duration step : steps) {
    const absl::Duration delay = backoff.Next();
    EXPECT_GE(delay, step / 2);
    EXPECT_LE(delay, step);
  }
}

TEST(BackoffTest, NeverExceedsTheMaximumHoweverLongTheOutage) {
  Backoff backoff(absl::Seconds(1), absl::Seconds(60));
  for (int i = 0; i < 10000; ++i) EXPECT_LE(backoff.Next(), absl::Seconds(60));
}

TEST(BackoffTest, StartsOverAfterReset) {
  Backoff backoff(absl::Seconds(1), absl::Seconds(60));
  for (int i = 0; i < 10; ++i) backoff.Next();
  backoff.Reset();
  EXPECT_LE(backoff.Next(), absl::Seconds(1));
}

TEST(BackoffTest, SpreadsTheDelaysOfManyClients) {
  // Jitter: 100 Heralds restarted together must not all come back at the same instant.
  std::set<int64_t> distinct;
  for (int i = 0; i < 100; ++i) {
    Backoff backoff(absl::Seconds(1), absl::Seconds(60));
    distinct.insert(absl::ToInt64Microseconds(backoff.Next()));
  }
  EXPECT_GT(distinct.size(), 50u);
}

}  // namespace
}  // namespace herald::base
