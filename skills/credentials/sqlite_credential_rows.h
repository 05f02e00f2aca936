// skills/credentials/sqlite_credential_rows.h
//
// The credentials' sealed entries in a private SQLite file on this host (credential_rows.h):
// created 0600 in a 0700 folder, each commit fsynced, and deleted or replaced values overwritten
// on disk (secure_delete, and the write-ahead log checkpointed and truncated after each change),
// so a deleted entry's ciphertext does not linger either.
//
//   absl::StatusOr<std::unique_ptr<SqliteCredentialRows>> rows =
//       SqliteCredentialRows::Open("./data/credentials.db");
#pragma once

#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "component/base/mutex.h"
#include "component/base/sqlite_database.h"
#include "skills/credentials/credential_rows.h"

namespace herald::skills::credentials_internal {

class SqliteCredentialRows final : public CredentialRows {
 public:
  // Creates the file (and its folders) when missing; refuses one written by a newer Herald.
  static absl::StatusOr<std::unique_ptr<SqliteCredentialRows>> Open(const std::string& path);
  ~SqliteCredentialRows() override;

  const std::string& where() const override { return where_; }
  absl::Status Put(std::string_view owner, std::string_view name, const SealedEntry& entry) override
      ABSL_LOCKS_EXCLUDED(mu_);
  absl::StatusOr<std::optional<SealedEntry>> Find(std::string_view owner,
                                                  std::string_view name) override
      ABSL_LOCKS_EXCLUDED(mu_);
  absl::StatusOr<bool> Delete(std::string_view owner, std::string_view name) override
      ABSL_LOCKS_EXCLUDED(mu_);
  absl::StatusOr<std::vector<std::string>> Names(std::string_view owner) override
      ABSL_LOCKS_EXCLUDED(mu_);
  absl::StatusOr<std::map<std::string, int64_t>> CountByKey() override ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status ResealAll(const std::string& current_key_id,
                         absl::FunctionRef<absl::StatusOr<SealedValue>(const OwnedEntry&)> reseal)
      override ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct Statements;

  SqliteCredentialRows(std::string path, std::unique_ptr<base::SqliteDatabase> db,
                       std::unique_ptr<Statements> statements);

  // Moves the write-ahead log into the database and truncates it, so the previous versions of
  // changed pages (which may hold a replaced or deleted value's ciphertext) leave the disk.
  void Checkpoint() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::string where_;
  base::Mutex mu_;
  std::unique_ptr<base::SqliteDatabase> db_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<Statements> statements_ ABSL_GUARDED_BY(mu_);
};

}  // namespace herald::skills::credentials_internal
