// Tests of MucClient: what Herald sends to rooms and which typed room events the agent hears,
// from the session's events alone. The session is a captured ActionSink; no socket is opened,
// and timers run on a local io_context driven by the test, with short durations.
#include "component/xmpp/muc/muc_client.h"

#include <algorithm>
#include <asio.hpp>
#include <chrono>
#include <functional>
#include <string>
#include <variant>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "component/xmpp/events.h"
#include "component/xmpp/jid.h"
#include "component/xmpp/muc/room_events.h"
#include "gtest/gtest.h"

namespace herald::xmpp::muc {
namespace {

constexpr absl::Duration kWait = absl::Seconds(5);

Jid J(std::string_view text) { return Jid::Parse(text).value(); }

const Jid kLobby = J("lobby@conference.localhost");

MucOptions Fast() {
  MucOptions options;
  options.self_ping_interval = absl::Seconds(30);
  options.rejoin_initial = absl::Milliseconds(40);
  options.rejoin_max = absl::Milliseconds(160);
  options.join_timeout = absl::Seconds(30);
  return options;
}

class MucClientTest : public ::testing::Test {
 protected:
  void Start(MucOptions options = Fast()) {
    muc_ = std::make_unique<MucClient>(
        io_, options, [this](OutboundAction action) { actions_.push_back(std::move(action)); },
        [this](const RoomEvent& event) { events_.push_back(event); });
  }

  void Online() { muc_->Handle(SessionOnline{.own_jid = J("agent.localhost")}); }

  // Enters the lobby as "herald", goes online and confirms the join.
  void InLobby(MucOptions options = Fast()) {
    Start(options);
    muc_->Perform(EnterRoom{.room = kLobby, .nick = "herald"});
    Online();
    ASSERT_EQ(Take<JoinRoom>().size(), 1u);
    Presence("herald", {110});
    ASSERT_EQ(Events<RoomJoined>().size(), 1u);
    events_.clear();
  }

  void Presence(std::string nick, std::vector<int> codes, bool available = true) {
    RoomPresence presence{.room = kLobby, .nick = std::move(nick), .available = available};
    presence.self = std::find(codes.begin(), codes.end(), 110) != codes.end();
    presence.status_codes = std::move(codes);
    muc_->Handle(presence);
  }

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

  template <typename T>
  std::vector<T> Events() const {
    std::vector<T> found;
    for (const RoomEvent& event : events_) {
      if (const T* e = std::get_if<T>(&event)) found.push_back(*e);
    }
    return found;
  }

  template <typename T>
  bool Has() const {
    return std::any_of(actions_.begin(), actions_.end(),
                       [](const OutboundAction& a) { return std::holds_alternative<T>(a); });
  }

  bool RunUntil(const std::function<bool()>& done, absl::Duration timeout = kWait) {
    const absl::Time deadline = absl::Now() + timeout;
    while (!done()) {
      if (absl::Now() >= deadline) return false;
      io_.restart();
      io_.run_for(std::chrono::milliseconds(5));
    }
    return true;
  }

  // Only for a test that proves something did NOT happen; it says why `duration` is enough.
  void WatchFor(absl::Duration duration) {
    const absl::Time deadline = absl::Now() + duration;
    while (absl::Now() < deadline) {
      io_.restart();
      io_.run_for(std::chrono::milliseconds(5));
    }
  }

