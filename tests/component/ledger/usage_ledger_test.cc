#include "component/ledger/usage_ledger.h"

#include <sys/stat.h>

#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/civil_time.h"
#include "component/base/postgres_database.h"
#include "component/ledger/postgres_usage_store.h"
#include "gtest/gtest.h"
#include "tests/component/ledger/ledger_on_each_store.h"
#include "tests/component/memory/temp_dir.h"
#include "tests/support/postgres_server.h"

namespace herald::ledger {
namespace {

using UsageLedgerTest = LedgerOnEachStore;
INSTANTIATE_TEST_SUITE_P(Stores, UsageLedgerTest,
                         ::testing::Values(Backend::kSqlite, Backend::kPostgres), BackendName);

// What only a database server has: going away and coming back.
using PostgresUsageLedgerTest = UsageLedgerTest;
INSTANTIATE_TEST_SUITE_P(Postgres, PostgresUsageLedgerTest, ::testing::Values(Backend::kPostgres),
                         [](const ::testing::TestParamInfo<Backend>&) { return "Postgres"; });

TEST_P(PostgresUsageLedgerTest, CallsMadeWhileTheDatabaseIsAwayAreCountedKeptAndRecordedLater) {
  auto ledger = OpenLedger();
  ASSERT_TRUE(ledger->SetLimit({.jid = kAlice, .max_tokens = 100}).ok());
  ASSERT_TRUE(server_->Stop().ok());
  EXPECT_TRUE(ledger->Record(Call(kAlice, kSonnet, 60, 60, kTuesday)).ok());
  EXPECT_TRUE(ledger->Record(Call(kBob, kSonnet, 1, 1, kTuesday)).ok());
  EXPECT_EQ(ledger->kept_records(), 2u);
  EXPECT_EQ(ledger->Usage({.at = kTuesday}).status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(ledger->Refresh(kTuesday).code(), absl::StatusCode::kUnavailable);
  // Counted all the same, and a failed refresh keeps the last view.
  EXPECT_TRUE(ledger->Check(kAlice, kSonnet, kTuesday).blocked);

  ASSERT_TRUE(server_->Start().ok());
  ASSERT_TRUE(ledger->Refresh(kTuesday).ok());
  EXPECT_EQ(ledger->kept_records(), 0u);
  std::vector<UsageRow> rows = AllRows(*ledger, {.at = kTuesday});
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].jid, kAlice);
  EXPECT_EQ(rows[0].input_tokens, 60);
  EXPECT_EQ(rows[0].calls, 1);
  // Counted once, not again when recorded.
  EXPECT_EQ(ledger->Check(kAlice, kSonnet, kTuesday).blocking->used, 120);
}

// What only the SQLite file has: its permissions and its refusal of a foreign file.
using SqliteUsageLedgerTest = UsageLedgerTest;
INSTANTIATE_TEST_SUITE_P(Sqlite, SqliteUsageLedgerTest, ::testing::Values(Backend::kSqlite),
                         [](const ::testing::TestParamInfo<Backend>&) { return "Sqlite"; });

TEST_P(UsageLedgerTest, SumsCallsPerJidAndModelInEachWindow) {
  auto ledger = OpenLedger();
  ASSERT_TRUE(ledger->Record(Call(kAlice, kSonnet, 1200, 300, kTuesday)).ok());
  ASSERT_TRUE(ledger->Record(Call(kAlice, kSonnet, 800, 200, kTuesday + absl::Hours(1))).ok());
  ASSERT_TRUE(ledger->Record(Call(kAlice, kMini, 10, 5, kTuesday)).ok());
  ASSERT_TRUE(ledger->Record(Call(kBob, kSonnet, 1, 1, kTuesday)).ok());

  absl::StatusOr<UsagePage> day = ledger->Usage({.jid = kAlice, .at = kTuesday});
  ASSERT_TRUE(day.ok()) << day.status();
  ASSERT_EQ(day->rows.size(), 2u);
  EXPECT_EQ(day->next_page_token, "");
  const UsageRow& sonnet = day->rows[0];
  EXPECT_EQ(sonnet.jid, kAlice);
  EXPECT_EQ(sonnet.model, kSonnet);
  EXPECT_EQ(sonnet.window, Window::kDay);
  EXPECT_EQ(sonnet.window_start, Utc(2025, 1, 14));
  EXPECT_EQ(sonnet.input_tokens, 2000);
  EXPECT_EQ(sonnet.output_tokens, 500);
  EXPECT_EQ(sonnet.calls, 2);
  EXPECT_NEAR(sonnet.cost_usd, 2000 * 3e-6 + 500 * 15e-6, 1e-12);
  EXPECT_EQ(sonnet.unpriced_calls, 0);
  EXPECT_EQ(day->rows[1].model, kMini);

  for (Window window : {Window::kWeek, Window::kMonth, Window::kLifetime}) {
    absl::StatusOr<UsagePage> page =
        ledger->Usage({.jid = kAlice, .model = kSonnet, .window = window, .at = kTuesday});
    ASSERT_TRUE(page.ok());
    ASSERT_EQ(page->rows.size(), 1u) << WindowName(window);
    EXPECT_EQ(page->rows[0].input_tokens, 2000);
    EXPECT_EQ(page->rows[0].window, window);
    EXPECT_EQ(page->rows[0].window_start, WindowStart(window, kTuesday));
  }
}

TEST_P(UsageLedgerTest, FiltersByJidByModelOrNeither) {
  auto ledger = OpenLedger();
  ASSERT_TRUE(ledger->Record(Call(kAlice, kSonnet, 1, 0, kTuesday)).ok());
  ASSERT_TRUE(ledger->Record(Call(kAlice, kMini, 2, 0, kTuesday)).ok());
  ASSERT_TRUE(ledger->Record(Call(kBob, kSonnet, 3, 0, kTuesday)).ok());

  std::vector<UsageRow> everyone = AllRows(*ledger, {.at = kTuesday});
  ASSERT_EQ(everyone.size(), 3u);
  EXPECT_EQ(everyone[0].jid, kAlice);
  EXPECT_EQ(everyone[0].model, kSonnet);  // "anthropic:" sorts before "openai:"
  EXPECT_EQ(everyone[1].model, kMini);
  EXPECT_EQ(everyone[2].jid, kBob);

  std::vector<UsageRow> sonnet = AllRows(*ledger, {.model = kSonnet, .at = kTuesday});
  ASSERT_EQ(sonnet.size(), 2u);
  EXPECT_EQ(sonnet[0].input_tokens, 1);
  EXPECT_EQ(sonnet[1].input_tokens, 3);

  std::vector<UsageRow> bob_mini = AllRows(*ledger, {.jid = kBob, .model = kMini, .at = kTuesday});
  EXPECT_TRUE(bob_mini.empty());
}

TEST_P(UsageLedgerTest, ACallCountsInTheWindowsContainingItsTimeOnly) {
  auto ledger = OpenLedger();
  // The last second of Sunday 19 January: week of the 13th, not of the 20th.
  ASSERT_TRUE(ledger->Record(Call(kAlice, kSonnet, 5, 5, Utc(2025, 1, 19, 23, 59, 59))).ok());
  EXPECT_EQ(AllRows(*ledger, {.at = Utc(2025, 1, 19, 12)}).size(), 1u);
  EXPECT_TRUE(AllRows(*ledger, {.at = Utc(2025, 1, 20)}).empty());
  EXPECT_TRUE(AllRows(*ledger, {.at = Utc(2025, 1, 18)}).empty());
  EXPECT_EQ(AllRows(*ledger, {.window = Window::kWeek, .at = Utc(2025, 1, 13)}).size(), 1u);
  EXPECT_TRUE(AllRows(*ledger, {.window = Window::kWeek, .at = Utc(2025, 1, 20)}).empty());
  EXPECT_EQ(AllRows(*ledger, {.window = Window::kLifetime, .at = Utc(2031, 6, 1)}).size(), 1u);
}

TEST_P(UsageLedgerTest, CostOfAModelWithoutAPriceIsCountedAsUnpriced) {
  auto ledger = OpenLedger();
  ASSERT_TRUE(ledger->Record(Call(kAlice, "ollama:llama3", 1000, 1000, kTuesday)).ok());
  std::vector<UsageRow> rows = AllRows(*ledger, {.jid = kAlice, .at = kTuesday});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].cost_usd, 0);
  EXPECT_EQ(rows[0].unpriced_calls, 1);
  EXPECT_EQ(rows[0].calls, 1);
}

