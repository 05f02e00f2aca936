#include "skills/credentials/credential_store.h"

#include <optional>
#include <utility>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "component/base/absl_string_view.h"
#include "component/base/sqlite_database.h"
#include "glog/logging.h"
#include "skills/credentials/key_rotation.h"
#include "skills/credentials/sealed_value.h"
#include "skills/credentials/sealing_key.h"

namespace herald::skills {

using base::SqliteDatabase;
using base::SqliteStatement;
using credentials_internal::LoadKeyFile;
using credentials_internal::LoadKeyFromEnvironment;
using credentials_internal::LoadPreviousKeys;
using credentials_internal::OpenSealed;
using credentials_internal::PreviousKeys;
using credentials_internal::ResealUnderCurrentKey;
using credentials_internal::Seal;
using credentials_internal::SealedValue;
using credentials_internal::WipeSecret;

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

absl::Status DamagedEntry(std::string_view owner, std::string_view name) {
  return absl::DataLossError(absl::StrCat(
      "credential ", AbslView(name), " of ", AbslView(owner),
      " failed to authenticate (damaged, or copied from another owner or name); store it again "
      "or delete it"));
}

}  // namespace

struct CredentialStore::Statements {
  SqliteStatement upsert;
  SqliteStatement select;
  SqliteStatement remove;
  SqliteStatement names;
};

CredentialStore::CredentialStore(std::unique_ptr<SqliteDatabase> db, std::unique_ptr<Key> key,
                                 std::unique_ptr<Statements> statements, int resealed_at_open)
    : db_(std::move(db)),
      statements_(std::move(statements)),
      key_(std::move(key)),
      key_id_(key_->id),
      resealed_at_open_(resealed_at_open) {}

CredentialStore::~CredentialStore() = default;

absl::StatusOr<std::unique_ptr<CredentialStore>> CredentialStore::Open(const Options& options) {
  if (options.path.empty()) return absl::InvalidArgumentError("credentials path is empty");

  absl::StatusOr<std::unique_ptr<Key>> key = options.key_file.empty()
                                                 ? LoadKeyFromEnvironment(options.key_env)
                                                 : LoadKeyFile(options.key_file);
  if (!key.ok()) return key.status();
  absl::StatusOr<PreviousKeys> previous = LoadPreviousKeys(options.previous_key_files, **key);
  if (!previous.ok()) return previous.status();

  const std::string& path = options.path;
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

  absl::StatusOr<int> resealed = ResealUnderCurrentKey(sql, path, **key, *previous);
  if (!resealed.ok()) return resealed.status();

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
  auto store = std::unique_ptr<CredentialStore>(
      new CredentialStore(*std::move(db), *std::move(key), std::move(statements), *resealed));
  if (*resealed > 0) {
    base::MutexLock lock(&store->mu_);
    store->Checkpoint();
  }
  return store;
}

void CredentialStore::Checkpoint() {
  if (absl::Status s = db_->Exec("PRAGMA wal_checkpoint(TRUNCATE)"); !s.ok()) {
    LOG(WARNING) << "credentials: checkpoint failed: " << s;
  }
}

absl::Status CredentialStore::Put(std::string_view owner, std::string_view name,
                                  std::string_view value) {
  if (absl::Status s = CheckCredentialOwner(owner); !s.ok()) return s;
  if (absl::Status s = CheckCredentialName(name); !s.ok()) return s;
  if (absl::Status s = CheckCredentialValue(name, value); !s.ok()) return s;
  absl::StatusOr<SealedValue> sealed = Seal(*key_, owner, name, value);
  if (!sealed.ok()) return sealed.status();

  base::MutexLock lock(&mu_);
  SqliteStatement& upsert = statements_->upsert;
  absl::Status s = upsert.BindText(1, owner);
  if (s.ok()) s = upsert.BindText(2, name);
  if (s.ok()) s = upsert.BindText(3, key_id_);
  if (s.ok()) s = upsert.BindBlob(4, sealed->nonce);
  if (s.ok()) s = upsert.BindBlob(5, sealed->ciphertext);
  if (s.ok()) s = upsert.BindBlob(6, sealed->tag);
  if (s.ok()) s = upsert.BindInt64(7, absl::ToUnixSeconds(absl::Now()));
  if (s.ok()) s = upsert.Run();
  upsert.Reset();
  if (!s.ok()) return s;
  Checkpoint();
  return absl::OkStatus();
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
  base::MutexLock lock(&mu_);
  SqliteStatement& select = statements_->select;
  for (const std::string& name : names) {
    if (values.contains(name)) continue;
    absl::Status s = select.BindText(1, owner);
    if (s.ok()) s = select.BindText(2, name);
    if (!s.ok()) {
      select.Reset();
      return s;
    }
    absl::StatusOr<bool> row = select.Step();
    if (!row.ok() || !*row) {
      select.Reset();
      if (!row.ok()) return row.status();
      continue;
    }
    const std::string key_id = select.ColumnText(0);
    SealedValue sealed{select.ColumnBlob(1), select.ColumnBlob(2), select.ColumnBlob(3)};
    select.Reset();
    if (key_id != key_id_) {
      return absl::DataLossError(absl::StrCat("credential ", name, " of ", AbslView(owner),
                                              " is sealed under key id ", key_id,
                                              ", not the current key (id ", key_id_, ")"));
    }
    std::optional<std::string> value = OpenSealed(*key_, owner, name, sealed);
    if (!value.has_value()) return DamagedEntry(owner, name);
    values.emplace(name, *std::move(value));
  }
  std::move(wipe_on_error).Cancel();
  return values;
}

absl::StatusOr<bool> CredentialStore::Delete(std::string_view owner, std::string_view name) {
  if (absl::Status s = CheckCredentialOwner(owner); !s.ok()) return s;
  if (absl::Status s = CheckCredentialName(name); !s.ok()) return s;
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

absl::StatusOr<std::vector<std::string>> CredentialStore::Names(std::string_view owner) {
  if (absl::Status s = CheckCredentialOwner(owner); !s.ok()) return s;
  base::MutexLock lock(&mu_);
  SqliteStatement& select = statements_->names;
  std::vector<std::string> names;
  if (absl::Status s = select.BindText(1, owner); !s.ok()) {
    select.Reset();
    return s;
  }
  for (;;) {
    absl::StatusOr<bool> row = select.Step();
    if (!row.ok()) {
      select.Reset();
      return row.status();
    }
    if (!*row) break;
    names.push_back(select.ColumnText(0));
  }
  select.Reset();
  return names;
}

}  // namespace herald::skills
