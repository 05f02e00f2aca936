// Tests for CredentialStore: values round-trip per owner, sealed with AES-256-GCM so that the
// database never holds a plaintext, a row moved or tampered with fails for that entry alone,
// a wrong key is refused, rotation re-seals under the new key, key files must be private, and
// no error ever quotes a value or a key. What the store does with its entries runs on both
// places it keeps them (CredentialStoreOnEach: the SQLite file and the shared PostgreSQL on a
// private server, tests/support/postgres_server.h); the file's own guarantees and the key
// files' checks run on the file.
#include "skills/credentials/credential_store.h"

#include <openssl/rand.h>
#include <sqlite3.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "component/base/postgres_database.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/postgres_server.h"

namespace herald::skills {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::Pair;
using ::testing::UnorderedElementsAre;

constexpr char kAlice[] = "alice@localhost";
constexpr char kBob[] = "bob@localhost";

std::string RandomBytes(size_t n) {
  std::string bytes(n, '\0');
  EXPECT_EQ(RAND_bytes(reinterpret_cast<unsigned char*>(bytes.data()), static_cast<int>(n)), 1);
  return bytes;
}

std::string Hex(std::string_view bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (const char c : bytes) {
    out += kHex[(static_cast<unsigned char>(c) >> 4) & 0xf];
    out += kHex[static_cast<unsigned char>(c) & 0xf];
  }
  return out;
}

std::string ReadAll(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
}

void WriteFile(const std::string& path, std::string_view contents, mode_t mode = 0600) {
  {
    std::ofstream file(path, std::ios::binary | std::ios::trunc);
    file << contents;
    ASSERT_TRUE(file.good()) << path;
  }
  ASSERT_EQ(::chmod(path.c_str(), mode), 0) << path;
}

// Runs SQL on the database from outside the store (as an attacker or a broken disk would).
void RunSqliteSql(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* error = nullptr;
  const int code = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error);
  EXPECT_EQ(code, SQLITE_OK) << (error ? error : "") << " in " << sql;
  sqlite3_free(error);
  sqlite3_close(db);
}

// The ciphertext stored for one entry, read from outside the store.
std::string SqliteCiphertext(const std::string& path, const std::string& owner,
                             const std::string& name) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* statement = nullptr;
  EXPECT_EQ(
      sqlite3_prepare_v2(db, "SELECT ciphertext FROM credentials WHERE owner = ?1 AND name = ?2",
                         -1, &statement, nullptr),
      SQLITE_OK);
  sqlite3_bind_text(statement, 1, owner.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(statement, 2, name.c_str(), -1, SQLITE_TRANSIENT);
  std::string ciphertext;
  if (sqlite3_step(statement) == SQLITE_ROW) {
    ciphertext.assign(static_cast<const char*>(sqlite3_column_blob(statement, 0)),
                      sqlite3_column_bytes(statement, 0));
  }
  sqlite3_finalize(statement);
  sqlite3_close(db);
  return ciphertext;
}

enum class Backend { kSqlite, kPostgres };

