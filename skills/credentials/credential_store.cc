#include "skills/credentials/credential_store.h"

#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/sha.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <optional>
#include <utility>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "component/base/absl_string_view.h"
#include "component/base/hex.h"
#include "component/base/private_files.h"
#include "component/base/sqlite_database.h"
#include "glog/logging.h"

namespace herald::skills {

namespace credentials_internal {

struct SealingKey {
  std::array<unsigned char, 32> bytes{};
  std::string id;  // hex of the first 8 bytes of SHA-256(bytes)

  SealingKey() = default;
  SealingKey(const SealingKey&) = delete;
  SealingKey& operator=(const SealingKey&) = delete;
  ~SealingKey() { OPENSSL_cleanse(bytes.data(), bytes.size()); }
};

}  // namespace credentials_internal

using base::SqliteDatabase;
using base::SqliteStatement;
using credentials_internal::SealingKey;

namespace {

// The schema this code reads and writes (the one row of schema_version).
constexpr int kSchemaVersion = 1;
constexpr size_t kKeyBytes = 32;
constexpr size_t kNonceBytes = 12;
constexpr size_t kTagBytes = 16;
constexpr size_t kMaxApiNameBytes = 128;
// Longer than any key file holds: a bigger file is refused before it is read.
constexpr size_t kMaxKeyFileBytes = 66;
constexpr char kMakeKeyHint[] = "head -c 32 /dev/urandom > FILE && chmod 600 FILE";

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

// ----- validation --------------------------------------------------------------------------

bool IsUpper(char c) { return c >= 'A' && c <= 'Z'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Messages never quote what was refused: a caller that swapped its arguments would otherwise
// put a secret in an error.
absl::Status CheckOwner(std::string_view owner) {
  constexpr char kRule[] =
      "credential owner must be a bare JID (\"alice@localhost\"), \"room:\" and a room's JID, "
      "or \"api:NAME\"";
  if (owner.empty() || owner.size() > kMaxCredentialOwnerBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(kRule, " of 1 to ", kMaxCredentialOwnerBytes, " bytes"));
  }
  if (owner.substr(0, 4) == "api:") {
    std::string_view api = owner.substr(4);
    const bool valid = !api.empty() && api.size() <= kMaxApiNameBytes &&
                       std::all_of(api.begin(), api.end(), [](char c) {
                         return IsUpper(c) || IsDigit(c) || (c >= 'a' && c <= 'z') || c == '.' ||
                                c == '_' || c == '-';
                       });
    if (!valid) {
      return absl::InvalidArgumentError(absl::StrCat(kRule, "; NAME is 1 to ", kMaxApiNameBytes,
                                                     " letters, digits, '.', '_' or '-'"));
    }
    return absl::OkStatus();
  }
  const size_t at = owner.find('@');
  const bool valid =
      owner.find('/') == std::string_view::npos &&
      std::none_of(owner.begin(), owner.end(),
                   [](char c) { return static_cast<unsigned char>(c) <= 0x20 || c == 0x7f; }) &&
      (at == std::string_view::npos ||
       (at > 0 && at + 1 < owner.size() && owner.find('@', at + 1) == std::string_view::npos));
  if (!valid) {
    return absl::InvalidArgumentError(
        absl::StrCat(kRule, " (no resource, spaces or control characters)"));
  }
  return absl::OkStatus();
}

absl::Status CheckName(std::string_view name) {
  const bool valid = !name.empty() && name.size() <= kMaxCredentialNameBytes &&
                     (IsUpper(name[0]) || name[0] == '_') &&
                     std::all_of(name.begin(), name.end(),
                                 [](char c) { return IsUpper(c) || IsDigit(c) || c == '_'; });
  if (!valid) {
    return absl::InvalidArgumentError(
        "credential name must be an environment-variable name: [A-Z_][A-Z0-9_]{0,63}");
  }
  return absl::OkStatus();
}

absl::Status CheckValue(std::string_view name, std::string_view value) {
  if (value.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("credential ", AbslView(name), " is empty"));
  }
  if (value.size() > kMaxCredentialValueBytes) {
    return absl::InvalidArgumentError(absl::StrCat("credential ", AbslView(name), " is ",
                                                   value.size(), " bytes; at most ",
                                                   kMaxCredentialValueBytes, " are stored"));
  }
  if (value.find('\0') != std::string_view::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("credential ", AbslView(name), " contains a NUL byte"));
  }
  return absl::OkStatus();
}

// ----- keys --------------------------------------------------------------------------------

