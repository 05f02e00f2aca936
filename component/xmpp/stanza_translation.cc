// component/xmpp/stanza_translation.cc
//
// Stanzas to InboundEvents and OutboundActions to stanzas (see the header).
#include "component/xmpp/stanza_translation.h"

#include <utility>
#include <variant>

#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "component/base/absl_string_view.h"
#include "component/base/utf8.h"
#include "component/xmpp/adhoc_commands.h"
#include "component/xmpp/agent_protocol.h"
#include "component/xmpp/body_split.h"
#include "component/xmpp/emoji.h"
#include "component/xmpp/namespaces.h"
#include "component/xmpp/oob_translation.h"
#include "component/xmpp/pubsub.h"
#include "component/xmpp/raw_stanza.h"
#include "component/xmpp/reply_translation.h"
#include "component/xmpp/stanza.h"
#include "component/xmpp/xml_writer.h"
#include "glog/logging.h"

namespace herald::xmpp {
namespace {

const char* ContentNamespace(SessionMode mode) {
  return mode == SessionMode::kComponent ? ns::kComponentAccept : ns::kClient;
}

// A reason a room gave, as Herald keeps it for its log and events: control characters (a
// line break would forge a log line) become spaces, and it is cut to `max` bytes or fewer
// without cutting a UTF-8 sequence in two.
std::string OneLineReason(std::string text, size_t max) {
  base::TruncateUtf8(text, max);
  for (char& c : text) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) c = ' ';
  }
  return text;
}

void AppendStanza(XmlElement stanza, const OutboundContext& context, std::string& out) {
  // XEP-0114: the server routes a component's stanzas by their from; never omit it.
  if (context.mode == SessionMode::kComponent && !stanza.HasAttr("from")) {
    stanza.SetAttr("from", context.own_jid.ToString());
  }
  AppendXml(stanza, ContentNamespace(context.mode), out);
}

// An invitation in `message` (mediated or direct) from `from`, put in `out`; false when the
// message holds none. A malformed one is logged and dropped, still counted as an invitation.
bool TranslateInvite(const XmlElement& message, const Jid& from, InboundMessage& out) {
  if (const XmlElement* x = message.FindChild("x", ns::kMucUser)) {
    const XmlElement* invite = x->FindChild("invite", ns::kMucUser);
    if (invite == nullptr) return false;  // e.g. the marker of a private message in a room
    // XEP-0045 §7.8.2: the room relays the invitation and names the inviter.
    absl::StatusOr<Jid> inviter = Jid::Parse(invite->Attr("from"));
    if (from.local().empty() || !from.IsBare() || !inviter.ok()) {
      LOG(WARNING) << "XMPP: ignoring a malformed room invitation from " << from.ToString();
      return true;
    }
    out.mediated_invite = RoomInvite{.room = from,
                                     .inviter = inviter->Bare(),
                                     .password = x->ChildText("password"),
                                     .reason = invite->ChildText("reason")};
    return true;
  }
  if (const XmlElement* x = message.FindChild("x", ns::kConference)) {
    // XEP-0249: the inviter writes to us directly and names the room.
    absl::StatusOr<Jid> room = Jid::Parse(x->Attr("jid"));
    if (!room.ok() || room->local().empty()) {
      LOG(WARNING) << "XMPP: ignoring a direct room invitation without a valid room from "
                   << from.ToString();
      return true;
    }
    out.event = RoomInvite{.room = room->Bare(),
                           .inviter = from.Bare(),
                           .password = std::string(x->Attr("password")),
                           .reason = std::string(x->Attr("reason"))};
    return true;
  }
  return false;
}

}  // namespace

namespace {

// The id `room` stamped on a message it relays (XEP-0359), or "". Only the room's own: a
// <stanza-id/> by anyone else may have been written by the sender.
std::string RoomStanzaId(const XmlElement& message, std::string_view room) {
  for (const XmlNode& node : message.children()) {
    const XmlElement* child = node.element.get();
    if (child != nullptr && child->name() == "stanza-id" && child->xmlns() == ns::kStanzaId &&
        child->Attr("by") == room) {
      return std::string(child->Attr("id"));
    }
  }
  return "";
}

}  // namespace