TEST_P(UsageLedgerTest, PagesThroughEveryRowOnceInOrder) {
  auto ledger = OpenLedger();
  std::set<std::string> expected;
  for (int i = 0; i < 23; ++i) {
    const std::string jid = absl::StrCat("user", i, "@example.org");
    ASSERT_TRUE(ledger->Record(Call(jid, kSonnet, i, 0, kTuesday)).ok());
    ASSERT_TRUE(ledger->Record(Call(jid, kMini, i, 0, kTuesday)).ok());
    expected.insert(jid + " " + kSonnet);
    expected.insert(jid + " " + kMini);
  }
  UsageQuery query{.at = kTuesday, .page_size = 10};
  std::vector<UsageRow> rows;
  int pages = 0;
  for (;;) {
    absl::StatusOr<UsagePage> page = ledger->Usage(query);
    ASSERT_TRUE(page.ok()) << page.status();
    ++pages;
    EXPECT_LE(page->rows.size(), 10u);
    rows.insert(rows.end(), page->rows.begin(), page->rows.end());
    if (page->next_page_token.empty()) break;
    query.page_token = page->next_page_token;
  }
  EXPECT_EQ(pages, 5);  // 46 rows
  ASSERT_EQ(rows.size(), expected.size());
  std::set<std::string> seen;
  for (size_t i = 0; i < rows.size(); ++i) {
    seen.insert(rows[i].jid + " " + rows[i].model);
    if (i > 0) {
      EXPECT_LT(std::tie(rows[i - 1].jid, rows[i - 1].model), std::tie(rows[i].jid, rows[i].model));
    }
  }
  EXPECT_EQ(seen, expected);
}

