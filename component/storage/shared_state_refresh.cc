#include "component/storage/shared_state_refresh.h"

#include "absl/time/clock.h"
#include "glog/logging.h"

namespace herald::storage {

SharedStateRefresh::SharedStateRefresh(asio::io_context& io, asio::thread_pool& workers,
                                       ledger::UsageLedger& ledger, absl::Duration interval)
    : timer_(io), workers_(workers), ledger_(ledger), interval_(interval) {
  Arm();
}

void SharedStateRefresh::Arm() {
  timer_.expires_after(absl::ToChronoNanoseconds(interval_));
  timer_.async_wait([this](const asio::error_code& error) {
    if (error) return;  // cancelled: Herald is stopping
    if (!reading_.exchange(true)) {
      asio::post(workers_, [this] {
        absl::Status refreshed = ledger_.Refresh(absl::Now());
        if (!refreshed.ok()) {
          LOG(WARNING) << "storage: the usage ledger could not be refreshed from the shared "
                          "database (the last view stays in force): "
                       << refreshed;
        }
        reading_ = false;
      });
    }
    Arm();
  });
}

}  // namespace herald::storage
