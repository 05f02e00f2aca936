#include "component/storage/instance_registry.h"

#include <openssl/rand.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "component/base/hex.h"
#include "glog/logging.h"

namespace herald::storage {
namespace {

using base::PostgresResult;
using base::SqlParams;

constexpr std::string_view kMigrations[] = {
    R"sql(
CREATE TABLE herald_instances (
  id text PRIMARY KEY,
  host text NOT NULL,
  pid bigint NOT NULL,
  started_at timestamptz NOT NULL DEFAULT now(),
  last_seen timestamptz NOT NULL DEFAULT now()
);
)sql",
};

constexpr char kUpsert[] =
    "INSERT INTO herald_instances (id, host, pid) VALUES ($1, $2, $3) "
    "ON CONFLICT (id) DO UPDATE SET last_seen = now()";

constexpr char kKnown[] =
    "SELECT id, host, pid, floor(extract(epoch FROM started_at) * 1000)::bigint, "
    "floor(extract(epoch FROM last_seen) * 1000)::bigint, 0, 0 FROM herald_instances "
    "WHERE last_seen > now() - make_interval(secs => $1) ORDER BY started_at, id";

// herald_leases belongs to the ConversationInbox (conversation_inbox.h), herald_room_leases to
// RoomLeases (room_leases.h).
constexpr char kKnownWithLeases[] =
    "SELECT i.id, i.host, i.pid, floor(extract(epoch FROM i.started_at) * 1000)::bigint, "
    "floor(extract(epoch FROM i.last_seen) * 1000)::bigint, "
    "(SELECT count(*) FROM herald_leases l WHERE l.owner = i.id AND l.expires_at > now()), "
    "(SELECT count(*) FROM herald_room_leases r WHERE r.owner = i.id AND r.expires_at > now()) "
    "FROM herald_instances i "
    "WHERE i.last_seen > now() - make_interval(secs => $1) ORDER BY i.started_at, i.id";

}  // namespace

InstanceRegistry::InstanceRegistry(std::shared_ptr<base::PostgresDatabase> db, std::string id,
                                   std::string host, int64_t pid)
    : db_(std::move(db)), id_(std::move(id)), host_(std::move(host)), pid_(pid) {}

absl::StatusOr<std::unique_ptr<InstanceRegistry>> InstanceRegistry::Join(
    std::shared_ptr<base::PostgresDatabase> db, std::string host, int64_t pid) {
  if (absl::Status s = base::ApplySchema(*db, "instances", kMigrations); !s.ok()) return s;
  unsigned char nonce[4];
  if (RAND_bytes(nonce, sizeof nonce) != 1) {
    return absl::InternalError("instances: no random bytes for this instance's id");
  }
  std::string id = absl::StrCat(
      host, ":", pid, ":",
      base::HexEncode(std::string_view(reinterpret_cast<const char*>(nonce), sizeof nonce)));
  std::unique_ptr<InstanceRegistry> registry(
      new InstanceRegistry(std::move(db), std::move(id), std::move(host), pid));
  if (absl::Status s = registry->Beat(); !s.ok()) return s;
  return registry;
}

InstanceRegistry::~InstanceRegistry() {
  absl::Status left =
      db_->Exec("DELETE FROM herald_instances WHERE id = $1", SqlParams().Text(id_)).status();
  if (!left.ok()) LOG(WARNING) << "instances: could not leave the registry: " << left;
}

absl::Status InstanceRegistry::Beat() {
  absl::Status s = db_->Exec(kUpsert, SqlParams().Text(id_).Text(host_).Int64(pid_)).status();
  if (s.ok()) {
    s = db_->Exec("DELETE FROM herald_instances WHERE last_seen < now() - interval '1 day'")
            .status();
  }
  if (s.ok() && release_reservations_) {
    // Reservations of single-instance times ('') are left to lapse.
    s = db_->Exec(
               "DELETE FROM ledger_reservations r WHERE r.instance <> '' AND NOT EXISTS ("
               "SELECT 1 FROM herald_instances i WHERE i.id = r.instance "
               "AND i.last_seen > now() - make_interval(secs => $1))",
               SqlParams().Int64(absl::ToInt64Seconds(kGoneFor)))
            .status();
  }
  if (!s.ok()) return s;
  absl::StatusOr<PostgresResult> rows =
      db_->Exec(count_leases_ ? kKnownWithLeases : kKnown,
                SqlParams().Int64(absl::ToInt64Seconds(kAliveFor)));
  if (!rows.ok()) return rows.status();
  std::vector<InstanceInfo> known;
  known.reserve(rows->rows());
  for (int i = 0; i < rows->rows(); ++i) {
    known.push_back(InstanceInfo{.id = std::string(rows->Text(i, 0)),
                                 .host = std::string(rows->Text(i, 1)),
                                 .pid = rows->Int64(i, 2),
                                 .started_at = absl::FromUnixMillis(rows->Int64(i, 3)),
                                 .last_seen = absl::FromUnixMillis(rows->Int64(i, 4)),
                                 .this_instance = rows->Text(i, 0) == id_,
                                 .conversations = rows->Int64(i, 5),
                                 .rooms = rows->Int64(i, 6)});
  }
  base::MutexLock lock(&mu_);
  known_ = std::move(known);
  return absl::OkStatus();
}

std::vector<InstanceInfo> InstanceRegistry::Known() const {
  base::MutexLock lock(&mu_);
  return known_;
}

}  // namespace herald::storage
