// Tests of SharedRooms against a private PostgreSQL: two instances, each with its own loop, its
// RoomManager (leased) and the stanzas its session would handle, agree which of them is in a
// room, hand each other the room's stanzas, and let go of a room at a stop or an outage.
#include "component/storage/shared_rooms.h"

#include <functional>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "component/base/event_loop.h"
#include "gtest/gtest.h"
#include "tests/support/postgres_server.h"

namespace herald::storage {
namespace {

constexpr char kLobby[] = "lobby@conference.example.org";

agent::RoomOptions Leased() {
  agent::RoomOptions options;
  options.leased = true;
  return options;
}

// One instance: its own loop and pool, room leases on the shared database, a RoomManager that
// wants the lobby, and what it sent (joins) and was handed over (handled), as its session
// would see them.
struct Instance {
  Instance(std::shared_ptr<base::PostgresDatabase> db, const std::string& id)
      : loop(/*worker_threads=*/2),
        rooms(
            loop.io(), {{.jid = kLobby, .nick = "herald", .activation = "all"}}, nullptr,
            [this](const xmpp::OutboundAction& action) {
              if (const auto* join = std::get_if<xmpp::JoinRoom>(&action)) {
                joins.push_back(join->leave ? "leave" : "join");
              }
            },
            [this](const xmpp::GroupMessage& message) { turns.push_back(message.body); },
            Leased()) {
    absl::StatusOr<std::unique_ptr<RoomLeases>> opened =
        RoomLeases::Open(db, id, absl::Milliseconds(1000));
    EXPECT_TRUE(opened.ok()) << opened.status();
    leases = *std::move(opened);
    shared = std::make_unique<SharedRooms>(loop.io(), loop.workers(), *leases, rooms,
                                           SharedRooms::Options{.beat = absl::Milliseconds(100)});
    shared->set_handle([this](std::string_view xml) {
      handled.emplace_back(xml);
      return absl::OkStatus();
    });
    rooms.Handle(xmpp::SessionOnline{.own_jid = *xmpp::Jid::Parse("agent.example.org")});
  }
  ~Instance() { Stop(); }

  // A clean stop: the loop and the pool end, then `shared` lets go of its rooms.
  void Stop() {
    if (stopped) return;
    stopped = true;
    loop.io().stop();
    loop.JoinWorkers();
    shared.reset();
  }

  // A stanza of the room, as the session would offer it to Divert.
  bool Offer(const std::string& id) {
    xmpp::XmlElement message("message", "jabber:component:accept");
    message.SetAttr("from", std::string(kLobby) + "/alice").SetAttr("id", id);
    message.AddChild("body").AddText("hi");
    return shared->Divert(message, "jabber:component:accept");
  }

  base::EventLoop loop;
  agent::RoomManager rooms;
  std::unique_ptr<RoomLeases> leases;
  std::unique_ptr<SharedRooms> shared;
  std::vector<std::string> joins;    // "join" / "leave", in order
  std::vector<std::string> handled;  // XML handed over to this instance
  std::vector<std::string> turns;
  bool stopped = false;
};

class SharedRoomsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::shared_ptr<base::PostgresDatabase>> db =
        testing::ConnectNewDatabase(/*pool_size=*/4);
    ASSERT_TRUE(db.ok()) << db.status();
    db_ = *std::move(db);
    server_ = *testing::SharedPostgresServer();
    a_ = std::make_unique<Instance>(db_, "a");
  }

  // Runs the live instances' loops until `done` holds; false after `timeout`.
  bool RunUntil(const std::function<bool()>& done, absl::Duration timeout = absl::Seconds(10)) {
    const absl::Time deadline = absl::Now() + timeout;
    while (!done()) {
      if (absl::Now() > deadline) return false;
      for (Instance* i : {a_.get(), b_.get()}) {
        if (i != nullptr && !i->stopped) {
          i->loop.io().restart();
          i->loop.io().run_for(std::chrono::milliseconds(5));
        }
      }
    }
    return true;
  }

  testing::PostgresServer* server_ = nullptr;
  std::shared_ptr<base::PostgresDatabase> db_;
  std::unique_ptr<Instance> a_;
  std::unique_ptr<Instance> b_;
};

