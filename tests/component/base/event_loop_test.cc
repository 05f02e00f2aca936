#include "component/base/event_loop.h"

#include <asio.hpp>
#include <atomic>
#include <memory>

#include "gtest/gtest.h"

namespace herald::base {
namespace {

// Issue 16, finding 11: a coroutine suspended on the loop while holding a strand of the pool
// (as one waiting for a memory read does) was destroyed after the pool, a use-after-free that
// AddressSanitizer reports (tools/test --asan). EventLoop ends the loop first.
TEST(EventLoopTest, DestroysCoroutinesLeftInTheLoopWhileThePoolTheyHoldStillExists) {
  auto loop = std::make_unique<EventLoop>(1);
  bool suspended = false;
  bool resumed = false;
  asio::co_spawn(
      loop->io(),
      [&]() -> asio::awaitable<void> {
        auto files = asio::make_strand(loop->workers().get_executor());
        asio::steady_timer never(loop->io(), asio::steady_timer::time_point::max());
        suspended = true;
        co_await never.async_wait(asio::use_awaitable);
        resumed = true;
      },
      asio::detached);
  loop->io().poll();
  ASSERT_TRUE(suspended);
  loop.reset();
  EXPECT_FALSE(resumed);
}

TEST(EventLoopTest, RunsThePoolsQueuedWorkBeforeTheLoopEnds) {
  std::atomic<int> ran{0};
  {
    EventLoop loop(2);
    for (int i = 0; i < 100; ++i) asio::post(loop.workers(), [&] { ++ran; });
    // Work that posts its result back to the loop finds the loop still there.
    asio::post(loop.workers(), [&] { asio::post(loop.io(), [&] { ++ran; }); });
  }
  EXPECT_EQ(ran.load(), 100);  // the loop was never run again: the last result was dropped
}

}  // namespace
}  // namespace herald::base
