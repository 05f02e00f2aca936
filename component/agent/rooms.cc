#include "component/agent/rooms.h"

#include <algorithm>
#include <utility>
#include <variant>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "component/base/absl_string_view.h"
#include "glog/logging.h"

namespace herald::agent {
namespace {

// Occupants remembered per room by the loop breaker before idle ones are forgotten.
constexpr size_t kMaxTrackedOccupants = 1000;

std::chrono::steady_clock::duration ToChrono(absl::Duration d) {
  return absl::ToChronoNanoseconds(std::max(d, absl::ZeroDuration()));
}

bool Has(const std::vector<int>& codes, int code) {
  return std::find(codes.begin(), codes.end(), code) != codes.end();
}

std::string Shown(absl::Duration d) {
  return absl::FormatDuration(absl::Trunc(d, absl::Milliseconds(1)));
}

// Letters, digits and '_' continue a word; so do bytes of non-ASCII characters, so that a nick
// is not found inside a longer word in another script.
bool IsWordByte(char c) {
  const unsigned char byte = static_cast<unsigned char>(c);
  return byte >= 0x80 || absl::ascii_isalnum(byte) || c == '_';
}

}  // namespace

bool MentionsNick(std::string_view body, std::string_view nick) {
  if (nick.empty() || body.size() < nick.size()) return false;
  const std::string text = absl::AsciiStrToLower(AbslView(body));
  const std::string word = absl::AsciiStrToLower(AbslView(nick));
  for (size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) {
    const size_t end = at + word.size();
    const bool starts = at == 0 || !IsWordByte(text[at - 1]) || !IsWordByte(word.front());
    const bool ends = end == text.size() || !IsWordByte(text[end]) || !IsWordByte(word.back());
    if (starts && ends) return true;
  }
  return false;
}

RoomManager::Room::Room(asio::io_context& io, xmpp::Jid jid, std::string nick, bool all,
                        bool invited, const RoomOptions& options)
    : jid(std::move(jid)),
      base_nick(nick),
      nick(std::move(nick)),
      all(all),
      invited(invited),
      backoff(options.rejoin_initial, options.rejoin_max),
      join_timer(io),
      ping_timer(io) {}

RoomManager::RoomManager(asio::io_context& io, std::vector<agent::RoomSettings> rooms,
                         const AccessPolicy* policy, ActionSink act, TurnSink on_turn,
                         RoomOptions options)
    : io_(io),
      policy_(policy),
      act_(std::move(act)),
      on_turn_(std::move(on_turn)),
      options_(std::move(options)),
      default_nick_(rooms.empty() || rooms.front().nick.empty() ? "herald" : rooms.front().nick) {
  for (agent::RoomSettings& config : rooms) {
    absl::StatusOr<xmpp::Jid> jid = xmpp::Jid::Parse(config.jid);
    if (!jid.ok() || jid->local().empty()) {
      LOG(ERROR) << "rooms: skipping [[rooms]] jid '" << config.jid << "': not a room's address";
      continue;
    }
    if (Find(*jid) != nullptr) continue;
    Add(jid->Bare(), config.nick.empty() ? default_nick_ : std::move(config.nick),
        config.activation == "all", /*invited=*/false);
  }
}

RoomManager::~RoomManager() {
  for (const std::shared_ptr<Room>& room : rooms_) {
    room->join_timer.cancel();
    room->ping_timer.cancel();
  }
}

RoomManager::Room* RoomManager::Find(const xmpp::Jid& room) const {
  auto it = index_.find(room.BareString());
  return it == index_.end() ? nullptr : it->second;
}

RoomManager::Room& RoomManager::Add(xmpp::Jid jid, std::string nick, bool all, bool invited) {
  auto room = std::make_shared<Room>(io_, std::move(jid), std::move(nick), all, invited, options_);
  index_[room->jid.BareString()] = room.get();
  rooms_.push_back(std::move(room));
  return *rooms_.back();
}

void RoomManager::Handle(const xmpp::InboundEvent& event) {
  std::visit(
      [this](const auto& e) {
        using T = std::decay_t<decltype(e)>;
        if constexpr (std::is_same_v<T, xmpp::SessionOnline>) {
          OnOnline(e);
        } else if constexpr (std::is_same_v<T, xmpp::RoomPresence>) {
          OnPresence(e);
        } else if constexpr (std::is_same_v<T, xmpp::GroupMessage>) {
          OnMessage(e);
        } else if constexpr (std::is_same_v<T, xmpp::RoomInvite>) {
          OnInvite(e);
        } else if constexpr (std::is_same_v<T, xmpp::SelfPingResult>) {
          OnSelfPing(e);
        }
      },
      event);
}

bool RoomManager::IsJoined(const xmpp::Jid& room) const {
  const Room* found = Find(room);
  return found != nullptr && found->state == State::kJoined;
}

bool RoomManager::AnswersAll(const xmpp::Jid& room) const {
  const Room* found = Find(room);
  return found != nullptr && found->all;
}

std::string RoomManager::NickIn(const xmpp::Jid& room) const {
  const Room* found = Find(room);
  return found == nullptr ? "" : found->nick;
}

absl::Status RoomManager::Join(const agent::RoomSettings& config) {
  absl::StatusOr<xmpp::Jid> jid = xmpp::Jid::Parse(config.jid);
  if (!jid.ok() || jid->local().empty() || !jid->resource().empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("jid: '", config.jid, "' is not a room's bare address (room@service)"));
  }
  if (config.activation != "mention" && config.activation != "all") {
    return absl::InvalidArgumentError("activation: must be \"mention\" or \"all\"");
  }
  if (Find(*jid) != nullptr) {
    return absl::AlreadyExistsError(absl::StrCat("already in ", jid->BareString()));
  }
  Room& room = Add(jid->Bare(), config.nick.empty() ? default_nick_ : config.nick,
                   config.activation == "all", /*invited=*/false);
  LOG(INFO) << "rooms: joining " << room.jid.BareString() << " (added at run time)";
  if (!own_jid_.empty()) JoinNow(room);  // else the next SessionOnline joins it
  return absl::OkStatus();
}