// A store on the SQLite file (CredentialStoreTest) or on either backend (CredentialStoreOnEach),
// with a fresh key file, and what an attacker with the database's access could do to it.
class CredentialStoreFixture : public ::testing::Test {
 protected:
  explicit CredentialStoreFixture(Backend backend) : backend_(backend) {}

  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string test = info->name();
    std::replace(test.begin(), test.end(), '/', '_');  // a TEST_P's name: "Name/Postgres"
    folder_ = ::testing::TempDir() + "/credentials_" + test;
    std::filesystem::remove_all(folder_);
    std::filesystem::create_directories(folder_);
    key_ = RandomBytes(32);
    WriteFile(KeyPath("current.key"), key_);
    options_.path = folder_ + "/data/credentials.db";
    options_.key_file = KeyPath("current.key");
    if (backend_ == Backend::kPostgres) {
      absl::StatusOr<testing::PostgresServer*> server = testing::SharedPostgresServer();
      ASSERT_TRUE(server.ok()) << server.status();
      absl::StatusOr<std::string> conninfo = (*server)->NewDatabase();
      ASSERT_TRUE(conninfo.ok()) << conninfo.status();
      conninfo_ = *conninfo;
      absl::StatusOr<std::unique_ptr<base::PostgresDatabase>> db =
          base::PostgresDatabase::Connect({.conninfo = conninfo_, .pool_size = 4, .what = "test"});
      ASSERT_TRUE(db.ok()) << db.status();
      options_.postgres = *std::move(db);
    }
  }

  std::string KeyPath(std::string_view name) const { return folder_ + "/" + std::string(name); }
  // With Backend::kPostgres: this test's database, for another instance to connect to.
  const std::string& Conninfo() const { return conninfo_; }

  std::unique_ptr<CredentialStore> OpenStore(const CredentialStore::Options& options) {
    absl::StatusOr<std::unique_ptr<CredentialStore>> store = CredentialStore::Open(options);
    EXPECT_TRUE(store.ok()) << store.status();
    return store.ok() ? *std::move(store) : nullptr;
  }
  std::unique_ptr<CredentialStore> OpenStore() { return OpenStore(options_); }

  // Runs SQL that both databases understand, from outside the store.
  void RunSql(const std::string& sql) {
    if (backend_ == Backend::kSqlite) return RunSqliteSql(options_.path, sql);
    absl::StatusOr<base::PostgresResult> ran = options_.postgres->Exec(sql);
    EXPECT_TRUE(ran.ok()) << ran.status() << " in " << sql;
  }

  // Sets a bytes column of the entry called `name`.
  void SetBytes(const std::string& name, const std::string& column, std::string_view bytes) {
    const std::string value = backend_ == Backend::kSqlite ? "X'" + Hex(bytes) + "'"
                                                           : "decode('" + Hex(bytes) + "', 'hex')";
    RunSql("UPDATE credentials SET " + column + " = " + value + " WHERE name = '" + name + "'");
  }

  std::string StoredCiphertext(const std::string& owner, const std::string& name) {
    if (backend_ == Backend::kSqlite) return SqliteCiphertext(options_.path, owner, name);
    absl::StatusOr<base::PostgresResult> row =
        options_.postgres->Exec("SELECT ciphertext FROM credentials WHERE owner = $1 AND name = $2",
                                base::SqlParams().Text(owner).Text(name));
    EXPECT_TRUE(row.ok()) << row.status();
    return row.ok() && row->rows() == 1 ? row->Bytes(0, 0) : "";
  }

  // The bytes of the database and of its write-ahead log.
  std::string DiskBytes() const { return ReadAll(options_.path) + ReadAll(options_.path + "-wal"); }

  const Backend backend_;
  std::string conninfo_;
  std::string folder_;
  std::string key_;
  CredentialStore::Options options_;
};

// The SQLite file's own guarantees, and the key files' checks.
class CredentialStoreTest : public CredentialStoreFixture {
 protected:
  CredentialStoreTest() : CredentialStoreFixture(Backend::kSqlite) {}
};

// What the store does with its entries, wherever it keeps them.
class CredentialStoreOnEach : public CredentialStoreFixture,
                              public ::testing::WithParamInterface<Backend> {
 protected:
  CredentialStoreOnEach() : CredentialStoreFixture(GetParam()) {}
};

// What several instances sharing one PostgreSQL database see.
class CredentialStoreOnPostgres : public CredentialStoreFixture {
 protected:
  CredentialStoreOnPostgres() : CredentialStoreFixture(Backend::kPostgres) {}
};

INSTANTIATE_TEST_SUITE_P(Backends, CredentialStoreOnEach,
                         ::testing::Values(Backend::kSqlite, Backend::kPostgres),
                         [](const ::testing::TestParamInfo<Backend>& info) {
                           return info.param == Backend::kSqlite ? "Sqlite" : "Postgres";
                         });

