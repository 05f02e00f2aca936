#include "component/schedule/schedule_store.h"

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

// InfinitePast/InfiniteFuture as the extreme seconds, and back.
int64_t ToStored(absl::Time time) {
  if (time == absl::InfiniteFuture()) return INT64_MAX;
  if (time == absl::InfinitePast()) return INT64_MIN;
  return absl::ToUnixSeconds(time);
}

absl::Time FromStored(int64_t seconds) {
  if (seconds == INT64_MAX) return absl::InfiniteFuture();
  if (seconds == INT64_MIN) return absl::InfinitePast();
  return absl::FromUnixSeconds(seconds);
}

}  // namespace

absl::StatusOr<std::unique_ptr<ScheduleStore>> ScheduleStore::Open(const std::string& path) {
  absl::StatusOr<std::unique_ptr<base::SqliteDatabase>> db =
      base::OpenPrivateDatabase(path, {.what = "schedules", .schema = kSchema});
  if (!db.ok()) return db.status();
  return std::unique_ptr<ScheduleStore>(new ScheduleStore(*std::move(db)));
}

absl::StatusOr<std::vector<Schedule>> ScheduleStore::LoadAll() {
  absl::StatusOr<base::SqliteStatement> select = db_->Prepare(
      "SELECT id, owner, author, name, prompt, recurrence, zone, created_s, next_s, last_run_s, "
      "runs FROM schedules ORDER BY id");
  if (!select.ok()) return select.status();
  std::vector<Schedule> schedules;
  while (true) {
    absl::StatusOr<bool> row = select->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    const int64_t id = select->ColumnInt64(0);
    std::optional<base::ConversationRef> owner = base::ParseConversationName(select->ColumnText(1));
    absl::StatusOr<Recurrence> recurrence = Recurrence::Decode(select->ColumnText(5));
    if (!owner.has_value() || !recurrence.ok()) {
      LOG(WARNING) << "schedules: schedule " << id << " cannot be read and stays unused: "
                   << (owner.has_value() ? recurrence.status().message() : "bad owner");
      continue;
    }
    schedules.push_back(Schedule{.id = id,
                                 .owner = *std::move(owner),
                                 .author = select->ColumnText(2),
                                 .name = select->ColumnText(3),
                                 .prompt = select->ColumnText(4),
                                 .recurrence = *std::move(recurrence),
                                 .zone = select->ColumnText(6),
                                 .created = FromStored(select->ColumnInt64(7)),
                                 .next = FromStored(select->ColumnInt64(8)),
                                 .last_run = FromStored(select->ColumnInt64(9)),
                                 .runs = select->ColumnInt64(10)});
  }
  return schedules;
}

absl::Status ScheduleStore::Put(const Schedule& schedule) {
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
  insert->BindInt64(8, ToStored(schedule.created)).IgnoreError();
  insert->BindInt64(9, ToStored(schedule.next)).IgnoreError();
  insert->BindInt64(10, ToStored(schedule.last_run)).IgnoreError();
  insert->BindInt64(11, schedule.runs).IgnoreError();
  return insert->Run();
}

absl::Status ScheduleStore::Remove(int64_t id) {
  absl::StatusOr<base::SqliteStatement> remove =
      db_->Prepare("DELETE FROM schedules WHERE id = ?1");
  if (!remove.ok()) return remove.status();
  remove->BindInt64(1, id).IgnoreError();
  return remove->Run();
}

absl::StatusOr<std::map<std::string, std::string>> ScheduleStore::LoadZones() {
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

absl::Status ScheduleStore::PutZone(const std::string& jid, const std::string& zone) {
  absl::StatusOr<base::SqliteStatement> insert =
      db_->Prepare("INSERT OR REPLACE INTO time_zones (jid, zone) VALUES (?1, ?2)");
  if (!insert.ok()) return insert.status();
  insert->BindText(1, jid).IgnoreError();
  insert->BindText(2, zone).IgnoreError();
  return insert->Run();
}

}  // namespace herald::schedule
