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

std::unique_ptr<SharedStateRefresh> SharedStateRefresh::For(asio::io_context& io,
                                                            asio::thread_pool& workers,
                                                            Stores& stores) {
  if (stores.postgres == nullptr) return nullptr;
  return std::make_unique<SharedStateRefresh>(io, workers, *stores.usage, stores.instances.get());
}

void SharedStateRefresh::Arm() {
  timer_.expires_after(absl::ToChronoNanoseconds(interval_));
  timer_.async_wait([this](const asio::error_code& error) {
    if (error) return;  // cancelled: Herald is stopping
    if (!reading_.exchange(true)) {
      asio::post(workers_, [this] {
        absl::Status s = ledger_.Refresh(absl::Now());
        if (s.ok() && instances_ != nullptr) s = instances_->Beat();
        // One line when the database goes away and one when it is back, not one every beat.
        if (!s.ok() && !failing_) {
          LOG(WARNING) << "storage: the shared database cannot be read (the last view of usage "
                          "and limits stays in force; tried again every "
                       << absl::FormatDuration(interval_) << "): " << s;
        } else if (!s.ok()) {
          VLOG(1) << "storage: the shared database still cannot be read: " << s;
        } else if (failing_) {
          LOG(INFO) << "storage: the shared database can be read again";
        }
        failing_ = !s.ok();
        reading_ = false;
      });
    }
    Arm();
  });
}

}  // namespace herald::storage
