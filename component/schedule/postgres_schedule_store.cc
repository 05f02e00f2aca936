#include "component/schedule/postgres_schedule_store.h"

#include <utility>

namespace herald::schedule {
namespace {

using base::PostgresResult;
using base::SqlParams;

// Version i + 1 of the schedules' tables is made by kMigrations[i] (base::ApplySchema).
constexpr std::string_view kMigrations[] = {
    R"sql(
CREATE TABLE schedules (
  id bigint PRIMARY KEY,
  owner text NOT NULL,          -- base::ConversationName: 'alice@example.org', 'room:...'
  author text NOT NULL,
  name text NOT NULL,           -- an operator's [[schedules.task]] name, '' for a person's
  prompt text NOT NULL,
  recurrence text NOT NULL,     -- Recurrence::Encode
  zone text NOT NULL,
  created_s bigint NOT NULL,    -- Unix seconds (the extremes for never)
  next_s bigint NOT NULL,
  last_run_s bigint NOT NULL,
  runs bigint NOT NULL          -- the claim: a run is made by whoever moves this on
);
CREATE UNIQUE INDEX schedules_by_name ON schedules (name) WHERE name <> '';
CREATE TABLE schedule_zones (
  jid text PRIMARY KEY,
  zone text NOT NULL
);
CREATE TABLE schedule_ids (
  one boolean PRIMARY KEY DEFAULT true CHECK (one),
  next bigint NOT NULL
);
INSERT INTO schedule_ids (next) VALUES (1);
)sql",
};

}  // namespace

absl::StatusOr<std::unique_ptr<PostgresScheduleStore>> PostgresScheduleStore::Open(
    std::shared_ptr<base::PostgresDatabase> db) {
  if (absl::Status s = base::ApplySchema(*db, "schedules", kMigrations); !s.ok()) return s;
  return std::unique_ptr<PostgresScheduleStore>(new PostgresScheduleStore(std::move(db)));
}

absl::StatusOr<std::vector<Schedule>> PostgresScheduleStore::LoadAll() {
  absl::StatusOr<PostgresResult> rows = db_->Exec(
      "SELECT id, owner, author, name, prompt, recurrence, zone, created_s, next_s, last_run_s, "
      "runs FROM schedules ORDER BY id");
  if (!rows.ok()) return rows.status();
  std::vector<Schedule> schedules;
  schedules.reserve(rows->rows());
  for (int i = 0; i < rows->rows(); ++i) {
    std::optional<Schedule> schedule = ScheduleFromRow({.id = rows->Int64(i, 0),
                                                        .owner = rows->Text(i, 1),
                                                        .author = rows->Text(i, 2),
                                                        .name = rows->Text(i, 3),
                                                        .prompt = rows->Text(i, 4),
                                                        .recurrence = rows->Text(i, 5),
                                                        .zone = rows->Text(i, 6),
                                                        .created = rows->Int64(i, 7),
                                                        .next = rows->Int64(i, 8),
                                                        .last_run = rows->Int64(i, 9),
                                                        .runs = rows->Int64(i, 10)});
    if (schedule.has_value()) schedules.push_back(*std::move(schedule));
  }
  return schedules;
}

absl::Status PostgresScheduleStore::Put(const Schedule& schedule) {
  return db_
      ->Exec(
          "INSERT INTO schedules (id, owner, author, name, prompt, recurrence, zone, created_s, "
          "next_s, last_run_s, runs) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) "
          "ON CONFLICT (id) DO UPDATE SET owner = excluded.owner, author = excluded.author, "
          "name = excluded.name, prompt = excluded.prompt, recurrence = excluded.recurrence, "
          "zone = excluded.zone, created_s = excluded.created_s, next_s = excluded.next_s, "
          "last_run_s = excluded.last_run_s, runs = excluded.runs",
          SqlParams()
              .Int64(schedule.id)
              .Text(base::ConversationName(schedule.owner))
              .Text(schedule.author)
              .Text(schedule.name)
              .Text(schedule.prompt)
              .Text(schedule.recurrence.Encode())
              .Text(schedule.zone)
              .Int64(StoredSeconds(schedule.created))
              .Int64(StoredSeconds(schedule.next))
              .Int64(StoredSeconds(schedule.last_run))
              .Int64(schedule.runs))
      .status();
}

absl::Status PostgresScheduleStore::Remove(int64_t id) {
  return db_->Exec("DELETE FROM schedules WHERE id = $1", SqlParams().Int64(id)).status();
}

absl::StatusOr<std::map<std::string, std::string>> PostgresScheduleStore::LoadZones() {
  absl::StatusOr<PostgresResult> rows = db_->Exec("SELECT jid, zone FROM schedule_zones");
  if (!rows.ok()) return rows.status();
  std::map<std::string, std::string> zones;
  for (int i = 0; i < rows->rows(); ++i) {
    zones[std::string(rows->Text(i, 0))] = std::string(rows->Text(i, 1));
  }
  return zones;
}

absl::Status PostgresScheduleStore::PutZone(const std::string& jid, const std::string& zone) {
  return db_
      ->Exec(
          "INSERT INTO schedule_zones (jid, zone) VALUES ($1, $2) "
          "ON CONFLICT (jid) DO UPDATE SET zone = excluded.zone",
          SqlParams().Text(jid).Text(zone))
      .status();
}

absl::StatusOr<int64_t> PostgresScheduleStore::ReserveIds(int count) {
  absl::StatusOr<PostgresResult> row = db_->Exec(
      "UPDATE schedule_ids SET next = next + $1 RETURNING next - $1", SqlParams().Int64(count));
  if (!row.ok()) return row.status();
  if (row->rows() != 1) return absl::DataLossError("schedule_ids has no row");
  return row->Int64(0, 0);
}

absl::StatusOr<bool> PostgresScheduleStore::ClaimRun(int64_t id, int64_t runs_seen,
                                                     absl::Time ran_at, absl::Time next) {
  absl::StatusOr<PostgresResult> claimed =
      next == absl::InfiniteFuture()
          ? db_->Exec("DELETE FROM schedules WHERE id = $1 AND runs = $2",
                      SqlParams().Int64(id).Int64(runs_seen))
          : db_->Exec(
                "UPDATE schedules SET runs = runs + 1, last_run_s = $3, next_s = $4 "
                "WHERE id = $1 AND runs = $2",
                SqlParams()
                    .Int64(id)
                    .Int64(runs_seen)
                    .Int64(StoredSeconds(ran_at))
                    .Int64(StoredSeconds(next)));
  if (!claimed.ok()) return claimed.status();
  return claimed->affected() == 1;
}

}  // namespace herald::schedule
