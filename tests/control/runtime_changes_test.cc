// PutInForce (control/runtime_changes.h): the one path that puts a configuration in force, over
// a real runtime (tests/control/control_test_env.h) whose XMPP actions the test reads.
#include "control/runtime_changes.h"

#include <string>
#include <variant>
#include <vector>

#include "absl/strings/match.h"
#include "component/xmpp/events.h"
#include "component/xmpp/jid.h"
#include "gtest/gtest.h"
#include "tests/control/control_test_env.h"

namespace herald::control {
namespace {

using testing::ControlTestEnv;

const xmpp::Jid kOwnJid = xmpp::Jid::Parse("agent.localhost").value();

class RuntimeChangesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::Status started = env_.Start();
    ASSERT_TRUE(started.ok()) << started;
    // Online, so that joining and leaving a room shows as presence.
    env_.OnLoop([&] { env_.services().rooms.Handle(xmpp::SessionOnline{.own_jid = kOwnJid}); });
  }

  LiveRuntime Live() {
    ControlServices& services = env_.services();
    return LiveRuntime{.config = services.config,
                       .agent = services.agent,
                       .rooms = services.rooms,
                       .skills = services.skills,
                       .ledger = &services.ledger,
                       .turn = services.turn};
  }

  // The configuration in force, copied on the loop.
  config::Config Running() {
    config::Config running;
    env_.OnLoop([&] { running = env_.config(); });
    return running;
  }

  absl::StatusOr<ConfigChange> Put(DesiredRuntime desired, std::string* refused_table = nullptr) {
    absl::StatusOr<ConfigChange> change = absl::UnknownError("not run");
    env_.OnLoop([&] { change = PutInForce(std::move(desired), Live(), refused_table); });
    return change;
  }

  bool Allows(const std::string& jid) {
    bool allowed = false;
    env_.OnLoop([&] { allowed = env_.agent().policy().Allows(xmpp::Jid::Parse(jid).value()); });
    return allowed;
  }

  std::vector<xmpp::Jid> Rooms() {
    std::vector<xmpp::Jid> rooms;
    env_.OnLoop([&] { rooms = env_.services().rooms.Rooms(); });
    return rooms;
  }

  // The room presence sent since the `from`th action: "join room/nick" or "leave room/nick".
  std::vector<std::string> RoomPresence(size_t from) {
    std::vector<std::string> presence;
    const std::vector<xmpp::OutboundAction> actions = env_.actions();
    for (size_t i = from; i < actions.size(); ++i) {
      if (const auto* join = std::get_if<xmpp::JoinRoom>(&actions[i])) {
        presence.push_back(std::string(join->leave ? "leave " : "join ") + join->room.BareString() +
                           "/" + join->nick);
      }
    }
    return presence;
  }

  static agent::RoomSettings Room(const std::string& jid, const std::string& nick = "herald") {
    agent::RoomSettings room;
    room.jid = jid;
    room.nick = nick;
    return room;
  }

  ControlTestEnv env_;
};

TEST_F(RuntimeChangesTest, RoomsAreJoinedLeftAndRejoinedToMatchTheDesiredConfiguration) {
  DesiredRuntime desired{.config = Running()};
  desired.config.rooms = {Room("lobby@conference.localhost"), Room("tech@conference.localhost")};
  size_t before = env_.actions().size();
  absl::StatusOr<ConfigChange> change = Put(desired);
  ASSERT_TRUE(change.ok()) << change.status();
  EXPECT_EQ(change->applied, std::vector<std::string>{"rooms"});
  EXPECT_TRUE(change->room_failures.empty());
  EXPECT_EQ(RoomPresence(before),
            (std::vector<std::string>{"join lobby@conference.localhost/herald",
                                      "join tech@conference.localhost/herald"}));
  EXPECT_EQ(Running().rooms, desired.config.rooms);

  // The same rooms again: nothing to do.
  before = env_.actions().size();
  change = Put(desired);
  ASSERT_TRUE(change.ok()) << change.status();
  EXPECT_TRUE(change->applied.empty());
  EXPECT_TRUE(RoomPresence(before).empty());

  // One room with another nick, the other gone.
  desired.config.rooms = {Room("lobby@conference.localhost", "bot")};
  before = env_.actions().size();
  change = Put(desired);
  ASSERT_TRUE(change.ok()) << change.status();
  EXPECT_EQ(RoomPresence(before),
            (std::vector<std::string>{"leave lobby@conference.localhost/herald",
                                      "leave tech@conference.localhost/herald",
                                      "join lobby@conference.localhost/bot"}));
  EXPECT_EQ(Rooms(),
            std::vector<xmpp::Jid>{xmpp::Jid::Parse("lobby@conference.localhost").value()});
}