namespace {

// The reactions of `from` in `reactions` (XEP-0444 <reactions id=.../>) as the event of `out`;
// nothing for a malformed or oversized one. A reaction that is not a single emoji is left out;
// when every reaction was, nothing is reported (an empty list would take the sender's
// reactions back).
void TranslateReactions(const XmlElement& reactions, const Jid& from, std::string_view to_text,
                        const Jid& own_jid, InboundMessage& out) {
  const std::string_view id = reactions.Attr("id");
  if (id.empty()) return;
  MessageReactions event{.from = from, .id = std::string(id)};
  int not_emoji = 0;
  for (const XmlNode& node : reactions.children()) {
    if (node.element == nullptr || node.element->name() != "reaction" ||
        node.element->xmlns() != ns::kReactions) {
      continue;
    }
    std::string reaction = node.element->Text();
    if (reaction.empty()) continue;
    if (reaction.size() > kMaxReactionBytes || event.reactions.size() == kMaxReactions) {
      LOG(INFO) << "XMPP: dropping reactions from " << from.ToString() << ": too many or too long";
      return;
    }
    if (!IsSingleEmoji(reaction)) {
      ++not_emoji;
      continue;
    }
    if (std::find(event.reactions.begin(), event.reactions.end(), reaction) ==
        event.reactions.end()) {
      event.reactions.push_back(std::move(reaction));
    }
  }
  if (not_emoji > 0) {
    LOG(INFO) << "XMPP: " << not_emoji << " reaction(s) from " << from.ToString()
              << " are not single emoji and are left out";
    if (event.reactions.empty()) return;
  }
  absl::StatusOr<Jid> to = own_jid.Spells(to_text) ? own_jid : Jid::Parse(to_text);
  event.to = to.ok() ? *std::move(to) : own_jid;
  out.event = std::move(event);
}

}  // namespace

