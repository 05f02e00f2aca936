// component/storage/shared_state_refresh.h
//
// With a store several instances share ([storage] backend = "postgresql"), what the other
// instances record and change reaches this one's memory here: every two seconds the usage
// ledger re-reads the limits and the current windows' totals (UsageLedger::Refresh), so that
// a limit set through any instance, and calls made by all of them, count in this instance's
// pre-call check; and the instance registry beats (this instance is alive, who else is). The reads
// run on the worker pool; at most one at a time (a slow database skips a beat rather than piling
// reads up). A failed read is tried again at the next beat, and the last good view stays in
// force; the log says when the database goes away and when it is back, not at every beat.
//
// Construct it after the EventLoop whose loop and pool it uses (component/base/event_loop.h)
// and let it end before the loop does; its timer lives on the loop.
//
//   std::unique_ptr<SharedStateRefresh> refresh = SharedStateRefresh::For(io, workers, *stores);
#pragma once

#include <asio.hpp>
#include <atomic>
#include <memory>

#include "absl/time/time.h"
#include "component/ledger/usage_ledger.h"
#include "component/storage/instance_registry.h"
#include "component/storage/stores.h"

namespace herald::storage {

class SharedStateRefresh {
 public:
  static constexpr absl::Duration kInterval = absl::Seconds(2);

  // `instances` (may be null) beats with the same timer.
  SharedStateRefresh(asio::io_context& io, asio::thread_pool& workers, ledger::UsageLedger& ledger,
                     InstanceRegistry* instances, absl::Duration interval = kInterval);
  // The refresh of `stores`' shared state; null when nothing is shared (backend "sqlite").
  static std::unique_ptr<SharedStateRefresh> For(asio::io_context& io, asio::thread_pool& workers,
                                                 Stores& stores);
  SharedStateRefresh(const SharedStateRefresh&) = delete;
  SharedStateRefresh& operator=(const SharedStateRefresh&) = delete;

 private:
  void Arm();

  asio::steady_timer timer_;
  asio::thread_pool& workers_;
  ledger::UsageLedger& ledger_;
  InstanceRegistry* const instances_;
  const absl::Duration interval_;
  std::atomic<bool> reading_{false};  // a Refresh is running on the pool
  // The last beat failed (read and written by one beat at a time, ordered by reading_).
  bool failing_ = false;
};

}  // namespace herald::storage
