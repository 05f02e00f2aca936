// Tests of RoomManager: what Herald sends to rooms and which room messages become turns. The
// session is replaced by a captured ActionSink; timers run on a local io_context driven by
// the test, with short durations.
#include "component/agent/rooms.h"

#include <algorithm>
#include <asio.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "component/agent/access_policy.h"
#include "gtest/gtest.h"

namespace herald::agent {
namespace {

using xmpp::GroupMessage;
using xmpp::Jid;
using xmpp::JoinRoom;
using xmpp::RoomPresence;

constexpr absl::Duration kWait = absl::Seconds(5);

Jid J(std::string_view text) { return Jid::Parse(text).value(); }

const Jid kLobby = J("lobby@conference.localhost");
const Jid kDev = J("dev@conference.localhost");

agent::RoomSettings Room(std::string jid, std::string nick, std::string activation) {
  agent::RoomSettings room;
  room.jid = std::move(jid);
  room.nick = std::move(nick);
  room.activation = std::move(activation);
  return room;
}

// Durations short enough for a test, long enough that nothing fires before it is meant to.
RoomOptions Fast() {
  RoomOptions options;
  options.self_ping_interval = absl::Seconds(30);
  options.rejoin_initial = absl::Milliseconds(40);
  options.rejoin_max = absl::Milliseconds(160);
  options.join_timeout = absl::Seconds(30);
  options.loop_replies = 3;
  options.loop_window = absl::Seconds(60);
  options.loop_pause = absl::Seconds(60);
  return options;
}

class RoomsTest : public ::testing::Test {
 protected:
  RoomsTest() {
    agent::AgentOptions agent;
    agent.allowed_jids = {"alice@localhost"};
    agent.allowed_domains = {"localhost"};
    policy_ = std::make_unique<AccessPolicy>(AccessPolicy::Create(agent).value());
  }

  void Start(std::vector<agent::RoomSettings> rooms, RoomOptions options = Fast()) {
    manager_ = std::make_unique<RoomManager>(
        io_, std::move(rooms), policy_.get(),
        [this](xmpp::OutboundAction action) { actions_.push_back(std::move(action)); },
        [this](const GroupMessage& message) { turns_.push_back(message); }, options);
  }

  void Online() { manager_->Handle(xmpp::SessionOnline{.own_jid = J("agent.localhost")}); }

  // Takes the captured actions of type T, in order, leaving the others.
  template <typename T>
  std::vector<T> Take() {
    std::vector<T> taken;
    for (auto it = actions_.begin(); it != actions_.end();) {
      if (T* action = std::get_if<T>(&*it)) {
        taken.push_back(std::move(*action));
        it = actions_.erase(it);
      } else {
        ++it;
      }
    }
    return taken;
  }

  // Runs the loop until `done` holds or `timeout` passes; whether it held.
  bool RunUntil(const std::function<bool()>& done, absl::Duration timeout = kWait) {
    const absl::Time deadline = absl::Now() + timeout;
    while (!done()) {
      if (absl::Now() >= deadline) return false;
      io_.restart();
      io_.run_for(std::chrono::milliseconds(5));
    }
    return true;
  }

  // Runs the loop for `duration` whatever happens. Only for a test that proves something did
  // NOT happen; it says there why `duration` is long enough.
  void WatchFor(absl::Duration duration) {
    const absl::Time deadline = absl::Now() + duration;
    while (absl::Now() < deadline) {
      io_.restart();
      io_.run_for(std::chrono::milliseconds(5));
    }
  }

  template <typename T>
  bool Has() {
    for (const xmpp::OutboundAction& action : actions_) {
      if (std::holds_alternative<T>(action)) return true;
    }
    return false;
  }

  void Presence(const Jid& room, std::string nick, std::vector<int> codes, bool available = true) {
    RoomPresence presence{.room = room, .nick = std::move(nick), .available = available};
    presence.self = std::find(codes.begin(), codes.end(), 110) != codes.end();
    presence.status_codes = std::move(codes);
    manager_->Handle(presence);
  }
  void Error(const Jid& room, std::string nick, std::string condition) {
    manager_->Handle(RoomPresence{.room = room,
                                  .nick = std::move(nick),
                                  .available = false,
                                  .self = true,
                                  .error_condition = std::move(condition)});
  }
  void Say(const Jid& room, std::string nick, std::string body, bool delayed = false) {
    manager_->Handle(GroupMessage{
        .room = room, .nick = std::move(nick), .body = std::move(body), .delayed = delayed});
  }

