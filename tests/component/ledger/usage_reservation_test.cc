// Reservations: tokens set aside for a call near a block limit while it runs (Admit, Confirm,
// Settle, Cancel), on both stores, and across two instances sharing one PostgreSQL database.
#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/time/clock.h"
#include "component/ledger/usage_ledger.h"
#include "gtest/gtest.h"
#include "tests/component/ledger/ledger_on_each_store.h"

namespace herald::ledger {
namespace {

int64_t LifetimeCalls(const UsageLedger& ledger) {
  int64_t calls = 0;
  for (const UsageRow& row : AllRows(ledger, {.window = Window::kLifetime, .at = kTuesday})) {
    calls += row.calls;
  }
  return calls;
}

using UsageReservationTest = LedgerOnEachStore;
INSTANTIATE_TEST_SUITE_P(Stores, UsageReservationTest,
                         ::testing::Values(Backend::kSqlite, Backend::kPostgres), BackendName);

// Two ledgers on one database: two instances.
using SharedReservationTest = LedgerOnEachStore;
INSTANTIATE_TEST_SUITE_P(Postgres, SharedReservationTest, ::testing::Values(Backend::kPostgres),
                         BackendName);

TEST_P(UsageReservationTest, AReservationCountsAgainstTheLimitUntilSettled) {
  auto ledger = OpenLedger();
  ASSERT_TRUE(ledger->SetLimit({.jid = kAlice, .max_tokens = 1000}).ok());
  Admission first = ledger->Admit(kAlice, kSonnet, 600, kTuesday);
  ASSERT_FALSE(first.decision.blocked);
  EXPECT_EQ(first.reservation.tokens, 600);
  EXPECT_EQ(first.needs_confirmation, GetParam() == Backend::kPostgres);
  // 600 set aside leaves room: the next call goes ahead and sets its own aside.
  Admission second = ledger->Admit(kAlice, kSonnet, 500, kTuesday);
  ASSERT_FALSE(second.decision.blocked);
  // 1,100 set aside: no third call, though nothing is used yet.
  Decision third = ledger->Check(kAlice, kSonnet, kTuesday);
  ASSERT_TRUE(third.blocked);
  EXPECT_EQ(third.blocking->used, 0);
  EXPECT_EQ(third.blocking->reserved, 1100);
  EXPECT_TRUE(ledger->Admit(kAlice, kSonnet, 1, kTuesday).decision.blocked);
  // Bob is not Alice.
  EXPECT_FALSE(ledger->Admit(kBob, kSonnet, 1, kTuesday).decision.blocked);

  // The first call used 100 of its 600: what it used counts, and its reservation does not.
  ASSERT_TRUE(ledger->Settle(first.reservation, Call(kAlice, kSonnet, 70, 30, kTuesday)).ok());
  Decision after = ledger->Check(kAlice, kSonnet, kTuesday);
  EXPECT_FALSE(after.blocked);
  std::vector<LimitState> states = ledger->LimitStates(kAlice, kTuesday);
  ASSERT_EQ(states.size(), 1u);
  EXPECT_EQ(states[0].used, 100);
  EXPECT_EQ(states[0].reserved, 500);
  ledger->Cancel(second.reservation);
  states = ledger->LimitStates(kAlice, kTuesday);
  EXPECT_EQ(states[0].used, 100);
  EXPECT_EQ(states[0].reserved, 0);
  EXPECT_EQ(LifetimeCalls(*ledger), 1);
}

TEST_P(UsageReservationTest, NothingIsSetAsideWithoutABlockLimit) {
  auto ledger = OpenLedger();
  Admission free_call = ledger->Admit(kAlice, kSonnet, 5000, kTuesday);
  EXPECT_FALSE(free_call.decision.blocked);
  EXPECT_EQ(free_call.reservation.tokens, 0);
  EXPECT_FALSE(free_call.needs_confirmation);
  // A warn-mode limit is reported, never held against.
  ASSERT_TRUE(ledger->SetLimit({.jid = kAlice, .max_tokens = 10, .mode = LimitMode::kWarn}).ok());
  Admission warned = ledger->Admit(kAlice, kSonnet, 5000, kTuesday);
  EXPECT_EQ(warned.reservation.tokens, 0);
  EXPECT_FALSE(ledger->Admit(kAlice, kSonnet, 5000, kTuesday).decision.blocked);
  // Settling a call that set nothing aside records it all the same.
  ASSERT_TRUE(ledger->Settle(warned.reservation, Call(kAlice, kSonnet, 6, 6, kTuesday)).ok());
  EXPECT_EQ(ledger->Check(kAlice, kSonnet, kTuesday).warnings.size(), 1u);
  EXPECT_EQ(LifetimeCalls(*ledger), 1);
}

TEST_P(UsageReservationTest, TheDefaultDailyLimitAndModelLimitsHoldReservationsToo) {
  auto ledger = OpenLedger(/*default_daily=*/100);
  ASSERT_TRUE(ledger->SetLimit({.model = kMini, .max_tokens = 50}).ok());
  Admission alice = ledger->Admit(kAlice, kMini, 60, kTuesday);
  ASSERT_FALSE(alice.decision.blocked);
  EXPECT_EQ(alice.reservation.limits.size(), 2u);
  EXPECT_TRUE(alice.reservation.default_first);
  // Bob's own default is untouched, but the model's limit is held by Alice's call.
  Decision bob = ledger->Admit(kBob, kMini, 1, kTuesday).decision;
  ASSERT_TRUE(bob.blocked);
  EXPECT_EQ(bob.blocking->limit.model, kMini);
  EXPECT_EQ(bob.blocking->reserved, 60);
  EXPECT_FALSE(ledger->Admit(kBob, kSonnet, 1, kTuesday).decision.blocked);
}

TEST_P(UsageReservationTest, AReservationFromAnEarlierWindowIsNotTakenFromTheNext) {
  auto ledger = OpenLedger();
  ASSERT_TRUE(ledger->SetLimit({.jid = kAlice, .max_tokens = 1000}).ok());
  const absl::Time late_monday = Utc(2025, 1, 13, 23, 59, 30);
  Admission monday = ledger->Admit(kAlice, kSonnet, 400, late_monday);
  Admission tuesday = ledger->Admit(kAlice, kSonnet, 300, kTuesday);
  ASSERT_FALSE(tuesday.decision.blocked);
  ledger->Cancel(monday.reservation);
  std::vector<LimitState> states = ledger->LimitStates(kAlice, kTuesday);
  ASSERT_EQ(states.size(), 1u);
  EXPECT_EQ(states[0].reserved, 300);
}

TEST_P(SharedReservationTest, TwoInstancesCannotBothSpendTheLastTokens) {
  auto first = OpenLedger();
  auto second = OpenLedger();
  ASSERT_TRUE(first->SetLimit({.jid = kAlice, .max_tokens = 1000}).ok());
  ASSERT_TRUE(first->Record(Call(kAlice, kSonnet, 900, 0, kTuesday)).ok());
  ASSERT_TRUE(second->Refresh(kTuesday).ok());

  Admission here = first->Admit(kAlice, kSonnet, 200, kTuesday);
  ASSERT_TRUE(here.needs_confirmation);
  EXPECT_FALSE(first->Confirm(here.reservation).blocked);
  EXPECT_NE(here.reservation.stored_id, 0);

  // The second instance's memory sees 900 of 1,000 and lets the call through; the store has
  // the first instance's 200 set aside and refuses it.
  Admission there = second->Admit(kAlice, kSonnet, 200, kTuesday);
  ASSERT_FALSE(there.decision.blocked);
  Decision refused = second->Confirm(there.reservation);
  ASSERT_TRUE(refused.blocked);
  EXPECT_EQ(refused.blocking->used, 900);
  EXPECT_EQ(refused.blocking->reserved, 200);
  EXPECT_EQ(refused.blocking->limit.jid, kAlice);
  EXPECT_EQ(refused.blocking->window_end, Utc(2025, 1, 15));
  // Refused, it holds nothing here either.
  EXPECT_EQ(second->LimitStates(kAlice, kTuesday)[0].reserved, 0);
  second->Cancel(there.reservation);  // harmless after a refusal

  // The first call used 50: 950 of 1,000, room again.
  ASSERT_TRUE(first->Settle(here.reservation, Call(kAlice, kSonnet, 40, 10, kTuesday)).ok());
  Admission again = second->Admit(kAlice, kSonnet, 200, kTuesday);
  EXPECT_FALSE(second->Confirm(again.reservation).blocked);
  ASSERT_TRUE(second->Settle(again.reservation, Call(kAlice, kSonnet, 1, 1, kTuesday)).ok());
  EXPECT_EQ(LifetimeCalls(*first), 3);
}

TEST_P(SharedReservationTest, ConcurrentCallsOnTwoInstancesAreAdmittedOnlyAsFarAsTheLimitGoes) {
  auto first = OpenLedger();
  auto second = OpenLedger();
  ASSERT_TRUE(first->SetLimit({.jid = kAlice, .max_tokens = 1000}).ok());
  ASSERT_TRUE(second->Refresh(kTuesday).ok());
  // Eight threads, four per instance, each asking 25 times for 100 tokens and never settling:
  // the store admits exactly ten, whatever the interleaving.
  std::atomic<int> admitted = 0;
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    UsageLedger* ledger = t % 2 ? first.get() : second.get();
    threads.emplace_back([ledger, &admitted] {
      for (int i = 0; i < 25; ++i) {
        Admission admission = ledger->Admit(kAlice, kSonnet, 100, kTuesday);
        if (admission.decision.blocked) continue;
        if (!ledger->Confirm(admission.reservation).blocked) ++admitted;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(admitted.load(), 10);
}

TEST_P(SharedReservationTest, ASettleTriedAgainAddsTheCallOnce) {
  absl::StatusOr<std::unique_ptr<PostgresUsageStore>> store = OpenPostgresStore();
  ASSERT_TRUE(store.ok()) << store.status();
  const Limit limit{.jid = kAlice, .max_tokens = 1000};
  absl::StatusOr<UsageStore::ReserveResult> reserved =
      (*store)->Reserve({.jid = kAlice,
                         .model = kSonnet,
                         .tokens = 10,
                         .time = kTuesday,
                         .limits = {limit},
                         .hold = absl::Minutes(1)});
  ASSERT_TRUE(reserved.ok()) << reserved.status();
  ASSERT_NE(reserved->id, 0);
  const UsageRecord call = Call(kAlice, kSonnet, 3, 4, kTuesday);
  // The second is what a ledger does when the first one's commit was lost to an outage.
  ASSERT_TRUE((*store)->Settle(reserved->id, call, {}).ok());
  ASSERT_TRUE((*store)->Settle(reserved->id, call, {}).ok());
  absl::StatusOr<UsageStore::ReserveResult> next = (*store)->Reserve({.jid = kAlice,
                                                                      .model = kSonnet,
                                                                      .tokens = 10,
                                                                      .time = kTuesday,
                                                                      .limits = {limit},
                                                                      .hold = absl::Minutes(1)});
  ASSERT_TRUE(next.ok()) << next.status();
  ASSERT_EQ(next->limits.size(), 1u);
  EXPECT_EQ(next->limits[0].used, 7);
  EXPECT_EQ(next->limits[0].reserved, 0);  // the settled one no longer counts
}

TEST_P(SharedReservationTest, AReservationNeverSettledLapsesAfterItsHold) {
  absl::StatusOr<std::unique_ptr<PostgresUsageStore>> store = OpenPostgresStore();
  ASSERT_TRUE(store.ok()) << store.status();
  const Limit limit{.jid = kAlice, .max_tokens = 100};
  const UsageStore::ReserveRequest request{.jid = kAlice,
                                           .model = kSonnet,
                                           .tokens = 100,
                                           .time = kTuesday,
                                           .limits = {limit},
                                           .hold = absl::Seconds(1)};
  // An instance that sets 100 aside and dies.
  const absl::Time start = absl::Now();
  absl::StatusOr<UsageStore::ReserveResult> dead = (*store)->Reserve(request);
  ASSERT_TRUE(dead.ok() && dead->id != 0);
  absl::StatusOr<UsageStore::ReserveResult> next = (*store)->Reserve(request);
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(next->id, 0);
  EXPECT_EQ(next->limits[0].reserved, 100);
  // Another is refused until the hold has passed on the database's clock, then admitted.
  const absl::Time deadline = start + absl::Seconds(20);
  while (next.ok() && next->id == 0 && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(100));
    next = (*store)->Reserve(request);
  }
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_NE(next->id, 0);
  EXPECT_GE(absl::Now() - start, absl::Seconds(1));
}

TEST_P(SharedReservationTest, WhileTheDatabaseIsAwayCallsGoAheadAndAreRecordedWhenItIsBack) {
  auto ledger = OpenLedger();
  ASSERT_TRUE(ledger->SetLimit({.jid = kAlice, .max_tokens = 1000}).ok());
  ASSERT_TRUE(server_->Stop().ok());
  Admission admission = ledger->Admit(kAlice, kSonnet, 100, kTuesday);
  ASSERT_TRUE(admission.needs_confirmation);
  // What this instance knows lets it through: refusing every call in an outage would stop
  // Herald for a database restart.
  EXPECT_FALSE(ledger->Confirm(admission.reservation).blocked);
  EXPECT_EQ(admission.reservation.stored_id, 0);
  ASSERT_TRUE(ledger->Settle(admission.reservation, Call(kAlice, kSonnet, 5, 5, kTuesday)).ok());
  EXPECT_EQ(ledger->kept_records(), 1u);
  EXPECT_EQ(ledger->LimitStates(kAlice, kTuesday)[0].reserved, 0);
  ASSERT_TRUE(server_->Start().ok());
  ASSERT_TRUE(ledger->Refresh(kTuesday).ok());
  EXPECT_EQ(ledger->kept_records(), 0u);
  EXPECT_EQ(LifetimeCalls(*ledger), 1);
}

}  // namespace
}  // namespace herald::ledger
