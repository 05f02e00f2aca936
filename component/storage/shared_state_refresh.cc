#include "component/storage/shared_state_refresh.h"

#include "absl/time/clock.h"
#include "glog/logging.h"

namespace herald::storage {

SharedStateRefresh::SharedStateRefresh(asio::io_context& io, asio::thread_pool& workers,
                                       ledger::UsageLedger& ledger, InstanceRegistry* instances,
                                       absl::Duration interval)
    : timer_(io), workers_(workers), ledger_(ledger), instances_(instances), interval_(interval) {
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
        if (instances_ != nullptr) {
          absl::Status beat = instances_->Beat();
          if (!beat.ok()) {
            LOG(WARNING) << "storage: this instance could not say it is alive in the shared "
                            "database: "
                         << beat;
          }
        }
        reading_ = false;
      });
    }
    Arm();
  });
}

}  // namespace herald::storage
