#include "component/storage/notification_watch.h"

#include <unistd.h>

#include <utility>

#include "glog/logging.h"

namespace herald::storage {

NotificationWatch::NotificationWatch(asio::io_context& io, asio::thread_pool& workers,
                                     std::string what, Connect connect, Heard heard,
                                     std::function<void()> opened)
    : io_(io),
      workers_(workers),
      what_(std::move(what)),
      connect_(std::move(connect)),
      heard_(std::move(heard)),
      opened_(std::move(opened)) {}

NotificationWatch::~NotificationWatch() {
  socket_.reset();
  listener_.reset();
}

void NotificationWatch::Open() {
  if (listener_ != nullptr || connecting_) return;
  connecting_ = true;
  asio::post(workers_, [this] {
    absl::StatusOr<std::unique_ptr<base::PostgresListener>> listener = connect_();
    asio::post(io_, [this, listener = std::move(listener)]() mutable {
      connecting_ = false;
      if (!listener.ok()) {
        VLOG(1) << what_ << ": cannot listen (polling meanwhile): " << listener.status();
        return;
      }
      const int fd = ::dup((*listener)->socket());
      if (fd < 0) return;
      listener_ = *std::move(listener);
      socket_.emplace(io_, fd);
      Wait();
      if (opened_) opened_();
    });
  });
}

void NotificationWatch::Wait() {
  socket_->async_wait(asio::posix::stream_descriptor::wait_read,
                      [this](const asio::error_code& error) {
                        if (error) return;  // closed, or Herald is stopping
                        absl::StatusOr<std::vector<std::string>> payloads = listener_->Drain();
                        if (!payloads.ok()) {
                          VLOG(1) << what_ << ": " << payloads.status();
                          Close();
                          return;
                        }
                        heard_(*payloads);
                        if (socket_.has_value()) Wait();
                      });
}

void NotificationWatch::Close() {
  socket_.reset();
  // PQfinish writes to the socket: on the pool, not the loop.
  asio::post(workers_, [listener = std::move(listener_)] {});
}

}  // namespace herald::storage