absl::Status RoomManager::Leave(const xmpp::Jid& jid) {
  const std::string bare = jid.BareString();
  auto it = index_.find(bare);
  if (it == index_.end()) return absl::NotFoundError(absl::StrCat("not in ", bare));
  Room* room = it->second;
  if (room->state == State::kJoined || room->state == State::kJoining) {
    act_(xmpp::JoinRoom{.room = room->jid, .nick = room->nick, .leave = true});
  }
  ++room->join_generation;
  ++room->ping_generation;
  room->join_timer.cancel();
  room->ping_timer.cancel();
  if (room->invited && invited_ > 0) --invited_;
  index_.erase(it);
  std::erase_if(rooms_, [room](const std::shared_ptr<Room>& r) { return r.get() == room; });
  LOG(INFO) << "rooms: left " << bare;
  return absl::OkStatus();
}

std::vector<xmpp::Jid> RoomManager::Rooms() const {
  std::vector<xmpp::Jid> jids;
  jids.reserve(rooms_.size());
  for (const std::shared_ptr<Room>& room : rooms_) jids.push_back(room->jid);
  return jids;
}

void RoomManager::OnOnline(const xmpp::SessionOnline& online) {
  own_jid_ = online.own_jid;
  // A new stream means the server forgot every occupant of the old one: join everything
  // afresh, with the preferred nick, whatever was pending.
  for (const std::shared_ptr<Room>& room : rooms_) {
    if (room->state == State::kBanned) continue;
    room->backoff.Reset();
    room->nick_suffix = 0;
    room->nick = room->base_nick;
    JoinNow(*room);
  }
}

void RoomManager::JoinNow(Room& room) {
  room.state = State::kJoining;
  room.ping_pending = false;
  ++room.ping_generation;
  room.ping_timer.cancel();
  act_(xmpp::JoinRoom{.room = room.jid, .nick = room.nick, .password = room.password});
  ArmJoinTimer(room, options_.join_timeout);
}

void RoomManager::OnPresence(const xmpp::RoomPresence& presence) {
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
  if (Has(presence.status_codes, 303)) return;  // a nick change: the new nick's presence follows
  if (room->state == State::kBanned || room->state == State::kIdle) return;
  if (Has(presence.status_codes, 301)) {
    room->state = State::kBanned;
    ++room->join_generation;
    room->join_timer.cancel();
    ++room->ping_generation;
    room->ping_timer.cancel();
    LOG(ERROR) << "rooms: banned from " << room->jid.BareString() << "; not rejoining";
    return;
  }
  std::string why = "removed from the room";
  if (Has(presence.status_codes, 307)) why = "kicked";
  if (Has(presence.status_codes, 332)) why = "the room service shut down";
  if (Has(presence.status_codes, 321) || Has(presence.status_codes, 322)) {
    why = "no longer a member";
  }
  LOG(WARNING) << "rooms: " << why << " in " << room->jid.BareString();
  ScheduleRejoin(*room, why);
}

