// skills/credentials/key_rotation.h
//
// What CredentialStore::Open does between opening the database and serving from it. Every row
// records the id of the key that sealed it; each must be the current key or one of the
// previous key files ([skills] credentials_previous_key_files), or the database is refused
// (FailedPrecondition naming the key ids and how to rotate). The rows under a previous key are
// re-sealed under the current one in one transaction, all or none. A row that no longer
// authenticates under its old key is logged by owner and name and filed under the current key
// as it is (it keeps failing, for that entry alone, until stored again or deleted), so the old
// key is not needed for it either. A previous key that sealed nothing is logged as removable.
// Blocking (key files, the store): Open runs it before the store serves anything.
//
//   absl::StatusOr<PreviousKeys> previous = LoadPreviousKeys(options.previous_key_files, *key);
//   absl::StatusOr<int> resealed = ResealUnderCurrentKey(*rows, *key, *previous);
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "skills/credentials/credential_rows.h"
#include "skills/credentials/sealing_key.h"

namespace herald::skills::credentials_internal {

using PreviousKeys = std::map<std::string, std::unique_ptr<SealingKey>>;  // by key id

// The keys of `files`, but for a file that holds `current` (logged and ignored). Fails as
// LoadKeyFile does for the first file it cannot use.
absl::StatusOr<PreviousKeys> LoadPreviousKeys(const std::vector<std::string>& files,
                                              const SealingKey& current);

// Checks the key ids of the entries in `rows` and re-seals those under a previous key. Answers
// how many were re-sealed (damaged entries not counted).
absl::StatusOr<int> ResealUnderCurrentKey(CredentialRows& rows, const SealingKey& current,
                                          const PreviousKeys& previous);

}  // namespace herald::skills::credentials_internal