InboundMessage TranslateMessage(const XmlElement& message, const Jid& own_jid) {
  InboundMessage out;
  const std::string_view type = message.Attr("type");
  if (type == "error") return out;
  absl::StatusOr<Jid> from = Jid::Parse(message.Attr("from"));
  if (!from.ok()) {
    LOG(WARNING) << "XMPP: dropping a message with an invalid sender address: "
                 << from.status().message();
    return out;
  }
  // XEP-0060 notifications come as headline (or normal) messages; other headlines are not
  // for Herald.
  if (const XmlElement* event = message.FindChild("event", ns::kPubsubEvent)) {
    if (type == "groupchat") return out;
    if (std::optional<PubsubItems> items = TranslatePubsubEvent(*event, *from)) {
      items->delayed = message.FindChild("delay", ns::kDelay) != nullptr ||
                       message.FindChild("x", ns::kLegacyDelay) != nullptr;
      out.event = *std::move(items);
    }
    return out;
  }
  if (type == "headline") return out;
  // Invitations often carry a human-readable body too; they are invitations, not chat.
  if (TranslateInvite(message, *from, out)) return out;
  // XEP-0444 reactions in a chat (a client may add a fallback body; the reactions win).
  if (type != "groupchat") {
    if (const XmlElement* reactions = message.FindChild("reactions", ns::kReactions)) {
      TranslateReactions(*reactions, *from, message.Attr("to"), own_jid, out);
      return out;
    }
  }
  const XmlElement* body = message.FindChild("body");
  // XEP-0066 attachments; without any, a look at the children and no call or allocation.
  std::vector<OobAttachment> attachments;
  if (HasOobData(message)) attachments = TranslateOobAttachments(message, *from);
  // Chat states, receipts... nothing to answer.
  if (body == nullptr && attachments.empty()) return out;
  if (type == "groupchat") {
    // Without a nick it is the room itself speaking (subject, announcements): not a turn.
    if (from->resource().empty()) return out;
    std::string text = body != nullptr ? body->Text() : std::string();
    Reply reply = TranslateReply(message, text);
    const bool only_url = !attachments.empty() && BodyIsAttachmentUrl(text, attachments);
    out.event = GroupMessage{.room = from->Bare(),
                             .nick = from->resource(),
                             .id = std::string(message.Attr("id")),
                             .body = std::move(text),
                             .thread = message.ChildText("thread"),
                             .delayed = message.FindChild("delay", ns::kDelay) != nullptr ||
                                        message.FindChild("x", ns::kLegacyDelay) != nullptr,
                             .stanza_id = RoomStanzaId(message, from->BareString()),
                             .reply = std::move(reply),
                             .attachments = std::move(attachments),
                             .body_is_attachment_url = only_url};
    return out;
  }
  // Mostly Herald's own address, known already; anything else is parsed.
  const std::string_view to_text = message.Attr("to");
  absl::StatusOr<Jid> to = own_jid.Spells(to_text) ? own_jid : Jid::Parse(to_text);
  std::string text = body != nullptr ? body->Text() : std::string();
  Reply reply = TranslateReply(message, text);
  const bool only_url = !attachments.empty() && BodyIsAttachmentUrl(text, attachments);
  out.event =
      ChatMessage{.from = std::move(*from),
                  .to = to.ok() ? std::move(*to) : own_jid,
                  .id = std::string(message.Attr("id")),
                  .type = type.empty() ? "normal" : std::string(type),
                  .body = std::move(text),
                  .thread = message.ChildText("thread"),
                  .receipt_requested = message.FindChild("request", ns::kReceipts) != nullptr,
                  .markable = message.FindChild("markable", ns::kChatMarkers) != nullptr,
                  .reply = std::move(reply),
                  .attachments = std::move(attachments),
                  .body_is_attachment_url = only_url};
  return out;
}

std::optional<InboundEvent> TranslatePresence(const XmlElement& presence, const Jid& own_jid,
                                              const absl::flat_hash_set<std::string>& rooms) {
  const std::string_view type = presence.Attr("type");
  absl::StatusOr<Jid> from = Jid::Parse(presence.Attr("from"));
  if (!from.ok()) return std::nullopt;
  if (type == "subscribe") {
    absl::StatusOr<Jid> to = Jid::Parse(presence.Attr("to"));
    return SubscriptionRequest{.from = from->Bare(), .to = to.ok() ? *to : own_jid};
  }
  if (type == "error") {
    // A room answers a join it refuses (nick taken, banned, members only...) with an error
    // presence that need not carry any MUC payload; it can only be about our own occupant.
    if (!rooms.contains(from->BareString())) return std::nullopt;
    const XmlElement* error = presence.FindChild("error");
    return RoomPresence{.room = from->Bare(),
                        .nick = from->resource(),
                        .available = false,
                        .self = true,
                        .error_condition = std::string(error != nullptr ? ErrorCondition(*error)
                                                                        : "undefined-condition")};
  }
  if (!type.empty() && type != "unavailable") return std::nullopt;
  const XmlElement* x = presence.FindChild("x", ns::kMucUser);
  if (x == nullptr) {
    // A contact's presence; our own account's other resources are not contacts.
    if (rooms.contains(from->BareString()) || from->Bare() == own_jid.Bare()) return std::nullopt;
    absl::StatusOr<Jid> to = Jid::Parse(presence.Attr("to"));
    return ContactPresence{.from = *std::move(from),
                           .to = to.ok() ? *std::move(to) : own_jid,
                           .available = type.empty()};
  }
  if (from->resource().empty()) return std::nullopt;
  RoomPresence event{.room = from->Bare(), .nick = from->resource(), .available = type.empty()};
  if (const XmlElement* destroy = x->FindChild("destroy"); destroy != nullptr && !event.available) {
    event.destroyed = true;
    // The room names it; anything that is not a room's bare address is not a venue.
    if (absl::StatusOr<Jid> alternate = Jid::Parse(destroy->Attr("jid"));
        alternate.ok() && !alternate->local().empty()) {
      event.alternate_room = alternate->Bare();
    }
    event.destroy_reason = OneLineReason(destroy->ChildText("reason"), kMaxDestroyReasonBytes);
  }
  for (const XmlNode& node : x->children()) {
    if (node.element == nullptr || node.element->name() != "status" ||
        node.element->xmlns() != ns::kMucUser) {
      continue;
    }
    int code = 0;
    if (!absl::SimpleAtoi(AbslView(node.element->Attr("code")), &code) || code < 100 ||
        code > 999) {
      continue;
    }
    if (event.status_codes.size() >= kMaxStatusCodes) break;
    event.status_codes.push_back(code);
    if (code == 110) event.self = true;
  }
  return event;
}

