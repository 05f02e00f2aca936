#include "skills/credentials/key_rotation.h"

#include <cstdint>
#include <optional>
#include <utility>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "glog/logging.h"
#include "skills/credentials/sealed_value.h"

namespace herald::skills::credentials_internal {

using base::SqliteDatabase;
using base::SqliteStatement;

namespace {

// Runs `body` inside BEGIN IMMEDIATE ... COMMIT, rolling back when it fails.
template <typename Body>
absl::Status InTransaction(SqliteDatabase& db, Body body) {
  if (absl::Status s = db.Exec("BEGIN IMMEDIATE"); !s.ok()) return s;
  absl::Status status = body();
  if (status.ok()) status = db.Exec("COMMIT");
  if (!status.ok()) (void)db.Exec("ROLLBACK");
  return status;
}

struct Row {
  std::string owner;
  std::string name;
  std::string key_id;
  SealedValue sealed;
};

// How many rows are sealed under a previous key; FailedPrecondition when a row is sealed under
// a key that is neither the current one nor a previous one.
absl::StatusOr<int64_t> RowsUnderPreviousKeys(SqliteDatabase& sql, const std::string& path,
                                              const SealingKey& current,
                                              const PreviousKeys& previous) {
  std::map<std::string, int64_t> rows_by_key;
  {
    absl::StatusOr<SqliteStatement> count =
        sql.Prepare("SELECT key_id, COUNT(*) FROM credentials GROUP BY key_id");
    if (!count.ok()) return count.status();
    for (;;) {
      absl::StatusOr<bool> row = count->Step();
      if (!row.ok()) return row.status();
      if (!*row) break;
      rows_by_key[count->ColumnText(0)] = count->ColumnInt64(1);
    }
  }
  std::vector<std::string> unknown;
  int64_t to_reseal = 0;
  for (const auto& [id, rows] : rows_by_key) {
    if (id == current.id) continue;
    if (previous.contains(id)) {
      to_reseal += rows;
    } else {
      unknown.push_back(absl::StrCat(rows, " under key id ", id));
    }
  }
  if (!unknown.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "credentials database ", path, " holds entries sealed under another key (",
        absl::StrJoin(unknown, ", "), ") — key id mismatch: the current key has id ", current.id,
        " and no credentials_previous_key_files key matches. Use the key the entries were sealed "
        "with, or, to rotate, set credentials_key_file to the new key and list the old key's "
        "file in credentials_previous_key_files; Herald re-seals the entries at start"));
  }
  for (const auto& [id, old] : previous) {
    if (!rows_by_key.contains(id)) {
      LOG(WARNING) << "credentials: no entry is sealed under previous key " << id
                   << "; its file can be removed from credentials_previous_key_files";
    }
  }
  return to_reseal;
}

}  // namespace

absl::StatusOr<PreviousKeys> LoadPreviousKeys(const std::vector<std::string>& files,
                                              const SealingKey& current) {
  PreviousKeys previous;
  for (const std::string& file : files) {
    absl::StatusOr<std::unique_ptr<SealingKey>> old = LoadKeyFile(file);
    if (!old.ok()) return old.status();
    if ((*old)->id == current.id) {
      LOG(WARNING) << "credentials: previous key file " << file << " holds the current key (id "
                   << current.id << "); ignored";
      continue;
    }
    previous.emplace((*old)->id, *std::move(old));
  }
  return previous;
}

absl::StatusOr<int> ResealUnderCurrentKey(SqliteDatabase& sql, const std::string& path,
                                          const SealingKey& current, const PreviousKeys& previous) {
  absl::StatusOr<int64_t> to_reseal = RowsUnderPreviousKeys(sql, path, current, previous);
  if (!to_reseal.ok()) return to_reseal.status();
  // Every row under a previous key is re-sealed under the current key, all or none.
  int resealed = 0;
  if (*to_reseal > 0) {
    std::vector<Row> rows;
    absl::Cleanup wipe_rows = [&rows] {
      for (Row& row : rows) WipeSecret(row.sealed.ciphertext);
    };
    absl::Status status = InTransaction(sql, [&]() -> absl::Status {
      absl::StatusOr<SqliteStatement> select = sql.Prepare(
          "SELECT owner, name, key_id, nonce, ciphertext, tag FROM credentials WHERE key_id != ?1");
      if (!select.ok()) return select.status();
      if (absl::Status s = select->BindText(1, current.id); !s.ok()) return s;
      for (;;) {
        absl::StatusOr<bool> more = select->Step();
        if (!more.ok()) return more.status();
        if (!*more) break;
        rows.push_back(
            Row{select->ColumnText(0), select->ColumnText(1), select->ColumnText(2),
                SealedValue{select->ColumnBlob(3), select->ColumnBlob(4), select->ColumnBlob(5)}});
      }
      absl::StatusOr<SqliteStatement> update = sql.Prepare(
          "UPDATE credentials SET key_id = ?3, nonce = ?4, ciphertext = ?5, tag = ?6 "
          "WHERE owner = ?1 AND name = ?2");
      if (!update.ok()) return update.status();
      for (Row& row : rows) {
        std::optional<std::string> plaintext =
            OpenSealed(*previous.at(row.key_id), row.owner, row.name, row.sealed);
        SealedValue sealed;
        if (plaintext.has_value()) {
          absl::StatusOr<SealedValue> resealed_row = Seal(current, row.owner, row.name, *plaintext);
          WipeSecret(*plaintext);
          if (!resealed_row.ok()) return resealed_row.status();
          sealed = *std::move(resealed_row);
          ++resealed;
        } else {
          // Damaged under its own key, it cannot be recovered; filed under the current key it
          // keeps failing (DataLoss for that entry) until stored again or deleted, and the old
          // key is not needed for it.
          LOG(WARNING) << "credentials: " << row.name << " of " << row.owner
                       << " failed to authenticate under previous key " << row.key_id
                       << "; left damaged (store it again or delete it)";
          sealed = row.sealed;
        }
        absl::Status s = update->BindText(1, row.owner);
        if (s.ok()) s = update->BindText(2, row.name);
        if (s.ok()) s = update->BindText(3, current.id);
        if (s.ok()) s = update->BindBlob(4, sealed.nonce);
        if (s.ok()) s = update->BindBlob(5, sealed.ciphertext);
        if (s.ok()) s = update->BindBlob(6, sealed.tag);
        if (s.ok()) s = update->Run();
        update->Reset();
        if (!s.ok()) return s;
      }
      return absl::OkStatus();
    });
    if (!status.ok()) return status;
    LOG(INFO) << "credentials: re-sealed " << resealed << " entries under the current key (id "
              << current.id << "); the previous key files are no longer needed";
  }
  return resealed;
}

}  // namespace herald::skills::credentials_internal
