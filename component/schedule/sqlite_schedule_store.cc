#include "component/schedule/sqlite_schedule_store.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "glog/logging.h"

namespace herald::schedule {
namespace {

constexpr std::string_view kSchema = R"sql(
CREATE TABLE IF NOT EXISTS schedules (
  id INTEGER PRIMARY KEY,
  owner TEXT NOT NULL,
  author TEXT NOT NULL,
  name TEXT NOT NULL,
  prompt TEXT NOT NULL,
  recurrence TEXT NOT NULL,
  zone TEXT NOT NULL,
  created_s INTEGER NOT NULL,
  next_s INTEGER NOT NULL,
  last_run_s INTEGER NOT NULL,
  runs INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS time_zones (
  jid TEXT PRIMARY KEY,
  zone TEXT NOT NULL
);
)sql";

}  // namespace

absl::StatusOr<std::unique_ptr<SqliteScheduleStore>> SqliteScheduleStore::Open(
    const std::string& path) {
  absl::StatusOr<std::unique_ptr<base::SqliteDatabase>> db =
      base::OpenPrivateDatabase(path, {.what = "schedules", .schema = kSchema});
  if (!db.ok()) return db.status();
  return std::unique_ptr<SqliteScheduleStore>(new SqliteScheduleStore(*std::move(db)));
}

absl::StatusOr<std::vector<Schedule>> SqliteScheduleStore::LoadAll() {
  absl::StatusOr<base::SqliteStatement> select = db_->Prepare(
      "SELECT id, owner, author, name, prompt, recurrence, zone, created_s, next_s, last_run_s, "
      "runs FROM schedules ORDER BY id");
  if (!select.ok()) return select.status();
  std::vector<Schedule> schedules;
  while (true) {
    absl::StatusOr<bool> row = select->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    std::optional<Schedule> schedule = ScheduleFromRow({.id = select->ColumnInt64(0),
                                                        .owner = select->ColumnText(1),
                                                        .author = select->ColumnText(2),
                                                        .name = select->ColumnText(3),
                                                        .prompt = select->ColumnText(4),
                                                        .recurrence = select->ColumnText(5),
                                                        .zone = select->ColumnText(6),
                                                        .created = select->ColumnInt64(7),
                                                        .next = select->ColumnInt64(8),
                                                        .last_run = select->ColumnInt64(9),
                                                        .runs = select->ColumnInt64(10)});
    if (schedule.has_value()) schedules.push_back(*std::move(schedule));
  }
  return schedules;
}

absl::Status SqliteScheduleStore::Put(const Schedule& schedule) {
  absl::StatusOr<base::SqliteStatement> insert = db_->Prepare(
      "INSERT OR REPLACE INTO schedules (id, owner, author, name, prompt, recurrence, zone, "
      "created_s, next_s, last_run_s, runs) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, "
      "?11)");
  if (!insert.ok()) return insert.status();
  insert->BindInt64(1, schedule.id).IgnoreError();
  insert->BindText(2, base::ConversationName(schedule.owner)).IgnoreError();
  insert->BindText(3, schedule.author).IgnoreError();
  insert->BindText(4, schedule.name).IgnoreError();
  insert->BindText(5, schedule.prompt).IgnoreError();
  insert->BindText(6, schedule.recurrence.Encode()).IgnoreError();
  insert->BindText(7, schedule.zone).IgnoreError();
  insert->BindInt64(8, StoredSeconds(schedule.created)).IgnoreError();
  insert->BindInt64(9, StoredSeconds(schedule.next)).IgnoreError();
  insert->BindInt64(10, StoredSeconds(schedule.last_run)).IgnoreError();
  insert->BindInt64(11, schedule.runs).IgnoreError();
  return insert->Run();
}

absl::Status SqliteScheduleStore::Remove(int64_t id) {
  absl::StatusOr<base::SqliteStatement> remove =
      db_->Prepare("DELETE FROM schedules WHERE id = ?1");
  if (!remove.ok()) return remove.status();
  remove->BindInt64(1, id).IgnoreError();
  return remove->Run();
}

absl::StatusOr<std::map<std::string, std::string>> SqliteScheduleStore::LoadZones() {
  absl::StatusOr<base::SqliteStatement> select = db_->Prepare("SELECT jid, zone FROM time_zones");
  if (!select.ok()) return select.status();
  std::map<std::string, std::string> zones;
  while (true) {
    absl::StatusOr<bool> row = select->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    zones[select->ColumnText(0)] = select->ColumnText(1);
  }
  return zones;
}

absl::Status SqliteScheduleStore::PutZone(const std::string& jid, const std::string& zone) {
  absl::StatusOr<base::SqliteStatement> insert =
      db_->Prepare("INSERT OR REPLACE INTO time_zones (jid, zone) VALUES (?1, ?2)");
  if (!insert.ok()) return insert.status();
  insert->BindText(1, jid).IgnoreError();
  insert->BindText(2, zone).IgnoreError();
  return insert->Run();
}

}  // namespace herald::schedule