// Decodes 64 hex digits into key->bytes; false when `hex` is not that.
bool DecodeHexKey(std::string_view hex, SealingKey* key) {
  if (hex.size() != 2 * kKeyBytes) return false;
  for (size_t i = 0; i < kKeyBytes; ++i) {
    const int high = base::HexDigitValue(hex[2 * i]);
    const int low = base::HexDigitValue(hex[2 * i + 1]);
    if (high < 0 || low < 0) {
      OPENSSL_cleanse(key->bytes.data(), key->bytes.size());
      return false;
    }
    key->bytes[i] = static_cast<unsigned char>(high * 16 + low);
  }
  return true;
}

absl::Status SetKeyId(SealingKey* key) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  if (SHA256(key->bytes.data(), key->bytes.size(), digest) == nullptr) {
    return absl::InternalError("credentials: SHA-256 failed");
  }
  key->id.clear();
  for (int i = 0; i < 8; ++i) base::AppendHexByte(digest[i], base::HexCase::kLower, key->id);
  OPENSSL_cleanse(digest, sizeof(digest));
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<SealingKey>> LoadKeyFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return base::ErrnoStatus(errno, "open credentials key file", path);
  absl::Cleanup close_fd = [fd] { ::close(fd); };
  struct stat info;
  if (::fstat(fd, &info) != 0) return base::ErrnoStatus(errno, "stat", path);
  if (!S_ISREG(info.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat("credentials key file ", path, " is not a regular file"));
  }
  if ((info.st_mode & 0077) != 0) {
    return absl::PermissionDeniedError(absl::StrFormat(
        "credentials key file %s may be read or changed by group or others (mode %04o); only "
        "Herald's user may have access: chmod 600 %s",
        path, info.st_mode & 07777, path));
  }
  const std::string size_rule = absl::StrCat(
      "credentials key file ", path,
      " must hold exactly 32 random bytes or 64 hex digits (and an optional newline); make one "
      "with: ",
      kMakeKeyHint);
  if (static_cast<size_t>(info.st_size) > kMaxKeyFileBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(size_rule, " (it holds ", info.st_size, " bytes)"));
  }

  std::array<char, kMaxKeyFileBytes + 1> buffer{};
  absl::Cleanup wipe = [&buffer] { OPENSSL_cleanse(buffer.data(), buffer.size()); };
  size_t size = 0;
  while (size < buffer.size()) {
    const ssize_t n = ::read(fd, buffer.data() + size, buffer.size() - size);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return base::ErrnoStatus(errno, "read", path);
    if (n == 0) break;
    size += static_cast<size_t>(n);
  }

  auto key = std::make_unique<SealingKey>();
  std::string_view content(buffer.data(), size);
  if (size == kKeyBytes) {
    // 32 bytes of text are a typed password or half a hex key, not random bytes.
    if (std::all_of(content.begin(), content.end(), [](char c) { return c >= 0x20 && c < 0x7f; })) {
      return absl::InvalidArgumentError(absl::StrCat(
          "credentials key file ", path,
          " holds 32 characters of text, not 32 random bytes (a hex key is 64 digits); make one "
          "with: ",
          kMakeKeyHint));
    }
    std::copy(content.begin(), content.end(), key->bytes.begin());
  } else {
    if (!content.empty() && content.back() == '\n') content.remove_suffix(1);
    if (!content.empty() && content.back() == '\r') content.remove_suffix(1);
    if (!DecodeHexKey(content, key.get())) {
      return absl::InvalidArgumentError(absl::StrCat(size_rule, " (it holds ", size, " bytes)"));
    }
  }
  if (absl::Status s = SetKeyId(key.get()); !s.ok()) return s;
  return key;
}

absl::StatusOr<std::unique_ptr<SealingKey>> LoadKeyFromEnvironment(const std::string& variable) {
  if (variable.empty()) {
    return absl::InvalidArgumentError(
        "credentials: no key file and no environment variable to read the key from");
  }
  const char* value = std::getenv(variable.c_str());
  if (value == nullptr || *value == '\0') {
    return absl::FailedPreconditionError(absl::StrCat(
        "credentials: no key; set [skills] credentials_key_file (make one with: ", kMakeKeyHint,
        ") or the environment variable ", variable, " to 64 hex digits (openssl rand -hex 32)"));
  }
  auto key = std::make_unique<SealingKey>();
  std::string_view hex(value);
  if (!DecodeHexKey(hex, key.get())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "credentials: the environment variable ", variable,
        " must hold 64 hex digits (openssl rand -hex 32); it holds ", hex.size(), " characters"));
  }
  if (absl::Status s = SetKeyId(key.get()); !s.ok()) return s;
  return key;
}

// ----- sealing -----------------------------------------------------------------------------

struct Sealed {
  std::string nonce;
  std::string ciphertext;
  std::string tag;
};

