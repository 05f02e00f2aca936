#include "component/storage/stores.h"

#include <string>

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
                        "ledger schema is version 99, newer than this Herald's 2"));
}

}  // namespace
}  // namespace herald::storage
