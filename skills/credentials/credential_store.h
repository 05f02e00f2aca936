// skills/credentials/credential_store.h
//
// CredentialStore keeps the secrets skills need (API keys, tokens) per owner — a user's bare
// JID or "api:NAME" — each value sealed with AES-256-GCM under a key that
// lives outside the database (a 0600 key file or an environment variable). The owner and the
// name are authenticated with the value, so a row copied to another owner or name does not
// open. Each row records which key sealed it (a key id: the first 8 bytes of the key's SHA-256,
// in hex); Open refuses a database sealed under a key it was not given, and re-seals, in one
// transaction, the rows sealed under one of `previous_key_files` (key rotation). Neither keys
// nor values ever appear in a Status message or a log line. The sealed entries are kept in a
// private SQLite file on this host, where deleted values are overwritten on disk, or, for
// several instances of one domain, in their shared PostgreSQL database (credential_rows.h);
// either way only Herald ever sees a plaintext.
//
// All methods block (disk, network) and are thread-safe; run them on the worker pool. The
// parts: credential_checks.h (what Put accepts), sealing_key.h (the key and its id),
// sealed_value.h (AES-256-GCM), key_rotation.h (what Open checks and re-seals),
// credential_rows.h (where the sealed entries are kept).
//
//   CredentialStore::Options options;
//   options.path = "./data/credentials.db";
//   options.key_file = "/etc/herald/credentials.key";  // head -c 32 /dev/urandom; chmod 600
//   absl::StatusOr<std::unique_ptr<CredentialStore>> store = CredentialStore::Open(options);
//   absl::Status s = (*store)->Put("alice@localhost", "GITHUB_TOKEN", token);
//   auto values = (*store)->Get("alice@localhost", {"GITHUB_TOKEN", "JIRA_TOKEN"});
//   // *values holds GITHUB_TOKEN only when JIRA_TOKEN was never stored.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "component/base/postgres_database.h"
#include "skills/credentials/credential_checks.h"  // the limits Put enforces

namespace herald::skills {

namespace credentials_internal {
class CredentialRows;
struct SealingKey;  // 32 key bytes and their id; wiped when destroyed
}  // namespace credentials_internal

class CredentialStore {
 public:
  struct Options {
    std::string path;  // SQLite file, created 0600 (missing folders created 0700)
    // 32 random bytes, raw or as 64 hex digits (+ an optional newline); must not be readable
    // by group or others. "" = read the key from the environment variable `key_env`.
    std::string key_file;
    std::string key_env = "HERALD_CREDENTIALS_KEY";  // 64 hex digits; used when key_file is ""
    // Rotation: rows sealed under one of these keys are re-sealed under the current key at Open.
    std::vector<std::string> previous_key_files;
    // Set ([storage] backend = "postgresql"): the entries are kept in this database, which
    // every instance shares, and `path` is not used.
    std::shared_ptr<base::PostgresDatabase> postgres;
  };

  // Fails when a key is missing, malformed or readable by others (PermissionDenied, saying
  // `chmod 600`), when the database cannot be opened, or when it holds rows sealed under a key
  // that is neither the current one nor a previous one (FailedPrecondition naming the key ids).
  static absl::StatusOr<std::unique_ptr<CredentialStore>> Open(const Options& options);

  CredentialStore(const CredentialStore&) = delete;
  CredentialStore& operator=(const CredentialStore&) = delete;
  ~CredentialStore();

  // Stores (or replaces) a value. `owner`: a bare JID ("alice@localhost"), "room:" and a
  // room's JID, or "api:NAME";
  // `name`: an environment-variable name, [A-Z_][A-Z0-9_]{0,63}; `value`: 1 to 8192 bytes, no
  // NUL. InvalidArgument otherwise (the message never quotes the value).
  absl::Status Put(std::string_view owner, std::string_view name, std::string_view value);

  // The values of those of `names` the owner has; absent ones are missing from the map.
  // DataLoss (naming the owner and the name) when a row fails to authenticate; the owner's
  // other entries still open.
  absl::StatusOr<std::map<std::string, std::string>> Get(std::string_view owner,
                                                         const std::vector<std::string>& names);

  // Removes an entry; false when there was none.
  absl::StatusOr<bool> Delete(std::string_view owner, std::string_view name);

  // The names the owner has, sorted.
  absl::StatusOr<std::vector<std::string>> Names(std::string_view owner);

  // How many entries Open moved from a previous key to the current one.
  int resealed_at_open() const { return resealed_at_open_; }

  // The current key's id (16 hex digits), for logs and messages; it reveals nothing of the key.
  const std::string& key_id() const { return key_id_; }

 private:
  using Key = credentials_internal::SealingKey;
  using Rows = credentials_internal::CredentialRows;

  CredentialStore(std::unique_ptr<Rows> rows, std::unique_ptr<Key> key, int resealed_at_open);

  const std::unique_ptr<Rows> rows_;  // thread-safe
  const std::unique_ptr<Key> key_;
  const std::string key_id_;
  const int resealed_at_open_;
};

}  // namespace herald::skills
