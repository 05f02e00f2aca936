// component/agent/conversation_replies.cc
//
// What a conversation sends and what it remembers of what it sent (conversation.h): replies
// and their XEP-0461 reply references, streamed answers, receipts and markers, and the last
// messages sent, which replies (XEP-0461) and reactions (XEP-0444: feedback, or the answer to
// an approval question) are matched against.
#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "component/agent/conversation.h"
#include "component/agent/pending_answers.h"
#include "component/base/absl_string_view.h"
#include "component/base/utf8.h"
#include "glog/logging.h"

namespace herald::agent {
namespace {

// 👍 (true) or 👎 (false) among `reactions`, in any skin tone; nullopt for neither or both.
std::optional<bool> Thumbs(const std::vector<std::string>& reactions) {
  bool up = false;
  bool down = false;
  for (const std::string& reaction : reactions) {
    up = up || reaction.starts_with("\xF0\x9F\x91\x8D");      // U+1F44D
    down = down || reaction.starts_with("\xF0\x9F\x91\x8E");  // U+1F44E
  }
  if (up == down) return std::nullopt;
  return up;
}

}  // namespace

void Conversation::OnReactions(const IncomingMessage& from, const std::string& id,
                               const std::vector<std::string>& reactions) {
  auto sent = std::find_if(sent_.begin(), sent_.end(),
                           [&](const SentMessage& message) { return message.id == id; });
  if (sent == sent_.end()) {
    LOG(INFO) << "conversation " << id_ << ": a reaction to a message it does not know";
    return;
  }
  const std::optional<bool> thumbs = Thumbs(reactions);
  if (sent->question && thumbs.has_value()) {
    IncomingMessage answer = from;
    answer.body = *thumbs ? "yes" : "no";
    if (AnswerPendingAction(services_, answer)) return;
  }
  if (thumbs == true) ++services_.counters.feedback_positive;
  if (thumbs == false) ++services_.counters.feedback_negative;
  const std::string shown = absl::StrJoin(reactions, " ");
  const std::string verdict = reactions.empty()     ? "withdrawn"
                              : !thumbs.has_value() ? "other"
                              : *thumbs             ? "positive"
                                                    : "negative";
  Publish(events::EventType::kFeedback, "",
          absl::StrCat("feedback (", verdict, ") from ", from.author),
          {{"message_id", id}, {"reactions", shown}, {"verdict", verdict}});
  std::string said = reactions.empty() ? std::string("took back a reaction to: ")
                                       : absl::StrCat("reacted ", shown, " to: ");
  std::string text = sent->text;
  if (base::TruncateUtf8(text, 300)) text += "…";
  said += text;
  const memory::MemoryEntry note{
      .time = services_.clock(), .role = "note", .author = from.author, .text = std::move(said)};
  memory::MemoryStore* store = &services_.memory;
  asio::post(files_, [store, ref = ref_, note, conversation = id_] {
    absl::Status appended = store->Append(ref, note);
    if (!appended.ok()) {
      LOG(WARNING) << "conversation " << conversation << ": feedback not saved: " << appended;
    }
  });
}

void Conversation::Acknowledge(const IncomingMessage& message,
                               xmpp::AcknowledgeMessage::Kind kind) {
  if (message.id.empty()) return;
  services_.act(xmpp::AcknowledgeMessage{.to = message.reply_to,
                                         .id = message.id,
                                         .kind = kind,
                                         .thread = message.thread,
                                         .from = message.own});
}

void SayTo(RuntimeServices& services, const IncomingMessage& to, std::string body) {
  services.act(xmpp::SendMessage{.to = to.reply_to,
                                 .body = std::move(body),
                                 .type = to.type,
                                 .thread = to.thread,
                                 .from = to.own});
}

void SayTo(RuntimeServices& services, IncomingMessage&& to, std::string body) {
  // Built where the action holds it: a SendMessage is eighteen strings to move and destroy.
  xmpp::OutboundAction action(std::in_place_type<xmpp::SendMessage>);
  xmpp::SendMessage& message = std::get<xmpp::SendMessage>(action);
  message.to = std::move(to.reply_to);
  message.body = std::move(body);
  message.type = std::move(to.type);
  message.thread = std::move(to.thread);
  message.from = std::move(to.own);
  services.act(action);
}

void Conversation::RememberSent(std::string id, std::string text, bool question) {
  if (id.empty()) return;
  if (sent_.size() == kRecentlySent) sent_.pop_front();
  sent_.push_back(SentMessage{.id = std::move(id), .text = std::move(text), .question = question});
}

std::optional<std::string> Conversation::SentText(std::string_view id) const {
  if (id.empty()) return std::nullopt;
  for (const SentMessage& message : sent_) {
    if (message.id == id || message.room_id == id) return message.text;
  }
  return std::nullopt;
}

void Conversation::OnEcho(std::string_view id, std::string room_id) {
  for (SentMessage& message : sent_) {
    // The first relay is the room's; a later message that copies the id is someone else's.
    if (message.id == id && message.room_id.empty()) message.room_id = std::move(room_id);
  }
}

std::string QuoteReplied(std::string_view replied, std::string_view text) {
  const std::string_view quoted = replied.substr(0, base::Utf8Boundary(replied, kMaxQuotedBytes));
  std::string out;
  out.reserve(quoted.size() + text.size() + 64);
  for (absl::string_view line : absl::StrSplit(AbslView(quoted), '\n')) {
    absl::StrAppend(&out, "> ", line, "\n");
  }
  if (quoted.size() < replied.size()) out += "> …\n";
  absl::StrAppend(&out, AbslView(text));
  return out;
}

xmpp::SendMessage Conversation::ReplyTo(const IncomingMessage& to, std::string body,
                                        bool active) const {
  xmpp::SendMessage reply{
      .to = to.reply_to,
      .body = std::move(body),
      .type = to.type == "groupchat" ? "groupchat" : (to.type == "normal" ? "normal" : "chat"),
      .thread = to.thread,
      .from = to.own,
      .chat_state = active && !in_room() ? "active" : ""};
  // In a room, say which message this answers (XEP-0461), as many people talk there at once.
  if (in_room() && !to.id.empty()) {
    absl::StatusOr<xmpp::Jid> author =
        xmpp::Jid::Parse(absl::StrCat(to.reply_to.BareString(), "/", to.author));
    if (author.ok()) {
      reply.reply_id = to.id;
      reply.reply_to = *std::move(author);
    }
  }
  return reply;
}

void Conversation::Reply(const IncomingMessage& to, std::string body, bool active) {
  if (to.sink) return;  // a program follows this turn through its events instead
  services_.act(ReplyTo(to, std::move(body), active));
}

bool Conversation::MayStream(const IncomingMessage& to) const {
  const std::string& mode = services_.options.stream_answers;
  if (to.sink || mode == "off") return false;
  if (in_room() || mode == "always") return true;
  return services_.client_features.ShowsCorrections(to.reply_to).value_or(false);
}

StreamedAnswer& Conversation::StartAnswer(const IncomingMessage& to) {
  const AgentOptions& options = services_.options;
  const StreamPacing pacing{
      .first_part_after = absl::Milliseconds(options.stream_first_part_ms),
      .interval = absl::Milliseconds(in_room() ? options.room_correction_interval_ms
                                               : options.correction_interval_ms)};
  answer_ = std::make_unique<StreamedAnswer>(
      ReplyTo(to, "", /*active=*/true), pacing, [this, &to] { return MayStream(to); },
      services_.clock, [this](xmpp::SendMessage part) { services_.act(std::move(part)); });
  return *answer_;
}

}  // namespace herald::agent
