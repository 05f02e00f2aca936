#include "component/base/postgres_database.h"

#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/postgres_server.h"

namespace herald::base {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class PostgresDatabaseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<testing::PostgresServer*> server = testing::SharedPostgresServer();
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *server;
    absl::StatusOr<std::string> conninfo = server_->NewDatabase();
    ASSERT_TRUE(conninfo.ok()) << conninfo.status();
    conninfo_ = *conninfo;
    absl::StatusOr<std::unique_ptr<PostgresDatabase>> db =
        PostgresDatabase::Connect({.conninfo = conninfo_, .pool_size = 2, .what = "test"});
    ASSERT_TRUE(db.ok()) << db.status();
    db_ = *std::move(db);
  }

  testing::PostgresServer* server_ = nullptr;
  std::string conninfo_;
  std::unique_ptr<PostgresDatabase> db_;
};

TEST_F(PostgresDatabaseTest, ValuesTravelAsParametersAndComeBackUnchanged) {
  ASSERT_TRUE(db_->Exec("CREATE TABLE t (s text, n bigint, d double precision, b bytea)").ok());
  const std::string quotes = "Robert'); DROP TABLE t; --";
  const std::string bytes("\0\x01\xff'\\x", 6);
  absl::StatusOr<PostgresResult> insert =
      db_->Exec("INSERT INTO t VALUES ($1, $2, $3, $4)",
                SqlParams().Text(quotes).Int64(-(int64_t{1} << 62)).Double(0.1).Bytes(bytes));
  ASSERT_TRUE(insert.ok()) << insert.status();
  EXPECT_EQ(insert->affected(), 1);
  ASSERT_TRUE(
      db_->Exec("INSERT INTO t VALUES ($1, $2, $3, $4)", SqlParams().Null().Null().Null().Null())
          .ok());

  absl::StatusOr<PostgresResult> rows = db_->Exec("SELECT s, n, d, b FROM t ORDER BY s");
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->rows(), 2);
  EXPECT_EQ(rows->Text(0, 0), quotes);
  EXPECT_EQ(rows->Int64(0, 1), -(int64_t{1} << 62));
  EXPECT_EQ(rows->Double(0, 2), 0.1);
  EXPECT_EQ(rows->Bytes(0, 3), bytes);
  for (int column = 0; column < 4; ++column) EXPECT_TRUE(rows->IsNull(1, column));
}

TEST_F(PostgresDatabaseTest, AFailedTransactionLeavesNothingBehind) {
  ASSERT_TRUE(db_->Exec("CREATE TABLE t (k text PRIMARY KEY)").ok());
  absl::Status s = db_->Transaction([](PostgresConnection& c) -> absl::Status {
    if (absl::Status s = c.Exec("INSERT INTO t VALUES ('a')").status(); !s.ok()) return s;
    return c.Exec("INSERT INTO t VALUES ('a')").status();  // the same key again
  });
  EXPECT_EQ(s.code(), absl::StatusCode::kAlreadyExists) << s;
  s = db_->Transaction([](PostgresConnection& c) -> absl::Status {
    if (absl::Status s = c.Exec("INSERT INTO t VALUES ('b')").status(); !s.ok()) return s;
    return absl::CancelledError("the caller changed its mind");
  });
  EXPECT_EQ(s.code(), absl::StatusCode::kCancelled);

  absl::StatusOr<PostgresResult> count = db_->Exec("SELECT count(*) FROM t");
  ASSERT_TRUE(count.ok()) << count.status();
  EXPECT_EQ(count->Int64(0, 0), 0);
  // The connections went back to the pool in a usable state.
  for (int i = 0; i < 4; ++i)
    EXPECT_TRUE(db_->Exec("INSERT INTO t VALUES ($1)", SqlParams().Int64(i)).ok());
}

TEST_F(PostgresDatabaseTest, ABadStatementSaysWhatPostgresSaid) {
  absl::StatusOr<PostgresResult> result = db_->Exec("SELECT * FROM no_such_table");
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(result.status().message(), HasSubstr("PostgreSQL (test)"));
  EXPECT_THAT(result.status().message(), HasSubstr("no_such_table"));
}

