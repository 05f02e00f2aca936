// component/xmpp/events.h
//
// The seam between the XMPP layer and the agent. The XMPP session turns stanzas into
// InboundEvents and turns OutboundActions into stanzas; it knows nothing of LLMs, memory or
// policy, and the agent never sees XML. Everything the agent may want from the network is a
// new alternative here, not a reach into the session.
//
//   session->Perform(SendMessage{.to = event.from.Bare(), .body = "pong"});
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/time/time.h"
#include "component/xmpp/jid.h"

namespace herald::xmpp {

// XEP-0050 ad-hoc commands: someone asks which commands Herald offers (disco#items at the
// commands node), runs one (a first step, or a form submitted in a session), or cancels a
// session. Each request is answered with an AnswerCommand carrying its iq_id.
struct CommandRequest {
  enum class Kind { kList, kExecute, kCancel };
  Jid from;
  Jid to;
  std::string iq_id;
  Kind kind = Kind::kList;
  std::string node;        // the command: kExecute, kCancel
  std::string session_id;  // "" when a command starts
  // A submitted form's fields, var and value (a multi-value field's values joined by newlines).
  std::vector<std::pair<std::string, std::string>> fields;
};

// urn:herald:agent:0 (docs/agent-protocol.md): another agent asks Herald to list its skills,
// run one, answer a question or settle a pending action. Each request is answered with an
// AnswerAgent carrying its iq_id.
struct AgentRequest {
  enum class Kind { kSkills, kExecute, kAsk, kConfirm };
  Jid from;
  Jid to;
  std::string iq_id;
  Kind kind = Kind::kSkills;
  std::string skill;           // kExecute
  std::string arguments_json;  // kExecute: a JSON object as text ("" = {})
  std::string text;            // kAsk: the question
  std::string thread;          // kAsk: the requester's conversation it belongs to ("" = one)
  std::string action_id;       // kConfirm
  bool approve = false;        // kConfirm
  std::string reason;          // kConfirm: "" or why
  int hops = 0;                // how many agents the request passed through before
  absl::Duration timeout = absl::ZeroDuration();  // how long the requester waits; 0 = unsaid
  // Set when the request is malformed (a bad number, an unknown element): the agent answers
  // bad-request with this text once it knows the sender may ask at all.
  std::string malformed;
};

// The answer to another agent's CallAgent (or why none came: `condition` "timeout",
// "disconnected", or the error condition the agent answered with, and its text).
struct AgentAnswer {
  std::string call_id;
  Jid from;
  std::string condition;  // "" when answered with a result
  std::string error_text;
  bool ok = false;      // the skill or the turn succeeded
  std::string output;   // ok: what it returned
  std::string failure;  // !ok: why it failed
  std::string model;
  int64_t input_tokens = 0;
  int64_t output_tokens = 0;
  absl::Duration duration = absl::ZeroDuration();
};

// XEP-0461: the message a message replies to. `id` is that message's id as the sender's client
// knows it (in a room, the id the room gave it), "" when the message replies to none; `to` is
// its author (a full JID, or room@service/nick). `quote` is the XEP-0428 fallback the sender's
// client put before its text for clients without replies ("> the quoted line\n"), cut out of
// the message's body; "" when there was none.
struct Reply {
  std::string id;
  Jid to;
  std::string quote;
};

// XEP-0066: a file the sender attached as a link (<x xmlns='jabber:x:oob'>). Only http and
// https URLs of at most kMaxUrlBytes (no spaces or control characters) are kept, each once,
// at most kMaxPerMessage per message (the rest are left out and logged); the description
// (<desc/>, "" when none) is cut to kMaxDescriptionBytes on a character boundary. Nothing was
// fetched: the URL is as the sender wrote it, white space around it trimmed.
struct OobAttachment {
  static constexpr size_t kMaxPerMessage = 4;
  static constexpr size_t kMaxUrlBytes = 4096;
  static constexpr size_t kMaxDescriptionBytes = 1024;
  std::string url;
  std::string description;
};

// A 1:1 message with a body or attachments (type "chat" or "normal"). Errors and groupchat
// are not this.
struct ChatMessage {
  Jid from;
  Jid to;
  std::string id;
  std::string type;  // "chat" | "normal"
  std::string body;
  std::string thread;
  // The sender asks for a delivery receipt (XEP-0184 <request/>) or marks the message as one a
  // displayed marker may answer (XEP-0333 <markable/>). Both need an `id` to be answered.
  bool receipt_requested = false;
  bool markable = false;
  Reply reply;
  // XEP-0066 attachments, in the order the message lists them. A message may have them and
  // no <body/> (then `body` is "").
  std::vector<OobAttachment> attachments;
  // The body (white space around it aside) is the URL of one of `attachments`, as
  // Conversations, Dino and Monal send a file: the message is the attachment alone.
  bool body_is_attachment_url = false;
};

// XEP-0444: someone reacted in a 1:1 chat to the message with `id` (as their client knows it,
// which is the id Herald gave it) with these emoji; an empty list takes their reactions back.
struct MessageReactions {
  Jid from;
  Jid to;
  std::string id;
  std::vector<std::string> reactions;
};

// Someone asked to see Herald's presence (<presence type='subscribe'/>).
struct SubscriptionRequest {
  Jid from;
  Jid to;
};

// A contact's presence (not a room occupant's): one of their resources came online
// (`available`) or went offline. Herald sees it for people who share presence with it (in
// component mode, who accepted its subscription; in client mode, its roster).
struct ContactPresence {
  Jid from;  // full JID (the resource that changed)
  Jid to;    // the address it was sent to (Herald's; a greeting comes from it)
  bool available = false;
};

// XEP-0060 §7.1.2 (and XEP-0163 for a person's PEP): a pubsub service notified items of a
// node. Each item's text is what its payload says: an Atom entry's title and summary (or
// content), or else all the text it holds, whitespace collapsed, at most kMaxItemBytes.
struct PubsubItems {
  static constexpr size_t kMaxItems = 20;        // per notification; the rest are dropped
  static constexpr size_t kMaxItemBytes = 4000;  // per item
  struct Item {
    std::string id;
    std::string text;
  };
  Jid service;  // bare: the pubsub service, or the person whose PEP node it is
  std::string node;
  std::vector<Item> items;
  // XEP-0203 <delay/>: published before now (the service sends a new subscriber the last
  // item, or the notification waited in offline storage): not news.
  bool delayed = false;
};

struct RosterItem {
  Jid jid;
  std::string subscription;  // "none" | "to" | "from" | "both"
  bool ask_pending = false;  // we already asked to subscribe
};

// The roster, fetched after each login in client mode.
struct RosterReceived {
  std::vector<RosterItem> items;
};

// The stream is (re-)established and stanzas flow; own_jid is the component domain or the
// bound full JID.
struct SessionOnline {
  Jid own_jid;
  // XEP-0198: the old stream was resumed; nothing that reached it was missed.
  bool resumed = false;
};

// A message in a MUC room (XEP-0045, type "groupchat") with a body or attachments.
struct GroupMessage {
  Jid room;  // bare
  std::string nick;
  std::string id;
  std::string body;
  std::string thread;
  bool delayed = false;  // carries XEP-0203 <delay/>: history replayed on join, not live
  // The id the room gave the message (XEP-0359 <stanza-id by='ROOM'/>), or "" when it gave
  // none; a reply refers to this one (XEP-0461).
  std::string stanza_id;
  Reply reply;
  // As in a ChatMessage.
  std::vector<OobAttachment> attachments;
  bool body_is_attachment_url = false;
};

// Presence from a room occupant (ourselves included: status code 110).
struct RoomPresence {
  Jid room;  // bare
  std::string nick;
  bool available = true;
  bool self = false;              // status 110: this presence is about our own occupant
  std::vector<int> status_codes;  // 110, 201, 301 (banned), 307 (kicked), 332 (shutdown)...
  std::string error_condition;    // type='error': "conflict", "not-authorized", ...
  // XEP-0045 §10.9: unavailable presence carrying <destroy/>: the room's owner destroyed it.
  // The alternate venue it names (a bare JID, or empty) and the reason it gave (or "").
  bool destroyed = false;
  Jid alternate_room;
  std::string destroy_reason;
};

// An invitation to a room: XEP-0045 mediated (via the room) or XEP-0249 direct.
struct RoomInvite {
  Jid room;
  Jid inviter;  // who invited (bare)
  std::string password;
  std::string reason;
};

// The answer to a SelfPing (XEP-0410): whether our occupant is still in the room.
struct SelfPingResult {
  Jid occupant;  // room@service/nick
  bool joined = false;
  std::string condition;  // the error condition when there was one
};

// The answer to a DiscoverFeatures: the features (XEP-0030 <feature var/>) the client `of`
// announces, or answered = false when it answered with an error, not in time or not at all
// (the stream went down): `condition` says which.
struct ClientFeatures {
  Jid of;  // the client's full JID
  bool answered = false;
  std::vector<std::string> features;
  std::string condition;
};

// One message of an archive (XEP-0313): who said what, when, the id the archive gave it (a
// room's XEP-0359 stanza-id) and the id its sender gave it.
struct ArchivedMessage {
  std::string nick;  // in a room's archive; "" in the account's
  Jid from;          // room@service/nick, or the sender's full JID
  std::string body;
  absl::Time time;
  std::string id;
  std::string sent_id;
};

// The answer to a QueryArchive: the last messages, oldest first (those with a body; a
// correction in the archive replaces the text it corrects; of the account's archive only
// chats others sent), or answered = false with the condition when the archive answered with
// an error (there is none: "service-unavailable", "feature-not-implemented"...), not in time
// ("timeout") or not at all ("disconnected").
struct ArchiveResult {
  Jid room;          // bare; empty for the account's own archive
  std::string nick;  // Herald's nick in the room, as the query gave it
  bool answered = false;
  std::vector<ArchivedMessage> messages;
  std::string condition;
};

// XEP-0363: the server's HTTP File Upload service, found by service discovery after the
// stream came up (upload_service.h): its address, and the largest file it takes in bytes (its
// max-file-size), when it says. Reported at most once per stream, some time after that
// stream's SessionOnline; none comes when the server has no upload service or did not say
// within SessionOptions::upload_discovery_timeout. So a SessionOnline means "no upload
// service known" until an UploadServiceFound follows.
struct UploadServiceFound {
  Jid jid;
  std::optional<uint64_t> max_file_size;
};

// XEP-0363: the answer to a RequestUploadSlot — where to PUT the file (with these headers, the
// only ones the XEP lets a slot name: Authorization, Cookie, Expires) and where it is then
// downloaded from. `condition` is "" for a slot; otherwise the service's error condition
// ("file-too-large", "not-acceptable", ...), "timeout", "disconnected", or "bad-slot" for an
// answer without two http(s) URLs.
struct UploadSlot {
  std::string request_id;
  Jid service;
  std::string put_url;
  std::vector<std::pair<std::string, std::string>> put_headers;
  std::string get_url;
  std::string condition;
};

using InboundEvent =
    std::variant<ChatMessage, SubscriptionRequest, RosterReceived, SessionOnline, GroupMessage,
                 RoomPresence, RoomInvite, SelfPingResult, CommandRequest, ClientFeatures,
                 MessageReactions, ArchiveResult, ContactPresence, PubsubItems, AgentRequest,
                 AgentAnswer, UploadServiceFound, UploadSlot>;

struct SendMessage {
  Jid to;
  std::string body;
  std::string type = "chat";  // "chat" | "normal" | "groupchat"
  std::string thread;
  // Empty: the session's own address (the component domain, or nothing in client mode,
  // where the server stamps it).
  Jid from;
  // XEP-0085 state carried in the message ("active"), or "" for none.
  std::string chat_state;
  // XEP-0461: the message this one answers, by its id and its author's address (in a room,
  // the room's stanza-id and room/nick); "" for none. A message split in parts says it once.
  std::string reply_id;
  Jid reply_to;
  // The message's id; "" = a fresh one from the session. A message that will be corrected
  // needs one its sender chose, unique across restarts (a client matches corrections by it).
  std::string id;
  // XEP-0308: this message corrects the one with this id (always the first message's). A
  // message split in parts corrects with its first part; the others are new messages.
  std::string replace_id;
  // XEP-0334 <no-store/>: archives (XEP-0313) and offline storage skip it. For the
  // intermediate corrections of a streamed answer, of which only the last is worth keeping.
  bool no_store = false;
  // XEP-0066: a file sent as a link (<x xmlns='jabber:x:oob'><url/><desc/></x>), "" for none.
  // Clients show the file inline when the body is the URL itself, as Conversations sends it.
  std::string oob_url;
  std::string oob_desc;
};

// XEP-0444: Herald's reactions to the message `id` (in a room, the room's stanza-id), which
// replace any it gave before; an empty list takes them back. Kept by archives (<store/>).
struct SendReactions {
  Jid to;
  std::string id;
  std::vector<std::string> reactions;
  std::string type = "chat";  // "chat" | "groupchat"
  Jid from;
};

// XEP-0030: asks a user's client (its full JID) which features it shows, so that Herald sends
// what it can display (streamed corrections, XEP-0308). Answered with a ClientFeatures.
struct DiscoverFeatures {
  Jid to;
  Jid from;
};

// XEP-0313: asks an archive for its last `max` messages (at most kMaxArchivedMessages) since
// `since`: a room's (Herald joins rooms without history; this is how it learns what was said
// before it came), or with `room` empty, in client mode, the account's own (what reached it
// while Herald was away). Answered with an ArchiveResult, which hands `room` and `nick` back.
inline constexpr int kMaxArchivedMessages = 200;
struct QueryArchive {
  Jid room;  // bare; empty: the account's own archive
  std::string nick;
  int max = 20;
  absl::Time since;
  Jid from;
};

// A standalone XEP-0085 chat state notification: "composing", "paused", "active"...
struct SendChatState {
  Jid to;
  std::string state;
  Jid from;
};

// Join a room as `nick` without history replay (or leave it with `leave`).
struct JoinRoom {
  Jid room;  // bare
  std::string nick;
  std::string password;
  bool leave = false;
  Jid from;
};

// XEP-0410: ping our own occupant JID; the answer comes back as a SelfPingResult.
struct SelfPing {
  Jid occupant;
  Jid from;
};

// XEP-0045 §10.1.2: accept the default configuration of a room Herald just created (status
// 201), which the service keeps locked to everyone else until its owner does: an empty
// submitted muc#owner form ("instant room").
struct ConfigureRoom {
  Jid room;  // bare
  Jid from;
};

// Tells the sender of message `id` that Herald has it: a delivery receipt (XEP-0184
// <received/>) once the message is stored, or a displayed marker (XEP-0333 <displayed/>) once
// Herald works on it. A bodyless chat message in the message's thread, kept by archives and
// offline storage (XEP-0334 <store/>) so that the sender's other devices see it too.
struct AcknowledgeMessage {
  enum class Kind { kReceived, kDisplayed };
  Jid to;
  std::string id;
  Kind kind = Kind::kReceived;
  std::string thread;
  Jid from;
};

// The answer to a CommandRequest: the commands offered (kList), or a command's outcome — done
// with its text, waiting for a form to be filled in, or canceled — or an error.
struct AnswerCommand {
  enum class Status { kCompleted, kExecuting, kCanceled };
  struct Item {
    std::string node;
    std::string name;
  };
  // One field of a XEP-0004 form: "text-single" (the default), "list-single" (one of
  // `options`, each a label and a value), "jid-single"; `value` is what it starts with.
  struct Option {
    std::string label;
    std::string value;
  };
  struct Field {
    std::string var;
    std::string label;
    std::string type = "text-single";
    std::string value;
    bool required = false;
    std::vector<Option> options;
  };
  Jid to;
  std::string iq_id;
  CommandRequest::Kind kind = CommandRequest::Kind::kList;
  std::vector<Item> items;  // kList
  std::string node;
  std::string session_id;
  Status status = Status::kCompleted;
  std::string note;  // kCompleted: the command's answer; kExecuting: what to fill in
  std::string form_title;
  std::vector<Field> fields;  // kExecuting: the form's fields
  // Set for a refusal: "forbidden", "item-not-found", "bad-request", "bad-sessionid" or
  // "resource-constraint" (over the sender's rate limit).
  std::string error;
  Jid from;
};

// The answer to an AgentRequest: Herald's skills (kSkills), a run's outcome (kExecute, kAsk),
// nothing (kConfirm), or a refusal: `error` is an RFC 6120 condition ("forbidden",
// "item-not-found", "not-allowed", "bad-request", "resource-constraint", "policy-violation",
// "service-unavailable") and `error_text` says why.
struct AnswerAgent {
  struct Skill {
    std::string name;
    std::string source;
    std::string description;
    std::string parameters_json;
  };
  Jid to;
  Jid from;
  std::string iq_id;
  AgentRequest::Kind kind = AgentRequest::Kind::kSkills;
  std::string error;
  std::string error_text;
  std::vector<Skill> skills;  // kSkills
  bool ok = true;             // kExecute, kAsk: whether the run succeeded
  std::string output;         // ok
  std::string failure;        // !ok
  std::string model;          // kAsk
  int64_t input_tokens = 0;
  int64_t output_tokens = 0;
  absl::Duration duration = absl::ZeroDuration();
};

// A bodiless note to an agent whose request (the IQ `iq_id`) is still running.
struct SendAgentProgress {
  Jid to;
  Jid from;
  std::string iq_id;
  std::string text;
  absl::Duration elapsed = absl::ZeroDuration();
};

// Asks the agent at `to` (urn:herald:agent:0) to run a skill (kExecute) or answer a question
// (kAsk); its answer, or why none came within `timeout`, arrives as an AgentAnswer with
// `call_id`.
struct CallAgent {
  std::string call_id;
  Jid to;
  Jid from;
  AgentRequest::Kind kind = AgentRequest::Kind::kAsk;
  std::string skill;
  std::string arguments_json;
  std::string text;
  std::string thread;  // kAsk: which of our conversations asks (its history there is its own)
  int hops = 0;
  absl::Duration timeout = absl::Seconds(60);
};

// XEP-0363: asks the upload service `service` for a slot for a file; the answer comes back as
// an UploadSlot with the same request_id.
struct RequestUploadSlot {
  std::string request_id;
  Jid service;
  Jid from;
  std::string filename;
  uint64_t size = 0;
  std::string content_type;
};

// A raw stanza from a developer's /raw command, already checked with ValidateRawStanza.
struct SendRawStanza {
  std::string xml;
};

// XEP-0060 §6.1: subscribes `from` (its bare address) to `node` at `service`. The answer is
// not reported: notifications arriving are the proof.
struct SubscribeNode {
  Jid service;
  std::string node;
  Jid from;
};

// type: "" (available), "unavailable", "subscribe", "subscribed", "unsubscribed".
struct SendPresence {
  Jid to;
  std::string type;
  Jid from;
};

using OutboundAction = std::variant<SendMessage, SendPresence, SendChatState, AcknowledgeMessage,
                                    AnswerCommand, JoinRoom, SelfPing, ConfigureRoom, SendRawStanza,
                                    DiscoverFeatures, SendReactions, QueryArchive, SubscribeNode,
                                    AnswerAgent, SendAgentProgress, CallAgent, RequestUploadSlot>;

}  // namespace herald::xmpp