  // Configures the lobby ("herald", `activation`), goes online and confirms the join.
  void JoinLobby(std::string activation = "mention", RoomOptions options = Fast()) {
    Start({Room("lobby@conference.localhost", "herald", std::move(activation))}, options);
    Online();
    ASSERT_EQ(Take<JoinRoom>().size(), 1u);
    Presence(kLobby, "herald", {110});
    ASSERT_TRUE(manager_->IsJoined(kLobby));
  }

  asio::io_context io_;
  std::unique_ptr<AccessPolicy> policy_;
  std::vector<xmpp::OutboundAction> actions_;
  std::vector<GroupMessage> turns_;
  std::unique_ptr<RoomManager> manager_;
  absl::Time now_ = absl::FromUnixSeconds(1700000000);  // for tests that set RoomOptions::clock
};

// --- joining -------------------------------------------------------------------------------

TEST_F(RoomsTest, JoinsEveryConfiguredRoomWithItsNickWhenTheSessionComesOnline) {
  Start({Room("lobby@conference.localhost", "herald", "mention"),
         Room("dev@conference.localhost", "Herald Bot", "all")});
  EXPECT_TRUE(Take<JoinRoom>().empty());  // nothing before the stream is up
  Online();
  std::vector<JoinRoom> joins = Take<JoinRoom>();
  ASSERT_EQ(joins.size(), 2u);
  EXPECT_EQ(joins[0].room, kLobby);
  EXPECT_EQ(joins[0].nick, "herald");
  EXPECT_FALSE(joins[0].leave);
  EXPECT_EQ(joins[1].room, kDev);
  EXPECT_EQ(joins[1].nick, "Herald Bot");
  EXPECT_EQ(manager_->Rooms(), (std::vector<Jid>{kLobby, kDev}));
  EXPECT_FALSE(manager_->IsJoined(kLobby));  // not before the room says so

  Presence(kLobby, "herald", {110});
  EXPECT_TRUE(manager_->IsJoined(kLobby));
  EXPECT_FALSE(manager_->IsJoined(kDev));
  EXPECT_EQ(manager_->NickIn(kDev), "Herald Bot");
  EXPECT_EQ(manager_->NickIn(J("other@conference.localhost")), "");
}

TEST_F(RoomsTest, RecognisesItsOwnPresenceByNickWhenTheRoomOmitsStatus110) {
  Start({Room("lobby@conference.localhost", "herald", "mention")});
  Online();
  Presence(kLobby, "alice", {});
  EXPECT_FALSE(manager_->IsJoined(kLobby));
  Presence(kLobby, "herald", {});
  EXPECT_TRUE(manager_->IsJoined(kLobby));
}

TEST_F(RoomsTest, JoinsAgainAfterTheSessionReconnects) {
  JoinLobby();
  Online();  // a new stream: the server forgot Herald's occupant
  EXPECT_FALSE(manager_->IsJoined(kLobby));
  std::vector<JoinRoom> joins = Take<JoinRoom>();
  ASSERT_EQ(joins.size(), 1u);
  EXPECT_EQ(joins[0].nick, "herald");
}

TEST_F(RoomsTest, AcceptsTheDefaultConfigurationOfARoomItCreated) {
  Start({Room("lobby@conference.localhost", "herald", "mention")});
  Online();
  Presence(kLobby, "herald", {110, 201});
  // The owner form itself is serialized by the XMPP layer (stanza_translation_test.cc).
  std::vector<xmpp::ConfigureRoom> configure = Take<xmpp::ConfigureRoom>();
  ASSERT_EQ(configure.size(), 1u);
  EXPECT_EQ(configure[0].room, kLobby);
  EXPECT_EQ(configure[0].from, J("agent.localhost"));
  EXPECT_FALSE(Has<xmpp::SendRawStanza>());
}

TEST_F(RoomsTest, AddsUnderscoresToATakenNickAndKeepsTheOneThatWorked) {
  Start({Room("lobby@conference.localhost", "herald", "mention")});
  Online();
  ASSERT_EQ(Take<JoinRoom>().size(), 1u);
  Error(kLobby, "herald", "conflict");
  std::vector<JoinRoom> joins = Take<JoinRoom>();
  ASSERT_EQ(joins.size(), 1u);
  EXPECT_EQ(joins[0].nick, "herald_");
  Error(kLobby, "herald", "conflict");  // late news about the old nick changes nothing
  EXPECT_TRUE(Take<JoinRoom>().empty());
  Error(kLobby, "herald_", "conflict");
  joins = Take<JoinRoom>();
  ASSERT_EQ(joins.size(), 1u);
  EXPECT_EQ(joins[0].nick, "herald__");
  Presence(kLobby, "herald__", {110});
  EXPECT_TRUE(manager_->IsJoined(kLobby));
  EXPECT_EQ(manager_->NickIn(kLobby), "herald__");
}

TEST_F(RoomsTest, BacksOffAndStartsOverWhenEveryNickVariantIsTaken) {
  RoomOptions options = Fast();
  options.max_nick_suffix = 1;
  Start({Room("lobby@conference.localhost", "herald", "mention")}, options);
  Online();
  ASSERT_EQ(Take<JoinRoom>().size(), 1u);
  Error(kLobby, "herald", "conflict");
  ASSERT_EQ(Take<JoinRoom>().size(), 1u);  // herald_
  Error(kLobby, "herald_", "conflict");
  EXPECT_TRUE(Take<JoinRoom>().empty());  // no third variant at once...
  ASSERT_TRUE(RunUntil([&] { return Has<JoinRoom>(); }));
  std::vector<JoinRoom> joins = Take<JoinRoom>();  // ...but the plain nick after a pause
  ASSERT_EQ(joins.size(), 1u);
  EXPECT_EQ(joins[0].nick, "herald");
}

TEST_F(RoomsTest, TriesAgainWhenAJoinGoesUnanswered) {
  RoomOptions options = Fast();
  options.join_timeout = absl::Milliseconds(50);
  Start({Room("lobby@conference.localhost", "herald", "mention")}, options);
  Online();
  ASSERT_EQ(Take<JoinRoom>().size(), 1u);
  ASSERT_TRUE(RunUntil([&] { return Has<JoinRoom>(); }));
  EXPECT_EQ(Take<JoinRoom>().size(), 1u);
  EXPECT_FALSE(manager_->IsJoined(kLobby));
}

// --- staying in ----------------------------------------------------------------------------

TEST_F(RoomsTest, RejoinsWithBackoffAfterAKick) {
  JoinLobby();
  const absl::Time kicked_at = absl::Now();
  Presence(kLobby, "herald", {307, 110}, /*available=*/false);
  EXPECT_FALSE(manager_->IsJoined(kLobby));
  EXPECT_TRUE(Take<JoinRoom>().empty());  // not at once: a kick loop must not be a tight one
  ASSERT_TRUE(RunUntil([&] { return Has<JoinRoom>(); }));
  // The first delay is drawn from the upper half of rejoin_initial.
  EXPECT_GE(absl::Now() - kicked_at, absl::Milliseconds(20));
  std::vector<JoinRoom> joins = Take<JoinRoom>();
  ASSERT_EQ(joins.size(), 1u);
  EXPECT_EQ(joins[0].room, kLobby);
  EXPECT_EQ(joins[0].nick, "herald");
  Presence(kLobby, "herald", {110});
  EXPECT_TRUE(manager_->IsJoined(kLobby));
}

TEST_F(RoomsTest, SaysEachTimeItIsInARoomAgain) {
  Start({Room("lobby@conference.localhost", "herald", "mention")});
  std::vector<std::pair<Jid, std::string>> joined;
  manager_->set_on_joined(
      [&](const Jid& room, const std::string& nick) { joined.emplace_back(room, nick); });
  Online();
  Presence(kLobby, "herald", {110});
  Presence(kLobby, "herald", {307, 110}, /*available=*/false);
  ASSERT_TRUE(RunUntil([&] { return Has<JoinRoom>(); }));
  Presence(kLobby, "herald", {110});
  EXPECT_EQ(joined,
            (std::vector<std::pair<Jid, std::string>>{{kLobby, "herald"}, {kLobby, "herald"}}));
}

TEST_F(RoomsTest, RejoinsAfterTheRoomServiceShutsDown) {
  JoinLobby();
  Presence(kLobby, "herald", {332, 110}, /*available=*/false);
  EXPECT_FALSE(manager_->IsJoined(kLobby));
  ASSERT_TRUE(RunUntil([&] { return Has<JoinRoom>(); }));
  EXPECT_EQ(Take<JoinRoom>().size(), 1u);
}

TEST_F(RoomsTest, KeepsRetryingARoomThatRefusesTheJoin) {
  Start({Room("lobby@conference.localhost", "herald", "mention")});
  Online();
  ASSERT_EQ(Take<JoinRoom>().size(), 1u);
  for (int attempt = 0; attempt < 3; ++attempt) {
    Error(kLobby, "herald", "service-unavailable");
    EXPECT_TRUE(Take<JoinRoom>().empty());
    ASSERT_TRUE(RunUntil([&] { return Has<JoinRoom>(); })) << "attempt " << attempt;
    ASSERT_EQ(Take<JoinRoom>().size(), 1u);
  }
}

TEST_F(RoomsTest, NeverRejoinsARoomThatBannedIt) {
  JoinLobby();
  Presence(kLobby, "herald", {301, 110}, /*available=*/false);
  EXPECT_FALSE(manager_->IsJoined(kLobby));
  // A kicked room is rejoined after 20-40 ms (Fast(): the upper half of rejoin_initial), and
  // no rejoin delay exceeds rejoin_max, 160 ms: 300 ms covers the longest delay and several
  // short ones, so a rejoin that was wrongly scheduled would have been sent.
  WatchFor(absl::Milliseconds(300));
  EXPECT_FALSE(Has<JoinRoom>());
  Online();  // nor after a reconnect
  EXPECT_FALSE(Has<JoinRoom>());
}

TEST_F(RoomsTest, TreatsAForbiddenJoinAsABan) {
  Start({Room("lobby@conference.localhost", "herald", "mention")});
  Online();
  ASSERT_EQ(Take<JoinRoom>().size(), 1u);
  Error(kLobby, "herald", "forbidden");
  // As for a ban: 300 ms is longer than rejoin_max (160 ms) and many times rejoin_initial.
  WatchFor(absl::Milliseconds(300));
  EXPECT_FALSE(Has<JoinRoom>());
}

TEST_F(RoomsTest, SelfPingsAQuietRoomAndRejoinsWhenTheRoomNoLongerKnowsIt) {
  RoomOptions options = Fast();
  options.self_ping_interval = absl::Milliseconds(50);
  JoinLobby("mention", options);
  ASSERT_TRUE(RunUntil([&] { return Has<xmpp::SelfPing>(); }));
  std::vector<xmpp::SelfPing> pings = Take<xmpp::SelfPing>();
  ASSERT_EQ(pings.size(), 1u);
  EXPECT_EQ(pings[0].occupant, J("lobby@conference.localhost/herald"));

  manager_->Handle(xmpp::SelfPingResult{
      .occupant = pings[0].occupant, .joined = false, .condition = "not-acceptable"});
  EXPECT_FALSE(manager_->IsJoined(kLobby));
  ASSERT_TRUE(RunUntil([&] { return Has<JoinRoom>(); }));
  EXPECT_EQ(Take<JoinRoom>().size(), 1u);
}

TEST_F(RoomsTest, KeepsPingingWhileTheSelfPingSaysJoined) {
  RoomOptions options = Fast();
  options.self_ping_interval = absl::Milliseconds(50);
  JoinLobby("mention", options);
  for (int round = 0; round < 2; ++round) {
    ASSERT_TRUE(RunUntil([&] { return Has<xmpp::SelfPing>(); }));
    std::vector<xmpp::SelfPing> pings = Take<xmpp::SelfPing>();
    ASSERT_EQ(pings.size(), 1u);
    manager_->Handle(xmpp::SelfPingResult{.occupant = pings[0].occupant, .joined = true});
    EXPECT_TRUE(manager_->IsJoined(kLobby));
  }
  EXPECT_FALSE(Has<JoinRoom>());
}

TEST_F(RoomsTest, WaitsForTheSessionInsteadOfRejoiningWhenDisconnected) {
  RoomOptions options = Fast();
  options.self_ping_interval = absl::Milliseconds(50);
  JoinLobby("mention", options);
  ASSERT_TRUE(RunUntil([&] { return Has<xmpp::SelfPing>(); }));
  std::vector<xmpp::SelfPing> pings = Take<xmpp::SelfPing>();
  manager_->Handle(xmpp::SelfPingResult{
      .occupant = pings[0].occupant, .joined = false, .condition = "disconnected"});
  EXPECT_FALSE(manager_->IsJoined(kLobby));
  // 300 ms is longer than rejoin_max (160 ms) and six self-ping intervals (50 ms here): a
  // rejoin or a ping the manager wrongly kept scheduled would have been sent.
  WatchFor(absl::Milliseconds(300));
  EXPECT_FALSE(Has<JoinRoom>());
  EXPECT_FALSE(Has<xmpp::SelfPing>());
  Online();
  EXPECT_EQ(Take<JoinRoom>().size(), 1u);
}

TEST_F(RoomsTest, IgnoresASelfPingAnswerForAnotherNick) {
  JoinLobby();
  manager_->Handle(xmpp::SelfPingResult{.occupant = J("lobby@conference.localhost/herald_"),
                                        .joined = false,
                                        .condition = "not-acceptable"});
  EXPECT_TRUE(manager_->IsJoined(kLobby));
}

// --- invitations ---------------------------------------------------------------------------

TEST_F(RoomsTest, JoinsARoomWhenAnAllowedJidInvitesIt) {
  Start({Room("lobby@conference.localhost", "Herald", "mention")});
  Online();
  Take<JoinRoom>();
  manager_->Handle(xmpp::RoomInvite{
      .room = kDev, .inviter = J("alice@localhost"), .password = "pw", .reason = "standup"});
  std::vector<JoinRoom> joins = Take<JoinRoom>();
  ASSERT_EQ(joins.size(), 1u);
  EXPECT_EQ(joins[0].room, kDev);
  EXPECT_EQ(joins[0].nick, "Herald");  // the first configured room's nick
  EXPECT_EQ(joins[0].password, "pw");
  EXPECT_EQ(manager_->Rooms(), (std::vector<Jid>{kLobby, kDev}));
  Presence(kDev, "Herald", {110});
  EXPECT_TRUE(manager_->IsJoined(kDev));
}

TEST_F(RoomsTest, IgnoresAnInvitationFromAJidThatIsNotAllowed) {
  Start({});
  Online();
  manager_->Handle(xmpp::RoomInvite{.room = kDev, .inviter = J("mallory@evil.example")});
  EXPECT_TRUE(actions_.empty());
  EXPECT_TRUE(manager_->Rooms().empty());
}

TEST_F(RoomsTest, UsesHeraldAsTheNickForInvitationsWithoutConfiguredRooms) {
  Start({});
  Online();
  manager_->Handle(xmpp::RoomInvite{.room = kDev, .inviter = J("alice@localhost/pc")});
  std::vector<JoinRoom> joins = Take<JoinRoom>();
  ASSERT_EQ(joins.size(), 1u);
  EXPECT_EQ(joins[0].nick, "herald");
}

TEST_F(RoomsTest, BoundsTheRoomsJoinedOnInvitation) {
  RoomOptions options = Fast();
  options.max_invited_rooms = 2;
  Start({}, options);
  Online();
  for (const char* room :
       {"a@conference.localhost", "b@conference.localhost", "c@conference.localhost"}) {
    manager_->Handle(xmpp::RoomInvite{.room = J(room), .inviter = J("alice@localhost")});
  }
  EXPECT_EQ(Take<JoinRoom>().size(), 2u);
  EXPECT_EQ(manager_->Rooms().size(), 2u);
}

// --- which messages become turns -----------------------------------------------------------

TEST_F(RoomsTest, InAMentionRoomAnswersOnlyMessagesThatAddressItsNick) {
  JoinLobby("mention");
  Say(kLobby, "alice", "herald: what time is it?");
  Say(kLobby, "alice", "good morning everyone");
  Say(kLobby, "alice", "thanks @Herald!");
  Say(kLobby, "alice", "the heraldry exhibit opens today");
  Say(kLobby, "bob", "HERALD, ping");
  ASSERT_EQ(turns_.size(), 3u);
  EXPECT_EQ(turns_[0].body, "herald: what time is it?");
  EXPECT_EQ(turns_[1].body, "thanks @Herald!");
  EXPECT_EQ(turns_[2].nick, "bob");
}

TEST_F(RoomsTest, InAMentionRoomAReplyToHeraldsMessageAddressesItWithoutItsNick) {
  JoinLobby("mention");
  auto reply = [&](std::string to, std::string id) {
    manager_->Handle(GroupMessage{.room = kLobby,
                                  .nick = "alice",
                                  .body = "and the other one?",
                                  .reply = {.id = std::move(id), .to = J(to)}});
  };
  reply("lobby@conference.localhost/herald", "room-1");
  reply("lobby@conference.localhost/bob", "room-2");         // a reply to bob
  reply("elsewhere@conference.localhost/herald", "room-3");  // names another room's herald
  reply("lobby@conference.localhost/herald", "");            // names no message
  ASSERT_EQ(turns_.size(), 1u);
  EXPECT_EQ(turns_[0].reply.id, "room-1");
}

TEST_F(RoomsTest, InAnAllRoomAnswersEveryLiveMessage) {
  JoinLobby("all");
  Say(kLobby, "alice", "good morning everyone");
  Say(kLobby, "bob", "anyone there?");
  EXPECT_EQ(turns_.size(), 2u);
}

TEST_F(RoomsTest, IgnoresHistoryItsOwnEchoAndRoomsItIsNotIn) {
  JoinLobby("all");
  Say(kLobby, "alice", "herald: yesterday's question", /*delayed=*/true);
  Say(kLobby, "herald", "my own answer");
  Say(J("elsewhere@conference.localhost"), "alice", "herald: hi");
  EXPECT_TRUE(turns_.empty());
}

TEST_F(RoomsTest, IgnoresMessagesWhileNotJoined) {
  Start({Room("lobby@conference.localhost", "herald", "all")});
  Online();
  Say(kLobby, "alice", "before the join completes");
  EXPECT_TRUE(turns_.empty());
}

TEST_F(RoomsTest, AnswersTheConfiguredNickToo) {
  Start({Room("lobby@conference.localhost", "herald", "mention")});
  Online();
  Error(kLobby, "herald", "conflict");
  Presence(kLobby, "herald_", {110});
  Say(kLobby, "alice", "herald_ hi");
  Say(kLobby, "alice", "herald: hi");
  EXPECT_EQ(turns_.size(), 2u);
}

TEST_F(RoomsTest, StopsAnsweringAnOccupantThatDrawsItIntoAReplyLoop) {
  JoinLobby("all");
  for (int i = 0; i < 3; ++i) {
    Say(kLobby, "otherbot", "reply " + std::to_string(i));
    manager_->RecordReply(kLobby, "otherbot");
  }
  ASSERT_EQ(turns_.size(), 3u);
  Say(kLobby, "otherbot", "reply 3");
  Say(kLobby, "otherbot", "reply 4");
  EXPECT_EQ(turns_.size(), 3u);  // paused
  Say(kLobby, "alice", "hello");
  ASSERT_EQ(turns_.size(), 4u);  // others are still answered
  EXPECT_EQ(turns_.back().nick, "alice");
}

TEST_F(RoomsTest, AnswersAPausedOccupantAgainAfterThePause) {
  RoomOptions options = Fast();
  options.loop_replies = 1;
  options.loop_pause = absl::Minutes(5);
  options.clock = [this] { return now_; };
  JoinLobby("all", options);
  Say(kLobby, "otherbot", "one");
  manager_->RecordReply(kLobby, "otherbot");
  Say(kLobby, "otherbot", "two");
  now_ += absl::Minutes(4);
  Say(kLobby, "otherbot", "still paused");
  EXPECT_EQ(turns_.size(), 1u);
  now_ += absl::Minutes(2);
  Say(kLobby, "otherbot", "three");
  ASSERT_EQ(turns_.size(), 2u);
  EXPECT_EQ(turns_.back().body, "three");
}

TEST_F(RoomsTest, RepliesSpreadBeyondTheWindowDoNotTripTheBreaker) {
  RoomOptions options = Fast();
  options.loop_replies = 1;
  options.loop_window = absl::Seconds(60);
  options.clock = [this] { return now_; };
  JoinLobby("all", options);
  Say(kLobby, "alice", "one");
  manager_->RecordReply(kLobby, "alice");
  now_ += absl::Seconds(61);
  Say(kLobby, "alice", "two");
  EXPECT_EQ(turns_.size(), 2u);
}

// --- mention matching ----------------------------------------------------------------------

TEST(MentionsNickTest, FindsTheNickAsAWordInAnyCase) {
  EXPECT_TRUE(MentionsNick("herald: hi", "herald"));
  EXPECT_TRUE(MentionsNick("Herald, hi", "herald"));
  EXPECT_TRUE(MentionsNick("hi @HERALD", "herald"));
  EXPECT_TRUE(MentionsNick("ask herald.", "Herald"));
  EXPECT_TRUE(MentionsNick("herald", "herald"));
  EXPECT_TRUE(MentionsNick("hey Herald Bot, hi", "Herald Bot"));
}

TEST(MentionsNickTest, IgnoresTheNickInsideAnotherWord) {
  EXPECT_FALSE(MentionsNick("heraldry", "herald"));
  EXPECT_FALSE(MentionsNick("proclaimed by the heralds", "herald"));
  EXPECT_FALSE(MentionsNick("my_herald", "herald"));
  EXPECT_FALSE(MentionsNick("heraldé", "herald"));
  EXPECT_FALSE(MentionsNick("", "herald"));
  EXPECT_FALSE(MentionsNick("anything", ""));
}

}  // namespace
}  // namespace herald::agent