void RoomManager::Joined(Room& room, const xmpp::RoomPresence& presence) {
  // The room may have changed the nick it gave us (status 210).
  if (!presence.nick.empty()) room.nick = presence.nick;
  if (room.state == State::kJoined) return;  // a presence update while in the room
  room.state = State::kJoined;
  room.backoff.Reset();
  ++room.join_generation;
  room.join_timer.cancel();
  LOG(INFO) << "rooms: joined " << room.jid.BareString() << " as " << room.nick;
  if (Has(presence.status_codes, 201)) CreateInstantRoom(room);
  ArmPingTimer(room, options_.self_ping_interval);
}

void RoomManager::OnJoinError(Room& room, const xmpp::RoomPresence& presence) {
  // An error about a nick tried before (and since replaced) says nothing about this attempt.
  if (!presence.nick.empty() && presence.nick != room.nick) return;
  if (room.state == State::kBanned || room.state == State::kIdle) return;
  const std::string& condition = presence.error_condition;
  if (condition == "forbidden") {
    room.state = State::kBanned;
    ++room.join_generation;
    room.join_timer.cancel();
    LOG(ERROR) << "rooms: " << room.jid.BareString()
               << " refused Herald (forbidden: banned); not rejoining";
    return;
  }
  if (condition == "conflict") {
    if (room.nick_suffix < options_.max_nick_suffix) {
      ++room.nick_suffix;
      room.nick = absl::StrCat(room.base_nick, std::string(room.nick_suffix, '_'));
      LOG(INFO) << "rooms: nick taken in " << room.jid.BareString() << "; trying " << room.nick;
      JoinNow(room);
      return;
    }
    room.nick_suffix = 0;
    room.nick = room.base_nick;
  }
  LOG(WARNING) << "rooms: could not join " << room.jid.BareString() << " (" << condition << ")";
  ScheduleRejoin(room, condition);
}

void RoomManager::ScheduleRejoin(Room& room, std::string_view why) {
  room.state = State::kWaiting;
  room.ping_pending = false;
  ++room.ping_generation;
  room.ping_timer.cancel();
  const absl::Duration delay = room.backoff.Next();
  LOG(INFO) << "rooms: rejoining " << room.jid.BareString() << " in " << Shown(delay) << " (" << why
            << ", attempt " << room.backoff.attempts() << ")";
  ArmJoinTimer(room, delay);
}

void RoomManager::ArmJoinTimer(Room& room, absl::Duration delay) {
  const uint64_t generation = ++room.join_generation;
  room.join_timer.expires_after(ToChrono(delay));
  std::weak_ptr<Room> weak = room.weak_from_this();
  room.join_timer.async_wait([this, weak, generation](const std::error_code& error) {
    std::shared_ptr<Room> alive = weak.lock();
    if (error || alive == nullptr || alive->join_generation != generation) return;
    OnJoinTimer(*alive);
  });
}

void RoomManager::OnJoinTimer(Room& room) {
  if (room.state == State::kWaiting) {
    JoinNow(room);
  } else if (room.state == State::kJoining) {
    LOG(WARNING) << "rooms: " << room.jid.BareString() << " did not answer the join within "
                 << Shown(options_.join_timeout);
    ScheduleRejoin(room, "no answer to the join");
  }
}

void RoomManager::ArmPingTimer(Room& room, absl::Duration delay) {
  const uint64_t generation = ++room.ping_generation;
  room.ping_timer.expires_after(ToChrono(delay));
  std::weak_ptr<Room> weak = room.weak_from_this();
  room.ping_timer.async_wait([this, weak, generation](const std::error_code& error) {
    std::shared_ptr<Room> alive = weak.lock();
    if (error || alive == nullptr || alive->ping_generation != generation) return;
    OnPingTimer(*alive);
  });
}

void RoomManager::OnPingTimer(Room& room) {
  if (room.state != State::kJoined) return;
  // XEP-0410 §3: traffic from the room proves Herald is in it; ping only after silence.
  const absl::Duration quiet = options_.clock() - room.last_traffic;
  if (!room.ping_pending && quiet < options_.self_ping_interval) {
    ArmPingTimer(room, options_.self_ping_interval - quiet);
    return;
  }
  room.ping_pending = true;
  act_(xmpp::SelfPing{.occupant = room.jid.WithResource(room.nick)});
  // A safety net: should no answer ever come, the next tick pings again.
  ArmPingTimer(room, options_.self_ping_interval);
}

