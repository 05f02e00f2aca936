#include "skills/credentials/key_rotation.h"

#include <cstdint>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "glog/logging.h"
#include "skills/credentials/sealed_value.h"

namespace herald::skills::credentials_internal {

namespace {

// How many rows are sealed under a previous key; FailedPrecondition when a row is sealed under
// a key that is neither the current one nor a previous one.
absl::StatusOr<int64_t> RowsUnderPreviousKeys(CredentialRows& rows, const SealingKey& current,
                                              const PreviousKeys& previous) {
  absl::StatusOr<std::map<std::string, int64_t>> rows_by_key = rows.CountByKey();
  if (!rows_by_key.ok()) return rows_by_key.status();
  std::vector<std::string> unknown;
  int64_t to_reseal = 0;
  for (const auto& [id, count] : *rows_by_key) {
    if (id == current.id) continue;
    if (previous.contains(id)) {
      to_reseal += count;
    } else {
      unknown.push_back(absl::StrCat(count, " under key id ", id));
    }
  }
  if (!unknown.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        rows.where(), " holds entries sealed under another key (", absl::StrJoin(unknown, ", "),
        ") — key id mismatch: the current key has id ", current.id,
        " and no credentials_previous_key_files key matches. Use the key the entries were sealed "
        "with, or, to rotate, set credentials_key_file to the new key and list the old key's "
        "file in credentials_previous_key_files; Herald re-seals the entries at start"));
  }
  for (const auto& [id, old] : previous) {
    if (!rows_by_key->contains(id)) {
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

absl::StatusOr<int> ResealUnderCurrentKey(CredentialRows& rows, const SealingKey& current,
                                          const PreviousKeys& previous) {
  absl::StatusOr<int64_t> to_reseal = RowsUnderPreviousKeys(rows, current, previous);
  if (!to_reseal.ok()) return to_reseal.status();
  if (*to_reseal == 0) return 0;
  // Every row under a previous key is re-sealed under the current key, all or none.
  int resealed = 0;
  absl::Status status =
      rows.ResealAll(current.id, [&](const OwnedEntry& row) -> absl::StatusOr<SealedValue> {
        const auto old = previous.find(row.entry.key_id);
        if (old == previous.end()) {  // stored since the count by an instance with another key
          return absl::FailedPreconditionError(
              absl::StrCat(rows.where(), " holds entries sealed under another key (key id ",
                           row.entry.key_id, "); no entry was re-sealed"));
        }
        std::optional<std::string> plaintext =
            OpenSealed(*old->second, row.owner, row.name, row.entry.sealed);
        if (!plaintext.has_value()) {
          // Damaged under its own key, it cannot be recovered; filed under the current key it
          // keeps failing (DataLoss for that entry) until stored again or deleted, and the old
          // key is not needed for it.
          LOG(WARNING) << "credentials: " << row.name << " of " << row.owner
                       << " failed to authenticate under previous key " << row.entry.key_id
                       << "; left damaged (store it again or delete it)";
          return row.entry.sealed;
        }
        absl::StatusOr<SealedValue> sealed = Seal(current, row.owner, row.name, *plaintext);
        WipeSecret(*plaintext);
        if (sealed.ok()) ++resealed;
        return sealed;
      });
  if (!status.ok()) return status;
  LOG(INFO) << "credentials: re-sealed " << resealed << " entries under the current key (id "
            << current.id << "); the previous key files are no longer needed";
  return resealed;
}

}  // namespace herald::skills::credentials_internal