TEST_F(SharedRoomsTest, OneInstanceIsInTheRoomAndTheOtherHandsItTheRoomsStanzas) {
  ASSERT_TRUE(RunUntil([&] { return a_->joins.size() == 1; }));
  b_ = std::make_unique<Instance>(db_, "b");
  // b learns at its first beat that a is in the room, and does not join.
  ASSERT_TRUE(RunUntil([&] { return b_->Offer("m1"); }));
  EXPECT_TRUE(b_->joins.empty());
  EXPECT_FALSE(a_->Offer("m0")) << "a is in the room: it handles the room's stanzas itself";
  ASSERT_TRUE(b_->Offer("m2"));
  ASSERT_TRUE(RunUntil([&] { return a_->handled.size() == 2; }));
  EXPECT_NE(a_->handled[0].find("id='m1'"), std::string::npos) << a_->handled[0];
  EXPECT_NE(a_->handled[1].find("id='m2'"), std::string::npos) << a_->handled[1];
  EXPECT_NE(a_->handled[0].find("lobby@conference.example.org/alice"), std::string::npos);
  EXPECT_TRUE(b_->handled.empty());

  // A stanza from anyone else is handled where it arrived.
  xmpp::XmlElement chat("message", "jabber:component:accept");
  chat.SetAttr("from", "alice@example.org/phone");
  EXPECT_FALSE(b_->shared->Divert(chat, "jabber:component:accept"));
  // A room's JID in another case is the same room.
  xmpp::XmlElement shouted("message", "jabber:component:accept");
  shouted.SetAttr("from", "LOBBY@conference.example.org/alice");
  EXPECT_TRUE(b_->shared->Divert(shouted, "jabber:component:accept"));
}

TEST_F(SharedRoomsTest, AtACleanStopTheOtherInstanceTakesTheRoomAtOnce) {
  ASSERT_TRUE(RunUntil([&] { return a_->joins.size() == 1; }));
  b_ = std::make_unique<Instance>(db_, "b");
  ASSERT_TRUE(RunUntil([&] { return b_->Offer("m1"); }));
  a_->Stop();
  EXPECT_EQ(a_->joins, std::vector<std::string>{"join"}) << "the room is not left";
  // Well before a's lease (1 s) would have run out.
  const absl::Time stopped = absl::Now();
  ASSERT_TRUE(RunUntil([&] { return b_->joins.size() == 1; }));
  EXPECT_LT(absl::Now() - stopped, absl::Milliseconds(700));
  EXPECT_EQ(b_->joins, std::vector<std::string>{"join"});
  EXPECT_FALSE(b_->Offer("m2"));
}

TEST_F(SharedRoomsTest, AStanzaHandedToAnInstanceThatDiedReachesTheNextOneInTheRoom) {
  ASSERT_TRUE(RunUntil([&] { return a_->joins.size() == 1; }));
  b_ = std::make_unique<Instance>(db_, "b");
  ASSERT_TRUE(RunUntil([&] { return b_->Offer("m1"); }));
  // a dies as with SIGKILL: its loop never runs again and its lease is not let go of.
  a_->stopped = true;
  a_->loop.io().stop();
  ASSERT_TRUE(b_->Offer("m2"));
  ASSERT_TRUE(RunUntil([&] { return b_->joins.size() == 1; }));  // the lease ran out
  ASSERT_TRUE(RunUntil([&] { return b_->handled.size() == 2; }));
  EXPECT_NE(b_->handled[0].find("id='m1'"), std::string::npos) << b_->handled[0];
  EXPECT_NE(b_->handled[1].find("id='m2'"), std::string::npos) << b_->handled[1];
  a_->loop.JoinWorkers();
}

TEST_F(SharedRoomsTest, AnInstanceThatCannotRenewItsLeaseStopsAnsweringInTheRoom) {
  ASSERT_TRUE(RunUntil([&] { return a_->joins.size() == 1; }));
  a_->rooms.Handle(xmpp::RoomPresence{
      .room = *xmpp::Jid::Parse(kLobby), .nick = "herald", .self = true, .status_codes = {110}});
  const xmpp::Jid lobby = *xmpp::Jid::Parse(kLobby);
  ASSERT_TRUE(a_->rooms.IsJoined(lobby));
  ASSERT_TRUE(server_->Stop().ok());
  // Most of the lease (1 s) without a renewal: it lets go, without a word to the room.
  ASSERT_TRUE(RunUntil([&] { return !a_->rooms.IsJoined(lobby); }, absl::Seconds(5)));
  EXPECT_EQ(a_->joins, std::vector<std::string>{"join"});
  a_->rooms.Handle(xmpp::GroupMessage{.room = lobby, .nick = "alice", .body = "anyone?"});
  EXPECT_TRUE(a_->turns.empty());
  ASSERT_TRUE(server_->Start().ok());
  // Back: it takes the room again and joins it.
  ASSERT_TRUE(RunUntil([&] { return a_->joins.size() == 2; }, absl::Seconds(20)));
  EXPECT_EQ(a_->joins.back(), "join");
}

}  // namespace
}  // namespace herald::storage
