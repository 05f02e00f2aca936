#include "component/base/memory_release.h"

#include <malloc.h>
#include <unistd.h>

#include <cstdio>
#include <utility>

#include "absl/time/clock.h"
#include "glog/logging.h"

namespace herald::base {

bool MemoryRelease::WorthTrimming(const Sizes& sizes, int64_t slack_bytes) {
  if (sizes.now < 0) return false;
  return sizes.now > sizes.baseline + slack_bytes && sizes.now <= sizes.previous;
}

int64_t MemoryRelease::ResidentBytes() {
  std::FILE* statm = std::fopen("/proc/self/statm", "re");
  if (statm == nullptr) return -1;
  long long size_pages = 0;
  long long resident_pages = 0;
  const int read = std::fscanf(statm, "%lld %lld", &size_pages, &resident_pages);
  std::fclose(statm);
  if (read != 2) return -1;
  return static_cast<int64_t>(resident_pages) * sysconf(_SC_PAGESIZE);
}

std::unique_ptr<MemoryRelease> MemoryRelease::Start(asio::io_context& io,
                                                    asio::thread_pool& workers, Options options) {
  std::unique_ptr<MemoryRelease> release(new MemoryRelease(io, workers, options));
  release->Arm();
  return release;
}

MemoryRelease::MemoryRelease(asio::io_context& io, asio::thread_pool& workers, Options options)
    : workers_(workers), options_(options), timer_(io) {
  const int64_t now = ResidentBytes();
  state_->previous = now;
  state_->baseline = now;
}

MemoryRelease::~MemoryRelease() { timer_.cancel(); }

int64_t MemoryRelease::trims() const { return state_->trims; }

void MemoryRelease::Arm() {
  timer_.expires_after(absl::ToChronoNanoseconds(options_.period));
  timer_.async_wait([this](const asio::error_code& error) {
    if (error) return;  // cancelled: this object is going
    // A check still running (a slow trim) is not joined by a second one.
    if (!state_->checking.exchange(true)) {
      asio::post(workers_, [state = state_, slack = options_.slack_bytes] {
        Check(*state, slack);
        state->checking = false;
      });
    }
    Arm();
  });
}

void MemoryRelease::Check(State& state, int64_t slack_bytes) {
  const Sizes sizes{.now = ResidentBytes(), .previous = state.previous, .baseline = state.baseline};
  if (!WorthTrimming(sizes, slack_bytes)) {
    if (sizes.now >= 0) state.previous = sizes.now;
    return;
  }
  const absl::Time started = absl::Now();
  malloc_trim(0);
  const absl::Duration took = absl::Now() - started;
  const int64_t read = ResidentBytes();
  const int64_t after = read >= 0 ? read : sizes.now;
  state.previous = after;
  state.baseline = after;
  ++state.trims;
  LOG(INFO) << "herald: gave " << ((sizes.now - after) >> 20) << " MiB of freed memory back ("
            << (sizes.now >> 20) << " -> " << (after >> 20) << " MiB resident) in " << took;
}

}  // namespace herald::base
