// component/xmpp/muc/muc_client.h
//
// MucClient is the mechanics of being an occupant of XEP-0045 rooms, so that the agent deals in
// typed room events and commands, never in presence status codes. Told to enter a room, it
// joins (without history) each time the session comes online, follows its own occupant's
// presence and reads the status codes in it (110 self, 201 created, 210 nick assigned, 301
// banned, 303 nick change, 307 kicked, 321/322 membership lost, 332 service shut down), and
// gets back in by itself — with exponential backoff and jitter — after a kick, a shutdown, an
// error or a lost connection; a ban (301 or <forbidden/>) is respected and not retried. A
// taken nick is tried again as "nick_", "nick__", ... A room it created is unlocked with the
// service's defaults (ConfigureRoom, an instant room). A joined room is self-pinged (XEP-0410)
// after `self_ping_interval` without traffic, and rejoined when the room no longer knows
// Herald.
//
// It reads the session's InboundEvents (SessionOnline, RoomPresence, SelfPingResult, and
// GroupMessage as proof of traffic) and sends the session OutboundActions (JoinRoom presence,
// SelfPing, ConfigureRoom). What happened is reported as RoomEvents (room_events.h). Which
// rooms to be in, and what to say there, is the agent's business.
//
// Everything runs on the Asio loop passed in; all methods must be called on its thread.
//
//   MucClient muc(io, options,
//       [&](OutboundAction a) { session->Perform(std::move(a)); },
//       [&](const muc::RoomEvent& e) { rooms.OnRoomEvent(e); });
//   muc.Perform(muc::EnterRoom{.room = lobby, .nick = "herald"});
//   muc.Handle(event);                            // every InboundEvent, whatever its kind
#pragma once

#include <asio.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "component/base/backoff.h"
#include "component/xmpp/events.h"
#include "component/xmpp/jid.h"
#include "component/xmpp/muc/room_events.h"

namespace herald::xmpp::muc {

struct MucOptions {
  absl::Duration self_ping_interval = absl::Minutes(5);
  absl::Duration rejoin_initial = absl::Seconds(2);
  absl::Duration rejoin_max = absl::Minutes(5);
  // A join the room neither confirms nor refuses within this time is tried again.
  absl::Duration join_timeout = absl::Seconds(30);
  // How many underscores a taken nick may grow before Herald backs off and starts over.
  int max_nick_suffix = 4;
  // The wall clock of room silence (tests substitute their own).
  std::function<absl::Time()> clock = [] { return absl::Now(); };
};

// Why our own occupant left a room, read from the status codes of its unavailable presence
// (XEP-0045 §15.6): 301 banned, 307 kicked, 332 the service shut down, 321/322 no longer a
// member, anything else removed. Nullopt for 303, a nick change (the new nick's presence
// follows).
std::optional<ExitReason> ExitReasonOf(const std::vector<int>& status_codes);

// A few words for logs: "kicked", "banned", "the room service shut down", ...
std::string_view Describe(ExitReason reason);

class MucClient {
 public:
  using ActionSink = std::function<void(const OutboundAction&)>;
  using EventSink = std::function<void(const RoomEvent&)>;

  // `on_event` may be empty.
  MucClient(asio::io_context& io, MucOptions options, ActionSink act, EventSink on_event);
  ~MucClient();
  MucClient(const MucClient&) = delete;
  MucClient& operator=(const MucClient&) = delete;

  // EnterRoom: a new room is joined now when the session has been online, else at the next
  // SessionOnline; a known room not in (waiting, banned) is joined again at once, with the
  // given password if any. LeaveRoom: unavailable presence when in or joining (unless it
  // says not to); forgotten.
  void Perform(RoomCommand command);
  // Called for every inbound event; those that are not about rooms are ignored.
  void Handle(const InboundEvent& event);

 private:
  // kStayingOut: banned, or the room was destroyed; not rejoined until entered again.
  enum class State { kIdle, kJoining, kJoined, kWaiting, kStayingOut };

  struct Room : std::enable_shared_from_this<Room> {
    Room(asio::io_context& io, Jid jid, std::string nick, const MucOptions& options);

    Jid jid;  // bare
    std::string base_nick;
    std::string nick;  // base_nick plus the underscores a conflict added
    std::string password;
    State state = State::kIdle;
    int nick_suffix = 0;
    base::Backoff backoff;
    // One timer for "join unanswered" and "time to rejoin"; the other for self-pings. A
    // generation per timer makes a completion that was already queued when the timer was
    // re-armed harmless.
    asio::steady_timer join_timer;
    uint64_t join_generation = 0;
    asio::steady_timer ping_timer;
    uint64_t ping_generation = 0;
    bool ping_pending = false;
    absl::Time last_traffic = absl::InfinitePast();
  };

  Room* Find(const Jid& room) const;

  void Enter(const EnterRoom& command);
  void Leave(const LeaveRoom& command);
  void OnOnline(const SessionOnline& online);
  void OnPresence(const RoomPresence& presence);
  void OnJoinError(Room& room, const RoomPresence& presence);
  void OnSelfPing(const SelfPingResult& result);

  void SetNick(Room& room, std::string nick);
  void JoinNow(Room& room);
  void Joined(Room& room, const RoomPresence& presence);
  // Out of the room (or of the attempt to get in): reports RoomLeft or JoinFailed, stops the
  // timers, and moves to `next`.
  void Exit(Room& room, State next, ExitReason reason, std::string detail);
  void ScheduleRejoin(Room& room, ExitReason reason, std::string detail);
  void ArmJoinTimer(Room& room, absl::Duration delay);
  void ArmPingTimer(Room& room, absl::Duration delay);
  void OnJoinTimer(Room& room);
  void OnPingTimer(Room& room);
  void Emit(RoomEvent event);

  asio::io_context& io_;
  MucOptions options_;
  ActionSink act_;
  EventSink on_event_;
  Jid own_jid_;                                    // empty until the first SessionOnline
  std::vector<std::shared_ptr<Room>> rooms_;       // in the order they were entered
  absl::flat_hash_map<std::string, Room*> index_;  // by bare JID
};

}  // namespace herald::xmpp::muc
