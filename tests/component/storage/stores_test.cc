#include "component/storage/stores.h"

#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "component/base/postgres_database.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/component/memory/temp_dir.h"
#include "tests/support/postgres_server.h"

namespace herald::storage {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const absl::Time kNoon = absl::FromUnixSeconds(1736856000);  // 2025-01-14 12:00 UTC

config::Config WithPostgres(const std::string& conninfo) {
  config::Config config;
  config.storage.backend = config::StorageBackend::kPostgresql;
  config.storage.postgresql = conninfo;
  config.storage.pool_size = 2;
  return config;
}

TEST(StoresTest, SqliteKeepsTheLedgerInTheQuotaFileAndTheAuditLogInItsFile) {
  memory::TempDir dir;
  config::Config config;
  config.quota.path = dir.path() + "/ledger.db";
  config.control.audit_path = dir.path() + "/audit.log";
  {
    absl::StatusOr<Stores> stores = OpenStores(config);
    ASSERT_TRUE(stores.ok()) << stores.status();
    EXPECT_EQ(stores->postgres, nullptr);
    EXPECT_EQ(stores->instances, nullptr);
    ASSERT_TRUE(
        stores->usage->Record({.jid = "a@x", .model = "m:1", .input_tokens = 1, .time = kNoon})
            .ok());
    stores->audit->Append({.actor = "ops", .action = "test", .outcome = "OK"});
    EXPECT_EQ(stores->audit->location(), config.control.audit_path);
  }
  absl::StatusOr<Stores> stores = OpenStores(config);
  ASSERT_TRUE(stores.ok()) << stores.status();
  absl::StatusOr<ledger::UsagePage> page = stores->usage->Usage({.at = kNoon});
  ASSERT_TRUE(page.ok()) << page.status();
  EXPECT_EQ(page->rows.size(), 1u);
  absl::StatusOr<ledger::AuditVerifyReport> audit = stores->audit->Verify();
  ASSERT_TRUE(audit.ok()) << audit.status();
  EXPECT_EQ(audit->entries, 1u);
}

TEST(StoresTest, PostgresqlKeepsTheLedgerInTheSharedDatabase) {
  absl::StatusOr<testing::PostgresServer*> server = testing::SharedPostgresServer();
  ASSERT_TRUE(server.ok()) << server.status();
  absl::StatusOr<std::string> conninfo = (*server)->NewDatabase();
  ASSERT_TRUE(conninfo.ok()) << conninfo.status();

  // Two instances on one database: what one records, the other reads.
  absl::StatusOr<Stores> first = OpenStores(WithPostgres(*conninfo));
  ASSERT_TRUE(first.ok()) << first.status();
  absl::StatusOr<Stores> second = OpenStores(WithPostgres(*conninfo));
  ASSERT_TRUE(second.ok()) << second.status();
  ASSERT_NE(first->postgres, nullptr);
  ASSERT_NE(second->instances, nullptr);
  ASSERT_TRUE(first->instances->Beat().ok());
  EXPECT_EQ(first->instances->Known().size(), 2u);
  ASSERT_TRUE(
      first->usage->Record({.jid = "a@x", .model = "m:1", .input_tokens = 7, .time = kNoon}).ok());
  absl::StatusOr<ledger::UsagePage> page = second->usage->Usage({.at = kNoon});
  ASSERT_TRUE(page.ok()) << page.status();
  ASSERT_EQ(page->rows.size(), 1u);
  EXPECT_EQ(page->rows[0].input_tokens, 7);
  // One audit chain: the second instance verifies what the first wrote.
  first->audit->Append({.actor = "ops", .action = "test", .outcome = "OK"});
  ASSERT_TRUE(first->audit->Flush().ok());
  EXPECT_EQ(second->audit->location(), "postgresql");
  absl::StatusOr<ledger::AuditVerifyReport> audit = second->audit->Verify();
  ASSERT_TRUE(audit.ok()) << audit.status();
  EXPECT_TRUE(audit->ok) << audit->problem;
  EXPECT_EQ(audit->entries, 1u);
}

TEST(StoresTest, AnUnreachableDatabaseIsNamedWithoutItsPassword) {
  absl::StatusOr<Stores> stores = OpenStores(
      WithPostgres("host=/nonexistent/herald user=herald password=hunter2 dbname=herald"));
  ASSERT_FALSE(stores.ok());
  EXPECT_EQ(stores.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(stores.status().message(),
              HasSubstr("[storage] postgresql: PostgreSQL (storage): cannot connect"));
  EXPECT_THAT(stores.status().message(), Not(HasSubstr("hunter2")));
}

TEST(StoresTest, ADatabaseWrittenByANewerHeraldIsRefused) {
  absl::StatusOr<testing::PostgresServer*> server = testing::SharedPostgresServer();
  ASSERT_TRUE(server.ok()) << server.status();
  absl::StatusOr<std::string> conninfo = (*server)->NewDatabase();
  ASSERT_TRUE(conninfo.ok()) << conninfo.status();
  ASSERT_TRUE(OpenStores(WithPostgres(*conninfo)).ok());
  {
    absl::StatusOr<std::unique_ptr<base::PostgresDatabase>> db =
        base::PostgresDatabase::Connect({.conninfo = *conninfo, .pool_size = 1, .what = "test"});
    ASSERT_TRUE(db.ok()) << db.status();
    ASSERT_TRUE((*db)->Exec("UPDATE herald_schema SET version = 99 WHERE name = 'ledger'").ok());
  }
  absl::StatusOr<Stores> stores = OpenStores(WithPostgres(*conninfo));
  ASSERT_FALSE(stores.ok());
  EXPECT_EQ(stores.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(stores.status().message(),
              HasSubstr("[storage] postgresql (ledger): PostgreSQL (storage): the database's "
                        "ledger schema is version 99, newer than this Herald's 3"));
}

// A fresh key file for [skills] credentials_key_file: 32 random bytes, mode 0600.
std::string KeyFile(const std::string& dir, const std::string& name) {
  const std::string path = dir + "/" + name;
  std::string key(32, '\0');
  std::ifstream("/dev/urandom", std::ios::binary).read(key.data(), key.size());
  {
    std::ofstream file(path, std::ios::binary | std::ios::trunc);
    file << key;
  }
  EXPECT_EQ(::chmod(path.c_str(), 0600), 0);
  return path;
}

TEST(StoresTest, CredentialsAreKeptOnlyWithAKeyAndFollowTheBackend) {
  memory::TempDir dir;
  ::unsetenv("HERALD_CREDENTIALS_KEY");
  config::Config config;
  config.quota.path = dir.path() + "/ledger.db";
  config.control.audit_path = dir.path() + "/audit.log";
  config.skills.credentials_path = dir.path() + "/credentials.db";
  absl::StatusOr<Stores> stores = OpenStores(config);
  ASSERT_TRUE(stores.ok()) << stores.status();
  std::vector<std::string> notices;
  absl::StatusOr<std::unique_ptr<skills::CredentialStore>> none =
      OpenCredentials(config, *stores, notices);
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_EQ(*none, nullptr);
  ASSERT_EQ(notices.size(), 1u);
  EXPECT_THAT(notices[0], HasSubstr("credentials are not kept"));

  // With a key, on this host: the file.
  config.skills.credentials_key_file = KeyFile(dir.path(), "first.key");
  notices.clear();
  absl::StatusOr<std::unique_ptr<skills::CredentialStore>> here =
      OpenCredentials(config, *stores, notices);
  ASSERT_TRUE(here.ok()) << here.status();
  ASSERT_NE(*here, nullptr);
  EXPECT_TRUE(notices.empty());
  ASSERT_TRUE((*here)->Put("alice@x", "TOKEN", "value").ok());
  EXPECT_TRUE(std::filesystem::exists(config.skills.credentials_path));

  // On PostgreSQL: the shared table, which another instance opens; the file is not used.
  absl::StatusOr<testing::PostgresServer*> server = testing::SharedPostgresServer();
  ASSERT_TRUE(server.ok()) << server.status();
  absl::StatusOr<std::string> conninfo = (*server)->NewDatabase();
  ASSERT_TRUE(conninfo.ok()) << conninfo.status();
  config::Config shared = WithPostgres(*conninfo);
  shared.skills = config.skills;
  shared.skills.credentials_path = dir.path() + "/unused/credentials.db";
  absl::StatusOr<Stores> first = OpenStores(shared);
  absl::StatusOr<Stores> second = OpenStores(shared);
  ASSERT_TRUE(first.ok() && second.ok());
  auto put = OpenCredentials(shared, *first, notices);
  auto get = OpenCredentials(shared, *second, notices);
  ASSERT_TRUE(put.ok() && get.ok()) << put.status() << get.status();
  ASSERT_TRUE((*put)->Put("bob@x", "TOKEN", "shared-value").ok());
  EXPECT_EQ((*get)->Get("bob@x", {"TOKEN"})->at("TOKEN"), "shared-value");
  EXPECT_FALSE(std::filesystem::exists(dir.path() + "/unused"));

  // Another key is refused, named by its key.
  shared.skills.credentials_key_file = KeyFile(dir.path(), "other.key");
  auto refused = OpenCredentials(shared, *first, notices);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(std::string(refused.status().message()), HasSubstr("[skills] credentials: "));
  EXPECT_THAT(std::string(refused.status().message()), HasSubstr("key id mismatch"));
}

}  // namespace
}  // namespace herald::storage
