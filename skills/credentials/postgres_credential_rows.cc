#include "skills/credentials/postgres_credential_rows.h"

#include <utility>

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace herald::skills::credentials_internal {

using base::PostgresConnection;
using base::PostgresResult;
using base::SqlParams;

namespace {

// Version i + 1 of the credentials table is made by kMigrations[i] (base::ApplySchema).
constexpr std::string_view kMigrations[] = {
    R"sql(
CREATE TABLE credentials (
  owner text NOT NULL,          -- a bare JID, 'room:JID' or 'api:NAME'
  name text NOT NULL,           -- an environment-variable name
  key_id text NOT NULL,         -- hex of the first 8 bytes of SHA-256 of the sealing key
  nonce bytea NOT NULL,         -- 12 bytes, fresh for each seal
  ciphertext bytea NOT NULL,    -- AES-256-GCM; additional data: owner and name
  tag bytea NOT NULL,           -- 16 bytes
  updated_at bigint NOT NULL,   -- Unix seconds
  PRIMARY KEY (owner, name)
);
)sql",
};

constexpr char kUpsert[] = R"sql(
INSERT INTO credentials (owner, name, key_id, nonce, ciphertext, tag, updated_at)
VALUES ($1, $2, $3, $4, $5, $6, $7)
ON CONFLICT (owner, name) DO UPDATE SET
  key_id = excluded.key_id,
  nonce = excluded.nonce,
  ciphertext = excluded.ciphertext,
  tag = excluded.tag,
  updated_at = excluded.updated_at
)sql";

SqlParams UpsertParams(std::string_view owner, std::string_view name, const SealedEntry& entry) {
  SqlParams params;
  params.Text(owner)
      .Text(name)
      .Text(entry.key_id)
      .Bytes(entry.sealed.nonce)
      .Bytes(entry.sealed.ciphertext)
      .Bytes(entry.sealed.tag)
      .Int64(absl::ToUnixSeconds(absl::Now()));
  return params;
}

}  // namespace

absl::StatusOr<std::unique_ptr<PostgresCredentialRows>> PostgresCredentialRows::Open(
    std::shared_ptr<base::PostgresDatabase> db) {
  if (absl::Status s = base::ApplySchema(*db, "credentials", kMigrations); !s.ok()) return s;
  return std::unique_ptr<PostgresCredentialRows>(new PostgresCredentialRows(std::move(db)));
}

absl::Status PostgresCredentialRows::Put(std::string_view owner, std::string_view name,
                                         const SealedEntry& entry) {
  return db_->Exec(kUpsert, UpsertParams(owner, name, entry)).status();
}

absl::StatusOr<std::optional<SealedEntry>> PostgresCredentialRows::Find(std::string_view owner,
                                                                        std::string_view name) {
  absl::StatusOr<PostgresResult> row = db_->Exec(
      "SELECT key_id, nonce, ciphertext, tag FROM credentials WHERE owner = $1 AND name = $2",
      SqlParams().Text(owner).Text(name));
  if (!row.ok()) return row.status();
  if (row->rows() == 0) return std::nullopt;
  return SealedEntry{.key_id = std::string(row->Text(0, 0)),
                     .sealed = {row->Bytes(0, 1), row->Bytes(0, 2), row->Bytes(0, 3)}};
}

absl::StatusOr<bool> PostgresCredentialRows::Delete(std::string_view owner, std::string_view name) {
  absl::StatusOr<PostgresResult> deleted = db_->Exec(
      "DELETE FROM credentials WHERE owner = $1 AND name = $2", SqlParams().Text(owner).Text(name));
  if (!deleted.ok()) return deleted.status();
  return deleted->affected() > 0;
}

absl::StatusOr<std::vector<std::string>> PostgresCredentialRows::Names(std::string_view owner) {
  absl::StatusOr<PostgresResult> rows = db_->Exec(
      "SELECT name FROM credentials WHERE owner = $1 ORDER BY name", SqlParams().Text(owner));
  if (!rows.ok()) return rows.status();
  std::vector<std::string> names;
  names.reserve(rows->rows());
  for (int i = 0; i < rows->rows(); ++i) names.emplace_back(rows->Text(i, 0));
  return names;
}

absl::StatusOr<std::map<std::string, int64_t>> PostgresCredentialRows::CountByKey() {
  absl::StatusOr<PostgresResult> rows =
      db_->Exec("SELECT key_id, COUNT(*) FROM credentials GROUP BY key_id");
  if (!rows.ok()) return rows.status();
  std::map<std::string, int64_t> rows_by_key;
  for (int i = 0; i < rows->rows(); ++i) {
    rows_by_key[std::string(rows->Text(i, 0))] = rows->Int64(i, 1);
  }
  return rows_by_key;
}

absl::Status PostgresCredentialRows::ResealAll(
    const std::string& current_key_id,
    absl::FunctionRef<absl::StatusOr<SealedValue>(const OwnedEntry&)> reseal) {
  return db_->Transaction([&](PostgresConnection& c) -> absl::Status {
    // FOR UPDATE: an instance rotating at the same time waits here, and then (the rows it
    // waited for no longer match) finds nothing left to re-seal.
    absl::StatusOr<PostgresResult> rows = c.Exec(
        "SELECT owner, name, key_id, nonce, ciphertext, tag FROM credentials WHERE key_id <> $1 "
        "ORDER BY owner, name FOR UPDATE",
        SqlParams().Text(current_key_id));
    if (!rows.ok()) return rows.status();
    for (int i = 0; i < rows->rows(); ++i) {
      OwnedEntry row{
          .owner = std::string(rows->Text(i, 0)),
          .name = std::string(rows->Text(i, 1)),
          .entry = {.key_id = std::string(rows->Text(i, 2)),
                    .sealed = {rows->Bytes(i, 3), rows->Bytes(i, 4), rows->Bytes(i, 5)}}};
      absl::StatusOr<SealedValue> sealed = reseal(row);
      WipeSecret(row.entry.sealed.ciphertext);
      if (!sealed.ok()) return sealed.status();
      absl::StatusOr<PostgresResult> updated =
          c.Exec(kUpsert, UpsertParams(row.owner, row.name,
                                       {.key_id = current_key_id, .sealed = *std::move(sealed)}));
      if (!updated.ok()) return updated.status();
    }
    return absl::OkStatus();
  });
}

}  // namespace herald::skills::credentials_internal