TEST_P(CredentialStoreOnEach, ReturnsWhatWasPutPerOwner) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->Put(kAlice, "GITHUB_TOKEN", "ghp_alice").ok());
  ASSERT_TRUE(store->Put(kAlice, "JIRA_TOKEN", "jira_alice").ok());
  ASSERT_TRUE(store->Put(kBob, "GITHUB_TOKEN", "ghp_bob").ok());
  ASSERT_TRUE(store->Put("api:billing", "STRIPE_KEY", "sk_test").ok());

  auto alice = store->Get(kAlice, {"GITHUB_TOKEN", "JIRA_TOKEN", "MISSING"});
  ASSERT_TRUE(alice.ok()) << alice.status();
  EXPECT_THAT(*alice, UnorderedElementsAre(Pair("GITHUB_TOKEN", "ghp_alice"),
                                           Pair("JIRA_TOKEN", "jira_alice")));
  auto bob = store->Get(kBob, {"GITHUB_TOKEN", "JIRA_TOKEN"});
  ASSERT_TRUE(bob.ok());
  EXPECT_THAT(*bob, UnorderedElementsAre(Pair("GITHUB_TOKEN", "ghp_bob")));
  auto api = store->Get("api:billing", {"STRIPE_KEY"});
  ASSERT_TRUE(api.ok());
  EXPECT_THAT(*api, UnorderedElementsAre(Pair("STRIPE_KEY", "sk_test")));
  // A room's runs use the room's credentials (provided by an operator).
  ASSERT_TRUE(store->Put("room:lobby@conference.localhost", "WEATHER_KEY", "wk_room").ok());
  auto room = store->Get("room:lobby@conference.localhost", {"WEATHER_KEY"});
  ASSERT_TRUE(room.ok());
  EXPECT_THAT(*room, UnorderedElementsAre(Pair("WEATHER_KEY", "wk_room")));
  auto nobody = store->Get("carol@localhost", {"GITHUB_TOKEN"});
  ASSERT_TRUE(nobody.ok());
  EXPECT_THAT(*nobody, IsEmpty());

  auto names = store->Names(kAlice);
  ASSERT_TRUE(names.ok());
  EXPECT_THAT(*names, ElementsAre("GITHUB_TOKEN", "JIRA_TOKEN"));
  EXPECT_EQ(store->resealed_at_open(), 0);
  EXPECT_EQ(store->key_id().size(), 16u);
}

TEST_P(CredentialStoreOnEach, ReplacesAValueAndKeepsItAcrossARestart) {
  {
    auto store = OpenStore();
    ASSERT_TRUE(store->Put(kAlice, "TOKEN", "first").ok());
    ASSERT_TRUE(store->Put(kAlice, "TOKEN", "second").ok());
  }
  auto store = OpenStore();
  auto values = store->Get(kAlice, {"TOKEN"});
  ASSERT_TRUE(values.ok());
  EXPECT_THAT(*values, UnorderedElementsAre(Pair("TOKEN", "second")));
}

TEST_P(CredentialStoreOnEach, DeletesAnEntryAndSaysWhetherThereWasOne) {
  auto store = OpenStore();
  ASSERT_TRUE(store->Put(kAlice, "TOKEN", "value1").ok());
  auto deleted = store->Delete(kAlice, "TOKEN");
  ASSERT_TRUE(deleted.ok());
  EXPECT_TRUE(*deleted);
  deleted = store->Delete(kAlice, "TOKEN");
  ASSERT_TRUE(deleted.ok());
  EXPECT_FALSE(*deleted);
  auto values = store->Get(kAlice, {"TOKEN"});
  ASSERT_TRUE(values.ok());
  EXPECT_THAT(*values, IsEmpty());
  EXPECT_THAT(*store->Names(kAlice), IsEmpty());
}

TEST_P(CredentialStoreOnEach, RoundTripsEveryByteButNulAndTheLongestValue) {
  std::string every_byte;
  for (int byte = 1; byte <= 255; ++byte) every_byte.push_back(static_cast<char>(byte));
  const std::string longest(kMaxCredentialValueBytes, 'x');
  auto store = OpenStore();
  ASSERT_TRUE(store->Put(kAlice, "BYTES", every_byte).ok());
  ASSERT_TRUE(store->Put(kAlice, "LONGEST", longest).ok());
  ASSERT_TRUE(store->Put(kAlice, "ONE", "z").ok());
  store.reset();
  store = OpenStore();
  auto values = store->Get(kAlice, {"BYTES", "LONGEST", "ONE"});
  ASSERT_TRUE(values.ok());
  EXPECT_EQ(values->at("BYTES"), every_byte);
  EXPECT_EQ(values->at("LONGEST"), longest);
  EXPECT_EQ(values->at("ONE"), "z");
}