TEST_P(UsageLedgerTest, PageSizeIsClampedAndDefaulted) {
  auto ledger = OpenLedger();
  for (int i = 0; i < 120; ++i) {
    ASSERT_TRUE(ledger->Record(Call(absl::StrCat("u", i, "@x"), kSonnet, 1, 0, kTuesday)).ok());
  }
  absl::StatusOr<UsagePage> defaulted = ledger->Usage({.at = kTuesday, .page_size = 0});
  ASSERT_TRUE(defaulted.ok());
  EXPECT_EQ(defaulted->rows.size(), 100u);
  EXPECT_FALSE(defaulted->next_page_token.empty());
  absl::StatusOr<UsagePage> large = ledger->Usage({.at = kTuesday, .page_size = 5000});
  ASSERT_TRUE(large.ok());
  EXPECT_EQ(large->rows.size(), 120u);
  EXPECT_TRUE(large->next_page_token.empty());
}

TEST_P(UsageLedgerTest, RefusesGarbledForgedAndForeignPageTokens) {
  auto ledger = OpenLedger();
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(ledger->Record(Call(absl::StrCat("u", i, "@x"), kSonnet, 1, 0, kTuesday)).ok());
  }
  absl::StatusOr<UsagePage> first = ledger->Usage({.at = kTuesday, .page_size = 2});
  ASSERT_TRUE(first.ok());
  const std::string token = first->next_page_token;
  ASSERT_FALSE(token.empty());

  for (const std::string& bad : {std::string("garbage"), std::string("' OR '1'='1"),
                                 token.substr(0, token.size() - 3), token + "AAAA"}) {
    EXPECT_EQ(ledger->Usage({.at = kTuesday, .page_size = 2, .page_token = bad}).status().code(),
              absl::StatusCode::kInvalidArgument)
        << bad;
  }
  std::string forged = token;
  forged[forged.size() / 2] = forged[forged.size() / 2] == 'x' ? 'y' : 'x';
  EXPECT_EQ(ledger->Usage({.at = kTuesday, .page_size = 2, .page_token = forged}).status().code(),
            absl::StatusCode::kInvalidArgument);
  // A token is for its own query: not another window, day or filter.
  EXPECT_EQ(
      ledger->Usage({.window = Window::kWeek, .at = kTuesday, .page_size = 2, .page_token = token})
          .status()
          .code(),
      absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ledger->Usage({.at = kTuesday + absl::Hours(24), .page_token = token}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ledger->Usage({.model = kSonnet, .at = kTuesday, .page_token = token}).status().code(),
            absl::StatusCode::kInvalidArgument);
  // The genuine token still works, with another page size too.
  absl::StatusOr<UsagePage> second =
      ledger->Usage({.at = kTuesday + absl::Hours(1), .page_size = 10, .page_token = token});
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(second->rows.size(), 3u);
}

TEST_P(UsageLedgerTest, QuotesInNamesAreJustCharacters) {
  auto ledger = OpenLedger();
  const std::string odd = "x' OR '1'='1";
  ASSERT_TRUE(ledger->Record(Call(kAlice, kSonnet, 1, 0, kTuesday)).ok());
  EXPECT_TRUE(AllRows(*ledger, {.jid = odd, .at = kTuesday}).empty());
  ASSERT_TRUE(ledger->Record(Call(odd, "m'); DROP TABLE usage; --", 4, 0, kTuesday)).ok());
  std::vector<UsageRow> rows = AllRows(*ledger, {.jid = odd, .at = kTuesday});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].model, "m'); DROP TABLE usage; --");
  EXPECT_EQ(AllRows(*ledger, {.at = kTuesday}).size(), 2u);
}

