// component/schedule/postgres_schedule_store.h
//
// The schedules and the people's time zones in the PostgreSQL database several instances of
// one component domain share ([storage] backend = "postgresql"; docs/scale-out.md). Every
// instance loads every schedule; ids are handed out in blocks from one counter so that no two
// instances give the same id; and a run is claimed with one conditional UPDATE (the schedule's
// run count as it was seen), so each run is made by one instance only.
//
// Thread-safe (the pool); every call blocks on the network: run them on the worker pool.
//
//   auto store = PostgresScheduleStore::Open(stores.postgres);
//   absl::StatusOr<bool> mine = (*store)->ClaimRun(id, runs_seen, now, next);
#pragma once

#include <memory>

#include "component/base/postgres_database.h"
#include "component/schedule/schedule_store.h"

namespace herald::schedule {

class PostgresScheduleStore final : public ScheduleStore {
 public:
  // Applies the schedules' schema (base::ApplySchema: refuses a newer one).
  static absl::StatusOr<std::unique_ptr<PostgresScheduleStore>> Open(
      std::shared_ptr<base::PostgresDatabase> db);

  absl::StatusOr<std::vector<Schedule>> LoadAll() override;
  // A new operator's schedule whose name another instance stored first is AlreadyExists.
  absl::Status Put(const Schedule& schedule) override;
  absl::Status Remove(int64_t id) override;
  absl::StatusOr<std::map<std::string, std::string>> LoadZones() override;
  absl::Status PutZone(const std::string& jid, const std::string& zone) override;

  // The first of `count` consecutive ids that no instance has been or will be given.
  absl::StatusOr<int64_t> ReserveIds(int count);
  // Claims the run of schedule `id` that follows its `runs_seen` runs. True when this caller
  // got it: the row now counts the run, made at `ran_at`, and runs next at `next` (a one-off's
  // row, `next` = InfiniteFuture, is removed). False when another instance claimed that run
  // first or the schedule was cancelled.
  absl::StatusOr<bool> ClaimRun(int64_t id, int64_t runs_seen, absl::Time ran_at, absl::Time next);

 private:
  explicit PostgresScheduleStore(std::shared_ptr<base::PostgresDatabase> db) : db_(std::move(db)) {}

  const std::shared_ptr<base::PostgresDatabase> db_;
};

}  // namespace herald::schedule