TEST_F(RuntimeChangesTest, TheAllowlistLedgerAndTurnOptionsTakeTheNewValues) {
  DesiredRuntime desired{.config = Running()};
  desired.config.agent.allowed_jids.push_back("carol@localhost");
  desired.config.quota.daily_tokens = 777;
  desired.config.llm.max_tokens = 321;
  absl::StatusOr<ConfigChange> change = Put(desired);
  ASSERT_TRUE(change.ok()) << change.status();
  EXPECT_TRUE(Allows("carol@localhost"));
  EXPECT_EQ(env_.ledger().default_daily_tokens(), 777);
  int max_tokens = 0;
  env_.OnLoop([&] { max_tokens = env_.services().turn->max_tokens; });
  EXPECT_EQ(max_tokens, 321);
  EXPECT_EQ(Running().agent.allowed_jids, desired.config.agent.allowed_jids);
}

TEST_F(RuntimeChangesTest, WhatOnlyARestartAppliesKeepsItsRunningValue) {
  const int port = Running().server.port;
  DesiredRuntime desired{.config = Running()};
  desired.config.server.port = port + 1;
  absl::StatusOr<ConfigChange> change = Put(desired);
  ASSERT_TRUE(change.ok()) << change.status();
  EXPECT_TRUE(change->applied.empty());
  EXPECT_EQ(change->requires_restart, std::vector<std::string>{"server.port"});
  EXPECT_EQ(Running().server.port, port);
}

TEST_F(RuntimeChangesTest, ARefusedConfigurationChangesNothingAndNamesItsTable) {
  const config::Config running = Running();
  DesiredRuntime desired{.config = running};
  desired.config.agent.allowed_jids.push_back("carol@localhost/phone");
  desired.config.rooms = {Room("lobby@conference.localhost")};
  std::string table;
  const size_t before = env_.actions().size();
  absl::StatusOr<ConfigChange> change = Put(desired, &table);
  EXPECT_EQ(change.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StartsWith(change.status().message(), "agent.allowed_jids")) << change.status();
  EXPECT_EQ(table, "agent");

  desired.config.agent.allowed_jids = running.agent.allowed_jids;
  desired.config.agent.allowed_jids.push_back("carol@localhost");
  desired.config.skills.enabled.push_back("no_such_skill");
  change = Put(desired, &table);
  EXPECT_FALSE(change.ok());
  EXPECT_TRUE(absl::StrContains(change.status().message(), "no_such_skill")) << change.status();
  EXPECT_EQ(table, "skills");

  EXPECT_FALSE(Allows("carol@localhost"));
  EXPECT_EQ(Running().agent.allowed_jids, running.agent.allowed_jids);
  EXPECT_EQ(Running().skills.enabled, running.skills.enabled);
  EXPECT_TRUE(Running().rooms.empty());
  EXPECT_TRUE(RoomPresence(before).empty());
}

TEST_F(RuntimeChangesTest, ARoomJoinedOnAnInvitationIsLeftOnlyWhenAsked) {
  const xmpp::Jid party = xmpp::Jid::Parse("party@conference.localhost").value();
  env_.OnLoop([&] {
    env_.services().rooms.Handle(
        xmpp::RoomInvite{.room = party, .inviter = xmpp::Jid::Parse("alice@localhost").value()});
  });
  ASSERT_EQ(Rooms(), std::vector<xmpp::Jid>{party});

  // No configuration lists it, so a change of the configuration keeps it.
  DesiredRuntime desired{.config = Running()};
  desired.config.rooms = {Room("lobby@conference.localhost")};
  ASSERT_TRUE(Put(desired).ok());
  EXPECT_EQ(Rooms().size(), 2u);

  desired.leave_unlisted = {party};
  const size_t before = env_.actions().size();
  absl::StatusOr<ConfigChange> change = Put(desired);
  ASSERT_TRUE(change.ok()) << change.status();
  EXPECT_EQ(RoomPresence(before),
            std::vector<std::string>{"leave party@conference.localhost/herald"});
  EXPECT_EQ(Rooms(),
            std::vector<xmpp::Jid>{xmpp::Jid::Parse("lobby@conference.localhost").value()});
}

}  // namespace
}  // namespace herald::control