RosterReceived TranslateRoster(const XmlElement& result) {
  RosterReceived roster;
  if (const XmlElement* query = result.FindChild("query", ns::kRoster)) {
    for (const XmlNode& node : query->children()) {
      if (node.element == nullptr || node.element->name() != "item") continue;
      absl::StatusOr<Jid> jid = Jid::Parse(node.element->Attr("jid"));
      if (!jid.ok()) continue;
      roster.items.push_back(
          RosterItem{.jid = *jid,
                     .subscription = std::string(node.element->Attr("subscription")),
                     .ask_pending = node.element->Attr("ask") == "subscribe"});
    }
  }
  return roster;
}

std::optional<XmlElement> AnswerIqRequest(const XmlElement& iq, SessionMode mode,
                                          const Jid& account, const IqResponder& responder) {
  if (mode == SessionMode::kClient && iq.Attr("type") == "set" &&
      iq.FindChild("query", ns::kRoster) != nullptr) {
    // A roster push (RFC 6121 §2.1.6) is only legitimate from our own account.
    absl::StatusOr<Jid> from = Jid::Parse(iq.Attr("from"));
    if (!iq.HasAttr("from") || (from.ok() && from->BareEquals(account))) {
      return MakeIqResult(iq);
    }
  }
  return responder.Answer(iq);
}

std::optional<SelfPingResult> TranslateSelfPingAnswer(const XmlElement& iq, const Jid& occupant) {
  absl::StatusOr<Jid> from = Jid::Parse(iq.Attr("from"));
  if (!from.ok() || !(*from == occupant)) return std::nullopt;
  SelfPingResult result{.occupant = occupant};
  if (iq.Attr("type") == "result") {
    result.joined = true;
  } else {
    const XmlElement* error = iq.FindChild("error");
    result.condition = error != nullptr ? ErrorCondition(*error) : "undefined-condition";
    // XEP-0410 §4: these come from the occupant's client, reached through the room, so the
    // occupant is still there; every other error means the room no longer knows it.
    result.joined =
        result.condition == "service-unavailable" || result.condition == "feature-not-implemented";
  }
  return result;
}

std::optional<ClientFeatures> TranslateFeaturesAnswer(const XmlElement& iq, const Jid& client) {
  absl::StatusOr<Jid> from = Jid::Parse(iq.Attr("from"));
  if (!from.ok() || !(*from == client)) return std::nullopt;
  ClientFeatures result{.of = client};
  if (iq.Attr("type") != "result") {
    const XmlElement* error = iq.FindChild("error");
    result.condition = error != nullptr ? ErrorCondition(*error) : "undefined-condition";
    return result;
  }
  const XmlElement* query = iq.FindChild("query", ns::kDiscoInfo);
  if (query == nullptr) {
    result.condition = "bad-request";  // a result that is not disco#info
    return result;
  }
  result.answered = true;
  for (const XmlNode& node : query->children()) {
    if (node.element == nullptr || node.element->name() != "feature") continue;
    const std::string_view var = node.element->Attr("var");
    if (var.empty()) continue;
    if (result.features.size() == kMaxClientFeatures) break;
    result.features.emplace_back(var);
  }
  return result;
}

