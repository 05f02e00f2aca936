#include "component/xmpp/muc/muc_client.h"

#include <algorithm>
#include <chrono>
#include <utility>
#include <variant>

#include "absl/strings/str_cat.h"
#include "glog/logging.h"

namespace herald::xmpp::muc {
namespace {

std::chrono::steady_clock::duration ToChrono(absl::Duration d) {
  return absl::ToChronoNanoseconds(std::max(d, absl::ZeroDuration()));
}

bool Has(const std::vector<int>& codes, int code) {
  return std::find(codes.begin(), codes.end(), code) != codes.end();
}

std::string Shown(absl::Duration d) {
  return absl::FormatDuration(absl::Trunc(d, absl::Milliseconds(1)));
}

}  // namespace

std::optional<ExitReason> ExitReasonOf(const std::vector<int>& status_codes) {
  if (Has(status_codes, 303)) return std::nullopt;
  if (Has(status_codes, 301)) return ExitReason::kBanned;
  // A presence may carry several; the later checks win, as they always have.
  if (Has(status_codes, 321) || Has(status_codes, 322)) return ExitReason::kMembershipLost;
  if (Has(status_codes, 332)) return ExitReason::kShutDown;
  if (Has(status_codes, 307)) return ExitReason::kKicked;
  return ExitReason::kRemoved;
}

std::string_view Describe(ExitReason reason) {
  switch (reason) {
    case ExitReason::kKicked:
      return "kicked";
    case ExitReason::kBanned:
      return "banned";
    case ExitReason::kShutDown:
      return "the room service shut down";
    case ExitReason::kMembershipLost:
      return "no longer a member";
    case ExitReason::kRemoved:
      return "removed from the room";
    case ExitReason::kJoinRefused:
      return "the join was refused";
    case ExitReason::kNoAnswer:
      return "no answer to the join";
    case ExitReason::kSelfPingFailed:
      return "self-ping";
    case ExitReason::kDisconnected:
      return "disconnected";
    case ExitReason::kDestroyed:
      return "the room was destroyed";
  }
  return "left";
}

MucClient::Room::Room(asio::io_context& io, Jid jid, std::string nick, const MucOptions& options)
    : jid(std::move(jid)),
      base_nick(nick),
      nick(std::move(nick)),
      backoff(options.rejoin_initial, options.rejoin_max),
      join_timer(io),
      ping_timer(io) {}

MucClient::MucClient(asio::io_context& io, MucOptions options, ActionSink act, EventSink on_event)
    : io_(io), options_(std::move(options)), act_(std::move(act)), on_event_(std::move(on_event)) {}

MucClient::~MucClient() {
  for (const std::shared_ptr<Room>& room : rooms_) {
    room->join_timer.cancel();
    room->ping_timer.cancel();
  }
}

MucClient::Room* MucClient::Find(const Jid& room) const {
  auto it = index_.find(room.BareString());
  return it == index_.end() ? nullptr : it->second;
}

void MucClient::Emit(RoomEvent event) {
  if (on_event_) on_event_(event);
}

void MucClient::Perform(RoomCommand command) {
  if (const auto* enter = std::get_if<EnterRoom>(&command)) {
    Enter(*enter);
  } else if (const auto* leave = std::get_if<LeaveRoom>(&command)) {
    Leave(*leave);
  }
}

void MucClient::Handle(const InboundEvent& event) {
  if (const auto* online = std::get_if<SessionOnline>(&event)) {
    OnOnline(*online);
  } else if (const auto* presence = std::get_if<RoomPresence>(&event)) {
    OnPresence(*presence);
  } else if (const auto* ping = std::get_if<SelfPingResult>(&event)) {
    OnSelfPing(*ping);
  } else if (const auto* message = std::get_if<GroupMessage>(&event)) {
    // Any message from the room proves Herald is still in it (XEP-0410 §3).
    if (Room* room = Find(message->room)) room->last_traffic = options_.clock();
  }
}

void MucClient::Enter(const EnterRoom& command) {
  Room* room = Find(command.room);
  if (room == nullptr) {
    auto added = std::make_shared<Room>(io_, command.room.Bare(), command.nick, options_);
    added->password = command.password;
    room = added.get();
    index_[room->jid.BareString()] = room;
    rooms_.push_back(std::move(added));
    if (!command.why.empty()) {
      LOG(INFO) << "rooms: joining " << room->jid.BareString() << " " << command.why;
    }
    if (!own_jid_.empty()) JoinNow(*room);  // else the next SessionOnline joins it
    return;
  }
  if (!command.password.empty()) room->password = command.password;
  if (room->state == State::kJoined || room->state == State::kJoining) return;
  // Asked again (an allowed person's invitation): reason enough to try, even after a ban.
  if (!command.why.empty()) {
    LOG(INFO) << "rooms: joining " << room->jid.BareString() << " " << command.why;
  }
  room->backoff.Reset();
  JoinNow(*room);
}

void MucClient::Leave(const LeaveRoom& command) {
  auto it = index_.find(command.room.BareString());
  if (it == index_.end()) return;
  Room* room = it->second;
  if (command.announce && (room->state == State::kJoined || room->state == State::kJoining)) {
    act_(JoinRoom{.room = room->jid, .nick = room->nick, .leave = true});
  }
  ++room->join_generation;
  ++room->ping_generation;
  room->join_timer.cancel();
  room->ping_timer.cancel();
  index_.erase(it);
  std::erase_if(rooms_, [room](const std::shared_ptr<Room>& r) { return r.get() == room; });
}

void MucClient::OnOnline(const SessionOnline& online) {
  own_jid_ = online.own_jid;
  // A new stream means the server forgot every occupant of the old one: join everything
  // afresh, with the preferred nick, whatever was pending.
  for (const std::shared_ptr<Room>& room : rooms_) {
    if (room->state == State::kStayingOut) continue;
    room->backoff.Reset();
    room->nick_suffix = 0;
    SetNick(*room, room->base_nick);
    JoinNow(*room);
  }
}

void MucClient::SetNick(Room& room, std::string nick) {
  if (room.nick == nick) return;
  room.nick = std::move(nick);
  Emit(NickChanged{.room = room.jid, .nick = room.nick});
}

void MucClient::JoinNow(Room& room) {
  if (room.state == State::kJoined) {
    Emit(RoomLeft{.room = room.jid, .reason = ExitReason::kDisconnected, .rejoining = true});
  }
  room.state = State::kJoining;
  room.ping_pending = false;
  ++room.ping_generation;
  room.ping_timer.cancel();
  act_(JoinRoom{.room = room.jid, .nick = room.nick, .password = room.password});
  ArmJoinTimer(room, options_.join_timeout);
}

void MucClient::OnPresence(const RoomPresence& presence) {
  Room* room = Find(presence.room);
  if (room == nullptr) return;
  room->last_traffic = options_.clock();
  if (!presence.error_condition.empty()) {
    OnJoinError(*room, presence);
    return;
  }
  // Status 110 marks our own occupant; a room that omits it is still recognised by the nick
  // Herald asked for, which no one else can hold while Herald is in the room.
  const bool self = presence.self || (presence.nick == room->nick && room->state != State::kIdle);
  if (!self) return;
  if (presence.available) {
    Joined(*room, presence);
    return;
  }
  const std::optional<ExitReason> reason = ExitReasonOf(presence.status_codes);
  if (!reason.has_value()) return;  // a nick change: the new nick's presence follows
  if (room->state == State::kStayingOut || room->state == State::kIdle) return;
  if (presence.destroyed) {
    // Joining again would create the room anew, against its owner's wish.
    std::string detail = presence.destroy_reason;
    if (!presence.alternate_room.empty()) {
      absl::StrAppend(&detail, detail.empty() ? "" : "; ", "moved to ",
                      presence.alternate_room.BareString());
    }
    LOG(WARNING) << "rooms: " << room->jid.BareString() << " was destroyed"
                 << (detail.empty() ? "" : " (" + detail + ")") << "; not rejoining";
    Exit(*room, State::kStayingOut, ExitReason::kDestroyed, std::move(detail));
    return;
  }
  if (*reason == ExitReason::kBanned) {
    LOG(ERROR) << "rooms: banned from " << room->jid.BareString() << "; not rejoining";
    Exit(*room, State::kStayingOut, ExitReason::kBanned, "");
    return;
  }
  LOG(WARNING) << "rooms: " << Describe(*reason) << " in " << room->jid.BareString();
  ScheduleRejoin(*room, *reason, "");
}

void MucClient::Joined(Room& room, const RoomPresence& presence) {
  // The room may have changed the nick it gave us (status 210).
  if (!presence.nick.empty()) SetNick(room, presence.nick);
  if (room.state == State::kJoined) return;  // a presence update while in the room
  room.state = State::kJoined;
  room.backoff.Reset();
  ++room.join_generation;
  room.join_timer.cancel();
  LOG(INFO) << "rooms: joined " << room.jid.BareString() << " as " << room.nick;
  const bool created = Has(presence.status_codes, 201);
  Emit(RoomJoined{.room = room.jid, .nick = room.nick, .created = created});
  if (created) {
    // XEP-0045 §10.1.2: the service keeps a new room locked to everyone else until its owner
    // accepts a configuration; the empty form accepts the defaults.
    LOG(INFO) << "rooms: created " << room.jid.BareString() << "; accepting its default settings";
    act_(ConfigureRoom{.room = room.jid, .from = own_jid_});
  }
  ArmPingTimer(room, options_.self_ping_interval);
}

void MucClient::OnJoinError(Room& room, const RoomPresence& presence) {
  // An error about a nick tried before (and since replaced) says nothing about this attempt.
  if (!presence.nick.empty() && presence.nick != room.nick) return;
  if (room.state == State::kStayingOut || room.state == State::kIdle) return;
  const std::string& condition = presence.error_condition;
  if (condition == "forbidden") {
    LOG(ERROR) << "rooms: " << room.jid.BareString()
               << " refused Herald (forbidden: banned); not rejoining";
    Exit(room, State::kStayingOut, ExitReason::kBanned, condition);
    return;
  }
  if (condition == "conflict") {
    if (room.nick_suffix < options_.max_nick_suffix) {
      ++room.nick_suffix;
      SetNick(room, absl::StrCat(room.base_nick, std::string(room.nick_suffix, '_')));
      LOG(INFO) << "rooms: nick taken in " << room.jid.BareString() << "; trying " << room.nick;
      JoinNow(room);
      return;
    }
    room.nick_suffix = 0;
    SetNick(room, room.base_nick);
  }
  LOG(WARNING) << "rooms: could not join " << room.jid.BareString() << " (" << condition << ")";
  ScheduleRejoin(room, ExitReason::kJoinRefused, condition);
}

void MucClient::Exit(Room& room, State next, ExitReason reason, std::string detail) {
  const bool was_joined = room.state == State::kJoined;
  room.state = next;
  room.ping_pending = false;
  ++room.ping_generation;
  room.ping_timer.cancel();
  if (next != State::kWaiting) {
    ++room.join_generation;
    room.join_timer.cancel();
  }
  const bool rejoining = next != State::kStayingOut;
  if (was_joined) {
    Emit(RoomLeft{
        .room = room.jid, .reason = reason, .detail = std::move(detail), .rejoining = rejoining});
  } else {
    Emit(JoinFailed{
        .room = room.jid, .reason = reason, .detail = std::move(detail), .rejoining = rejoining});
  }
}

void MucClient::ScheduleRejoin(Room& room, ExitReason reason, std::string detail) {
  std::string why = detail.empty() ? std::string(Describe(reason)) : detail;
  if (reason == ExitReason::kSelfPingFailed) why = absl::StrCat("self-ping: ", detail);
  Exit(room, State::kWaiting, reason, std::move(detail));
  const absl::Duration delay = room.backoff.Next();
  LOG(INFO) << "rooms: rejoining " << room.jid.BareString() << " in " << Shown(delay) << " (" << why
            << ", attempt " << room.backoff.attempts() << ")";
  ArmJoinTimer(room, delay);
}

void MucClient::ArmJoinTimer(Room& room, absl::Duration delay) {
  const uint64_t generation = ++room.join_generation;
  room.join_timer.expires_after(ToChrono(delay));
  std::weak_ptr<Room> weak = room.weak_from_this();
  room.join_timer.async_wait([this, weak, generation](const std::error_code& error) {
    std::shared_ptr<Room> alive = weak.lock();
    if (error || alive == nullptr || alive->join_generation != generation) return;
    OnJoinTimer(*alive);
  });
}

void MucClient::OnJoinTimer(Room& room) {
  if (room.state == State::kWaiting) {
    JoinNow(room);
  } else if (room.state == State::kJoining) {
    LOG(WARNING) << "rooms: " << room.jid.BareString() << " did not answer the join within "
                 << Shown(options_.join_timeout);
    ScheduleRejoin(room, ExitReason::kNoAnswer, "");
  }
}

void MucClient::ArmPingTimer(Room& room, absl::Duration delay) {
  const uint64_t generation = ++room.ping_generation;
  room.ping_timer.expires_after(ToChrono(delay));
  std::weak_ptr<Room> weak = room.weak_from_this();
  room.ping_timer.async_wait([this, weak, generation](const std::error_code& error) {
    std::shared_ptr<Room> alive = weak.lock();
    if (error || alive == nullptr || alive->ping_generation != generation) return;
    OnPingTimer(*alive);
  });
}

void MucClient::OnPingTimer(Room& room) {
  if (room.state != State::kJoined) return;
  // XEP-0410 §3: traffic from the room proves Herald is in it; ping only after silence.
  const absl::Duration quiet = options_.clock() - room.last_traffic;
  if (!room.ping_pending && quiet < options_.self_ping_interval) {
    ArmPingTimer(room, options_.self_ping_interval - quiet);
    return;
  }
  room.ping_pending = true;
  act_(SelfPing{.occupant = room.jid.WithResource(room.nick)});
  // A safety net: should no answer ever come, the next tick pings again.
  ArmPingTimer(room, options_.self_ping_interval);
}

void MucClient::OnSelfPing(const SelfPingResult& result) {
  Room* room = Find(result.occupant);
  if (room == nullptr || result.occupant.resource() != room->nick) return;  // a stale answer
  if (room->state != State::kJoined) return;
  room->ping_pending = false;
  if (result.joined) {
    room->last_traffic = options_.clock();
    ArmPingTimer(*room, options_.self_ping_interval);
    return;
  }
  if (result.condition == "disconnected") {
    // The stream is down; SessionOnline rejoins everything when it is back.
    room->state = State::kIdle;
    ++room->ping_generation;
    room->ping_timer.cancel();
    Emit(RoomLeft{.room = room->jid, .reason = ExitReason::kDisconnected, .rejoining = true});
    return;
  }
  LOG(WARNING) << "rooms: self-ping says Herald is no longer in " << room->jid.BareString() << " ("
               << result.condition << ")";
  ScheduleRejoin(*room, ExitReason::kSelfPingFailed, result.condition);
}

}  // namespace herald::xmpp::muc
