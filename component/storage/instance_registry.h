// component/storage/instance_registry.h
//
// Which Herald instances serve the component domain on one shared database ([storage]
// backend = "postgresql"; docs/scale-out.md), for GetStatus and `heraldctl status`. Each
// instance joins at start, says it is alive at every beat of SharedStateRefresh, and leaves
// when it stops cleanly. Times are the database's clock, so the hosts' clocks do not matter.
// An instance not seen for kAliveFor is not listed (it died, or lost the database); rows idle
// for a day are removed.
//
// Join, Beat and the destructor block on the database: worker threads or start-up; Known
// reads memory and may run anywhere.
//
//   auto registry = InstanceRegistry::Join(db, "host-a", ::getpid());
//   (*registry)->Beat();                    // every 2 s, on the worker pool
//   for (const InstanceInfo& i : (*registry)->Known()) ...
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "component/base/mutex.h"
#include "component/base/postgres_database.h"

namespace herald::storage {

struct InstanceInfo {
  std::string id;  // "<host>:<pid>:<8 hex digits>", unique per start
  std::string host;
  int64_t pid = 0;
  absl::Time started_at;
  absl::Time last_seen;
  bool this_instance = false;
  // Whose leases it holds (ConversationInbox, RoomLeases), once they are counted.
  int64_t conversations = 0;
  int64_t rooms = 0;
};

class InstanceRegistry {
 public:
  static constexpr absl::Duration kAliveFor = absl::Seconds(10);

  static absl::StatusOr<std::unique_ptr<InstanceRegistry>> Join(
      std::shared_ptr<base::PostgresDatabase> db, std::string host, int64_t pid);
  // Leaves (best effort: a database that is away just lets the row age out).
  ~InstanceRegistry();
  InstanceRegistry(const InstanceRegistry&) = delete;
  InstanceRegistry& operator=(const InstanceRegistry&) = delete;

  // Marks this instance alive (joining again if its row was removed) and reads who else is.
  absl::Status Beat() ABSL_LOCKS_EXCLUDED(mu_);
  // The instances alive at the last beat (or at Join), oldest first.
  std::vector<InstanceInfo> Known() const ABSL_LOCKS_EXCLUDED(mu_);

  const std::string& id() const { return id_; }

  // From now on each beat also counts the conversations and the rooms each instance holds
  // (call it once the ConversationInbox's and the RoomLeases' tables exist). Before the first
  // beat; not thread-safe.
  void CountLeases() { count_leases_ = true; }
  // From now on each beat also releases the ledger's reservations (ledger::PostgresUsageStore)
  // made by an instance not seen for kGoneFor: one that died mid-call holds them no longer
  // than that, rather than until they lapse. Once the ledger's tables exist; before the first
  // beat; not thread-safe.
  void ReleaseReservationsOfTheGone() { release_reservations_ = true; }
  static constexpr absl::Duration kGoneFor = absl::Seconds(20);

 private:
  InstanceRegistry(std::shared_ptr<base::PostgresDatabase> db, std::string id, std::string host,
                   int64_t pid);

  const std::shared_ptr<base::PostgresDatabase> db_;
  const std::string id_;
  const std::string host_;
  const int64_t pid_;
  bool count_leases_ = false;
  bool release_reservations_ = false;
  mutable base::Mutex mu_;
  std::vector<InstanceInfo> known_ ABSL_GUARDED_BY(mu_);
};

}  // namespace herald::storage
