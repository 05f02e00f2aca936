// tests/component/ledger/ledger_on_each_store.h
//
// The fixture of the ledger's tests that run on both of its stores: a SQLite file in a
// temporary folder, and a fresh database on the shared private PostgreSQL server
// (tests/support/postgres_server.h). OpenLedger opens the test's ledger; opened again, it
// finds what the last one kept.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/civil_time.h"
#include "absl/time/time.h"
#include "component/base/postgres_database.h"
#include "component/ledger/postgres_usage_store.h"
#include "component/ledger/usage_ledger.h"
#include "gtest/gtest.h"
#include "tests/component/memory/temp_dir.h"
#include "tests/support/postgres_server.h"

namespace herald::ledger {

using ::herald::memory::TempDir;

inline constexpr char kAlice[] = "alice@example.org";
inline constexpr char kBob[] = "bob@example.org";
inline constexpr char kSonnet[] = "anthropic:claude-sonnet-4-5";
inline constexpr char kMini[] = "openai:gpt-4o-mini";

inline absl::Time Utc(int year, int month, int day, int hour = 0, int minute = 0, int second = 0) {
  return absl::FromCivil(absl::CivilSecond(year, month, day, hour, minute, second),
                         absl::UTCTimeZone());
}

// Tuesday 14 January 2025, mid-morning.
inline const absl::Time kTuesday = Utc(2025, 1, 14, 10);

inline PriceTable Prices() {
  return PriceTable({{kSonnet, {.input_per_mtok = 3, .output_per_mtok = 15}},
                     {kMini, {.input_per_mtok = 0.15, .output_per_mtok = 0.6}}});
}

// One LLM call's record.
inline UsageRecord Call(std::string jid, std::string model, int64_t in, int64_t out,
                        absl::Time time) {
  return UsageRecord{.jid = std::move(jid),
                     .model = std::move(model),
                     .input_tokens = in,
                     .output_tokens = out,
                     .time = time};
}

// Every row of the query, through all its pages.
inline std::vector<UsageRow> AllRows(const UsageLedger& ledger, UsageQuery query) {
  std::vector<UsageRow> rows;
  for (int pages = 0; pages < 1000; ++pages) {
    absl::StatusOr<UsagePage> page = ledger.Usage(query);
    EXPECT_TRUE(page.ok()) << page.status();
    if (!page.ok()) break;
    rows.insert(rows.end(), page->rows.begin(), page->rows.end());
    if (page->next_page_token.empty()) break;
    query.page_token = page->next_page_token;
  }
  return rows;
}

enum class Backend { kSqlite, kPostgres };

inline std::string BackendName(const ::testing::TestParamInfo<Backend>& info) {
  return info.param == Backend::kSqlite ? "Sqlite" : "Postgres";
}

// A ledger test that runs on both stores: the SQLite file and PostgreSQL.
class LedgerOnEachStore : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    if (GetParam() != Backend::kPostgres) return;
    absl::StatusOr<testing::PostgresServer*> server = testing::SharedPostgresServer();
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *server;
    absl::StatusOr<std::string> conninfo = (*server)->NewDatabase();
    ASSERT_TRUE(conninfo.ok()) << conninfo.status();
    conninfo_ = *conninfo;
  }

  // This test's ledger; opened again, it finds what the last one kept (the same file or
  // database).
  std::unique_ptr<UsageLedger> OpenLedger(int64_t default_daily = 0) {
    absl::StatusOr<std::unique_ptr<UsageLedger>> ledger = OpenOnStore(default_daily);
    EXPECT_TRUE(ledger.ok()) << ledger.status();
    return ledger.ok() ? *std::move(ledger) : nullptr;
  }

  std::string Path() const { return dir_.path() + "/data/ledger/usage.db"; }

  // With Backend::kPostgres: a store of its own (a pool of two) on this test's database.
  absl::StatusOr<std::unique_ptr<PostgresUsageStore>> OpenPostgresStore() {
    absl::StatusOr<std::unique_ptr<base::PostgresDatabase>> db =
        base::PostgresDatabase::Connect({.conninfo = conninfo_, .pool_size = 2, .what = "ledger"});
    if (!db.ok()) return db.status();
    return PostgresUsageStore::Open(*std::move(db));
  }

  TempDir dir_;
  testing::PostgresServer* server_ = nullptr;  // with Backend::kPostgres

 private:
  absl::StatusOr<std::unique_ptr<UsageLedger>> OpenOnStore(int64_t default_daily) {
    if (GetParam() == Backend::kSqlite) return UsageLedger::Open(Path(), Prices(), default_daily);
    absl::StatusOr<std::unique_ptr<PostgresUsageStore>> store = OpenPostgresStore();
    if (!store.ok()) return store.status();
    return UsageLedger::Open(*std::move(store), Prices(), default_daily);
  }

  std::string conninfo_;
};

}  // namespace herald::ledger