// Binds a sealed value to its row: a ciphertext moved to another owner or name fails to open.
// NUL cannot occur in either, so the encoding is unambiguous.
std::string AdditionalData(std::string_view owner, std::string_view name) {
  std::string aad = "herald credential v1";
  aad.push_back('\0');
  aad.append(owner);
  aad.push_back('\0');
  aad.append(name);
  return aad;
}

using CipherContext = std::unique_ptr<EVP_CIPHER_CTX, decltype(&EVP_CIPHER_CTX_free)>;

absl::StatusOr<Sealed> Seal(const SealingKey& key, std::string_view owner, std::string_view name,
                            std::string_view plaintext) {
  Sealed sealed;
  sealed.nonce.resize(kNonceBytes);
  if (RAND_bytes(reinterpret_cast<unsigned char*>(sealed.nonce.data()), kNonceBytes) != 1) {
    return absl::InternalError("credentials: no random bytes for a nonce");
  }
  CipherContext ctx(EVP_CIPHER_CTX_new(), &EVP_CIPHER_CTX_free);
  if (ctx == nullptr) return absl::ResourceExhaustedError("credentials: no cipher context");
  const std::string aad = AdditionalData(owner, name);
  sealed.ciphertext.resize(plaintext.size());
  sealed.tag.resize(kTagBytes);
  int length = 0;
  const bool ok =
      EVP_EncryptInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr, nullptr, nullptr) == 1 &&
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_IVLEN, kNonceBytes, nullptr) == 1 &&
      EVP_EncryptInit_ex(ctx.get(), nullptr, nullptr, key.bytes.data(),
                         reinterpret_cast<const unsigned char*>(sealed.nonce.data())) == 1 &&
      EVP_EncryptUpdate(ctx.get(), nullptr, &length,
                        reinterpret_cast<const unsigned char*>(aad.data()),
                        static_cast<int>(aad.size())) == 1 &&
      EVP_EncryptUpdate(ctx.get(), reinterpret_cast<unsigned char*>(sealed.ciphertext.data()),
                        &length, reinterpret_cast<const unsigned char*>(plaintext.data()),
                        static_cast<int>(plaintext.size())) == 1 &&
      static_cast<size_t>(length) == plaintext.size() &&
      EVP_EncryptFinal_ex(ctx.get(), reinterpret_cast<unsigned char*>(sealed.ciphertext.data()),
                          &length) == 1 &&
      length == 0 &&
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_GET_TAG, kTagBytes, sealed.tag.data()) == 1;
  if (!ok) return absl::InternalError("credentials: AES-256-GCM sealing failed");
  return sealed;
}

// The plaintext, or nullopt when the row does not authenticate under `key`.
std::optional<std::string> OpenSealed(const SealingKey& key, std::string_view owner,
                                      std::string_view name, const Sealed& sealed) {
  if (sealed.nonce.size() != kNonceBytes || sealed.tag.size() != kTagBytes ||
      sealed.ciphertext.size() > kMaxCredentialValueBytes) {
    return std::nullopt;
  }
  CipherContext ctx(EVP_CIPHER_CTX_new(), &EVP_CIPHER_CTX_free);
  if (ctx == nullptr) return std::nullopt;
  const std::string aad = AdditionalData(owner, name);
  std::string plaintext(sealed.ciphertext.size(), '\0');
  std::string tag = sealed.tag;
  int length = 0;
  const bool ok =
      EVP_DecryptInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr, nullptr, nullptr) == 1 &&
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_IVLEN, kNonceBytes, nullptr) == 1 &&
      EVP_DecryptInit_ex(ctx.get(), nullptr, nullptr, key.bytes.data(),
                         reinterpret_cast<const unsigned char*>(sealed.nonce.data())) == 1 &&
      EVP_DecryptUpdate(ctx.get(), nullptr, &length,
                        reinterpret_cast<const unsigned char*>(aad.data()),
                        static_cast<int>(aad.size())) == 1 &&
      EVP_DecryptUpdate(ctx.get(), reinterpret_cast<unsigned char*>(plaintext.data()), &length,
                        reinterpret_cast<const unsigned char*>(sealed.ciphertext.data()),
                        static_cast<int>(sealed.ciphertext.size())) == 1 &&
      static_cast<size_t>(length) == plaintext.size() &&
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_TAG, kTagBytes, tag.data()) == 1 &&
      EVP_DecryptFinal_ex(ctx.get(), reinterpret_cast<unsigned char*>(plaintext.data()), &length) ==
          1;
  if (!ok) {
    OPENSSL_cleanse(plaintext.data(), plaintext.size());
    return std::nullopt;
  }
  return plaintext;
}

void Wipe(std::string& text) { OPENSSL_cleanse(text.data(), text.size()); }

