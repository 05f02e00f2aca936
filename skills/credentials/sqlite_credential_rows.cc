#include "skills/credentials/sqlite_credential_rows.h"

#include <utility>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "glog/logging.h"

namespace herald::skills::credentials_internal {

using base::SqliteDatabase;
using base::SqliteStatement;

namespace {

// The schema this code reads and writes (the one row of schema_version).
constexpr int kSchemaVersion = 1;

constexpr char kSchema[] = R"sql(
CREATE TABLE IF NOT EXISTS credentials (
  owner TEXT NOT NULL,         -- a bare JID, 'room:JID' or 'api:NAME'
  name TEXT NOT NULL,          -- an environment-variable name
  key_id TEXT NOT NULL,        -- hex of the first 8 bytes of SHA-256 of the sealing key
  nonce BLOB NOT NULL,         -- 12 bytes, fresh for each seal
  ciphertext BLOB NOT NULL,    -- AES-256-GCM; additional data: owner and name
  tag BLOB NOT NULL,           -- 16 bytes
  updated_at INTEGER NOT NULL, -- Unix seconds
  PRIMARY KEY (owner, name)
) WITHOUT ROWID;
)sql";

constexpr char kUpsert[] = R"sql(
INSERT INTO credentials (owner, name, key_id, nonce, ciphertext, tag, updated_at)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
ON CONFLICT (owner, name) DO UPDATE SET
  key_id = excluded.key_id,
  nonce = excluded.nonce,
  ciphertext = excluded.ciphertext,
  tag = excluded.tag,
  updated_at = excluded.updated_at
)sql";

constexpr char kSelect[] =
    "SELECT key_id, nonce, ciphertext, tag FROM credentials WHERE owner = ?1 AND name = ?2";
constexpr char kDelete[] = "DELETE FROM credentials WHERE owner = ?1 AND name = ?2";
constexpr char kNames[] = "SELECT name FROM credentials WHERE owner = ?1 ORDER BY name";

// Binds (owner, name, key id, nonce, ciphertext, tag, now) to kUpsert and runs it.
absl::Status RunUpsert(SqliteStatement& upsert, std::string_view owner, std::string_view name,
                       const SealedEntry& entry) {
  absl::Status s = upsert.BindText(1, owner);
  if (s.ok()) s = upsert.BindText(2, name);
  if (s.ok()) s = upsert.BindText(3, entry.key_id);
  if (s.ok()) s = upsert.BindBlob(4, entry.sealed.nonce);
  if (s.ok()) s = upsert.BindBlob(5, entry.sealed.ciphertext);
  if (s.ok()) s = upsert.BindBlob(6, entry.sealed.tag);
  if (s.ok()) s = upsert.BindInt64(7, absl::ToUnixSeconds(absl::Now()));
  if (s.ok()) s = upsert.Run();
  upsert.Reset();
  return s;
}

}  // namespace

struct SqliteCredentialRows::Statements {
  SqliteStatement upsert;
  SqliteStatement select;
  SqliteStatement remove;
  SqliteStatement names;
};

SqliteCredentialRows::SqliteCredentialRows(std::string path, std::unique_ptr<SqliteDatabase> db,
                                           std::unique_ptr<Statements> statements)
    : where_(absl::StrCat("credentials database ", path)),
      db_(std::move(db)),
      statements_(std::move(statements)) {}

SqliteCredentialRows::~SqliteCredentialRows() = default;

absl::StatusOr<std::unique_ptr<SqliteCredentialRows>> SqliteCredentialRows::Open(
    const std::string& path) {
  if (path.empty()) return absl::InvalidArgumentError("credentials path is empty");
  // secure_delete overwrites the space a deleted or replaced value occupied; durable commits:
  // a stored credential is durable once Put returns (writes are rare).
  absl::StatusOr<std::unique_ptr<SqliteDatabase>> db =
      base::OpenPrivateDatabase(path, {.what = "credentials database",
                                       .durable_commits = true,
                                       .secure_delete = true,
                                       .schema_version = kSchemaVersion,
                                       .schema = kSchema});
  if (!db.ok()) return db.status();
  SqliteDatabase& sql = **db;
  absl::StatusOr<SqliteStatement> upsert = sql.Prepare(kUpsert);
  if (!upsert.ok()) return upsert.status();
  absl::StatusOr<SqliteStatement> select = sql.Prepare(kSelect);
  if (!select.ok()) return select.status();
  absl::StatusOr<SqliteStatement> remove = sql.Prepare(kDelete);
  if (!remove.ok()) return remove.status();
  absl::StatusOr<SqliteStatement> names = sql.Prepare(kNames);
  if (!names.ok()) return names.status();
  auto statements = std::unique_ptr<Statements>(new Statements{
      *std::move(upsert), *std::move(select), *std::move(remove), *std::move(names)});
  return std::unique_ptr<SqliteCredentialRows>(
      new SqliteCredentialRows(path, *std::move(db), std::move(statements)));
}