TEST_F(CredentialStoreTest, CreatesTheDatabaseAndItsFolderPrivate) {
  auto store = OpenStore();
  ASSERT_TRUE(store->Put(kAlice, "TOKEN", "value1").ok());
  struct stat info;
  ASSERT_EQ(::stat(options_.path.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600);
  for (const char* suffix : {"-wal", "-shm"}) {
    ASSERT_EQ(::stat((options_.path + suffix).c_str(), &info), 0) << suffix;
    EXPECT_EQ(info.st_mode & 0777, 0600) << suffix;
  }
  ASSERT_EQ(::stat((folder_ + "/data").c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0700);
}

TEST_F(CredentialStoreTest, NeverWritesAPlaintextValueToDisk) {
  const std::string secret = "PLAINTEXT-MARKER-" + Hex(RandomBytes(8));
  auto store = OpenStore();
  ASSERT_TRUE(store->Put(kAlice, "TOKEN", secret).ok());
  ASSERT_TRUE(store->Put(kBob, "TOKEN", secret).ok());
  std::string bytes = DiskBytes();
  EXPECT_THAT(bytes, HasSubstr("alice@localhost"));  // the files were read
  EXPECT_EQ(bytes.find(secret), std::string::npos);
  EXPECT_EQ(bytes.find(key_), std::string::npos);

  // Deleted: not even its ciphertext is left in the database, its free pages or the log.
  const std::string ciphertext = StoredCiphertext(kAlice, "TOKEN");
  ASSERT_EQ(ciphertext.size(), secret.size());
  ASSERT_NE(DiskBytes().find(ciphertext), std::string::npos);
  ASSERT_TRUE(*store->Delete(kAlice, "TOKEN"));
  bytes = DiskBytes();
  EXPECT_EQ(bytes.find(secret), std::string::npos);
  EXPECT_EQ(bytes.find(ciphertext), std::string::npos);
  store.reset();
  bytes = DiskBytes();
  EXPECT_EQ(bytes.find(secret), std::string::npos);
  EXPECT_EQ(bytes.find(ciphertext), std::string::npos);
}

TEST_P(CredentialStoreOnEach, RefusesAWrongKeyNamingTheKeyIdsAndHowToRotate) {
  std::string old_id;
  {
    auto store = OpenStore();
    ASSERT_TRUE(store->Put(kAlice, "TOKEN", "value1").ok());
    old_id = store->key_id();
  }
  const std::string other_key = RandomBytes(32);
  WriteFile(KeyPath("other.key"), other_key);
  options_.key_file = KeyPath("other.key");
  absl::StatusOr<std::unique_ptr<CredentialStore>> store = CredentialStore::Open(options_);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), absl::StatusCode::kFailedPrecondition);
  const std::string message(store.status().message());
  EXPECT_THAT(message, HasSubstr("key id mismatch"));
  EXPECT_THAT(message, HasSubstr(old_id));
  EXPECT_THAT(message, HasSubstr("credentials_previous_key_files"));
  EXPECT_THAT(message, Not(HasSubstr(Hex(other_key))));
  EXPECT_THAT(message, Not(HasSubstr(Hex(key_))));
  EXPECT_THAT(message, Not(HasSubstr("value1")));
}

