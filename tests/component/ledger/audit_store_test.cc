// The audit log on each of its stores: the files on this host and the PostgreSQL database
// several instances share, where they continue one chain. What only the file has (its bytes,
// its head file, crash recovery) is in audit_log_test.cc.
#include <atomic>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "component/base/postgres_database.h"
#include "component/ledger/audit_log.h"
#include "component/ledger/postgres_audit_store.h"
#include "gtest/gtest.h"
#include "tests/component/memory/temp_dir.h"
#include "tests/support/postgres_server.h"

namespace herald::ledger {
namespace {

using ::herald::memory::TempDir;

enum class Backend { kFile, kPostgres };

AuditEntry Entry(const std::string& actor, int i) {
  return AuditEntry{.time = absl::FromUnixSeconds(1736847000 + i),
                    .actor = actor,
                    .action = "/herald.v1.QuotaService/GetUsage",
                    .target = absl::StrCat("user", i, "@example.org"),
                    .outcome = "OK",
                    .detail = absl::StrCat("call ", i)};
}

class AuditStoreTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    if (GetParam() != Backend::kPostgres) return;
    absl::StatusOr<testing::PostgresServer*> server = testing::SharedPostgresServer();
    ASSERT_TRUE(server.ok()) << server.status();
    absl::StatusOr<std::string> conninfo = (*server)->NewDatabase();
    ASSERT_TRUE(conninfo.ok()) << conninfo.status();
    conninfo_ = *conninfo;
  }

  // This test's log (an instance's); opened again, it continues the same chain.
  absl::StatusOr<std::unique_ptr<AuditLog>> OpenLog() {
    if (GetParam() == Backend::kFile) return AuditLog::Open(dir_.path() + "/audit.log");
    absl::StatusOr<std::unique_ptr<base::PostgresDatabase>> db = Connect();
    if (!db.ok()) return db.status();
    absl::StatusOr<std::unique_ptr<PostgresAuditStore>> store =
        PostgresAuditStore::Open(*std::move(db));
    if (!store.ok()) return store.status();
    return AuditLog::Open(*std::move(store));
  }

  absl::StatusOr<std::unique_ptr<base::PostgresDatabase>> Connect() {
    return base::PostgresDatabase::Connect(
        {.conninfo = conninfo_, .pool_size = 2, .what = "audit"});
  }

  // Every entry, newest first, through ReadNewest's pages of `page_size`.
  std::vector<ParsedAuditLine> AllEntries(const AuditLog& log, size_t page_size) {
    std::vector<ParsedAuditLine> entries;
    std::optional<uint64_t> before;
    for (int pages = 0; pages < 10000; ++pages) {
      absl::StatusOr<AuditPage> page = log.ReadNewest(before, page_size);
      EXPECT_TRUE(page.ok()) << page.status();
      if (!page.ok()) break;
      EXPECT_LE(page->entries.size(), page_size);
      entries.insert(entries.end(), page->entries.begin(), page->entries.end());
      if (page->older == 0) break;
      before = page->older;
    }
    return entries;
  }

  TempDir dir_;
  std::string conninfo_;
};

INSTANTIATE_TEST_SUITE_P(Stores, AuditStoreTest,
                         ::testing::Values(Backend::kFile, Backend::kPostgres),
                         [](const ::testing::TestParamInfo<Backend>& info) {
                           return info.param == Backend::kFile ? "File" : "Postgres";
                         });

using SharedAuditTest = AuditStoreTest;
INSTANTIATE_TEST_SUITE_P(Postgres, SharedAuditTest, ::testing::Values(Backend::kPostgres),
                         [](const ::testing::TestParamInfo<Backend>&) { return "Postgres"; });

TEST_P(AuditStoreTest, EntriesAreChainedReadNewestFirstAndVerified) {
  absl::StatusOr<std::unique_ptr<AuditLog>> log = OpenLog();
  ASSERT_TRUE(log.ok()) << log.status();
  for (int i = 1; i <= 7; ++i) (*log)->Append(Entry("ops", i));
  ASSERT_TRUE((*log)->Flush().ok());
  absl::StatusOr<AuditVerifyReport> report = (*log)->Verify();
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->ok) << report->problem;
  EXPECT_EQ(report->entries, 7u);

  std::vector<ParsedAuditLine> entries = AllEntries(**log, 3);
  ASSERT_EQ(entries.size(), 7u);
  for (size_t i = 0; i < entries.size(); ++i) {
    EXPECT_EQ(entries[i].seq, 7 - i);
    EXPECT_EQ(entries[i].entry, CanonicalAuditEntry(Entry("ops", 7 - i), absl::Now()));
    if (i + 1 < entries.size()) EXPECT_EQ(entries[i].prev, entries[i + 1].hash);
  }
  EXPECT_EQ(entries.back().prev, kGenesisHash);
}

TEST_P(AuditStoreTest, ReopenedTheLogContinuesItsChain) {
  {
    absl::StatusOr<std::unique_ptr<AuditLog>> log = OpenLog();
    ASSERT_TRUE(log.ok()) << log.status();
    for (int i = 1; i <= 3; ++i) (*log)->Append(Entry("ops", i));
  }  // closing writes what is queued
  absl::StatusOr<std::unique_ptr<AuditLog>> log = OpenLog();
  ASSERT_TRUE(log.ok()) << log.status();
  (*log)->Append(Entry("ops", 4));
  absl::StatusOr<AuditVerifyReport> report = (*log)->Verify();
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->ok) << report->problem;
  EXPECT_EQ(report->entries, 4u);
}