void SqliteCredentialRows::Checkpoint() {
  if (absl::Status s = db_->Exec("PRAGMA wal_checkpoint(TRUNCATE)"); !s.ok()) {
    LOG(WARNING) << "credentials: checkpoint failed: " << s;
  }
}

absl::Status SqliteCredentialRows::Put(std::string_view owner, std::string_view name,
                                       const SealedEntry& entry) {
  base::MutexLock lock(&mu_);
  if (absl::Status s = RunUpsert(statements_->upsert, owner, name, entry); !s.ok()) return s;
  Checkpoint();
  return absl::OkStatus();
}

absl::StatusOr<std::optional<SealedEntry>> SqliteCredentialRows::Find(std::string_view owner,
                                                                      std::string_view name) {
  base::MutexLock lock(&mu_);
  SqliteStatement& select = statements_->select;
  absl::Cleanup reset = [&select] { select.Reset(); };
  absl::Status s = select.BindText(1, owner);
  if (s.ok()) s = select.BindText(2, name);
  if (!s.ok()) return s;
  absl::StatusOr<bool> row = select.Step();
  if (!row.ok()) return row.status();
  if (!*row) return std::nullopt;
  return SealedEntry{.key_id = select.ColumnText(0),
                     .sealed = {select.ColumnBlob(1), select.ColumnBlob(2), select.ColumnBlob(3)}};
}

absl::StatusOr<bool> SqliteCredentialRows::Delete(std::string_view owner, std::string_view name) {
  base::MutexLock lock(&mu_);
  SqliteStatement& remove = statements_->remove;
  absl::Status s = remove.BindText(1, owner);
  if (s.ok()) s = remove.BindText(2, name);
  if (s.ok()) s = remove.Run();
  remove.Reset();
  if (!s.ok()) return s;
  const bool deleted = db_->Changes() > 0;
  if (deleted) Checkpoint();
  return deleted;
}

absl::StatusOr<std::vector<std::string>> SqliteCredentialRows::Names(std::string_view owner) {
  base::MutexLock lock(&mu_);
  SqliteStatement& select = statements_->names;
  absl::Cleanup reset = [&select] { select.Reset(); };
  if (absl::Status s = select.BindText(1, owner); !s.ok()) return s;
  std::vector<std::string> names;
  for (;;) {
    absl::StatusOr<bool> row = select.Step();
    if (!row.ok()) return row.status();
    if (!*row) return names;
    names.push_back(select.ColumnText(0));
  }
}

absl::StatusOr<std::map<std::string, int64_t>> SqliteCredentialRows::CountByKey() {
  base::MutexLock lock(&mu_);
  absl::StatusOr<SqliteStatement> count =
      db_->Prepare("SELECT key_id, COUNT(*) FROM credentials GROUP BY key_id");
  if (!count.ok()) return count.status();
  std::map<std::string, int64_t> rows_by_key;
  for (;;) {
    absl::StatusOr<bool> row = count->Step();
    if (!row.ok()) return row.status();
    if (!*row) return rows_by_key;
    rows_by_key[count->ColumnText(0)] = count->ColumnInt64(1);
  }
}

absl::Status SqliteCredentialRows::ResealAll(
    const std::string& current_key_id,
    absl::FunctionRef<absl::StatusOr<SealedValue>(const OwnedEntry&)> reseal) {
  base::MutexLock lock(&mu_);
  std::vector<OwnedEntry> rows;
  absl::Cleanup wipe_rows = [&rows] {
    for (OwnedEntry& row : rows) WipeSecret(row.entry.sealed.ciphertext);
  };
  if (absl::Status s = db_->Exec("BEGIN IMMEDIATE"); !s.ok()) return s;
  auto body = [&]() -> absl::Status {
    absl::StatusOr<SqliteStatement> select = db_->Prepare(
        "SELECT owner, name, key_id, nonce, ciphertext, tag FROM credentials WHERE key_id != ?1");
    if (!select.ok()) return select.status();
    if (absl::Status s = select->BindText(1, current_key_id); !s.ok()) return s;
    for (;;) {
      absl::StatusOr<bool> more = select->Step();
      if (!more.ok()) return more.status();
      if (!*more) break;
      rows.push_back(OwnedEntry{.owner = select->ColumnText(0),
                                .name = select->ColumnText(1),
                                .entry = {.key_id = select->ColumnText(2),
                                          .sealed = {select->ColumnBlob(3), select->ColumnBlob(4),
                                                     select->ColumnBlob(5)}}});
    }
    for (const OwnedEntry& row : rows) {
      absl::StatusOr<SealedValue> sealed = reseal(row);
      if (!sealed.ok()) return sealed.status();
      absl::Status s = RunUpsert(statements_->upsert, row.owner, row.name,
                                 {.key_id = current_key_id, .sealed = *std::move(sealed)});
      if (!s.ok()) return s;
    }
    return absl::OkStatus();
  };
  absl::Status status = body();
  if (status.ok()) status = db_->Exec("COMMIT");
  if (!status.ok()) {
    (void)db_->Exec("ROLLBACK");
    return status;
  }
  if (!rows.empty()) Checkpoint();
  return absl::OkStatus();
}

}  // namespace herald::skills::credentials_internal
