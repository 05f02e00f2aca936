// component/schedule/schedule_store.h
//
// The schedules and the people's time zones in one private SQLite file (WAL), so they
// survive restarts. Not thread-safe: the Scheduler calls it from one strand of the worker
// pool (writes) and once before the loop runs (the load).
//
//   auto store = ScheduleStore::Open("/var/lib/herald/schedules.db");
//   absl::Status put = (*store)->Put(schedule);
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "component/base/sqlite_database.h"
#include "component/schedule/schedule.h"

namespace herald::schedule {

class ScheduleStore {
 public:
  static absl::StatusOr<std::unique_ptr<ScheduleStore>> Open(const std::string& path);

  // Every stored schedule, by id. A row that cannot be read any more (a zone tzdata lost, a
  // recurrence from a newer Herald) is skipped with a log line, not deleted.
  absl::StatusOr<std::vector<Schedule>> LoadAll();
  absl::Status Put(const Schedule& schedule);  // insert or replace by id
  absl::Status Remove(int64_t id);

  // Bare JID → IANA zone name (/timezone).
  absl::StatusOr<std::map<std::string, std::string>> LoadZones();
  absl::Status PutZone(const std::string& jid, const std::string& zone);

 private:
  explicit ScheduleStore(std::unique_ptr<base::SqliteDatabase> db) : db_(std::move(db)) {}

  std::unique_ptr<base::SqliteDatabase> db_;
};

}  // namespace herald::schedule
