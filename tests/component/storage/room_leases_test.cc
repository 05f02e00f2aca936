// Tests of RoomLeases against a private PostgreSQL: which instance is in each room, and the room
// stanzas handed over to it.
#include "component/storage/room_leases.h"

#include <string>
#include <thread>

#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/postgres_server.h"

namespace herald::storage {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Pair;
using ::testing::UnorderedElementsAre;

constexpr char kLobby[] = "lobby@conference.example.org";
constexpr char kDev[] = "dev@conference.example.org";

class RoomLeasesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::shared_ptr<base::PostgresDatabase>> db = testing::ConnectNewDatabase();
    ASSERT_TRUE(db.ok()) << db.status();
    db_ = *std::move(db);
  }

  std::unique_ptr<RoomLeases> Open(const std::string& instance,
                                   absl::Duration lease = absl::Seconds(10)) {
    absl::StatusOr<std::unique_ptr<RoomLeases>> leases = RoomLeases::Open(db_, instance, lease);
    EXPECT_TRUE(leases.ok()) << leases.status();
    return leases.ok() ? *std::move(leases) : nullptr;
  }

  static RoomHolders Claim(RoomLeases& leases, const std::vector<std::string>& wanted) {
    absl::StatusOr<RoomHolders> holders = leases.Claim(wanted);
    EXPECT_TRUE(holders.ok()) << holders.status();
    return holders.ok() ? *holders : RoomHolders{};
  }

  std::shared_ptr<base::PostgresDatabase> db_;
};

TEST_F(RoomLeasesTest, EachRoomHasOneHolderAndEveryoneKnowsWhich) {
  std::unique_ptr<RoomLeases> a = Open("a");
  std::unique_ptr<RoomLeases> b = Open("b");
  EXPECT_THAT(Claim(*a, {kLobby}), UnorderedElementsAre(Pair(kLobby, "a")));
  // b wants both: it gets the free one and learns who holds the other.
  EXPECT_THAT(Claim(*b, {kLobby, kDev}), UnorderedElementsAre(Pair(kLobby, "a"), Pair(kDev, "b")));
  // Renewing changes no holder, and a wants what it has.
  EXPECT_THAT(Claim(*a, {kLobby, kDev}), UnorderedElementsAre(Pair(kLobby, "a"), Pair(kDev, "b")));
  EXPECT_THAT(Claim(*b, {kLobby, kDev}), UnorderedElementsAre(Pair(kLobby, "a"), Pair(kDev, "b")));
}

TEST_F(RoomLeasesTest, ARoomNoLongerWantedOrReleasedGoesToTheNextClaim) {
  std::unique_ptr<RoomLeases> a = Open("a");
  std::unique_ptr<RoomLeases> b = Open("b");
  Claim(*a, {kLobby, kDev});
  EXPECT_THAT(Claim(*a, {kDev}), UnorderedElementsAre(Pair(kDev, "a")));  // lets go of the lobby
  EXPECT_THAT(Claim(*b, {kLobby, kDev}), UnorderedElementsAre(Pair(kLobby, "b"), Pair(kDev, "a")));
  ASSERT_TRUE(a->Release().ok());
  EXPECT_THAT(Claim(*b, {kLobby, kDev}), UnorderedElementsAre(Pair(kLobby, "b"), Pair(kDev, "b")));
  EXPECT_THAT(Claim(*a, {}), UnorderedElementsAre(Pair(kLobby, "b"), Pair(kDev, "b")));
}

TEST_F(RoomLeasesTest, AHolderThatStopsRenewingLosesItsRoomsWhenTheLeaseRunsOut) {
  std::unique_ptr<RoomLeases> a = Open("a", absl::Milliseconds(300));
  std::unique_ptr<RoomLeases> b = Open("b", absl::Milliseconds(300));
  Claim(*a, {kLobby});
  EXPECT_THAT(Claim(*b, {kLobby}), UnorderedElementsAre(Pair(kLobby, "a")));
  std::this_thread::sleep_for(std::chrono::milliseconds(400));  // a died
  EXPECT_THAT(Claim(*b, {kLobby}), UnorderedElementsAre(Pair(kLobby, "b")));
  EXPECT_THAT(Claim(*a, {kLobby}), UnorderedElementsAre(Pair(kLobby, "b")));  // back: b keeps it
}

TEST_F(RoomLeasesTest, StanzasHandedOverAreTakenOnceInOrderByTheHolder) {
  std::unique_ptr<RoomLeases> a = Open("a");
  std::unique_ptr<RoomLeases> b = Open("b");
  Claim(*a, {kLobby});
  Claim(*b, {kLobby, kDev});
  ASSERT_TRUE(b->HandOver(kLobby, "a", "<message id='1'/>").ok());
  ASSERT_TRUE(b->HandOver(kLobby, "a", "<message id='2'/>").ok());
  ASSERT_TRUE(a->HandOver(kDev, "b", "<presence id='3'/>").ok());

  absl::StatusOr<std::vector<std::string>> taken = b->TakeHandedOver();
  ASSERT_TRUE(taken.ok()) << taken.status();
  EXPECT_THAT(*taken, ElementsAre("<presence id='3'/>"));  // only its own room's
  taken = a->TakeHandedOver();
  ASSERT_TRUE(taken.ok()) << taken.status();
  EXPECT_THAT(*taken, ElementsAre("<message id='1'/>", "<message id='2'/>"));
  taken = a->TakeHandedOver();
  ASSERT_TRUE(taken.ok()) << taken.status();
  EXPECT_THAT(*taken, IsEmpty());
}

TEST_F(RoomLeasesTest, AStanzaHandedOverToAnInstanceThatDiedGoesToTheNextHolder) {
  std::unique_ptr<RoomLeases> a = Open("a", absl::Milliseconds(300));
  std::unique_ptr<RoomLeases> b = Open("b", absl::Milliseconds(300));
  Claim(*a, {kLobby});
  ASSERT_TRUE(b->HandOver(kLobby, "a", "<message id='1'/>").ok());  // a dies before taking it
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  Claim(*b, {kLobby});
  absl::StatusOr<std::vector<std::string>> taken = b->TakeHandedOver();
  ASSERT_TRUE(taken.ok()) << taken.status();
  EXPECT_THAT(*taken, ElementsAre("<message id='1'/>"));
}

TEST_F(RoomLeasesTest, AHandOverTellsTheHolderAtOnce) {
  std::unique_ptr<RoomLeases> a = Open("a");
  std::unique_ptr<RoomLeases> b = Open("b");
  Claim(*a, {kLobby});
  absl::StatusOr<std::unique_ptr<base::PostgresListener>> listener = a->Listen();
  ASSERT_TRUE(listener.ok()) << listener.status();
  ASSERT_TRUE(b->HandOver(kLobby, "a", "<message/>").ok());
  std::vector<std::string> heard;
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (heard.empty() && absl::Now() < deadline) {
    absl::StatusOr<std::vector<std::string>> payloads = (*listener)->Drain();
    ASSERT_TRUE(payloads.ok()) << payloads.status();
    heard = *payloads;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_THAT(heard, ElementsAre("a"));
}

}  // namespace
}  // namespace herald::storage
