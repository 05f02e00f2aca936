#include "component/base/memory_release.h"

#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "component/base/event_loop.h"
#include "component/base/sanitizers.h"
#include "gtest/gtest.h"

namespace herald::base {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;

TEST(MemoryReleaseTest, TrimsOnlyWhenWellAboveTheLastTrimAndNoLongerGrowing) {
  const int64_t slack = 32 * kMiB;
  // Grown far above the baseline and steady since the last check: the burst is over.
  EXPECT_TRUE(MemoryRelease::WorthTrimming(
      {.now = 400 * kMiB, .previous = 400 * kMiB, .baseline = 40 * kMiB}, slack));
  // Shrinking a little (the top of the heap went back by itself) counts as not growing.
  EXPECT_TRUE(MemoryRelease::WorthTrimming(
      {.now = 390 * kMiB, .previous = 400 * kMiB, .baseline = 40 * kMiB}, slack));
  // Still growing: the burst goes on, and what it freed so far it will take again.
  EXPECT_FALSE(MemoryRelease::WorthTrimming(
      {.now = 400 * kMiB, .previous = 300 * kMiB, .baseline = 40 * kMiB}, slack));
  // Within the slack of what the last trim left: nothing worth a trim.
  EXPECT_FALSE(MemoryRelease::WorthTrimming(
      {.now = 70 * kMiB, .previous = 70 * kMiB, .baseline = 40 * kMiB}, slack));
  // The size could not be read.
  EXPECT_FALSE(MemoryRelease::WorthTrimming(
      {.now = -1, .previous = 400 * kMiB, .baseline = 40 * kMiB}, slack));
}

TEST(MemoryReleaseTest, ResidentBytesAreThoseOfThisProcess) {
  const int64_t resident = MemoryRelease::ResidentBytes();
  EXPECT_GT(resident, 0);
  EXPECT_LT(resident, int64_t{64} << 30);
}

// Memory freed after a burst stays resident until a check gives it back.
TEST(MemoryReleaseTest, MemoryFreedAfterABurstIsGivenBack) {
  // AddressSanitizer and ThreadSanitizer bring their own allocator, which malloc_trim (glibc's)
  // does not reach.
  if (kUnderSanitizer) GTEST_SKIP() << "the sanitizer's allocator is not glibc's";
  EventLoop loop(/*worker_threads=*/1);
  // Checks half a second apart: a trim needs two of them to see the same size, so none comes
  // between the burst's allocations and its frees (milliseconds apart).
  auto release = MemoryRelease::Start(
      loop.io(), loop.workers(), {.period = absl::Milliseconds(500), .slack_bytes = 16 * kMiB});
  std::thread io([&loop] {
    auto work = asio::make_work_guard(loop.io());
    loop.io().run();
  });

  // The burst: 96 MiB in 16 KiB pieces (below the size glibc maps on its own), every page
  // written. The last piece stays, so the heap's top cannot go back by itself.
  constexpr size_t kPiece = 16 << 10;
  constexpr size_t kPieces = (96 << 20) / kPiece;
  std::vector<char*> pieces;
  for (size_t i = 0; i < kPieces; ++i) {
    pieces.push_back(static_cast<char*>(std::malloc(kPiece)));
    std::memset(pieces.back(), 1, kPiece);
  }
  const int64_t at_peak = MemoryRelease::ResidentBytes();
  for (size_t i = 0; i + 1 < kPieces; ++i) std::free(pieces[i]);
  // Without a trim the freed pieces stay resident (what this unit is for).
  EXPECT_GT(MemoryRelease::ResidentBytes(), at_peak - 16 * kMiB);

  // The trim counts itself after it read the size it left: wait for both.
  const auto given_back = [&] {
    return release->trims() > 0 && MemoryRelease::ResidentBytes() <= at_peak - 64 * kMiB;
  };
  const absl::Time deadline = absl::Now() + absl::Seconds(20);
  while (!given_back() && absl::Now() < deadline) absl::SleepFor(absl::Milliseconds(10));
  EXPECT_LE(MemoryRelease::ResidentBytes(), at_peak - 64 * kMiB);
  EXPECT_EQ(release->trims(), 1);

  std::free(pieces.back());
  loop.io().stop();
  io.join();
  release.reset();
}

}  // namespace
}  // namespace herald::base