TEST_P(AuditStoreTest, AnEmptyLogVerifiesAndReadsNothing) {
  absl::StatusOr<std::unique_ptr<AuditLog>> log = OpenLog();
  ASSERT_TRUE(log.ok()) << log.status();
  absl::StatusOr<AuditVerifyReport> report = (*log)->Verify();
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->ok);
  EXPECT_EQ(report->entries, 0u);
  absl::StatusOr<AuditPage> page = (*log)->ReadNewest(std::nullopt, 10);
  ASSERT_TRUE(page.ok()) << page.status();
  EXPECT_TRUE(page->entries.empty());
  EXPECT_EQ(page->older, 0u);
}

TEST_P(AuditStoreTest, ACursorPastTheEndIsRefused) {
  absl::StatusOr<std::unique_ptr<AuditLog>> log = OpenLog();
  ASSERT_TRUE(log.ok()) << log.status();
  (*log)->Append(Entry("ops", 1));
  ASSERT_TRUE((*log)->Flush().ok());
  EXPECT_EQ((*log)->ReadNewest(uint64_t{1} << 40, 10).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_P(SharedAuditTest, TwoInstancesWritingAtOnceContinueOneChain) {
  absl::StatusOr<std::unique_ptr<AuditLog>> first = OpenLog();
  absl::StatusOr<std::unique_ptr<AuditLog>> second = OpenLog();
  ASSERT_TRUE(first.ok() && second.ok());
  constexpr int kEach = 300;
  std::vector<std::thread> threads;
  for (AuditLog* log : {first->get(), second->get()}) {
    const std::string actor = log == first->get() ? "first" : "second";
    threads.emplace_back([log, actor] {
      for (int i = 1; i <= kEach; ++i) {
        log->Append(Entry(actor, i));
        if (i % 50 == 0) ASSERT_TRUE(log->Flush().ok());  // several batches each
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  ASSERT_TRUE((*first)->Flush().ok());
  ASSERT_TRUE((*second)->Flush().ok());
  // Either instance verifies everything both wrote.
  for (AuditLog* log : {first->get(), second->get()}) {
    absl::StatusOr<AuditVerifyReport> report = log->Verify();
    ASSERT_TRUE(report.ok()) << report.status();
    EXPECT_TRUE(report->ok) << report->problem;
    EXPECT_EQ(report->entries, 2u * kEach);
  }
  std::vector<ParsedAuditLine> entries = AllEntries(**second, 100);
  ASSERT_EQ(entries.size(), 2u * kEach);
  std::set<std::string> actors;
  for (size_t i = 0; i < entries.size(); ++i) {
    EXPECT_EQ(entries[i].seq, 2u * kEach - i);
    actors.insert(entries[i].entry.actor);
  }
  EXPECT_EQ(actors, (std::set<std::string>{"first", "second"}));
}

class TamperedAuditTest : public AuditStoreTest {
 protected:
  // Seven entries by one instance, then `sql` run on the database behind its back.
  absl::StatusOr<AuditVerifyReport> VerifyAfter(const std::string& sql) {
    absl::StatusOr<std::unique_ptr<AuditLog>> log = OpenLog();
    if (!log.ok()) return log.status();
    for (int i = 1; i <= 7; ++i) (*log)->Append(Entry("ops", i));
    if (absl::Status s = (*log)->Flush(); !s.ok()) return s;
    absl::StatusOr<std::unique_ptr<base::PostgresDatabase>> db = Connect();
    if (!db.ok()) return db.status();
    if (absl::Status s = (*db)->Exec(sql).status(); !s.ok()) return s;
    return (*log)->Verify();
  }
};
INSTANTIATE_TEST_SUITE_P(Postgres, TamperedAuditTest, ::testing::Values(Backend::kPostgres),
                         [](const ::testing::TestParamInfo<Backend>&) { return "Postgres"; });

TEST_P(TamperedAuditTest, AChangedEntryIsFound) {
  absl::StatusOr<AuditVerifyReport> report =
      VerifyAfter("UPDATE audit_entries SET line = replace(line, 'user3@', 'eve3@') WHERE seq = 3");
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_FALSE(report->ok);
  EXPECT_EQ(report->first_bad_entry, 3u);
  EXPECT_EQ(report->entries, 2u);
  EXPECT_TRUE(absl::StrContains(report->problem, "was changed")) << report->problem;
}

TEST_P(TamperedAuditTest, ARemovedEntryIsFound) {
  absl::StatusOr<AuditVerifyReport> report = VerifyAfter("DELETE FROM audit_entries WHERE seq = 4");
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_FALSE(report->ok);
  EXPECT_EQ(report->first_bad_entry, 4u);
}

TEST_P(TamperedAuditTest, EntriesCutOffTheEndAreFoundAndTheChainIsNotContinued) {
  absl::StatusOr<AuditVerifyReport> report = VerifyAfter("DELETE FROM audit_entries WHERE seq > 5");
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_FALSE(report->ok);
  EXPECT_EQ(report->first_bad_entry, 6u);
  EXPECT_TRUE(absl::StrContains(report->problem, "cut off")) << report->problem;
  absl::StatusOr<std::unique_ptr<AuditLog>> reopened = OpenLog();
  ASSERT_FALSE(reopened.ok());
  EXPECT_EQ(reopened.status().code(), absl::StatusCode::kDataLoss);
}

TEST_P(TamperedAuditTest, AHeadMovedBackIsFound) {
  absl::StatusOr<AuditVerifyReport> report = VerifyAfter(
      "UPDATE audit_head SET entries = 5, last_hash = (SELECT substring(line from "
      "'\"hash\":\"([0-9a-f]{64})\"') FROM audit_entries WHERE seq = 5)");
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_FALSE(report->ok);
  EXPECT_EQ(report->entries_after_head, 2u);
}

}  // namespace
}  // namespace herald::ledger
