#include "component/storage/room_leases.h"

#include <utility>

#include "nlohmann/json.hpp"

namespace herald::storage {
namespace {

using base::PostgresResult;
using base::SqlParams;

constexpr std::string_view kMigrations[] = {
    R"sql(
CREATE TABLE herald_room_leases (
  room text COLLATE "C" PRIMARY KEY,
  owner text NOT NULL,
  expires_at timestamptz NOT NULL
);
CREATE TABLE herald_room_stanzas (
  id bigserial PRIMARY KEY,
  room text COLLATE "C" NOT NULL,
  stanza text NOT NULL,
  sent_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX herald_room_stanzas_room ON herald_room_stanzas (room, id);
)sql",
};

// $1: the wanted rooms (a JSON array of strings); $2: this instance; $3: the lease in seconds.
// Every data-changing part of the WITH runs once; the final SELECT reads the table as it was
// before them, so this instance's rooms come from `claimed` and the others' from the table.
constexpr char kClaim[] = R"sql(
WITH wanted AS (SELECT DISTINCT jsonb_array_elements_text($1::jsonb) AS room),
released AS (
  UPDATE herald_room_leases SET expires_at = now() - interval '1 millisecond'
  WHERE owner = $2 AND expires_at > now() AND room NOT IN (SELECT room FROM wanted)
  RETURNING room),
claimed AS (
  INSERT INTO herald_room_leases AS l (room, owner, expires_at)
  SELECT room, $2, now() + make_interval(secs => $3) FROM wanted
  ON CONFLICT (room) DO UPDATE SET owner = EXCLUDED.owner, expires_at = EXCLUDED.expires_at
  WHERE l.owner = EXCLUDED.owner OR l.expires_at < now()
  RETURNING room),
forgotten AS (
  DELETE FROM herald_room_stanzas WHERE sent_at < now() - interval '1 minute' RETURNING id)
SELECT room, $2 FROM claimed
UNION ALL
SELECT room, owner FROM herald_room_leases WHERE owner <> $2 AND expires_at > now()
)sql";

// Where an instance that handed a stanza over tells the room's holder (payload: its id).
constexpr std::string_view kChannel = "herald_room_stanzas";

}  // namespace

absl::StatusOr<std::unique_ptr<RoomLeases>> RoomLeases::Open(
    std::shared_ptr<base::PostgresDatabase> db, std::string instance, absl::Duration lease_time) {
  if (absl::Status s = base::ApplySchema(*db, "rooms", kMigrations); !s.ok()) return s;
  return std::unique_ptr<RoomLeases>(
      new RoomLeases(std::move(db), std::move(instance), lease_time));
}

absl::StatusOr<RoomHolders> RoomLeases::Claim(const std::vector<std::string>& wanted) {
  absl::StatusOr<PostgresResult> rows =
      db_->Exec(kClaim, SqlParams()
                            .Text(nlohmann::json(wanted).dump(
                                -1, ' ', false, nlohmann::json::error_handler_t::replace))
                            .Text(instance_)
                            .Double(absl::ToDoubleSeconds(lease_time_)));
  if (!rows.ok()) return rows.status();
  RoomHolders holders;
  for (int i = 0; i < rows->rows(); ++i) {
    holders[std::string(rows->Text(i, 0))] = std::string(rows->Text(i, 1));
  }
  return holders;
}

absl::Status RoomLeases::HandOver(std::string_view room, std::string_view holder,
                                  std::string_view stanza) {
  return db_
      ->Exec(
          "WITH kept AS (INSERT INTO herald_room_stanzas (room, stanza) VALUES ($1, $2) "
          "RETURNING id) SELECT pg_notify('" +
              std::string(kChannel) + "', $3) FROM kept",
          SqlParams().Text(room).Text(stanza).Text(holder))
      .status();
}

absl::StatusOr<std::vector<std::string>> RoomLeases::TakeHandedOver() {
  absl::StatusOr<PostgresResult> rows = db_->Exec(
      "WITH taken AS (DELETE FROM herald_room_stanzas s USING herald_room_leases l "
      "WHERE s.room = l.room AND l.owner = $1 AND l.expires_at > now() "
      "RETURNING s.id, s.stanza) SELECT stanza FROM taken ORDER BY id",
      SqlParams().Text(instance_));
  if (!rows.ok()) return rows.status();
  std::vector<std::string> stanzas;
  stanzas.reserve(rows->rows());
  for (int i = 0; i < rows->rows(); ++i) stanzas.emplace_back(rows->Text(i, 0));
  return stanzas;
}

absl::StatusOr<std::unique_ptr<base::PostgresListener>> RoomLeases::Listen() {
  return db_->Listen(kChannel);
}

absl::Status RoomLeases::Release() {
  return db_
      ->Exec(
          "UPDATE herald_room_leases SET expires_at = now() - interval '1 millisecond' "
          "WHERE owner = $1 AND expires_at > now()",
          SqlParams().Text(instance_))
      .status();
}

}  // namespace herald::storage