namespace herald::agent {
namespace {

// --- rooms changed at run time --------------------------------------------------------------

TEST_F(RoomsTest, JoinsARoomAddedAtRunTimeAndLeavesItWithUnavailablePresence) {
  JoinLobby();
  ASSERT_TRUE(
      manager_->Join({.jid = "dev@conference.localhost", .nick = "bot", .activation = "all"}).ok());
  std::vector<JoinRoom> joins = Take<JoinRoom>();
  ASSERT_EQ(joins.size(), 1u);
  EXPECT_EQ(joins[0].room, kDev);
  EXPECT_EQ(joins[0].nick, "bot");
  Presence(kDev, "bot", {110});
  EXPECT_TRUE(manager_->IsJoined(kDev));
  EXPECT_TRUE(manager_->AnswersAll(kDev));
  EXPECT_FALSE(manager_->AnswersAll(kLobby));

  EXPECT_EQ(manager_->Join({.jid = "dev@conference.localhost"}).code(),
            absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(manager_->Join({.jid = "not a jid"}).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(manager_->Join({.jid = "conference.localhost"}).code(),
            absl::StatusCode::kInvalidArgument);

  ASSERT_TRUE(manager_->Leave(kDev).ok());
  std::vector<JoinRoom> leaves = Take<JoinRoom>();
  ASSERT_EQ(leaves.size(), 1u);
  EXPECT_TRUE(leaves[0].leave);
  EXPECT_EQ(leaves[0].nick, "bot");
  EXPECT_EQ(manager_->Rooms(), (std::vector<Jid>{kLobby}));
  EXPECT_EQ(manager_->Leave(kDev).code(), absl::StatusCode::kNotFound);
  // A message from the room it left starts nothing.
  Say(kDev, "alice", "bot: hello");
  EXPECT_TRUE(turns_.empty());
}

// --- rooms shared by several instances (leased) ---------------------------------------------

RoomOptions Leased() {
  RoomOptions options = Fast();
  options.leased = true;
  return options;
}

TEST_F(RoomsTest, LeasedEntersOnlyTheRoomsWhoseLeasesItHolds) {
  Start({Room("lobby@conference.localhost", "herald", "all"),
         Room("dev@conference.localhost", "herald", "all")},
        Leased());
  Online();
  EXPECT_TRUE(Take<JoinRoom>().empty());                           // no lease yet
  EXPECT_EQ(manager_->Rooms(), (std::vector<Jid>{kLobby, kDev}));  // it still wants both

  manager_->SetLeases({"dev@conference.localhost"});
  std::vector<JoinRoom> joins = Take<JoinRoom>();
  ASSERT_EQ(joins.size(), 1u);
  EXPECT_EQ(joins[0].room, kDev);
  EXPECT_FALSE(joins[0].leave);
  manager_->SetLeases({"dev@conference.localhost"});  // renewed: nothing more
  EXPECT_TRUE(Take<JoinRoom>().empty());

  // A message from a room another instance answers in starts nothing here.
  Say(kLobby, "alice", "hello");
  EXPECT_TRUE(turns_.empty());
}

TEST_F(RoomsTest, LeasedAnswersInARoomItTookOverBeforeTheJoinIsConfirmed) {
  Start({Room("lobby@conference.localhost", "herald", "all")}, Leased());
  Online();
  manager_->SetLeases({"lobby@conference.localhost"});
  ASSERT_EQ(Take<JoinRoom>().size(), 1u);
  // The instance before it was the same occupant: the room is speaking to it already.
  Say(kLobby, "alice", "hello");
  Say(kLobby, "alice", "said before", /*delayed=*/true);
  ASSERT_EQ(turns_.size(), 1u);
  EXPECT_EQ(turns_[0].body, "hello");
}

TEST_F(RoomsTest, LeasedForgetsARoomWhoseLeaseWentElsewhereWithoutPresence) {
  Start({Room("lobby@conference.localhost", "herald", "all")}, Leased());
  Online();
  manager_->SetLeases({"lobby@conference.localhost"});
  ASSERT_EQ(Take<JoinRoom>().size(), 1u);
  Presence(kLobby, "herald", {110});
  ASSERT_TRUE(manager_->IsJoined(kLobby));

  manager_->SetLeases({});
  EXPECT_TRUE(Take<JoinRoom>().empty());  // an unavailable presence would take the other out
  EXPECT_FALSE(manager_->IsJoined(kLobby));
  Say(kLobby, "alice", "hello");
  EXPECT_TRUE(turns_.empty());
  Online();  // a new stream joins only what it holds
  EXPECT_TRUE(Take<JoinRoom>().empty());

  manager_->SetLeases({"lobby@conference.localhost"});  // back
  EXPECT_EQ(Take<JoinRoom>().size(), 1u);
}

TEST_F(RoomsTest, LeasedLeavesWithPresenceOnlyARoomItIsIn) {
  Start({Room("lobby@conference.localhost", "herald", "all"),
         Room("dev@conference.localhost", "herald", "all")},
        Leased());
  Online();
  manager_->SetLeases({"lobby@conference.localhost"});
  Take<JoinRoom>();
  ASSERT_TRUE(manager_->Leave(kDev).ok());  // another instance's room: no presence from here
  EXPECT_TRUE(Take<JoinRoom>().empty());
  ASSERT_TRUE(manager_->Leave(kLobby).ok());
  std::vector<JoinRoom> leaves = Take<JoinRoom>();
  ASSERT_EQ(leaves.size(), 1u);
  EXPECT_TRUE(leaves[0].leave);
  EXPECT_TRUE(manager_->Rooms().empty());
}

TEST_F(RoomsTest, LeasedEntersARoomItWasInvitedToOnceItHoldsItsLease) {
  Start({}, Leased());
  Online();
  manager_->Handle(
      xmpp::RoomInvite{.room = kDev, .inviter = J("alice@localhost"), .password = "pw"});
  EXPECT_TRUE(Take<JoinRoom>().empty());
  EXPECT_EQ(manager_->Rooms(), (std::vector<Jid>{kDev}));  // wanted: its lease is asked for
  manager_->SetLeases({"dev@conference.localhost"});
  std::vector<JoinRoom> joins = Take<JoinRoom>();
  ASSERT_EQ(joins.size(), 1u);
  EXPECT_EQ(joins[0].password, "pw");
}

TEST_F(RoomsTest, ARoomAddedWhileOfflineIsJoinedWhenTheSessionComesOnline) {
  Start({});
  ASSERT_TRUE(manager_->Join({.jid = "dev@conference.localhost", .nick = "bot"}).ok());
  EXPECT_TRUE(Take<JoinRoom>().empty());
  Online();
  EXPECT_EQ(Take<JoinRoom>().size(), 1u);
}

}  // namespace
}  // namespace herald::agent