std::optional<XmlElement> OversizedStanzaError(const XmlElement& head) {
  const std::string_view type = head.Attr("type");
  const bool answerable = (head.name() == "message" && type != "error") ||
                          (head.name() == "iq" && (type == "get" || type == "set"));
  if (!answerable || !head.HasAttr("from")) return std::nullopt;
  return MakeStanzaError(head, "modify", "policy-violation");
}

bool IsChatState(std::string_view state) {
  return state == "active" || state == "composing" || state == "paused" || state == "inactive" ||
         state == "gone";
}

std::string SerializeStanza(XmlElement stanza, const OutboundContext& context) {
  std::string xml;
  AppendStanza(std::move(stanza), context, xml);
  return xml;
}

namespace {

// A JID as an attribute value: its parts escaped one by one (each is whole UTF-8, so this is
// what escaping Jid::ToString() gives) without building the string.
void AppendJidAttribute(const Jid& jid, std::string& out) {
  if (!jid.local().empty()) {
    AppendEscapedAttribute(jid.local(), out);
    out.push_back('@');
  }
  AppendEscapedAttribute(jid.domain(), out);
  if (!jid.resource().empty()) {
    out.push_back('/');
    AppendEscapedAttribute(jid.resource(), out);
  }
}

void AppendTextElement(std::string_view name, std::string_view text, std::string& out) {
  out.push_back('<');
  out.append(name);
  if (text.empty()) {
    out.append("/>");
    return;
  }
  out.push_back('>');
  AppendEscapedText(text, out);
  out.append("</");
  out.append(name);
  out.push_back('>');
}

// <name xmlns=`xmlns` to=`to` id=`id`/>, a reference to another message (XEP-0461 reply,
// XEP-0308 replace); no to when `to` is null.
void AppendReference(std::string_view name, std::string_view xmlns, const Jid* to,
                     std::string_view id, std::string& out) {
  out.push_back('<');
  out.append(name);
  out.append(" xmlns='");
  out.append(xmlns);
  out.push_back('\'');
  if (to != nullptr) {
    out.append(" to='");
    AppendJidAttribute(*to, out);
    out.push_back('\'');
  }
  out.append(" id='");
  AppendEscapedAttribute(id, out);
  out.append("'/>");
}

// One <message/> of `message` carrying `body`, as AppendXml would write it in the stream's
// content namespace: to, type, id (message.id for the first part), from; <body/>, <thread/>;
// the reply and correction references and the out-of-band link if `first`; <no-store/>; then
// the chat state if `last`.
void AppendChatMessage(const SendMessage& message, std::string_view body, bool first, bool last,
                       const OutboundContext& context, std::string& out) {
  out.append("<message to='");
  AppendJidAttribute(message.to, out);
  out.append("' type='");
  AppendEscapedAttribute(message.type, out);
  out.append("' id='");
  AppendEscapedAttribute(first && !message.id.empty() ? message.id : context.next_id(), out);
  out.push_back('\'');
  if (!message.from.empty()) {
    out.append(" from='");
    AppendJidAttribute(message.from, out);
    out.push_back('\'');
  } else if (context.mode == SessionMode::kComponent) {
    out.append(" from='");  // XEP-0114: the server routes by it
    AppendJidAttribute(context.own_jid, out);
    out.push_back('\'');
  }
  out.push_back('>');
  AppendTextElement("body", body, out);
  if (!message.thread.empty()) AppendTextElement("thread", message.thread, out);
  if (first && !message.reply_id.empty()) {
    AppendReference("reply", ns::kReply, &message.reply_to, message.reply_id, out);
  }
  if (first && !message.replace_id.empty()) {
    AppendReference("replace", ns::kMessageCorrect, nullptr, message.replace_id, out);
  }
  if (first && !message.oob_url.empty()) {
    out.append("<x xmlns='");
    out.append(ns::kOob);
    out.append("'>");
    AppendTextElement("url", message.oob_url, out);
    if (!message.oob_desc.empty()) AppendTextElement("desc", message.oob_desc, out);
    out.append("</x>");
  }
  if (message.no_store) {
    out.append("<no-store xmlns='");
    out.append(ns::kHints);
    out.append("'/>");
  }
  if (last && IsChatState(message.chat_state)) {
    out.push_back('<');
    out.append(message.chat_state);
    out.append(" xmlns='");
    out.append(ns::kChatStates);
    out.append("'/>");
  }
  out.append("</message>");
}

void Append(XmlElement stanza, const OutboundContext& context, SerializedStanzas& out) {
  AppendStanza(std::move(stanza), context, out.Out());
  out.End();
}

}  // namespace

