// component/schedule/schedule_store.h
//
// Where the schedules and the people's time zones are kept, so that they survive restarts: a
// private SQLite file on this host (SqliteScheduleStore, the default), or the PostgreSQL
// database that several instances of one component domain share (PostgresScheduleStore), where
// every instance sees every schedule, ids come from the database, and each run is claimed by
// exactly one instance (PostgresScheduleStore's ReserveIds and ClaimRun).
//
// Every call blocks (disk, network): the Scheduler makes them from one strand of the worker
// pool, and at Open before the loop runs.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "component/schedule/schedule.h"

namespace herald::schedule {

class ScheduleStore {
 public:
  virtual ~ScheduleStore() = default;

  // Every stored schedule, by id. A row that cannot be read any more (a zone tzdata lost, a
  // recurrence from a newer Herald) is skipped with a log line, not deleted.
  virtual absl::StatusOr<std::vector<Schedule>> LoadAll() = 0;
  virtual absl::Status Put(const Schedule& schedule) = 0;  // insert or replace by id
  virtual absl::Status Remove(int64_t id) = 0;

  // Bare JID → IANA zone name (/timezone).
  virtual absl::StatusOr<std::map<std::string, std::string>> LoadZones() = 0;
  virtual absl::Status PutZone(const std::string& jid, const std::string& zone) = 0;
};

// --- For the stores: one row's columns and the schedule they make. ---

// A time as stored (Unix seconds; InfinitePast and InfiniteFuture as the extreme values).
int64_t StoredSeconds(absl::Time time);
absl::Time TimeFromStored(int64_t seconds);

struct StoredSchedule {
  int64_t id = 0;
  std::string_view owner;  // base::ConversationName
  std::string_view author;
  std::string_view name;
  std::string_view prompt;
  std::string_view recurrence;  // Recurrence::Encode
  std::string_view zone;
  int64_t created = 0;  // StoredSeconds
  int64_t next = 0;
  int64_t last_run = 0;
  int64_t runs = 0;
};

// The schedule of a row, or nullopt (logged) when its owner or recurrence cannot be read.
std::optional<Schedule> ScheduleFromRow(const StoredSchedule& row);

}  // namespace herald::schedule