TEST_P(UsageLedgerTest, RefusesBadRecordsAndQueries) {
  auto ledger = OpenLedger();
  const auto code = [&](UsageRecord record) { return ledger->Record(record).code(); };
  EXPECT_EQ(code(Call("", kSonnet, 1, 1, kTuesday)), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(code(Call(kAlice, "", 1, 1, kTuesday)), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(code(Call(kAlice, kSonnet, -1, 1, kTuesday)), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(code(Call(kAlice, kSonnet, 1, -1, kTuesday)), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(code(Call(kAlice, kSonnet, int64_t{1} << 50, 1, kTuesday)),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(code(Call("alice\n@x", kSonnet, 1, 1, kTuesday)), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(code(Call(std::string(4000, 'a'), kSonnet, 1, 1, kTuesday)),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(code(Call(kAlice, kSonnet, 1, 1, absl::InfiniteFuture())),
            absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(AllRows(*ledger, {.window = Window::kLifetime, .at = kTuesday}).empty());
  EXPECT_EQ(ledger->Usage({.at = absl::InfinitePast()}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ledger->Usage({.jid = "a\tb", .at = kTuesday}).status().code(),
            absl::StatusCode::kInvalidArgument);
  // Zero tokens is a call all the same.
  EXPECT_TRUE(ledger->Record(Call(kAlice, kSonnet, 0, 0, kTuesday)).ok());
}

TEST_P(UsageLedgerTest, UsageAndLimitsSurviveAReopen) {
  {
    auto ledger = OpenLedger();
    ASSERT_TRUE(ledger->Record(Call(kAlice, kSonnet, 1200, 300, kTuesday)).ok());
    ASSERT_TRUE(ledger->Record(Call(kBob, kMini, 10, 10, kTuesday)).ok());
    ASSERT_TRUE(
        ledger->SetLimit({.jid = kAlice, .window = Window::kWeek, .max_tokens = 1000}).ok());
    ASSERT_TRUE(ledger
                    ->SetLimit({.model = kMini,
                                .window = Window::kMonth,
                                .max_tokens = 5,
                                .mode = LimitMode::kWarn})
                    .ok());
  }
  auto ledger = OpenLedger();
  std::vector<UsageRow> rows = AllRows(*ledger, {.window = Window::kMonth, .at = kTuesday});
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].jid, kAlice);
  EXPECT_EQ(rows[0].input_tokens, 1200);
  EXPECT_EQ(rows[0].output_tokens, 300);
  EXPECT_EQ(rows[0].calls, 1);
  EXPECT_NEAR(rows[0].cost_usd, 0.0081, 1e-12);
  EXPECT_EQ(rows[1].jid, kBob);

  std::vector<Limit> limits = ledger->Limits();
  ASSERT_EQ(limits.size(), 2u);
  EXPECT_EQ(limits[0], (Limit{.jid = "",
                              .model = kMini,
                              .window = Window::kMonth,
                              .max_tokens = 5,
                              .mode = LimitMode::kWarn}));
  EXPECT_EQ(limits[1], (Limit{.jid = kAlice, .window = Window::kWeek, .max_tokens = 1000}));

  // Check's counters were rebuilt from the database.
  Decision alice = ledger->Check(kAlice, kSonnet, kTuesday + absl::Hours(2));
  EXPECT_TRUE(alice.blocked);
  ASSERT_TRUE(alice.blocking.has_value());
  EXPECT_EQ(alice.blocking->used, 1500);
  Decision bob = ledger->Check(kBob, kMini, kTuesday + absl::Hours(2));
  EXPECT_FALSE(bob.blocked);
  ASSERT_EQ(bob.warnings.size(), 1u);
  EXPECT_EQ(bob.warnings[0].used, 20);
}

// Two instances on one store: each learns the other's calls and limit changes at a Refresh.
TEST_P(UsageLedgerTest, RefreshReadsWhatAnotherLedgerOnTheStoreRecordedAndChanged) {
  auto first = OpenLedger();
  auto second = OpenLedger();
  ASSERT_TRUE(first->SetLimit({.jid = kAlice, .max_tokens = 1000}).ok());
  ASSERT_TRUE(first->Record(Call(kAlice, kSonnet, 900, 200, kTuesday)).ok());
  ASSERT_TRUE(first->Record(Call(kBob, kSonnet, 5, 5, kTuesday - absl::Hours(24 * 40))).ok());
  EXPECT_FALSE(second->Check(kAlice, kSonnet, kTuesday).blocked);  // not seen yet

  ASSERT_TRUE(second->Refresh(kTuesday + absl::Hours(1)).ok());
  Decision alice = second->Check(kAlice, kSonnet, kTuesday + absl::Hours(1));
  EXPECT_TRUE(alice.blocked);
  ASSERT_TRUE(alice.blocking.has_value());
  EXPECT_EQ(alice.blocking->used, 1100);
  EXPECT_EQ(second->Limits(), first->Limits());
  // Only the windows containing the refresh's time are read: bob's call of 40 days before
  // counts in his lifetime total alone.
  ASSERT_TRUE(second->SetLimit({.jid = kBob, .window = Window::kLifetime, .max_tokens = 10}).ok());
  EXPECT_EQ(second->Check(kBob, kSonnet, kTuesday + absl::Hours(1)).blocking->used, 10);
  ASSERT_TRUE(second->SetLimit({.jid = kBob, .window = Window::kMonth, .max_tokens = 1}).ok());
  EXPECT_EQ(second->Check(kBob, kSonnet, kTuesday + absl::Hours(1)).blocking->limit.window,
            Window::kLifetime);

  // A limit removed through one instance goes from the other at its next refresh.
  ASSERT_TRUE(first->RemoveLimit(kAlice, "", Window::kDay).ok());
  ASSERT_TRUE(second->Refresh(kTuesday + absl::Hours(1)).ok());
  EXPECT_FALSE(second->Check(kAlice, kSonnet, kTuesday + absl::Hours(1)).blocked);
  EXPECT_EQ(second->Limits().size(), 2u);  // bob's two, set through the second
}

TEST_P(UsageLedgerTest, CountersAfterAReopenHoldOnlyTheLatestWindow) {
  {
    auto ledger = OpenLedger();
    ASSERT_TRUE(ledger->Record(Call(kAlice, kSonnet, 900, 0, Utc(2025, 1, 13, 12))).ok());
    ASSERT_TRUE(ledger->Record(Call(kAlice, kSonnet, 50, 0, Utc(2025, 1, 14, 12))).ok());
    ASSERT_TRUE(ledger->Record(Call(kAlice, kMini, 70, 0, Utc(2025, 1, 12, 12))).ok());
  }
  auto ledger = OpenLedger(/*default_daily=*/100);
  std::vector<LimitState> states = ledger->LimitStates(kAlice, Utc(2025, 1, 14, 13));
  ASSERT_EQ(states.size(), 1u);
  EXPECT_TRUE(states[0].is_default);
  EXPECT_EQ(states[0].used, 50);
  EXPECT_FALSE(states[0].reached);
  ASSERT_TRUE(ledger->SetLimit({.jid = kAlice, .window = Window::kWeek, .max_tokens = 10000}).ok());
  ASSERT_TRUE(ledger->SetLimit({.jid = kAlice, .window = Window::kLifetime, .max_tokens = 1}).ok());
  for (const LimitState& state : ledger->LimitStates(kAlice, Utc(2025, 1, 14, 13))) {
    if (state.limit.window == Window::kWeek) {
      EXPECT_EQ(state.used, 950);  // Sunday's 70 counted in the week before
    }
    if (state.limit.window == Window::kLifetime) {
      EXPECT_EQ(state.used, 1020);
    }
  }
}

TEST_P(UsageLedgerTest, ABlockLimitBlocksOnceReached) {
  auto ledger = OpenLedger();
  ASSERT_TRUE(ledger->SetLimit({.jid = kAlice, .window = Window::kDay, .max_tokens = 1000}).ok());
  EXPECT_FALSE(ledger->Check(kAlice, kSonnet, kTuesday).blocked);
  ASSERT_TRUE(ledger->Record(Call(kAlice, kSonnet, 600, 399, kTuesday)).ok());
  EXPECT_FALSE(ledger->Check(kAlice, kSonnet, kTuesday).blocked);  // 999 < 1000
  ASSERT_TRUE(ledger->Record(Call(kAlice, kMini, 1, 0, kTuesday)).ok());
  Decision decision = ledger->Check(kAlice, kSonnet, kTuesday);
  EXPECT_TRUE(decision.blocked);
  ASSERT_TRUE(decision.blocking.has_value());
  EXPECT_EQ(decision.blocking->used, 1000);
  EXPECT_TRUE(decision.blocking->reached);
  EXPECT_FALSE(decision.blocking->is_default);
  EXPECT_EQ(decision.blocking->window_start, Utc(2025, 1, 14));
  EXPECT_EQ(decision.blocking->window_end, Utc(2025, 1, 15));
  EXPECT_TRUE(decision.warnings.empty());
  // Bob is not Alice.
  EXPECT_FALSE(ledger->Check(kBob, kSonnet, kTuesday).blocked);
}

TEST_P(UsageLedgerTest, AWarnLimitIsListedAndDoesNotBlock) {
  auto ledger = OpenLedger();
  ASSERT_TRUE(
      ledger
          ->SetLimit(
              {.jid = kAlice, .window = Window::kWeek, .max_tokens = 100, .mode = LimitMode::kWarn})
          .ok());
  ASSERT_TRUE(ledger->Record(Call(kAlice, kSonnet, 100, 0, kTuesday)).ok());
  Decision decision = ledger->Check(kAlice, kSonnet, kTuesday);
  EXPECT_FALSE(decision.blocked);
  EXPECT_FALSE(decision.blocking.has_value());
  ASSERT_EQ(decision.warnings.size(), 1u);
  EXPECT_EQ(decision.warnings[0].limit.mode, LimitMode::kWarn);
  EXPECT_EQ(decision.warnings[0].used, 100);
  EXPECT_EQ(decision.warnings[0].window_start, Utc(2025, 1, 13));
}

TEST_P(UsageLedgerTest, TheDefaultDailyLimitAppliesToEveryJid) {
  auto ledger = OpenLedger(/*default_daily=*/500);
  ASSERT_TRUE(ledger->Record(Call(kBob, kSonnet, 499, 0, kTuesday)).ok());
  EXPECT_FALSE(ledger->Check(kBob, kSonnet, kTuesday).blocked);
  ASSERT_TRUE(ledger->Record(Call(kBob, kMini, 1, 0, kTuesday)).ok());
  Decision decision = ledger->Check(kBob, kSonnet, kTuesday);
  EXPECT_TRUE(decision.blocked);
  ASSERT_TRUE(decision.blocking.has_value());
  EXPECT_TRUE(decision.blocking->is_default);
  EXPECT_EQ(
      decision.blocking->limit,
      (Limit{.jid = kBob, .window = Window::kDay, .max_tokens = 500, .mode = LimitMode::kBlock}));
  EXPECT_FALSE(ledger->Check(kAlice, kSonnet, kTuesday).blocked);
  // A config reload: 0 = no default.
  ledger->SetDefaultDailyTokens(0);
  EXPECT_FALSE(ledger->Check(kBob, kSonnet, kTuesday).blocked);
  EXPECT_TRUE(ledger->LimitStates(kBob, kTuesday).empty());
  ledger->SetDefaultDailyTokens(1000);
  EXPECT_FALSE(ledger->Check(kBob, kSonnet, kTuesday).blocked);
  EXPECT_EQ(ledger->default_daily_tokens(), 1000);
}

TEST_P(UsageLedgerTest, AnExplicitDailyLimitForAJidReplacesTheDefault) {
  auto ledger = OpenLedger(/*default_daily=*/500);
  ASSERT_TRUE(ledger->Record(Call(kAlice, kSonnet, 800, 0, kTuesday)).ok());
  EXPECT_TRUE(ledger->Check(kAlice, kSonnet, kTuesday).blocked);
  // Higher for Alice: the default no longer applies to her.
  ASSERT_TRUE(ledger->SetLimit({.jid = kAlice, .window = Window::kDay, .max_tokens = 5000}).ok());
  EXPECT_FALSE(ledger->Check(kAlice, kSonnet, kTuesday).blocked);
  std::vector<LimitState> states = ledger->LimitStates(kAlice, kTuesday);
  ASSERT_EQ(states.size(), 1u);
  EXPECT_FALSE(states[0].is_default);
  EXPECT_EQ(states[0].limit.max_tokens, 5000);
  // A limit of Alice's on one model, or on another window, does not replace the default.
  ASSERT_TRUE(ledger->RemoveLimit(kAlice, "", Window::kDay).ok());
  ASSERT_TRUE(ledger->SetLimit({.jid = kAlice, .model = kMini, .max_tokens = 5000}).ok());
  ASSERT_TRUE(ledger->SetLimit({.jid = kAlice, .window = Window::kWeek, .max_tokens = 5000}).ok());
  Decision decision = ledger->Check(kAlice, kSonnet, kTuesday);
  EXPECT_TRUE(decision.blocked);
  EXPECT_TRUE(decision.blocking->is_default);
  // Lower than the default blocks earlier.
  ASSERT_TRUE(ledger->SetLimit({.jid = kBob, .window = Window::kDay, .max_tokens = 10}).ok());
  ASSERT_TRUE(ledger->Record(Call(kBob, kSonnet, 10, 0, kTuesday)).ok());
  EXPECT_TRUE(ledger->Check(kBob, kSonnet, kTuesday).blocked);
}

TEST_P(UsageLedgerTest, AModelLimitForEveryJidCountsEveryJidsCalls) {
  auto ledger = OpenLedger();
  ASSERT_TRUE(
      ledger->SetLimit({.model = kSonnet, .window = Window::kMonth, .max_tokens = 100}).ok());
  ASSERT_TRUE(ledger->Record(Call(kAlice, kSonnet, 60, 0, kTuesday)).ok());
  ASSERT_TRUE(ledger->Record(Call(kBob, kSonnet, 40, 0, kTuesday)).ok());
  ASSERT_TRUE(ledger->Record(Call(kBob, kMini, 1000, 0, kTuesday)).ok());
  Decision sonnet = ledger->Check("carol@example.org", kSonnet, kTuesday);
  EXPECT_TRUE(sonnet.blocked);
  EXPECT_EQ(sonnet.blocking->used, 100);
  EXPECT_EQ(sonnet.blocking->window_end, Utc(2025, 2, 1));
  // Other models are not covered by it.
  EXPECT_FALSE(ledger->Check("carol@example.org", kMini, kTuesday).blocked);
}

TEST_P(UsageLedgerTest, AJidAndModelLimitCountsOnlyThatPair) {
  auto ledger = OpenLedger();
  ASSERT_TRUE(ledger->SetLimit({.jid = kAlice, .model = kSonnet, .max_tokens = 100}).ok());
  ASSERT_TRUE(ledger->Record(Call(kAlice, kMini, 1000, 0, kTuesday)).ok());
  ASSERT_TRUE(ledger->Record(Call(kBob, kSonnet, 1000, 0, kTuesday)).ok());
  EXPECT_FALSE(ledger->Check(kAlice, kSonnet, kTuesday).blocked);
  ASSERT_TRUE(ledger->Record(Call(kAlice, kSonnet, 100, 0, kTuesday)).ok());
  EXPECT_TRUE(ledger->Check(kAlice, kSonnet, kTuesday).blocked);
  EXPECT_FALSE(ledger->Check(kAlice, kMini, kTuesday).blocked);
  EXPECT_FALSE(ledger->Check(kBob, kSonnet, kTuesday).blocked);
}

TEST_P(UsageLedgerTest, AZeroLimitBlocksEveryCallItCovers) {
  auto ledger = OpenLedger();
  ASSERT_TRUE(ledger->SetLimit({.model = "anthropic:claude-opus-4", .max_tokens = 0}).ok());
  EXPECT_TRUE(ledger->Check(kAlice, "anthropic:claude-opus-4", kTuesday).blocked);
  EXPECT_FALSE(ledger->Check(kAlice, kSonnet, kTuesday).blocked);
}

TEST_P(UsageLedgerTest, CountersRollOverAtTheWindowBoundary) {
  auto ledger = OpenLedger(/*default_daily=*/100);
  ASSERT_TRUE(ledger->SetLimit({.jid = kAlice, .window = Window::kWeek, .max_tokens = 150}).ok());
  ASSERT_TRUE(ledger->SetLimit({.jid = kAlice, .window = Window::kMonth, .max_tokens = 1000}).ok());
  // Friday 31 January 2025, the last second.
  const absl::Time last_second = Utc(2025, 1, 31, 23, 59, 59);
  ASSERT_TRUE(ledger->Record(Call(kAlice, kSonnet, 100, 0, last_second)).ok());
  Decision friday = ledger->Check(kAlice, kSonnet, last_second);
  EXPECT_TRUE(friday.blocked);
  EXPECT_TRUE(friday.blocking->is_default);

  // Saturday 1 February: a new day and a new month, the same week.
  const absl::Time saturday = Utc(2025, 2, 1);
  EXPECT_FALSE(ledger->Check(kAlice, kSonnet, saturday).blocked);
  for (const LimitState& state : ledger->LimitStates(kAlice, saturday)) {
    switch (state.limit.window) {
      case Window::kDay:
      case Window::kMonth:
        EXPECT_EQ(state.used, 0) << WindowName(state.limit.window);
        break;
      default:
        EXPECT_EQ(state.used, 100) << WindowName(state.limit.window);
    }
  }
  ASSERT_TRUE(ledger->Record(Call(kAlice, kSonnet, 50, 0, saturday)).ok());
  Decision week = ledger->Check(kAlice, kSonnet, saturday + absl::Hours(1));
  EXPECT_TRUE(week.blocked);
  EXPECT_EQ(week.blocking->limit.window, Window::kWeek);
  EXPECT_EQ(week.blocking->used, 150);
  // Monday 3 February: a new week.
  EXPECT_FALSE(ledger->Check(kAlice, kSonnet, Utc(2025, 2, 3)).blocked);
}

TEST_P(UsageLedgerTest, TheBlockingLimitIsTheOneThatEndsLast) {
  auto ledger = OpenLedger();
  ASSERT_TRUE(ledger->SetLimit({.jid = kAlice, .window = Window::kDay, .max_tokens = 10}).ok());
  ASSERT_TRUE(ledger->SetLimit({.jid = kAlice, .window = Window::kMonth, .max_tokens = 10}).ok());
  ASSERT_TRUE(ledger->SetLimit({.jid = kAlice, .window = Window::kWeek, .max_tokens = 10}).ok());
  ASSERT_TRUE(ledger->Record(Call(kAlice, kSonnet, 10, 0, kTuesday)).ok());
  Decision decision = ledger->Check(kAlice, kSonnet, kTuesday);
  ASSERT_TRUE(decision.blocked);
  EXPECT_EQ(decision.blocking->limit.window, Window::kMonth);
  EXPECT_EQ(decision.blocking->window_end, Utc(2025, 2, 1));
}

TEST_P(UsageLedgerTest, ManagesLimits) {
  auto ledger = OpenLedger();
  EXPECT_EQ(ledger->SetLimit({.max_tokens = 10}).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ledger->SetLimit({.jid = kAlice, .max_tokens = -1}).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ledger->SetLimit({.jid = "a\nb", .max_tokens = 1}).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ledger->SetLimit({.jid = kAlice, .window = static_cast<Window>(9)}).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ledger->SetLimit({.jid = kAlice, .mode = static_cast<LimitMode>(7)}).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(ledger->Limits().empty());

  ASSERT_TRUE(ledger->SetLimit({.jid = kBob, .max_tokens = 1}).ok());
  ASSERT_TRUE(ledger->SetLimit({.jid = kAlice, .window = Window::kWeek, .max_tokens = 2}).ok());
  ASSERT_TRUE(ledger->SetLimit({.jid = kAlice, .max_tokens = 3}).ok());
  // Same (jid, model, window): replaced.
  ASSERT_TRUE(ledger->SetLimit({.jid = kAlice, .max_tokens = 4, .mode = LimitMode::kWarn}).ok());
  std::vector<Limit> limits = ledger->Limits();
  ASSERT_EQ(limits.size(), 3u);
  EXPECT_EQ(limits[0], (Limit{.jid = kAlice, .max_tokens = 4, .mode = LimitMode::kWarn}));
  EXPECT_EQ(limits[1], (Limit{.jid = kAlice, .window = Window::kWeek, .max_tokens = 2}));
  EXPECT_EQ(limits[2], (Limit{.jid = kBob, .max_tokens = 1}));

  EXPECT_EQ(ledger->RemoveLimit(kAlice, kSonnet, Window::kDay).code(), absl::StatusCode::kNotFound);
  ASSERT_TRUE(ledger->RemoveLimit(kAlice, "", Window::kDay).ok());
  EXPECT_EQ(ledger->RemoveLimit(kAlice, "", Window::kDay).code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(ledger->Limits().size(), 2u);
}

TEST_P(UsageLedgerTest, LimitStatesListEveryLimitThatCanApply) {
  auto ledger = OpenLedger(/*default_daily=*/100);
  ASSERT_TRUE(ledger->SetLimit({.jid = kAlice, .model = kSonnet, .max_tokens = 50}).ok());
  ASSERT_TRUE(ledger->SetLimit({.model = kMini, .window = Window::kWeek, .max_tokens = 70}).ok());
  ASSERT_TRUE(ledger->SetLimit({.jid = kBob, .max_tokens = 5}).ok());
  ASSERT_TRUE(ledger->Record(Call(kAlice, kSonnet, 30, 0, kTuesday)).ok());
  ASSERT_TRUE(ledger->Record(Call(kBob, kMini, 8, 0, kTuesday)).ok());
  std::vector<LimitState> states = ledger->LimitStates(kAlice, kTuesday);
  ASSERT_EQ(states.size(), 3u);
  EXPECT_TRUE(states[0].is_default);
  EXPECT_EQ(states[0].used, 30);
  EXPECT_EQ(states[1].limit.model, kSonnet);
  EXPECT_EQ(states[1].used, 30);
  EXPECT_EQ(states[2].limit.model, kMini);
  EXPECT_EQ(states[2].used, 8);  // every JID's calls to the model
  EXPECT_EQ(states[2].window_end, Utc(2025, 1, 20));
}

TEST_P(UsageLedgerTest, RecordsFromSeveralThreadsAreAllCounted) {
  auto ledger = OpenLedger();
  constexpr int kThreads = 4;
  constexpr int kCallsPerThread = 150;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kCallsPerThread; ++i) {
        const std::string jid = i % 2 ? kAlice : kBob;
        EXPECT_TRUE(ledger->Record(Call(jid, t % 2 ? kSonnet : kMini, 3, 2, kTuesday)).ok());
        ledger->Check(jid, kSonnet, kTuesday);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  std::vector<UsageRow> rows = AllRows(*ledger, {.window = Window::kLifetime, .at = kTuesday});
  int64_t calls = 0, input = 0, output = 0;
  for (const UsageRow& row : rows) {
    calls += row.calls;
    input += row.input_tokens;
    output += row.output_tokens;
  }
  EXPECT_EQ(calls, kThreads * kCallsPerThread);
  EXPECT_EQ(input, 3 * kThreads * kCallsPerThread);
  EXPECT_EQ(output, 2 * kThreads * kCallsPerThread);
  ASSERT_TRUE(ledger->SetLimit({.jid = kAlice, .max_tokens = 1}).ok());
  EXPECT_EQ(ledger->Check(kAlice, kSonnet, kTuesday).blocking->used,
            5 * kThreads * kCallsPerThread / 2);
}

TEST_P(SqliteUsageLedgerTest, TheDatabaseIsPrivateToItsOwner) {
  auto ledger = OpenLedger();
  ASSERT_TRUE(ledger->Record(Call(kAlice, kSonnet, 1, 1, kTuesday)).ok());
  struct stat info;
  ASSERT_EQ(::stat(Path().c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600);
  ASSERT_EQ(::stat((Path() + "-wal").c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600);
  ASSERT_EQ(::stat((dir_.path() + "/data/ledger").c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0700);
}

TEST_P(SqliteUsageLedgerTest, RefusesAFileThatIsNotALedger) {
  {
    std::ofstream junk(dir_.path() + "/junk.db");
    junk << std::string(8192, 'x');
  }
  absl::StatusOr<std::unique_ptr<UsageLedger>> ledger =
      UsageLedger::Open(dir_.path() + "/junk.db", Prices(), 0);
  EXPECT_FALSE(ledger.ok());
  EXPECT_EQ(UsageLedger::Open("", Prices(), 0).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace herald::ledger