absl::Status DamagedEntry(std::string_view owner, std::string_view name) {
  return absl::DataLossError(absl::StrCat(
      "credential ", AbslView(name), " of ", AbslView(owner),
      " failed to authenticate (damaged, or copied from another owner or name); store it again "
      "or delete it"));
}

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
  Sealed sealed;
};

}  // namespace

// ----- CredentialStore ---------------------------------------------------------------------

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
  std::map<std::string, std::unique_ptr<Key>> previous;  // by key id
  for (const std::string& file : options.previous_key_files) {
    absl::StatusOr<std::unique_ptr<Key>> old = LoadKeyFile(file);
    if (!old.ok()) return old.status();
    if ((*old)->id == (*key)->id) {
      LOG(WARNING) << "credentials: previous key file " << file << " holds the current key (id "
                   << (*key)->id << "); ignored";
      continue;
    }
    previous.emplace((*old)->id, *std::move(old));
  }

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

  // Which keys sealed the rows: each must be the current key or a previous one.
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
    if (id == (*key)->id) continue;
    if (previous.contains(id)) {
      to_reseal += rows;
    } else {
      unknown.push_back(absl::StrCat(rows, " under key id ", id));
    }
  }
  if (!unknown.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "credentials database ", path, " holds entries sealed under another key (",
        absl::StrJoin(unknown, ", "), ") — key id mismatch: the current key has id ", (*key)->id,
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

  // Rotation: every row under a previous key is re-sealed under the current key, all or none.
  int resealed = 0;
  if (to_reseal > 0) {
    std::vector<Row> rows;
    absl::Cleanup wipe_rows = [&rows] {
      for (Row& row : rows) Wipe(row.sealed.ciphertext);
    };
    absl::Status status = InTransaction(sql, [&]() -> absl::Status {
      absl::StatusOr<SqliteStatement> select = sql.Prepare(
          "SELECT owner, name, key_id, nonce, ciphertext, tag FROM credentials WHERE key_id != ?1");
      if (!select.ok()) return select.status();
      if (absl::Status s = select->BindText(1, (*key)->id); !s.ok()) return s;
      for (;;) {
        absl::StatusOr<bool> more = select->Step();
        if (!more.ok()) return more.status();
        if (!*more) break;
        rows.push_back(
            Row{select->ColumnText(0), select->ColumnText(1), select->ColumnText(2),
                Sealed{select->ColumnBlob(3), select->ColumnBlob(4), select->ColumnBlob(5)}});
      }
      absl::StatusOr<SqliteStatement> update = sql.Prepare(
          "UPDATE credentials SET key_id = ?3, nonce = ?4, ciphertext = ?5, tag = ?6 "
          "WHERE owner = ?1 AND name = ?2");
      if (!update.ok()) return update.status();
      for (Row& row : rows) {
        std::optional<std::string> plaintext =
            OpenSealed(*previous.at(row.key_id), row.owner, row.name, row.sealed);
        Sealed sealed;
        if (plaintext.has_value()) {
          absl::StatusOr<Sealed> resealed_row = Seal(**key, row.owner, row.name, *plaintext);
          Wipe(*plaintext);
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
        if (s.ok()) s = update->BindText(3, (*key)->id);
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
              << (*key)->id << "); the previous key files are no longer needed";
  }

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
      new CredentialStore(*std::move(db), *std::move(key), std::move(statements), resealed));
  if (resealed > 0) {
    absl::MutexLock lock(&store->mu_);
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
  if (absl::Status s = CheckOwner(owner); !s.ok()) return s;
  if (absl::Status s = CheckName(name); !s.ok()) return s;
  if (absl::Status s = CheckValue(name, value); !s.ok()) return s;
  absl::StatusOr<Sealed> sealed = Seal(*key_, owner, name, value);
  if (!sealed.ok()) return sealed.status();

  absl::MutexLock lock(&mu_);
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
  if (absl::Status s = CheckOwner(owner); !s.ok()) return s;
  for (const std::string& name : names) {
    if (absl::Status s = CheckName(name); !s.ok()) return s;
  }
  std::map<std::string, std::string> values;
  absl::Cleanup wipe_on_error = [&values] {
    for (auto& [name, value] : values) Wipe(value);
  };
  absl::MutexLock lock(&mu_);
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
    Sealed sealed{select.ColumnBlob(1), select.ColumnBlob(2), select.ColumnBlob(3)};
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
  if (absl::Status s = CheckOwner(owner); !s.ok()) return s;
  if (absl::Status s = CheckName(name); !s.ok()) return s;
  absl::MutexLock lock(&mu_);
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
  if (absl::Status s = CheckOwner(owner); !s.ok()) return s;
  absl::MutexLock lock(&mu_);
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
