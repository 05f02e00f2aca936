#include "component/storage/instance_registry.h"

#include <string>

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

}  // namespace
}  // namespace herald::storage
