// component/agent/rooms.h
//
// RoomManager is Herald's policy in group chats (X9, XEP-0045): which rooms to be in (the
// configured [[rooms]], those added at run time, and those an allowed JID invited Herald to,
// up to `max_invited_rooms`; invitations from anyone else are ignored and logged), and which
// room messages become turns: never replayed history, never Herald's own echo, every message
// in rooms with activation "all", only those that mention Herald's nick or reply to one of its
// messages (XEP-0461) in rooms with "mention". It also breaks reply loops with other bots: after
// `loop_replies` replies to one occupant within `loop_window`, that occupant is ignored for
// `loop_pause`.
//
// How to get into a room and stay there — joining without history, rejoining with backoff
// after a kick or an error, respecting a ban, nick conflicts, self-pings (XEP-0410), instant
// rooms — is the XMPP layer's MucClient (component/xmpp/muc/muc_client.h), which this class
// owns and feeds: it tells it EnterRoom / LeaveRoom and hears RoomJoined, RoomLeft,
// JoinFailed and NickChanged, never a status code or a stanza.
//
// Everything runs on the Asio loop passed in; all methods must be called on its thread.
//
//   RoomManager rooms(io, config.rooms, &policy,
//       [&](xmpp::OutboundAction a) { session->Perform(std::move(a)); },
//       [&](const xmpp::GroupMessage& m) { runtime.StartRoomTurn(m); });
//   rooms.Handle(event);                        // every InboundEvent, whatever its kind
//   ...
//   session->Perform(xmpp::SendMessage{.to = m.room, .body = answer, .type = "groupchat"});
//   rooms.RecordReply(m.room, m.nick);
#pragma once

#include <asio.hpp>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "component/agent/access_policy.h"
#include "component/agent/agent_options.h"
#include "component/xmpp/events.h"
#include "component/xmpp/jid.h"
#include "component/xmpp/muc/muc_client.h"
#include "component/xmpp/muc/room_events.h"

namespace herald::agent {

// The self-ping, rejoin, join-timeout and nick-suffix settings are handed to MucClient
// (xmpp::muc::MucOptions); the rest is the agent's own.
struct RoomOptions {
  absl::Duration self_ping_interval = absl::Minutes(5);
  absl::Duration rejoin_initial = absl::Seconds(2);
  absl::Duration rejoin_max = absl::Minutes(5);
  int loop_replies = 3;
  absl::Duration loop_window = absl::Seconds(60);
  absl::Duration loop_pause = absl::Minutes(5);
  // A join the room neither confirms nor refuses within this time is tried again.
  absl::Duration join_timeout = absl::Seconds(30);
  // How many underscores a taken nick may grow before Herald backs off and starts over.
  int max_nick_suffix = 4;
  // Rooms joined on invitation, beyond the configured ones.
  size_t max_invited_rooms = 50;
  // The wall clock of the loop breaker and of room silence (tests substitute their own).
  std::function<absl::Time()> clock = [] { return absl::Now(); };
  // Several instances of one component domain share the rooms (storage/shared_rooms.h): a
  // room is entered only while this instance holds its lease (SetLeases), and forgotten
  // without unavailable presence when the lease goes to another instance, which is the same
  // occupant (the same JID) from then on.
  bool leased = false;
};

class RoomManager {
 public:
  using ActionSink = std::function<void(const xmpp::OutboundAction&)>;
  // Called for each room message Herald should answer.
  using TurnSink = std::function<void(const xmpp::GroupMessage& message)>;
  // Called each time Herald is in a room, as `nick`: after a join, and after each rejoin.
  using JoinedSink = std::function<void(const xmpp::Jid& room, const std::string& nick)>;

