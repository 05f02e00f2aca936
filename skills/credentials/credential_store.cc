#include "skills/credentials/credential_store.h"

#include <optional>
#include <utility>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "component/base/absl_string_view.h"
#include "skills/credentials/credential_rows.h"
#include "skills/credentials/key_rotation.h"
#include "skills/credentials/postgres_credential_rows.h"
#include "skills/credentials/sealed_value.h"
#include "skills/credentials/sealing_key.h"
#include "skills/credentials/sqlite_credential_rows.h"

namespace herald::skills {

using credentials_internal::LoadKeyFile;
using credentials_internal::LoadKeyFromEnvironment;
using credentials_internal::LoadPreviousKeys;
using credentials_internal::OpenSealed;
using credentials_internal::PostgresCredentialRows;
using credentials_internal::PreviousKeys;
using credentials_internal::ResealUnderCurrentKey;
using credentials_internal::Seal;
using credentials_internal::SealedEntry;
using credentials_internal::SealedValue;
using credentials_internal::SqliteCredentialRows;
using credentials_internal::WipeSecret;

namespace {

absl::Status DamagedEntry(std::string_view owner, std::string_view name) {
  return absl::DataLossError(absl::StrCat(
      "credential ", AbslView(name), " of ", AbslView(owner),
      " failed to authenticate (damaged, or copied from another owner or name); store it again "
      "or delete it"));
}

}  // namespace

CredentialStore::CredentialStore(std::unique_ptr<Rows> rows, std::unique_ptr<Key> key,
                                 int resealed_at_open)
    : rows_(std::move(rows)),
      key_(std::move(key)),
      key_id_(key_->id),
      resealed_at_open_(resealed_at_open) {}

CredentialStore::~CredentialStore() = default;

absl::StatusOr<std::unique_ptr<CredentialStore>> CredentialStore::Open(const Options& options) {
  if (options.postgres == nullptr && options.path.empty()) {
    return absl::InvalidArgumentError("credentials path is empty");
  }
  absl::StatusOr<std::unique_ptr<Key>> key = options.key_file.empty()
                                                 ? LoadKeyFromEnvironment(options.key_env)
                                                 : LoadKeyFile(options.key_file);
  if (!key.ok()) return key.status();
  absl::StatusOr<PreviousKeys> previous = LoadPreviousKeys(options.previous_key_files, **key);
  if (!previous.ok()) return previous.status();

  std::unique_ptr<Rows> rows;
  if (options.postgres != nullptr) {
    absl::StatusOr<std::unique_ptr<PostgresCredentialRows>> opened =
        PostgresCredentialRows::Open(options.postgres);
    if (!opened.ok()) return opened.status();
    rows = *std::move(opened);
  } else {
    absl::StatusOr<std::unique_ptr<SqliteCredentialRows>> opened =
        SqliteCredentialRows::Open(options.path);
    if (!opened.ok()) return opened.status();
    rows = *std::move(opened);
  }
  absl::StatusOr<int> resealed = ResealUnderCurrentKey(*rows, **key, *previous);
  if (!resealed.ok()) return resealed.status();
  return std::unique_ptr<CredentialStore>(
      new CredentialStore(std::move(rows), *std::move(key), *resealed));
}

absl::Status CredentialStore::Put(std::string_view owner, std::string_view name,
                                  std::string_view value) {
  if (absl::Status s = CheckCredentialOwner(owner); !s.ok()) return s;
  if (absl::Status s = CheckCredentialName(name); !s.ok()) return s;
  if (absl::Status s = CheckCredentialValue(name, value); !s.ok()) return s;
  absl::StatusOr<SealedValue> sealed = Seal(*key_, owner, name, value);
  if (!sealed.ok()) return sealed.status();
  return rows_->Put(owner, name, {.key_id = key_id_, .sealed = *std::move(sealed)});
}

absl::StatusOr<std::map<std::string, std::string>> CredentialStore::Get(
    std::string_view owner, const std::vector<std::string>& names) {
  if (absl::Status s = CheckCredentialOwner(owner); !s.ok()) return s;
  for (const std::string& name : names) {
    if (absl::Status s = CheckCredentialName(name); !s.ok()) return s;
  }
  std::map<std::string, std::string> values;
  absl::Cleanup wipe_on_error = [&values] {
    for (auto& [name, value] : values) WipeSecret(value);
  };
  for (const std::string& name : names) {
    if (values.contains(name)) continue;
    absl::StatusOr<std::optional<SealedEntry>> entry = rows_->Find(owner, name);
    if (!entry.ok()) return entry.status();
    if (!entry->has_value()) continue;
    const SealedEntry& found = **entry;
    if (found.key_id != key_id_) {
      return absl::DataLossError(absl::StrCat("credential ", name, " of ", AbslView(owner),
                                              " is sealed under key id ", found.key_id,
                                              ", not the current key (id ", key_id_, ")"));
    }
    std::optional<std::string> value = OpenSealed(*key_, owner, name, found.sealed);
    if (!value.has_value()) return DamagedEntry(owner, name);
    values.emplace(name, *std::move(value));
  }
  std::move(wipe_on_error).Cancel();
  return values;
}

absl::StatusOr<bool> CredentialStore::Delete(std::string_view owner, std::string_view name) {
  if (absl::Status s = CheckCredentialOwner(owner); !s.ok()) return s;
  if (absl::Status s = CheckCredentialName(name); !s.ok()) return s;
  return rows_->Delete(owner, name);
}

absl::StatusOr<std::vector<std::string>> CredentialStore::Names(std::string_view owner) {
  if (absl::Status s = CheckCredentialOwner(owner); !s.ok()) return s;
  return rows_->Names(owner);
}

}  // namespace herald::skills