TEST_F(PostgresDatabaseTest, AnUnreachableServerIsNamedAndThePasswordIsNot) {
  absl::StatusOr<std::unique_ptr<PostgresDatabase>> db = PostgresDatabase::Connect(
      {.conninfo = "host=/nonexistent/herald port=5432 user=herald password=hunter2 dbname=x",
       .what = "storage"});
  ASSERT_FALSE(db.ok());
  EXPECT_EQ(db.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(db.status().message(), HasSubstr("PostgreSQL (storage): cannot connect"));
  EXPECT_THAT(db.status().message(), HasSubstr("/nonexistent/herald"));
  EXPECT_THAT(db.status().message(), Not(HasSubstr("hunter2")));

  EXPECT_EQ(PostgresDatabase::Connect({.conninfo = "", .what = "storage"}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(PostgresDatabase::Connect({.conninfo = conninfo_, .pool_size = 0}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(PostgresDatabaseTest, SchemasAreAppliedOnceInOrderAndANewerOneIsRefused) {
  const std::vector<std::string_view> v1 = {"CREATE TABLE a (x int); CREATE TABLE b (y int)"};
  ASSERT_TRUE(ApplySchema(*db_, "things", v1).ok());
  ASSERT_TRUE(ApplySchema(*db_, "things", v1).ok());  // again: nothing to do
  ASSERT_TRUE(db_->Exec("INSERT INTO a VALUES (1)").ok());

  const std::vector<std::string_view> v2 = {v1[0], "ALTER TABLE a ADD COLUMN z int DEFAULT 7"};
  ASSERT_TRUE(ApplySchema(*db_, "things", v2).ok());
  absl::StatusOr<PostgresResult> row = db_->Exec("SELECT x, z FROM a");
  ASSERT_TRUE(row.ok()) << row.status();
  EXPECT_EQ(row->Int64(0, 1), 7);

  // Another component's schema has its own version.
  const std::vector<std::string_view> others = {"CREATE TABLE c (w int)"};
  ASSERT_TRUE(ApplySchema(*db_, "others", others).ok());

  // An older Herald (knowing only version 1) meets the version 2 schema: refused.
  absl::Status older = ApplySchema(*db_, "things", v1);
  EXPECT_EQ(older.code(), absl::StatusCode::kFailedPrecondition) << older;
  EXPECT_THAT(older.message(), HasSubstr("version 2, newer than this Herald's 1"));

  // A migration that fails leaves the version where it was.
  const std::vector<std::string_view> broken = {v2[0], v2[1], "ALTER TABLE nowhere ADD x int"};
  EXPECT_FALSE(ApplySchema(*db_, "things", broken).ok());
  absl::StatusOr<PostgresResult> version =
      db_->Exec("SELECT version FROM herald_schema WHERE name = 'things'");
  ASSERT_TRUE(version.ok()) << version.status();
  EXPECT_EQ(version->Int64(0, 0), 2);
}

TEST_F(PostgresDatabaseTest, InstancesStartingAtOnceApplyTheSchemaOnce) {
  const std::vector<std::string_view> schema = {"CREATE TABLE once (x int)",
                                                "INSERT INTO once VALUES (1)"};
  std::vector<std::unique_ptr<PostgresDatabase>> instances;
  for (int i = 0; i < 4; ++i) {
    absl::StatusOr<std::unique_ptr<PostgresDatabase>> db =
        PostgresDatabase::Connect({.conninfo = conninfo_, .pool_size = 1, .what = "test"});
    ASSERT_TRUE(db.ok()) << db.status();
    instances.push_back(*std::move(db));
  }
  std::vector<absl::Status> results(instances.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < instances.size(); ++i) {
    threads.emplace_back([&, i] { results[i] = ApplySchema(*instances[i], "once", schema); });
  }
  for (std::thread& t : threads) t.join();
  for (const absl::Status& s : results) EXPECT_TRUE(s.ok()) << s;
  absl::StatusOr<PostgresResult> count = db_->Exec("SELECT count(*) FROM once");
  ASSERT_TRUE(count.ok()) << count.status();
  EXPECT_EQ(count->Int64(0, 0), 1);
}

TEST_F(PostgresDatabaseTest, CallsFailPolitelyDuringARestartAndWorkAfterIt) {
  ASSERT_TRUE(db_->Exec("CREATE TABLE t (x int)").ok());
  // Prepared on both connections before the restart (a statement with parameters is).
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(db_->Exec("INSERT INTO t VALUES ($1)", SqlParams().Int64(0)).ok());
  }
  ASSERT_TRUE(server_->Stop().ok());
  absl::StatusOr<PostgresResult> during =
      db_->Exec("INSERT INTO t VALUES ($1)", SqlParams().Int64(1));
  ASSERT_FALSE(during.ok());
  EXPECT_EQ(during.status().code(), absl::StatusCode::kUnavailable) << during.status();
  ASSERT_TRUE(server_->Start().ok());
  // Every pooled connection is reset when it is next taken, and its statements prepared
  // again: no call after the restart fails.
  for (int i = 0; i < 4; ++i) {
    absl::StatusOr<PostgresResult> after =
        db_->Exec("INSERT INTO t VALUES ($1)", SqlParams().Int64(2));
    EXPECT_TRUE(after.ok()) << after.status();
  }
  absl::StatusOr<PostgresResult> count =
      db_->Exec("SELECT count(*) FROM t WHERE x = $1", SqlParams().Int64(2));
  ASSERT_TRUE(count.ok()) << count.status();
  EXPECT_EQ(count->Int64(0, 0), 4);
}

TEST_F(PostgresDatabaseTest, ManyStatementTextsDoNotExhaustAConnection) {
  // More distinct texts than a connection keeps prepared: the oldest are dropped, all work.
  for (int i = 0; i < 300; ++i) {
    absl::StatusOr<PostgresResult> row =
        db_->Exec(absl::StrCat("SELECT $1::int + ", i), SqlParams().Int64(1));
    ASSERT_TRUE(row.ok()) << row.status();
    EXPECT_EQ(row->Int64(0, 0), i + 1);
  }
}

}  // namespace
}  // namespace herald::base
