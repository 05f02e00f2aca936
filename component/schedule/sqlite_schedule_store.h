// component/schedule/sqlite_schedule_store.h
//
// The schedules and the people's time zones in one private SQLite file (WAL) on this host
// (schedule_store.h). Not thread-safe: the Scheduler calls it from one strand of the worker
// pool (writes) and once before the loop runs (the load).
//
//   auto store = SqliteScheduleStore::Open("/var/lib/herald/schedules.db");
//   absl::Status put = (*store)->Put(schedule);
#pragma once

#include <memory>
#include <string>

#include "component/base/sqlite_database.h"
#include "component/schedule/schedule_store.h"

namespace herald::schedule {

class SqliteScheduleStore final : public ScheduleStore {
 public:
  static absl::StatusOr<std::unique_ptr<SqliteScheduleStore>> Open(const std::string& path);

  absl::StatusOr<std::vector<Schedule>> LoadAll() override;
  absl::Status Put(const Schedule& schedule) override;
  absl::Status Remove(int64_t id) override;
  absl::StatusOr<std::map<std::string, std::string>> LoadZones() override;
  absl::Status PutZone(const std::string& jid, const std::string& zone) override;

 private:
  explicit SqliteScheduleStore(std::unique_ptr<base::SqliteDatabase> db) : db_(std::move(db)) {}

  std::unique_ptr<base::SqliteDatabase> db_;
};

}  // namespace herald::schedule