void RoomManager::OnSelfPing(const xmpp::SelfPingResult& result) {
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
    return;
  }
  LOG(WARNING) << "rooms: self-ping says Herald is no longer in " << room->jid.BareString() << " ("
               << result.condition << ")";
  ScheduleRejoin(*room, absl::StrCat("self-ping: ", AbslView(result.condition)));
}

void RoomManager::OnInvite(const xmpp::RoomInvite& invite) {
  if (policy_ == nullptr || !policy_->Allows(invite.inviter)) {
    LOG(INFO) << "rooms: ignored an invitation to " << invite.room.BareString() << " from "
              << invite.inviter.BareString() << " (not allowed)";
    return;
  }
  Room* room = Find(invite.room);
  if (room == nullptr) {
    if (invited_ >= options_.max_invited_rooms) {
      LOG(WARNING) << "rooms: ignored an invitation to " << invite.room.BareString() << " from "
                   << invite.inviter.BareString() << " (already in " << options_.max_invited_rooms
                   << " rooms by invitation)";
      return;
    }
    ++invited_;
    room = &Add(invite.room.Bare(), default_nick_, /*all=*/false, /*invited=*/true);
  }
  if (!invite.password.empty()) room->password = invite.password;
  if (room->state == State::kJoined || room->state == State::kJoining) return;
  // An allowed person's invitation is reason enough to try again, even after a ban.
  LOG(INFO) << "rooms: joining " << room->jid.BareString() << " on the invitation of "
            << invite.inviter.BareString();
  room->backoff.Reset();
  JoinNow(*room);
}

void RoomManager::OnMessage(const xmpp::GroupMessage& message) {
  Room* room = Find(message.room);
  if (room == nullptr) return;
  room->last_traffic = options_.clock();
  if (room->state != State::kJoined || message.delayed) return;
  if (message.nick == room->nick) return;  // the room echoes what Herald said
  if (!room->all && !MentionsNick(message.body, room->nick) &&
      !MentionsNick(message.body, room->base_nick)) {
    return;
  }
  if (!PassesLoopBreaker(*room, message.nick)) return;
  if (on_turn_) on_turn_(message);
}

bool RoomManager::PassesLoopBreaker(Room& room, const std::string& nick) {
  auto it = room.occupants.find(nick);
  if (it == room.occupants.end()) return true;  // never answered: nothing to count
  Occupant& occupant = it->second;
  const absl::Time now = options_.clock();
  if (now < occupant.paused_until) return false;
  while (!occupant.replies.empty() && now - occupant.replies.front() > options_.loop_window) {
    occupant.replies.pop_front();
  }
  if (static_cast<int>(occupant.replies.size()) < options_.loop_replies) return true;
  occupant.paused_until = now + options_.loop_pause;
  occupant.replies.clear();
  LOG(WARNING) << "rooms: " << options_.loop_replies << " replies to " << nick << " in "
               << room.jid.BareString() << " within " << Shown(options_.loop_window)
               << "; ignoring " << nick << " for " << Shown(options_.loop_pause)
               << " (a reply loop with another bot?)";
  return false;
}

void RoomManager::RecordReply(const xmpp::Jid& room_jid, std::string_view to_nick) {
  Room* room = Find(room_jid);
  if (room == nullptr || to_nick.empty()) return;
  const absl::Time now = options_.clock();
  if (room->occupants.size() >= kMaxTrackedOccupants) {
    // Forget occupants with nothing recent and no pause running.
    absl::erase_if(room->occupants, [&](const auto& entry) {
      const Occupant& o = entry.second;
      return now >= o.paused_until &&
             (o.replies.empty() || now - o.replies.back() > options_.loop_window);
    });
    if (room->occupants.size() >= kMaxTrackedOccupants) return;
  }
  Occupant& occupant = room->occupants[std::string(to_nick)];
  occupant.replies.push_back(now);
  while (static_cast<int>(occupant.replies.size()) > std::max(options_.loop_replies, 1)) {
    occupant.replies.pop_front();  // only the newest loop_replies can trip the breaker
  }
}

void RoomManager::CreateInstantRoom(const Room& room) {
  LOG(INFO) << "rooms: created " << room.jid.BareString() << "; accepting its default settings";
  act_(xmpp::ConfigureRoom{.room = room.jid, .from = own_jid_});
}

}  // namespace herald::agent