void SerializeChatMessage(const SendMessage& message, const OutboundContext& context,
                          SerializedStanzas& out) {
  if (!message.chat_state.empty() && !IsChatState(message.chat_state)) {
    LOG(WARNING) << "XMPP: not a chat state: '" << message.chat_state << "'; sent without";
  }
  const size_t start = out.Out().size();
  AppendChatMessage(message, message.body, /*first=*/true, /*last=*/true, context, out.Out());
  const size_t cap = context.max_stanza_bytes;
  if (out.Out().size() - start <= cap) {
    out.End();
    return;
  }
  out.Abandon();
  // Too large for the server: several messages, each within the cap, cut after a line where
  // possible; past kMaxMessageParts the rest is left out and the last part says so.
  std::string empty;
  AppendChatMessage(message, "", /*first=*/true, /*last=*/true, context, empty);
  const size_t overhead = empty.size();
  if (overhead + kMessageNoteReserve + 16 > cap) {
    LOG(WARNING) << "XMPP: dropped a message to " << message.to.ToString()
                 << ": its addresses and thread alone exceed max_outbound_stanza_bytes (" << cap
                 << ")";
    return;
  }
  std::vector<std::string_view> pieces =
      SplitBody(message.body, cap - overhead - kMessageNoteReserve);
  std::string note;
  if (pieces.size() > kMaxMessageParts) {
    size_t left_out = 0;
    for (size_t i = kMaxMessageParts; i < pieces.size(); ++i) left_out += pieces[i].size();
    pieces.resize(kMaxMessageParts);
    note = absl::StrCat("\n[… ", left_out, " more bytes were not sent: the message is too long]");
  }
  LOG(INFO) << "XMPP: a " << message.body.size() << "-byte message to " << message.to.ToString()
            << " goes out as " << pieces.size() << " messages (max_outbound_stanza_bytes " << cap
            << (note.empty() ? ")" : ", the rest cut)");
  for (size_t i = 0; i < pieces.size(); ++i) {
    const bool last = i + 1 == pieces.size();
    AppendChatMessage(
        message,
        last && !note.empty() ? absl::StrCat(AbslView(pieces[i]), note) : std::string(pieces[i]),
        /*first=*/i == 0, last, context, out.Out());
    out.End();
  }
}

void AddCaps(XmlElement& presence, std::string_view ver) {
  if (ver.empty()) return;
  presence.AddChild("c", ns::kCaps)
      .SetAttr("hash", "sha-1")
      .SetAttr("node", kCapsNode)
      .SetAttr("ver", ver);
}