TEST_P(CredentialStoreOnEach, RotationReSealsUnderTheNewKeySoTheOldOneIsNoLongerNeeded) {
  std::string old_id;
  {
    auto store = OpenStore();
    ASSERT_TRUE(store->Put(kAlice, "A", "alpha-value").ok());
    ASSERT_TRUE(store->Put(kAlice, "B", "beta-value").ok());
    ASSERT_TRUE(store->Put(kBob, "A", "bob-value").ok());
    old_id = store->key_id();
  }
  WriteFile(KeyPath("new.key"), Hex(RandomBytes(32)) + "\n");
  CredentialStore::Options rotated = options_;
  rotated.key_file = KeyPath("new.key");
  rotated.previous_key_files = {KeyPath("current.key")};
  {
    auto store = OpenStore(rotated);
    ASSERT_NE(store, nullptr);
    EXPECT_EQ(store->resealed_at_open(), 3);
    EXPECT_NE(store->key_id(), old_id);
    auto values = store->Get(kAlice, {"A", "B"});
    ASSERT_TRUE(values.ok()) << values.status();
    EXPECT_THAT(*values, UnorderedElementsAre(Pair("A", "alpha-value"), Pair("B", "beta-value")));
  }
  {  // The previous key still listed: nothing left to re-seal.
    auto store = OpenStore(rotated);
    EXPECT_EQ(store->resealed_at_open(), 0);
  }
  rotated.previous_key_files.clear();
  ASSERT_TRUE(std::filesystem::remove(KeyPath("current.key")));
  {
    auto store = OpenStore(rotated);
    ASSERT_NE(store, nullptr);
    auto values = store->Get(kBob, {"A"});
    ASSERT_TRUE(values.ok()) << values.status();
    EXPECT_THAT(*values, UnorderedElementsAre(Pair("A", "bob-value")));
  }
  // The old key alone no longer opens the database.
  WriteFile(KeyPath("current.key"), key_);
  EXPECT_EQ(CredentialStore::Open(options_).status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST_P(CredentialStoreOnEach, ATamperedCiphertextOrTagFailsForThatEntryOnly) {
  {
    auto store = OpenStore();
    ASSERT_TRUE(store->Put(kAlice, "GOOD", "good-value").ok());
    ASSERT_TRUE(store->Put(kAlice, "BAD_TEXT", "secret-text-value").ok());
    ASSERT_TRUE(store->Put(kAlice, "BAD_TAG", "secret-tag-value").ok());
  }
  std::string flipped = StoredCiphertext(kAlice, "BAD_TEXT");
  ASSERT_FALSE(flipped.empty());
  flipped[2] ^= 0x01;
  SetBytes("BAD_TEXT", "ciphertext", flipped);
  SetBytes("BAD_TAG", "tag", std::string(16, '\0'));
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);

  for (const char* name : {"BAD_TEXT", "BAD_TAG"}) {
    auto bad = store->Get(kAlice, {name});
    ASSERT_FALSE(bad.ok()) << name;
    EXPECT_EQ(bad.status().code(), absl::StatusCode::kDataLoss);
    EXPECT_THAT(std::string(bad.status().message()), HasSubstr(name));
    EXPECT_THAT(std::string(bad.status().message()), HasSubstr(kAlice));
    EXPECT_THAT(std::string(bad.status().message()), Not(HasSubstr("secret-")));
  }
  auto good = store->Get(kAlice, {"GOOD"});
  ASSERT_TRUE(good.ok()) << good.status();
  EXPECT_THAT(*good, UnorderedElementsAre(Pair("GOOD", "good-value")));
  // Storing it again repairs it.
  ASSERT_TRUE(store->Put(kAlice, "BAD_TAG", "new-value").ok());
  EXPECT_TRUE(store->Get(kAlice, {"BAD_TAG"}).ok());
}

TEST_P(CredentialStoreOnEach, ARowMovedToAnotherOwnerOrNameDoesNotOpen) {
  {
    auto store = OpenStore();
    ASSERT_TRUE(store->Put(kAlice, "TOKEN", "alice-secret").ok());
    ASSERT_TRUE(store->Put(kAlice, "OTHER", "alice-other").ok());
  }
  RunSql("UPDATE credentials SET owner = 'mallory@localhost' WHERE name = 'TOKEN'");
  RunSql("UPDATE credentials SET name = 'RENAMED' WHERE name = 'OTHER'");
  auto store = OpenStore();
  auto moved = store->Get("mallory@localhost", {"TOKEN"});
  ASSERT_FALSE(moved.ok());
  EXPECT_EQ(moved.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(moved.status().message()), Not(HasSubstr("alice-secret")));
  auto renamed = store->Get(kAlice, {"RENAMED"});
  EXPECT_EQ(renamed.status().code(), absl::StatusCode::kDataLoss);
}

TEST_P(CredentialStoreOnEach, RotationLeavesADamagedEntryFailingButMovesTheOthers) {
  {
    auto store = OpenStore();
    ASSERT_TRUE(store->Put(kAlice, "GOOD", "good-value").ok());
    ASSERT_TRUE(store->Put(kAlice, "BAD", "bad-value").ok());
  }
  SetBytes("BAD", "tag", std::string(16, '\0'));
  WriteFile(KeyPath("new.key"), RandomBytes(32));
  CredentialStore::Options rotated = options_;
  rotated.key_file = KeyPath("new.key");
  rotated.previous_key_files = {KeyPath("current.key")};
  OpenStore(rotated).reset();
  rotated.previous_key_files.clear();
  auto store = OpenStore(rotated);  // the old key is no longer needed for either entry
  ASSERT_NE(store, nullptr);
  EXPECT_TRUE(store->Get(kAlice, {"GOOD"}).ok());
  EXPECT_EQ(store->Get(kAlice, {"BAD"}).status().code(), absl::StatusCode::kDataLoss);
}

TEST_F(CredentialStoreTest, RefusesAKeyFileOthersMayRead) {
  for (mode_t mode : {0640, 0604, 0660}) {
    ASSERT_EQ(::chmod(options_.key_file.c_str(), mode), 0);
    auto store = CredentialStore::Open(options_);
    ASSERT_FALSE(store.ok()) << std::oct << mode;
    EXPECT_EQ(store.status().code(), absl::StatusCode::kPermissionDenied);
    EXPECT_THAT(std::string(store.status().message()), HasSubstr("chmod 600"));
    EXPECT_THAT(std::string(store.status().message()), HasSubstr(options_.key_file));
  }
  ASSERT_EQ(::chmod(options_.key_file.c_str(), 0400), 0);
  EXPECT_TRUE(CredentialStore::Open(options_).ok());
}

TEST_F(CredentialStoreTest, RefusesAKeyFileOfTheWrongSizeOrText) {
  const std::string key_hex = Hex(RandomBytes(32));
  struct Case {
    std::string contents;
    std::string says;
  };
  for (const Case& c : std::vector<Case>{
           {RandomBytes(31), "exactly 32 random bytes or 64 hex digits"},
           {RandomBytes(33), "exactly 32 random bytes or 64 hex digits"},
           {"", "exactly 32 random bytes or 64 hex digits"},
           {key_hex.substr(0, 63) + "g", "exactly 32 random bytes or 64 hex digits"},
           {std::string(32, 'p'), "text, not 32 random bytes"},
           {key_hex.substr(0, 32), "text, not 32 random bytes"},
           {RandomBytes(4096), "4096 bytes"},
       }) {
    WriteFile(options_.key_file, c.contents);
    auto store = CredentialStore::Open(options_);
    ASSERT_FALSE(store.ok()) << c.says;
    EXPECT_EQ(store.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(store.status().message()), HasSubstr(c.says));
    EXPECT_THAT(std::string(store.status().message()), HasSubstr("head -c 32 /dev/urandom"));
  }
  WriteFile(options_.key_file, key_hex + "\r\n");
  EXPECT_TRUE(CredentialStore::Open(options_).ok());
}

TEST_F(CredentialStoreTest, ReadsTheKeyFromTheEnvironmentWhenThereIsNoKeyFile) {
  const std::string hex = Hex(RandomBytes(32));
  options_.key_file.clear();
  options_.key_env = "HERALD_TEST_CREDENTIALS_KEY";
  ::unsetenv("HERALD_TEST_CREDENTIALS_KEY");
  auto missing = CredentialStore::Open(options_);
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(missing.status().message()), HasSubstr("HERALD_TEST_CREDENTIALS_KEY"));

  ::setenv("HERALD_TEST_CREDENTIALS_KEY", hex.substr(0, 40).c_str(), 1);
  auto short_key = CredentialStore::Open(options_);
  EXPECT_EQ(short_key.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(short_key.status().message()), HasSubstr("64 hex digits"));
  EXPECT_THAT(std::string(short_key.status().message()), Not(HasSubstr(hex.substr(0, 40))));

  ::setenv("HERALD_TEST_CREDENTIALS_KEY", hex.c_str(), 1);
  {
    auto store = OpenStore();
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->Put(kAlice, "TOKEN", "from-env").ok());
  }
  // The same key as a file opens the same entries.
  WriteFile(KeyPath("hex.key"), hex);
  options_.key_file = KeyPath("hex.key");
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->Get(kAlice, {"TOKEN"})->at("TOKEN"), "from-env");
  ::unsetenv("HERALD_TEST_CREDENTIALS_KEY");
}

