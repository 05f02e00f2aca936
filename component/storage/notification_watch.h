// component/storage/notification_watch.h
//
// NotificationWatch hears PostgreSQL notifications on the I/O loop without blocking it: the
// listening connection is opened on the worker pool, its socket is watched on the loop, and
// the payloads that arrive are handed to `heard` there. A connection that breaks is dropped;
// Open() opens a new one (its users call it at each beat), and `opened` runs each time one is
// ready, so that they read what was sent while nobody listened.
//
// Construct it after the EventLoop whose loop and pool it uses, and let the pool be joined
// before it ends. I/O loop only.
//
//   NotificationWatch watch(io, workers, "rooms", [&] { return leases.Listen(); },
//                           [&](const std::vector<std::string>& payloads) { ... },
//                           [&] { Take(); });
//   watch.Open();
#pragma once

#include <asio.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "component/base/postgres_database.h"

namespace herald::storage {

class NotificationWatch {
 public:
  using Connect = std::function<absl::StatusOr<std::unique_ptr<base::PostgresListener>>()>;
  using Heard = std::function<void(const std::vector<std::string>& payloads)>;

  // `what` names the watch in the log ("inbox", "rooms"). `connect` runs on the pool.
  NotificationWatch(asio::io_context& io, asio::thread_pool& workers, std::string what,
                    Connect connect, Heard heard, std::function<void()> opened);
  ~NotificationWatch();
  NotificationWatch(const NotificationWatch&) = delete;
  NotificationWatch& operator=(const NotificationWatch&) = delete;

  // Opens the listening connection unless it is open or opening.
  void Open();
  // Drops the connection (opened again by the next Open).
  void Close();

 private:
  void Wait();

  asio::io_context& io_;
  asio::thread_pool& workers_;
  const std::string what_;
  const Connect connect_;
  const Heard heard_;
  const std::function<void()> opened_;
  std::unique_ptr<base::PostgresListener> listener_;
  std::optional<asio::posix::stream_descriptor> socket_;  // a dup of the listener's socket
  bool connecting_ = false;
};

}  // namespace herald::storage