void SerializeAction(const OutboundAction& action, const OutboundContext& context,
                     absl::flat_hash_set<std::string>& rooms, SerializedStanzas& out) {
  if (const auto* message = std::get_if<SendMessage>(&action)) {
    SerializeChatMessage(*message, context, out);
  } else if (const auto* presence = std::get_if<SendPresence>(&action)) {
    XmlElement stanza("presence");
    if (!presence->to.empty()) stanza.SetAttr("to", presence->to.ToString());
    if (!presence->type.empty()) stanza.SetAttr("type", presence->type);
    if (!presence->from.empty()) stanza.SetAttr("from", presence->from.ToString());
    if (presence->type.empty()) AddCaps(stanza, context.caps_ver);
    Append(std::move(stanza), context, out);
  } else if (const auto* state = std::get_if<SendChatState>(&action)) {
    if (!IsChatState(state->state)) {
      LOG(WARNING) << "XMPP: not a chat state: '" << state->state << "'; nothing sent";
      return;
    }
    XmlElement stanza("message");
    const bool to_room = state->to.IsBare() && rooms.contains(state->to.BareString());
    stanza.SetAttr("to", state->to.ToString()).SetAttr("type", to_room ? "groupchat" : "chat");
    if (!state->from.empty()) stanza.SetAttr("from", state->from.ToString());
    stanza.AddChild(state->state, ns::kChatStates);
    // A notification is stale a moment later; archives and offline storage have no use for it.
    stanza.AddChild("no-store", ns::kHints);
    Append(std::move(stanza), context, out);
  } else if (const auto* ack = std::get_if<AcknowledgeMessage>(&action)) {
    // XEP-0184 §5.1 and XEP-0333: no answer to a message without an id.
    if (ack->id.empty()) return;
    XmlElement stanza("message");
    stanza.SetAttr("to", ack->to.ToString()).SetAttr("type", "chat");
    if (!ack->from.empty()) stanza.SetAttr("from", ack->from.ToString());
    stanza.SetAttr("id", context.next_id());
    if (ack->kind == AcknowledgeMessage::Kind::kReceived) {
      stanza.AddChild("received", ns::kReceipts).SetAttr("id", ack->id);
    } else {
      stanza.AddChild("displayed", ns::kChatMarkers).SetAttr("id", ack->id);
    }
    if (!ack->thread.empty()) stanza.AddChild("thread").AddText(ack->thread);
    stanza.AddChild("store", ns::kHints);
    Append(std::move(stanza), context, out);
  } else if (const auto* answer = std::get_if<AnswerCommand>(&action)) {
    Append(CommandAnswerStanza(*answer, context.own_jid), context, out);
  } else if (const auto* answer = std::get_if<AnswerAgent>(&action)) {
    Append(AgentAnswerStanza(*answer), context, out);
  } else if (const auto* progress = std::get_if<SendAgentProgress>(&action)) {
    Append(AgentProgressStanza(*progress), context, out);
  } else if (std::holds_alternative<CallAgent>(action)) {
    LOG(DFATAL) << "XMPP: a CallAgent is sent with AgentCallRequest, not SerializeAction";
  } else if (const auto* join = std::get_if<JoinRoom>(&action)) {
    // The nick becomes a resource: it must be one, or the server would refuse the stanza.
    absl::StatusOr<Jid> occupant =
        Jid::Parse(absl::StrCat(join->room.BareString(), "/", AbslView(join->nick)));
    if (join->room.local().empty() || !occupant.ok() || occupant->resource() != join->nick) {
      LOG(WARNING) << "XMPP: cannot join " << join->room.BareString() << " as '" << join->nick
                   << "': not a valid room and nick";
      return;
    }
    XmlElement stanza("presence");
    stanza.SetAttr("to", occupant->ToString());
    if (!join->from.empty()) stanza.SetAttr("from", join->from.ToString());
    if (join->leave) {
      stanza.SetAttr("type", "unavailable");
      rooms.erase(join->room.BareString());
    } else {
      XmlElement& x = stanza.AddChild("x", ns::kMuc);
      // XEP-0045 §7.2.14: no history replay; what was said before Herald came is not a turn.
      x.AddChild("history").SetAttr("maxchars", "0");
      if (!join->password.empty()) x.AddChild("password").AddText(join->password);
      AddCaps(stanza, context.caps_ver);
      rooms.insert(join->room.BareString());
    }
    Append(std::move(stanza), context, out);
  } else if (const auto* configure = std::get_if<ConfigureRoom>(&action)) {
    if (configure->room.local().empty()) {
      LOG(WARNING) << "XMPP: cannot configure " << configure->room.BareString()
                   << ": not a room's address";
      return;
    }
    Append(InstantRoomRequest(*configure, context.next_id()), context, out);
  } else if (std::holds_alternative<SelfPing>(action)) {
    LOG(DFATAL) << "XMPP: a SelfPing is sent with SelfPingRequest, not SerializeAction";
  } else if (const auto* reactions = std::get_if<SendReactions>(&action)) {
    XmlElement stanza("message");
    stanza.SetAttr("to", reactions->to.ToString())
        .SetAttr("type", reactions->type)
        .SetAttr("id", context.next_id());
    if (!reactions->from.empty()) stanza.SetAttr("from", reactions->from.ToString());
    XmlElement& list = stanza.AddChild("reactions", ns::kReactions);
    list.SetAttr("id", reactions->id);
    for (const std::string& reaction : reactions->reactions) {
      list.AddChild("reaction", ns::kReactions).AddText(reaction);
    }
    stanza.AddChild("store", ns::kHints);
    Append(std::move(stanza), context, out);
  } else if (std::holds_alternative<DiscoverFeatures>(action)) {
    LOG(DFATAL) << "XMPP: a DiscoverFeatures is sent with FeaturesRequest, not SerializeAction";
  } else if (std::holds_alternative<QueryArchive>(action)) {
    LOG(DFATAL) << "XMPP: a QueryArchive is sent with ArchiveRequest, not SerializeAction";
  } else if (const auto* subscribe = std::get_if<SubscribeNode>(&action)) {
    if (subscribe->node.empty() || subscribe->service.empty()) return;
    Append(SubscribeRequest(*subscribe, context.next_id()), context, out);
  } else if (const auto* raw = std::get_if<SendRawStanza>(&action)) {
    // Checked by the caller already; checked again because a bad one would end the stream.
    absl::Status valid = ValidateRawStanza(raw->xml);
    if (!valid.ok()) {
      LOG(WARNING) << "XMPP: raw stanza refused: " << valid.message();
      return;
    }
    out.Out().append(raw->xml);
    out.End();
  }
}

