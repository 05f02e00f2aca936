// skills/credentials/credential_rows.h
//
// Where CredentialStore keeps its sealed entries: a private SQLite file on this host
// (SqliteCredentialRows, the default), or the PostgreSQL database that several instances of one
// component domain share (PostgresCredentialRows, [storage] backend = "postgresql"). Either
// holds only what Herald sealed — key id, nonce, ciphertext, tag — never a plaintext or a key:
// sealing and opening stay in CredentialStore.
//
// Every method blocks (disk, network) and is thread-safe; CredentialStore calls them from the
// worker pool.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "skills/credentials/sealed_value.h"

namespace herald::skills::credentials_internal {

// One entry as kept: the id of the key that sealed it and what the seal made.
struct SealedEntry {
  std::string key_id;
  SealedValue sealed;
};

// An entry with the owner and name it is kept under (key rotation reads them all).
struct OwnedEntry {
  std::string owner;
  std::string name;
  SealedEntry entry;
};

class CredentialRows {
 public:
  virtual ~CredentialRows() = default;

  // Names the place in messages: "credentials database /var/lib/herald/credentials.db".
  virtual const std::string& where() const = 0;

  // Inserts or replaces the entry of (owner, name); durable when it returns.
  virtual absl::Status Put(std::string_view owner, std::string_view name,
                           const SealedEntry& entry) = 0;
  // The entry of (owner, name), or nullopt when there is none.
  virtual absl::StatusOr<std::optional<SealedEntry>> Find(std::string_view owner,
                                                          std::string_view name) = 0;
  // Removes an entry; false when there was none.
  virtual absl::StatusOr<bool> Delete(std::string_view owner, std::string_view name) = 0;
  // The names the owner has, sorted.
  virtual absl::StatusOr<std::vector<std::string>> Names(std::string_view owner) = 0;

  // How many entries each key id sealed.
  virtual absl::StatusOr<std::map<std::string, int64_t>> CountByKey() = 0;
  // In one transaction (all or none), replaces every entry not sealed under `current_key_id`
  // with what `reseal` makes of it, recorded under `current_key_id`. Another instance doing the
  // same at once waits, then finds nothing left to do. An error from `reseal` rolls it all
  // back and is returned.
  virtual absl::Status ResealAll(
      const std::string& current_key_id,
      absl::FunctionRef<absl::StatusOr<SealedValue>(const OwnedEntry&)> reseal) = 0;
};

}  // namespace herald::skills::credentials_internal
