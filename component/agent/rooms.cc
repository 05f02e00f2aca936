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

namespace {

xmpp::muc::MucOptions MucOptionsFrom(const RoomOptions& options) {
  return xmpp::muc::MucOptions{.self_ping_interval = options.self_ping_interval,
                               .rejoin_initial = options.rejoin_initial,
                               .rejoin_max = options.rejoin_max,
                               .join_timeout = options.join_timeout,
                               .max_nick_suffix = options.max_nick_suffix,
                               .clock = options.clock};
}

}  // namespace

RoomManager::RoomManager(asio::io_context& io, std::vector<agent::RoomSettings> rooms,
                         const AccessPolicy* policy, ActionSink act, TurnSink on_turn,
                         RoomOptions options)
    : policy_(policy),
      on_turn_(std::move(on_turn)),
      options_(std::move(options)),
      default_nick_(rooms.empty() || rooms.front().nick.empty() ? "herald" : rooms.front().nick),
      muc_(io, MucOptionsFrom(options_), std::move(act),
           [this](const xmpp::muc::RoomEvent& event) { OnRoomEvent(event); }) {
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

RoomManager::~RoomManager() = default;

RoomManager::Room* RoomManager::Find(const xmpp::Jid& room) const {
  auto it = index_.find(room.BareString());
  return it == index_.end() ? nullptr : it->second;
}

RoomManager::Room& RoomManager::Add(xmpp::Jid jid, std::string nick, bool all, bool invited,
                                    std::string password, std::string why) {
  auto room = std::make_unique<Room>(Room{.jid = std::move(jid),
                                          .base_nick = nick,
                                          .nick = nick,
                                          .all = all,
                                          .invited = invited,
                                          .password = std::move(password)});
  index_[room->jid.BareString()] = room.get();
  rooms_.push_back(std::move(room));
  Room& added = *rooms_.back();
  Enter(added, std::move(why));
  return added;
}

void RoomManager::Enter(Room& room, std::string why) {
  if (options_.leased && !leases_.contains(room.jid.BareString())) return;
  room.entered = true;
  muc_.Perform(xmpp::muc::EnterRoom{
      .room = room.jid, .nick = room.nick, .password = room.password, .why = std::move(why)});
}

void RoomManager::SetLeases(const absl::flat_hash_set<std::string>& held) {
  leases_ = held;
  for (const std::unique_ptr<Room>& room : rooms_) {
    const bool holds = leases_.contains(room->jid.BareString());
    if (holds && !room->entered) {
      Enter(*room, "(this instance's to answer in now)");
    } else if (!holds && room->entered) {
      // Another instance holds it: it is the same occupant, so no presence goes out.
      muc_.Perform(xmpp::muc::LeaveRoom{.room = room->jid, .announce = false});
      room->entered = false;
      room->joined = false;
      LOG(INFO) << "rooms: another instance answers in " << room->jid.BareString() << " now";
    }
  }
}

void RoomManager::Handle(const xmpp::InboundEvent& event) {
  // The mechanics first: MucClient reads presence and self-pings, and reports what they mean
  // through OnRoomEvent before a message of the same room is judged here.
  muc_.Handle(event);
  if (const auto* message = std::get_if<xmpp::GroupMessage>(&event)) {
    OnMessage(*message);
  } else if (const auto* invite = std::get_if<xmpp::RoomInvite>(&event)) {
    OnInvite(*invite);
  }
}

void RoomManager::OnRoomEvent(const xmpp::muc::RoomEvent& event) {
  std::visit(
      [this](const auto& e) {
        using T = std::decay_t<decltype(e)>;
        Room* room = Find(e.room);
        if (room == nullptr) return;
        if constexpr (std::is_same_v<T, xmpp::muc::RoomJoined>) {
          room->joined = true;
          room->nick = e.nick;
          if (on_joined_) on_joined_(room->jid, room->nick);
        } else if constexpr (std::is_same_v<T, xmpp::muc::RoomLeft>) {
          room->joined = false;
        } else if constexpr (std::is_same_v<T, xmpp::muc::NickChanged>) {
          room->nick = e.nick;
        }
        // JoinFailed: not in the room before, not in it now; MucClient retries or gives up.
      },
      event);
}

bool RoomManager::IsJoined(const xmpp::Jid& room) const {
  const Room* found = Find(room);
  return found != nullptr && found->joined;
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
  // Joined now when the session is online, else at the next SessionOnline.
  Add(jid->Bare(), config.nick.empty() ? default_nick_ : config.nick, config.activation == "all",
      /*invited=*/false, /*password=*/"", "(added at run time)");
  return absl::OkStatus();
}

absl::Status RoomManager::Leave(const xmpp::Jid& jid) {
  const std::string bare = jid.BareString();
  auto it = index_.find(bare);
  if (it == index_.end()) return absl::NotFoundError(absl::StrCat("not in ", bare));
  Room* room = it->second;
  if (room->entered) muc_.Perform(xmpp::muc::LeaveRoom{.room = room->jid});
  if (room->invited && invited_ > 0) --invited_;
  index_.erase(it);
  std::erase_if(rooms_, [room](const std::unique_ptr<Room>& r) { return r.get() == room; });
  LOG(INFO) << "rooms: left " << bare;
  return absl::OkStatus();
}

std::vector<xmpp::Jid> RoomManager::Rooms() const {
  std::vector<xmpp::Jid> jids;
  jids.reserve(rooms_.size());
  for (const std::unique_ptr<Room>& room : rooms_) jids.push_back(room->jid);
  return jids;
}

void RoomManager::OnInvite(const xmpp::RoomInvite& invite) {
  if (policy_ == nullptr || !policy_->Allows(invite.inviter)) {
    LOG(INFO) << "rooms: ignored an invitation to " << invite.room.BareString() << " from "
              << invite.inviter.BareString() << " (not allowed)";
    return;
  }
  const std::string why = absl::StrCat("on the invitation of ", invite.inviter.BareString());
  if (Find(invite.room) == nullptr) {
    if (invited_ >= options_.max_invited_rooms) {
      LOG(WARNING) << "rooms: ignored an invitation to " << invite.room.BareString() << " from "
                   << invite.inviter.BareString() << " (already in " << options_.max_invited_rooms
                   << " rooms by invitation)";
      return;
    }
    ++invited_;
    Add(invite.room.Bare(), default_nick_, /*all=*/false, /*invited=*/true, invite.password, why);
    return;
  }
  // A known room: MucClient joins again unless it is in or joining, even after a ban (an
  // allowed person's invitation is reason enough), with the new password if there is one.
  Room& room = *Find(invite.room);
  if (!invite.password.empty()) room.password = invite.password;
  if (options_.leased && !room.entered) return;  // another instance is in it
  muc_.Perform(xmpp::muc::EnterRoom{
      .room = room.jid, .nick = default_nick_, .password = invite.password, .why = why});
}

void RoomManager::OnMessage(const xmpp::GroupMessage& message) {
  Room* room = Find(message.room);
  if (room == nullptr) return;
  // With `leased`, a room this instance has just taken over is one it was in all along (the
  // same occupant): what is said there counts before its join is confirmed.
  if (!(room->joined || (options_.leased && room->entered)) || message.delayed) return;
  if (message.nick == room->nick) return;  // the room echoes what Herald said
  // A reply to one of Herald's messages (XEP-0461) speaks to Herald as much as its nick does.
  const bool replies_to_herald = !message.reply.id.empty() &&
                                 message.reply.to.resource() == room->nick &&
                                 message.reply.to.BareString() == message.room.BareString();
  if (!room->all && !replies_to_herald && !MentionsNick(message.body, room->nick) &&
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

}  // namespace herald::agent
