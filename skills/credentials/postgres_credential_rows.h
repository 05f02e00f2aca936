// skills/credentials/postgres_credential_rows.h
//
// The credentials' sealed entries in the PostgreSQL database several instances share
// ([storage] backend = "postgresql"; docs/scale-out.md): a credential one instance stores,
// every instance can give to a run. The database holds what Herald sealed (key id, nonce,
// ciphertext, tag as bytea) and never a plaintext or a key: every instance seals and opens
// with the same key file. PostgreSQL keeps a replaced or deleted row's old version until
// VACUUM reclaims it; that version is sealed too.
//
//   absl::StatusOr<std::unique_ptr<PostgresCredentialRows>> rows =
//       PostgresCredentialRows::Open(stores.postgres);
#pragma once

#include <memory>
#include <string>

#include "component/base/postgres_database.h"
#include "skills/credentials/credential_rows.h"

namespace herald::skills::credentials_internal {

class PostgresCredentialRows final : public CredentialRows {
 public:
  // Applies the credentials schema (base::ApplySchema: refuses a newer one).
  static absl::StatusOr<std::unique_ptr<PostgresCredentialRows>> Open(
      std::shared_ptr<base::PostgresDatabase> db);

  const std::string& where() const override { return where_; }
  absl::Status Put(std::string_view owner, std::string_view name,
                   const SealedEntry& entry) override;
  absl::StatusOr<std::optional<SealedEntry>> Find(std::string_view owner,
                                                  std::string_view name) override;
  absl::StatusOr<bool> Delete(std::string_view owner, std::string_view name) override;
  absl::StatusOr<std::vector<std::string>> Names(std::string_view owner) override;
  absl::StatusOr<std::map<std::string, int64_t>> CountByKey() override;
  absl::Status ResealAll(
      const std::string& current_key_id,
      absl::FunctionRef<absl::StatusOr<SealedValue>(const OwnedEntry&)> reseal) override;

 private:
  explicit PostgresCredentialRows(std::shared_ptr<base::PostgresDatabase> db)
      : db_(std::move(db)) {}

  const std::string where_ = "credentials in PostgreSQL";
  const std::shared_ptr<base::PostgresDatabase> db_;
};

}  // namespace herald::skills::credentials_internal
