// component/xmpp/muc/room_events.h
//
// What the agent tells MucClient (muc_client.h) and what MucClient tells the agent about
// rooms: typed commands and events, with the XEP-0045 status codes and error conditions
// already read. The agent decides which rooms to be in and what to say there; how to get in
// and stay in is the XMPP layer's.
//
//   muc.Perform(EnterRoom{.room = lobby, .nick = "herald"});
//   if (const auto* left = std::get_if<RoomLeft>(&event); left && !left->rejoining) ...
#pragma once

#include <string>
#include <variant>

#include "component/xmpp/jid.h"

namespace herald::xmpp::muc {

// --- Commands ---

// Be in `room` as `nick` (until LeaveRoom). `why`, when given, is logged ("on the invitation
// of alice@localhost").
struct EnterRoom {
  Jid room;  // bare
  std::string nick;
  std::string password;
  std::string why;
};

struct LeaveRoom {
  Jid room;  // bare
  // False: forget the room without unavailable presence — another instance of the same
  // component domain is the occupant now (storage/shared_rooms.h), and that presence would
  // take it out.
  bool announce = true;
};

using RoomCommand = std::variant<EnterRoom, LeaveRoom>;

// --- Events ---

enum class ExitReason {
  kKicked,          // 307
  kBanned,          // 301, or the join refused as <forbidden/>
  kShutDown,        // 332: the room service shut down
  kMembershipLost,  // 321 / 322: a members-only room no longer counts Herald a member
  kRemoved,         // unavailable self-presence without a code Herald knows
  kJoinRefused,     // an error presence to the join (detail: the condition)
  kNoAnswer,        // the join went unanswered for join_timeout
  kSelfPingFailed,  // XEP-0410: the room no longer knows Herald (detail: the condition)
  kDisconnected,    // the stream went down, or a new one began (the server forgot Herald)
  kDestroyed,       // XEP-0045 §10.9: the owner destroyed the room (detail: reason, alternate)
};

// Herald's occupant is in the room as `nick` (the room may have changed the nick it asked
// for); `created`: Herald created the room (201) and has accepted its default settings.
struct RoomJoined {
  Jid room;
  std::string nick;
  bool created = false;
};

// Herald's occupant is no longer in the room. `rejoining`: Herald gets back in by itself
// (after a backoff, or when the stream is back); false after a ban.
struct RoomLeft {
  Jid room;
  ExitReason reason = ExitReason::kRemoved;
  std::string detail;  // the error condition, when there was one
  bool rejoining = true;
};

// An attempt to get in failed; as RoomLeft, for a room Herald was not in yet.
struct JoinFailed {
  Jid room;
  ExitReason reason = ExitReason::kJoinRefused;
  std::string detail;
  bool rejoining = true;
};

// The nick Herald uses, or tries, in `room` changed: a taken nick grew an underscore, a new
// stream went back to the configured nick, or the room assigned one (210) or renamed Herald.
struct NickChanged {
  Jid room;
  std::string nick;
};

using RoomEvent = std::variant<RoomJoined, RoomLeft, JoinFailed, NickChanged>;

}  // namespace herald::xmpp::muc