  // `policy` may be null (then no invitation is accepted); it must outlive the manager.
  // Rooms whose JID does not parse are logged and skipped (the config loader refuses them).
  RoomManager(asio::io_context& io, std::vector<agent::RoomSettings> rooms,
              const AccessPolicy* policy, ActionSink act, TurnSink on_turn,
              RoomOptions options = {});
  ~RoomManager();
  RoomManager(const RoomManager&) = delete;
  RoomManager& operator=(const RoomManager&) = delete;

  // Called for every inbound event; those that are not about rooms are ignored.
  void Handle(const xmpp::InboundEvent& event);
  void set_on_joined(JoinedSink on_joined) { on_joined_ = std::move(on_joined); }
  // Called after Herald answered `to_nick` in `room`: feeds the loop breaker.
  void RecordReply(const xmpp::Jid& room, std::string_view to_nick);

  // Run-time changes (AdminService.JoinRoom / LeaveRoom, config reload). Join:
  // InvalidArgument for an address that is not a bare room JID or a bad activation,
  // AlreadyExists for a known room; the room is joined now when online, else at the next
  // SessionOnline. Leave: NotFound for an unknown room; sends unavailable presence when in.
  absl::Status Join(const agent::RoomSettings& room);
  absl::Status Leave(const xmpp::Jid& room);
  // With `leased`: the rooms (bare JIDs) whose leases this instance holds now. Those it does
  // not enter yet are entered; those it is in and no longer holds are forgotten quietly.
  void SetLeases(const absl::flat_hash_set<std::string>& held);

  // Whether a message in `room` starts a turn for every message ("all") or only mentions.
  bool AnswersAll(const xmpp::Jid& room) const;

  bool IsJoined(const xmpp::Jid& room) const;
  // The nick Herald uses (or is trying) in `room`, or "" for a room it does not know.
  std::string NickIn(const xmpp::Jid& room) const;
  // Configured rooms in configuration order, then rooms joined on invitation.
  std::vector<xmpp::Jid> Rooms() const;

 private:
  struct Occupant {
    std::deque<absl::Time> replies;  // within loop_window
    absl::Time paused_until = absl::InfinitePast();
  };

  struct Room {
    xmpp::Jid jid;  // bare
    std::string base_nick;
    std::string nick;  // as MucClient last reported it
    bool all = false;  // activation "all"
    bool invited = false;
    std::string password;  // the invitation's, for entering later (with `leased`)
    bool entered = false;  // MucClient was told to enter it (and not to leave since)
    bool joined = false;   // between RoomJoined and RoomLeft
    absl::flat_hash_map<std::string, Occupant> occupants;  // by nick
  };

  Room* Find(const xmpp::Jid& room) const;
  // Adds the room and tells MucClient to enter it (`why`, if any, is logged).
  Room& Add(xmpp::Jid jid, std::string nick, bool all, bool invited, std::string password = "",
            std::string why = "");
  // Tells MucClient to enter `room` (not with `leased` while another instance holds it).
  void Enter(Room& room, std::string why);

  void OnRoomEvent(const xmpp::muc::RoomEvent& event);
  void OnMessage(const xmpp::GroupMessage& message);
  void OnInvite(const xmpp::RoomInvite& invite);
  // Whether a message from `nick` may start a turn; false while that occupant is paused.
  bool PassesLoopBreaker(Room& room, const std::string& nick);

  const AccessPolicy* policy_;
  TurnSink on_turn_;
  JoinedSink on_joined_;
  RoomOptions options_;
  std::string default_nick_;
  std::vector<std::unique_ptr<Room>> rooms_;       // configured, then invited
  absl::flat_hash_map<std::string, Room*> index_;  // by bare JID
  size_t invited_ = 0;
  absl::flat_hash_set<std::string> leases_;  // with `leased`: the rooms this instance holds
  xmpp::muc::MucClient muc_;
};

// Whether `body` addresses `nick`: the nick as a word of its own, ignoring ASCII case
// ("herald: hi", "hi @Herald", "thanks, herald!"), but not inside another word ("heralded").
bool MentionsNick(std::string_view body, std::string_view nick);

}  // namespace herald::agent
