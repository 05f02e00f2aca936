#include "component/storage/instance_registry.h"

#include <string>

#include "absl/time/clock.h"
#include "component/ledger/postgres_usage_store.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/postgres_server.h"

namespace herald::storage {
namespace {

using ::testing::ElementsAre;
using ::testing::Field;

class InstanceRegistryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::shared_ptr<base::PostgresDatabase>> db = testing::ConnectNewDatabase();
    ASSERT_TRUE(db.ok()) << db.status();
    db_ = *std::move(db);
  }

  std::unique_ptr<InstanceRegistry> Join(const std::string& host, int64_t pid) {
    absl::StatusOr<std::unique_ptr<InstanceRegistry>> registry =
        InstanceRegistry::Join(db_, host, pid);
    EXPECT_TRUE(registry.ok()) << registry.status();
    return registry.ok() ? *std::move(registry) : nullptr;
  }

  std::shared_ptr<base::PostgresDatabase> db_;
};

TEST_F(InstanceRegistryTest, EveryInstanceSeesEveryLiveOneAndItself) {
  auto a = Join("host-a", 100);
  auto b = Join("host-b", 200);
  ASSERT_TRUE(a->Beat().ok());
  EXPECT_THAT(a->Known(), ElementsAre(Field(&InstanceInfo::this_instance, true),
                                      Field(&InstanceInfo::this_instance, false)));
  EXPECT_EQ(a->Known()[1].id, b->id());
  EXPECT_EQ(a->Known()[1].host, "host-b");
  EXPECT_EQ(a->Known()[1].pid, 200);
  EXPECT_TRUE(a->id().starts_with("host-a:100:"));
  EXPECT_LE(a->Known()[0].started_at, a->Known()[0].last_seen);

  // The same host and pid again (a restart that reused the pid) is another instance.
  auto again = Join("host-a", 100);
  EXPECT_NE(again->id(), a->id());
  EXPECT_EQ(again->Known().size(), 3u);
}

TEST_F(InstanceRegistryTest, AnInstanceThatLeftOrWentQuietIsNotListed) {
  auto a = Join("host-a", 100);
  auto b = Join("host-b", 200);
  auto c = Join("host-c", 300);
  b.reset();  // a clean stop leaves
  // c stops beating: its last beat was longer ago than kAliveFor.
  ASSERT_TRUE(db_->Exec("UPDATE herald_instances SET last_seen = now() - interval '11 seconds' "
                        "WHERE id = $1",
                        base::SqlParams().Text(c->id()))
                  .ok());
  ASSERT_TRUE(a->Beat().ok());
  EXPECT_THAT(a->Known(), ElementsAre(Field(&InstanceInfo::host, "host-a")));
  // c comes back with its next beat.
  ASSERT_TRUE(c->Beat().ok());
  ASSERT_TRUE(a->Beat().ok());
  EXPECT_EQ(a->Known().size(), 2u);
}

TEST_F(InstanceRegistryTest, ARowRemovedByHandIsWrittenAgainAtTheNextBeat) {
  auto a = Join("host-a", 100);
  ASSERT_TRUE(db_->Exec("DELETE FROM herald_instances").ok());
  ASSERT_TRUE(a->Beat().ok());
  EXPECT_THAT(a->Known(), ElementsAre(Field(&InstanceInfo::id, a->id())));
}

TEST_F(InstanceRegistryTest, TheReservationsOfAnInstanceThatIsGoneAreReleased) {
  auto alive = Join("host-a", 100);
  auto dying = Join("host-b", 200);
  // Each instance's ledger store records its id with its reservations; one store of older
  // times records none.
  auto reserve = [this](const std::string& instance) {
    absl::StatusOr<std::unique_ptr<ledger::PostgresUsageStore>> store =
        ledger::PostgresUsageStore::Open(db_, instance);
    EXPECT_TRUE(store.ok()) << store.status();
    if (!store.ok()) return;
    const absl::Time now = absl::Now();
    ledger::Limit limit{.jid = "a@x", .window = ledger::Window::kDay, .max_tokens = 1000000};
    absl::StatusOr<ledger::UsageStore::ReserveResult> held =
        (*store)->Reserve({.jid = "a@x",
                           .model = "m:1",
                           .tokens = 10,
                           .time = now,
                           .limits = {limit},
                           .hold = absl::Minutes(10)});
    EXPECT_TRUE(held.ok()) << held.status();
    EXPECT_NE(held.ok() ? held->id : 0, 0);
  };
  reserve(alive->id());
  reserve(dying->id());
  reserve("");
  auto count = [this](const std::string& instance) {
    absl::StatusOr<base::PostgresResult> rows =
        db_->Exec("SELECT count(*) FROM ledger_reservations WHERE instance = $1",
                  base::SqlParams().Text(instance));
    return rows.ok() ? rows->Int64(0, 0) : -1;
  };
  alive->ReleaseReservationsOfTheGone();
  ASSERT_TRUE(alive->Beat().ok());
  EXPECT_EQ(count(dying->id()), 1);  // seen just now: kept

  // Gone for longer than kGoneFor (its row made older, as a dead instance's would get).
  ASSERT_TRUE(db_->Exec("UPDATE herald_instances SET last_seen = now() - interval '21 seconds' "
                        "WHERE id = $1",
                        base::SqlParams().Text(dying->id()))
                  .ok());
  ASSERT_TRUE(alive->Beat().ok());
  EXPECT_EQ(count(dying->id()), 0);
  EXPECT_EQ(count(alive->id()), 1);
  EXPECT_EQ(count(""), 1);  // left to lapse
}

}  // namespace
}  // namespace herald::storage