  asio::io_context io_;
  std::vector<OutboundAction> actions_;
  std::vector<RoomEvent> events_;
  std::unique_ptr<MucClient> muc_;
};

TEST(ExitReasonOfTest, ReadsTheStatusCodesOfOurOwnUnavailablePresence) {
  EXPECT_EQ(ExitReasonOf({307, 110}), ExitReason::kKicked);
  EXPECT_EQ(ExitReasonOf({301, 110}), ExitReason::kBanned);
  EXPECT_EQ(ExitReasonOf({332, 110}), ExitReason::kShutDown);
  EXPECT_EQ(ExitReasonOf({321}), ExitReason::kMembershipLost);
  EXPECT_EQ(ExitReasonOf({322}), ExitReason::kMembershipLost);
  EXPECT_EQ(ExitReasonOf({110}), ExitReason::kRemoved);
  EXPECT_EQ(ExitReasonOf({}), ExitReason::kRemoved);
  EXPECT_EQ(ExitReasonOf({303, 110}), std::nullopt);  // a nick change, not an exit
  EXPECT_EQ(ExitReasonOf({301, 303}), std::nullopt);
}

TEST_F(MucClientTest, EntersARoomOnlyOnceTheSessionIsOnlineAndReportsTheJoin) {
  Start();
  muc_->Perform(EnterRoom{.room = kLobby, .nick = "herald", .password = "pw"});
  EXPECT_TRUE(actions_.empty());
  Online();
  std::vector<JoinRoom> joins = Take<JoinRoom>();
  ASSERT_EQ(joins.size(), 1u);
  EXPECT_EQ(joins[0].room, kLobby);
  EXPECT_EQ(joins[0].nick, "herald");
  EXPECT_EQ(joins[0].password, "pw");
  EXPECT_FALSE(joins[0].leave);
  EXPECT_TRUE(events_.empty());

  Presence("alice", {});  // someone else
  EXPECT_TRUE(events_.empty());
  Presence("herald", {110});
  std::vector<RoomJoined> joined = Events<RoomJoined>();
  ASSERT_EQ(joined.size(), 1u);
  EXPECT_EQ(joined[0].room, kLobby);
  EXPECT_EQ(joined[0].nick, "herald");
  EXPECT_FALSE(joined[0].created);
  EXPECT_FALSE(Has<ConfigureRoom>());
}

TEST_F(MucClientTest, UnlocksARoomItCreatedWithATypedInstantRoomAction) {
  Start();
  muc_->Perform(EnterRoom{.room = kLobby, .nick = "herald"});
  Online();
  Take<JoinRoom>();
  Presence("herald", {110, 201});
  ASSERT_EQ(Events<RoomJoined>().size(), 1u);
  EXPECT_TRUE(Events<RoomJoined>()[0].created);
  std::vector<ConfigureRoom> configure = Take<ConfigureRoom>();
  ASSERT_EQ(configure.size(), 1u);
  EXPECT_EQ(configure[0].room, kLobby);
  EXPECT_EQ(configure[0].from, J("agent.localhost"));
  EXPECT_FALSE(Has<SendRawStanza>());
}

TEST_F(MucClientTest, ReportsTheNickTheRoomAssigned) {
  Start();
  muc_->Perform(EnterRoom{.room = kLobby, .nick = "herald"});
  Online();
  Take<JoinRoom>();
  Presence("Herald (bot)", {110, 210});
  std::vector<NickChanged> renamed = Events<NickChanged>();
  ASSERT_EQ(renamed.size(), 1u);
  EXPECT_EQ(renamed[0].nick, "Herald (bot)");
  ASSERT_EQ(Events<RoomJoined>().size(), 1u);
  EXPECT_EQ(Events<RoomJoined>()[0].nick, "Herald (bot)");
}

TEST_F(MucClientTest, TriesAnUnderscoredNickWhenItsNickIsTaken) {
  Start();
  muc_->Perform(EnterRoom{.room = kLobby, .nick = "herald"});
  Online();
  Take<JoinRoom>();
  muc_->Handle(RoomPresence{.room = kLobby,
                            .nick = "herald",
                            .available = false,
                            .self = true,
                            .error_condition = "conflict"});
  std::vector<JoinRoom> joins = Take<JoinRoom>();
  ASSERT_EQ(joins.size(), 1u);
  EXPECT_EQ(joins[0].nick, "herald_");
  ASSERT_EQ(Events<NickChanged>().size(), 1u);
  EXPECT_EQ(Events<NickChanged>()[0].nick, "herald_");
  EXPECT_TRUE(Events<JoinFailed>().empty());  // still trying, at once
}

TEST_F(MucClientTest, AKickIsRoomLeftAndRejoinedAfterABackoff) {
  InLobby();
  Presence("herald", {307, 110}, /*available=*/false);
  std::vector<RoomLeft> left = Events<RoomLeft>();
  ASSERT_EQ(left.size(), 1u);
  EXPECT_EQ(left[0].room, kLobby);
  EXPECT_EQ(left[0].reason, ExitReason::kKicked);
  EXPECT_TRUE(left[0].rejoining);
  EXPECT_FALSE(Has<JoinRoom>());  // not at once
  ASSERT_TRUE(RunUntil([&] { return Has<JoinRoom>(); }));
  EXPECT_EQ(Take<JoinRoom>()[0].nick, "herald");
}

TEST_F(MucClientTest, ARoomShutdownIsRoomLeftWithItsReason) {
  InLobby();
  Presence("herald", {332, 110}, /*available=*/false);
  ASSERT_EQ(Events<RoomLeft>().size(), 1u);
  EXPECT_EQ(Events<RoomLeft>()[0].reason, ExitReason::kShutDown);
}

TEST_F(MucClientTest, ABanIsRoomLeftWithoutRejoining) {
  InLobby();
  Presence("herald", {301, 110}, /*available=*/false);
  std::vector<RoomLeft> left = Events<RoomLeft>();
  ASSERT_EQ(left.size(), 1u);
  EXPECT_EQ(left[0].reason, ExitReason::kBanned);
  EXPECT_FALSE(left[0].rejoining);
  // Longer than rejoin_max (160 ms) and several rejoin_initial delays: a rejoin that was
  // wrongly scheduled would have been sent.
  WatchFor(absl::Milliseconds(300));
  EXPECT_FALSE(Has<JoinRoom>());
  Online();
  EXPECT_FALSE(Has<JoinRoom>());
}

TEST_F(MucClientTest, ADestroyedRoomIsRoomLeftWithoutRejoiningUntilEnteredAgain) {
  InLobby();
  RoomPresence destroyed{.room = kLobby, .nick = "herald", .available = false, .self = true};
  destroyed.status_codes = {110};
  destroyed.destroyed = true;
  destroyed.alternate_room = J("hall@conference.localhost");
  destroyed.destroy_reason = "moving";
  muc_->Handle(destroyed);
  std::vector<RoomLeft> left = Events<RoomLeft>();
  ASSERT_EQ(left.size(), 1u);
  EXPECT_EQ(left[0].reason, ExitReason::kDestroyed);
  EXPECT_EQ(left[0].detail, "moving; moved to hall@conference.localhost");
  EXPECT_FALSE(left[0].rejoining);
  // Joining again would create the room anew. Longer than rejoin_max (160 ms) and several
  // rejoin_initial delays: a rejoin that was wrongly scheduled would have been sent.
  WatchFor(absl::Milliseconds(300));
  EXPECT_FALSE(Has<JoinRoom>());
  Online();
  EXPECT_FALSE(Has<JoinRoom>());
  // Asked again (an operator, an invitation): it is tried.
  muc_->Perform(EnterRoom{.room = kLobby, .nick = "herald"});
  EXPECT_EQ(Take<JoinRoom>().size(), 1u);
}

TEST_F(MucClientTest, AForbiddenJoinIsAJoinFailureThatIsNotRetried) {
  Start();
  muc_->Perform(EnterRoom{.room = kLobby, .nick = "herald"});
  Online();
  Take<JoinRoom>();
  muc_->Handle(RoomPresence{.room = kLobby,
                            .nick = "herald",
                            .available = false,
                            .self = true,
                            .error_condition = "forbidden"});
  std::vector<JoinFailed> failed = Events<JoinFailed>();
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed[0].reason, ExitReason::kBanned);
  EXPECT_FALSE(failed[0].rejoining);
  EXPECT_TRUE(Events<RoomLeft>().empty());  // it was never in
}

TEST_F(MucClientTest, AnUnansweredJoinIsAJoinFailureAndTriedAgain) {
  MucOptions options = Fast();
  options.join_timeout = absl::Milliseconds(50);
  Start(options);
  muc_->Perform(EnterRoom{.room = kLobby, .nick = "herald"});
  Online();
  ASSERT_EQ(Take<JoinRoom>().size(), 1u);
  ASSERT_TRUE(RunUntil([&] { return !Events<JoinFailed>().empty(); }));
  EXPECT_EQ(Events<JoinFailed>()[0].reason, ExitReason::kNoAnswer);
  ASSERT_TRUE(RunUntil([&] { return Has<JoinRoom>(); }));
}

TEST_F(MucClientTest, SelfPingsAQuietRoomAndReportsWhenTheRoomForgotHerald) {
  MucOptions options = Fast();
  options.self_ping_interval = absl::Milliseconds(50);
  InLobby(options);
  ASSERT_TRUE(RunUntil([&] { return Has<SelfPing>(); }));
  std::vector<SelfPing> pings = Take<SelfPing>();
  ASSERT_EQ(pings.size(), 1u);
  EXPECT_EQ(pings[0].occupant, J("lobby@conference.localhost/herald"));
  muc_->Handle(SelfPingResult{
      .occupant = pings[0].occupant, .joined = false, .condition = "not-acceptable"});
  std::vector<RoomLeft> left = Events<RoomLeft>();
  ASSERT_EQ(left.size(), 1u);
  EXPECT_EQ(left[0].reason, ExitReason::kSelfPingFailed);
  EXPECT_EQ(left[0].detail, "not-acceptable");
  ASSERT_TRUE(RunUntil([&] { return Has<JoinRoom>(); }));
}

TEST_F(MucClientTest, ADisconnectedSelfPingWaitsForTheNextStream) {
  MucOptions options = Fast();
  options.self_ping_interval = absl::Milliseconds(50);
  InLobby(options);
  ASSERT_TRUE(RunUntil([&] { return Has<SelfPing>(); }));
  std::vector<SelfPing> pings = Take<SelfPing>();
  muc_->Handle(
      SelfPingResult{.occupant = pings[0].occupant, .joined = false, .condition = "disconnected"});
  ASSERT_EQ(Events<RoomLeft>().size(), 1u);
  EXPECT_EQ(Events<RoomLeft>()[0].reason, ExitReason::kDisconnected);
  // Longer than rejoin_max (160 ms) and six self-ping intervals (50 ms).
  WatchFor(absl::Milliseconds(300));
  EXPECT_FALSE(Has<JoinRoom>());
  EXPECT_FALSE(Has<SelfPing>());
  Online();
  EXPECT_EQ(Take<JoinRoom>().size(), 1u);
}

TEST_F(MucClientTest, ANewStreamIsRoomLeftAndAFreshJoin) {
  InLobby();
  Online();
  ASSERT_EQ(Events<RoomLeft>().size(), 1u);
  EXPECT_EQ(Events<RoomLeft>()[0].reason, ExitReason::kDisconnected);
  EXPECT_EQ(Take<JoinRoom>().size(), 1u);
}

TEST_F(MucClientTest, LeavingSendsUnavailablePresenceAndForgetsTheRoom) {
  InLobby();
  muc_->Perform(LeaveRoom{.room = kLobby});
  std::vector<JoinRoom> leaves = Take<JoinRoom>();
  ASSERT_EQ(leaves.size(), 1u);
  EXPECT_TRUE(leaves[0].leave);
  EXPECT_EQ(leaves[0].nick, "herald");
  Online();  // a forgotten room is not joined again
  EXPECT_FALSE(Has<JoinRoom>());
  Presence("herald", {110});
  EXPECT_TRUE(Events<RoomJoined>().empty());
}

TEST_F(MucClientTest, LeavingWithoutAnnouncingSendsNothingAndForgetsTheRoom) {
  InLobby();
  muc_->Perform(LeaveRoom{.room = kLobby, .announce = false});
  EXPECT_FALSE(Has<JoinRoom>());
  Online();
  EXPECT_FALSE(Has<JoinRoom>());
  Presence("herald", {110});
  EXPECT_TRUE(Events<RoomJoined>().empty());
}

TEST_F(MucClientTest, EnteringAgainRejoinsABannedRoomAtOnce) {
  InLobby();
  Presence("herald", {301, 110}, /*available=*/false);
  muc_->Perform(EnterRoom{.room = kLobby, .nick = "herald", .password = "new"});
  std::vector<JoinRoom> joins = Take<JoinRoom>();
  ASSERT_EQ(joins.size(), 1u);
  EXPECT_EQ(joins[0].password, "new");
  muc_->Perform(EnterRoom{.room = kLobby, .nick = "herald"});  // joining already: nothing
  EXPECT_FALSE(Has<JoinRoom>());
}

}  // namespace
}  // namespace herald::xmpp::muc