XmlElement InstantRoomRequest(const ConfigureRoom& configure, std::string_view id) {
  XmlElement iq("iq");
  iq.SetAttr("type", "set").SetAttr("id", id).SetAttr("to", configure.room.BareString());
  if (!configure.from.empty()) iq.SetAttr("from", configure.from.ToString());
  // An empty submitted form accepts the service's default configuration.
  iq.AddChild("query", ns::kMucOwner).AddChild("x", ns::kDataForms).SetAttr("type", "submit");
  return iq;
}

namespace {

// <iq type='get' id=`id` to=`to` from=`from`/>, without a from when `from` is empty.
XmlElement IqGet(const Jid& to, const Jid& from, std::string_view id) {
  XmlElement iq("iq");
  iq.SetAttr("type", "get").SetAttr("id", id).SetAttr("to", to.ToString());
  if (!from.empty()) iq.SetAttr("from", from.ToString());
  return iq;
}

}  // namespace

XmlElement SelfPingRequest(const SelfPing& ping, std::string_view id) {
  XmlElement iq = IqGet(ping.occupant, ping.from, id);
  iq.AddChild("ping", ns::kPing);
  return iq;
}

XmlElement FeaturesRequest(const DiscoverFeatures& discover, std::string_view id) {
  XmlElement iq = IqGet(discover.to, discover.from, id);
  iq.AddChild("query", ns::kDiscoInfo);
  return iq;
}

}  // namespace herald::xmpp
