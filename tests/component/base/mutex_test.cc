// base::Mutex: it excludes, a waiter wakes when another thread changes its condition under the
// lock (with no separate signal), and a timed wait gives up.
#include "component/base/mutex.h"

#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace herald::base {
namespace {

TEST(MutexTest, Excludes) {
  Mutex mu;
  int count = 0;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 10000; ++i) {
        MutexLock lock(&mu);
        ++count;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  MutexLock lock(&mu);
  EXPECT_EQ(count, 40000);
}

TEST(MutexTest, AwaitWakesWhenAnotherThreadMakesTheConditionTrue) {
  Mutex mu;
  int stage = 0;
  std::thread other([&] {
    MutexLock lock(&mu);
    mu.Await([&] { return stage == 1; });
    stage = 2;
  });
  {
    MutexLock lock(&mu);
    stage = 1;
  }
  {
    MutexLock lock(&mu, [&] { return stage == 2; });
    EXPECT_EQ(stage, 2);
  }
  other.join();
}

TEST(MutexTest, AwaitWithTimeoutGivesUpAndKeepsTheLock) {
  Mutex mu;
  MutexLock lock(&mu);
  EXPECT_FALSE(mu.AwaitWithTimeout([] { return false; }, absl::Milliseconds(20)));
  EXPECT_TRUE(mu.AwaitWithTimeout([] { return true; }, absl::Milliseconds(20)));
}

TEST(MutexTest, LockWhenWithTimeoutHoldsTheMutexEitherWay) {
  Mutex mu;
  bool ready = false;
  EXPECT_FALSE(mu.LockWhenWithTimeout([&] { return ready; }, absl::Milliseconds(10)));
  ready = true;
  mu.Unlock();
  EXPECT_TRUE(mu.LockWhenWithTimeout([&] { return ready; }, absl::Milliseconds(10)));
  mu.Unlock();
}

}  // namespace
}  // namespace herald::base