TEST_P(CredentialStoreOnEach, RefusesBadOwnersNamesAndValuesWithoutQuotingThem) {
  auto store = OpenStore();
  const std::string secret = "hunter2-SECRET";
  struct Case {
    std::string owner;
    std::string name;
    std::string value;
  };
  for (const Case& c : std::vector<Case>{
           {kAlice, "lower_case", secret},
           {kAlice, "1LEADING_DIGIT", secret},
           {kAlice, "", secret},
           {kAlice, std::string(65, 'A'), secret},
           {kAlice, "HAS-DASH", secret},
           {kAlice, secret, secret},  // arguments swapped
           {kAlice, "TOKEN", ""},
           {kAlice, "TOKEN", secret + std::string(1, '\0') + "tail"},
           {kAlice, "TOKEN", secret + std::string(kMaxCredentialValueBytes, 'x')},
           {"", "TOKEN", secret},
           {"alice@localhost/phone", "TOKEN", secret},
           {"alice @localhost", "TOKEN", secret},
           {"@localhost", "TOKEN", secret},
           {"api:", "TOKEN", secret},
           {"api:has space", "TOKEN", secret},
       }) {
    absl::Status status = store->Put(c.owner, c.name, c.value);
    ASSERT_FALSE(status.ok()) << c.owner << " " << c.name;
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(status.message()), Not(HasSubstr("hunter2")));
  }
  EXPECT_EQ(store->Get(kAlice, {"bad name"}).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(store->Delete(kAlice, "bad name").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(store->Names("a/b").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(*store->Names(kAlice), IsEmpty());
}

TEST_P(CredentialStoreOnEach, IsSafeToUseFromSeveralThreads) {
  auto store = OpenStore();
  constexpr int kThreads = 8;
  constexpr int kRounds = 25;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const std::string owner = "user" + std::to_string(t) + "@localhost";
      for (int i = 0; i < kRounds; ++i) {
        const std::string value = "value-" + std::to_string(t) + "-" + std::to_string(i);
        if (!store->Put(owner, "TOKEN", value).ok()) ++failures;
        if (!store->Put("api:shared", "T" + std::to_string(t), value).ok()) ++failures;
        auto got = store->Get(owner, {"TOKEN"});
        if (!got.ok() || got->at("TOKEN") != value) ++failures;
        if (!store->Names("api:shared").ok()) ++failures;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
  auto names = store->Names("api:shared");
  ASSERT_TRUE(names.ok());
  EXPECT_EQ(names->size(), static_cast<size_t>(kThreads));
}

TEST_F(CredentialStoreTest, RefusesADatabaseFromANewerHerald) {
  OpenStore().reset();
  RunSql("PRAGMA user_version = 99");
  auto store = CredentialStore::Open(options_);
  EXPECT_EQ(store.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(store.status().message()), HasSubstr("schema version 99"));
}

TEST_F(CredentialStoreOnPostgres, TheDatabaseHoldsNeitherAPlaintextNorTheKey) {
  const std::string secret = "PLAINTEXT-MARKER-" + Hex(RandomBytes(8));
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->Put(kAlice, "TOKEN", secret).ok());
  ASSERT_TRUE(store->Put(kBob, "TOKEN", secret).ok());
  // Every row as PostgreSQL renders it (bytea in hex), and the values' bytes.
  absl::StatusOr<base::PostgresResult> rows =
      options_.postgres->Exec("SELECT c::text FROM credentials c");
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->rows(), 2);
  for (int i = 0; i < rows->rows(); ++i) {
    const std::string text(rows->Text(i, 0));
    EXPECT_THAT(text, HasSubstr("@localhost"));  // the row was read
    EXPECT_THAT(text, Not(HasSubstr(secret)));
    EXPECT_THAT(text, Not(HasSubstr(Hex(secret))));
    EXPECT_THAT(text, Not(HasSubstr(Hex(key_))));
  }
  for (const char* owner : {kAlice, kBob}) {
    const std::string ciphertext = StoredCiphertext(owner, "TOKEN");
    EXPECT_EQ(ciphertext.size(), secret.size());
    EXPECT_NE(ciphertext, secret);
  }
  // Alice's and Bob's equal values were sealed apart (fresh nonces, their own owners).
  EXPECT_NE(StoredCiphertext(kAlice, "TOKEN"), StoredCiphertext(kBob, "TOKEN"));
}

TEST_F(CredentialStoreOnPostgres, WhatOneInstanceStoresEveryInstanceOpens) {
  auto first = OpenStore();
  auto second = OpenStore();
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  ASSERT_TRUE(first->Put(kAlice, "GITHUB_TOKEN", "ghp_from_first").ok());
  auto values = second->Get(kAlice, {"GITHUB_TOKEN"});
  ASSERT_TRUE(values.ok()) << values.status();
  EXPECT_THAT(*values, UnorderedElementsAre(Pair("GITHUB_TOKEN", "ghp_from_first")));
  ASSERT_TRUE(second->Put(kAlice, "GITHUB_TOKEN", "ghp_from_second").ok());
  EXPECT_EQ(first->Get(kAlice, {"GITHUB_TOKEN"})->at("GITHUB_TOKEN"), "ghp_from_second");
  EXPECT_THAT(*first->Names(kAlice), ElementsAre("GITHUB_TOKEN"));
  ASSERT_TRUE(*second->Delete(kAlice, "GITHUB_TOKEN"));
  EXPECT_THAT(*first->Get(kAlice, {"GITHUB_TOKEN"}), IsEmpty());
  EXPECT_FALSE(*first->Delete(kAlice, "GITHUB_TOKEN"));
}

TEST_F(CredentialStoreOnPostgres, InstancesRotatingAtOnceReSealEachEntryOnce) {
  constexpr int kEntries = 60;
  {
    auto store = OpenStore();
    ASSERT_NE(store, nullptr);
    for (int i = 0; i < kEntries; ++i) {
      ASSERT_TRUE(store
                      ->Put("user" + std::to_string(i) + "@localhost", "TOKEN",
                            "value-" + std::to_string(i))
                      .ok());
    }
  }
  WriteFile(KeyPath("new.key"), RandomBytes(32));
  CredentialStore::Options rotated = options_;
  rotated.key_file = KeyPath("new.key");
  rotated.previous_key_files = {KeyPath("current.key")};
  // Three instances start at once with the new key, each with a pool of its own.
  constexpr int kInstances = 3;
  std::vector<std::shared_ptr<base::PostgresDatabase>> pools;
  for (int i = 0; i < kInstances; ++i) {
    absl::StatusOr<std::unique_ptr<base::PostgresDatabase>> pool =
        base::PostgresDatabase::Connect({.conninfo = Conninfo(), .pool_size = 1, .what = "test"});
    ASSERT_TRUE(pool.ok()) << pool.status();
    pools.push_back(*std::move(pool));
  }
  std::vector<int> resealed(kInstances, -1);
  std::vector<std::thread> starts;
  for (int i = 0; i < kInstances; ++i) {
    starts.emplace_back([&, i] {
      CredentialStore::Options mine = rotated;
      mine.postgres = pools[i];
      absl::StatusOr<std::unique_ptr<CredentialStore>> store = CredentialStore::Open(mine);
      if (store.ok()) resealed[i] = (*store)->resealed_at_open();
    });
  }
  for (std::thread& start : starts) start.join();
  int total = 0;
  for (int i = 0; i < kInstances; ++i) {
    EXPECT_GE(resealed[i], 0) << "instance " << i << " failed to open";
    total += resealed[i];
  }
  EXPECT_EQ(total, kEntries);
  // The new key alone opens every entry.
  rotated.previous_key_files.clear();
  auto store = OpenStore(rotated);
  ASSERT_NE(store, nullptr);
  for (int i = 0; i < kEntries; ++i) {
    auto values = store->Get("user" + std::to_string(i) + "@localhost", {"TOKEN"});
    ASSERT_TRUE(values.ok()) << values.status();
    EXPECT_EQ(values->at("TOKEN"), "value-" + std::to_string(i));
  }
}

TEST_F(CredentialStoreOnPostgres, RefusesADatabaseFromANewerHerald) {
  OpenStore().reset();
  RunSql("UPDATE herald_schema SET version = 99 WHERE name = 'credentials'");
  auto store = CredentialStore::Open(options_);
  EXPECT_EQ(store.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(store.status().message()), HasSubstr("credentials"));
}

}  // namespace
}  // namespace herald::skills
