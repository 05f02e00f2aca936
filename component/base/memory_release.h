// component/base/memory_release.h
//
// MemoryRelease gives the memory Herald freed after a burst back to the system. glibc's
// allocator keeps freed heap memory resident (it returns only the top of an arena by itself),
// so after 10,000 conversations at once Herald's RSS would stay at the burst's peak for the
// life of the process: 422 MiB where 205 MiB is in use (docs/BENCHMARKS.md). malloc_trim(0)
// hands every whole free page of every arena back.
//
// A trim takes each arena's lock in turn while it walks that arena's free chunks (16–80 ms
// for a 400 MiB heap), so it runs on the worker pool, never on the I/O loop, and only when it
// is likely to be worth it: every `period` the worker reads the process's resident size, and
// trims when it is more than `slack` above what the last trim left and has stopped growing
// (a burst is over, or memory stays up at a plateau). Memory in use is never affected; what a
// trim gave back is taken again, page by page, when it is needed.
//
//   auto release = base::MemoryRelease::Start(loop.io(), loop.workers());
//   // destroyed before the loop (declared after it): the timer stops
#pragma once

#include <asio.hpp>
#include <atomic>
#include <cstdint>
#include <memory>

#include "absl/time/time.h"

namespace herald::base {

class MemoryRelease {
 public:
  struct Options {
    absl::Duration period = absl::Seconds(10);
    int64_t slack_bytes = int64_t{32} << 20;
  };

  // What one check decides, from the resident sizes it reads (pure: for tests).
  struct Sizes {
    int64_t now = 0;       // resident bytes at this check
    int64_t previous = 0;  // at the check before (or after its trim)
    int64_t baseline = 0;  // what the last trim left (at the start: the first check's size)
  };
  static bool WorthTrimming(const Sizes& sizes, int64_t slack_bytes);

  // The process's resident bytes (/proc/self/statm), or -1 when they cannot be read.
  static int64_t ResidentBytes();

  // Arms the first check one `period` from now. Call on the I/O loop's thread or before it
  // runs; the checks themselves run on `workers`.
  static std::unique_ptr<MemoryRelease> Start(asio::io_context& io, asio::thread_pool& workers,
                                              Options options);
  static std::unique_ptr<MemoryRelease> Start(asio::io_context& io, asio::thread_pool& workers) {
    return Start(io, workers, Options());
  }
  ~MemoryRelease();
  MemoryRelease(const MemoryRelease&) = delete;
  MemoryRelease& operator=(const MemoryRelease&) = delete;

  // How many trims ran so far (for tests and the log).
  int64_t trims() const;

 private:
  // The sizes checks share; a check on the pool may outlive this object by a moment.
  struct State {
    std::atomic<int64_t> previous{0};
    std::atomic<int64_t> baseline{0};
    std::atomic<int64_t> trims{0};
    std::atomic<bool> checking{false};  // a check is queued or running: never two at once
  };

  MemoryRelease(asio::io_context& io, asio::thread_pool& workers, Options options);
  void Arm();
  static void Check(State& state, int64_t slack_bytes);

  asio::thread_pool& workers_;
  const Options options_;
  asio::steady_timer timer_;
  const std::shared_ptr<State> state_ = std::make_shared<State>();
};

}  // namespace herald::base
