// component/xmpp/stanza_translation.h
//
// The translation between stanzas and the agent's events, with nothing of the connection in
// it: no socket, no coroutine, no session state beyond what is passed in. A stanza of an
// established stream becomes the InboundEvent it means, or nothing (errors, headlines, chat
// states without a body or attachments, the room's own announcements, anything from an
// invalid address); an OutboundAction becomes the serialized stanzas to queue, each within the
// outbound size limit (a long body is split into several messages). XmppSession owns the state
// these functions read (its own JID, the rooms it joined, pending self-pings) and the I/O.
//
//   InboundMessage in = TranslateMessage(stanza, own_jid);
//   if (in.event) sink(*std::move(in.event));
//   for (std::string& xml : SerializeAction(std::move(action), context, rooms)) Enqueue(xml);
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "component/xmpp/events.h"
#include "component/xmpp/iq_responder.h"
#include "component/xmpp/jid.h"
#include "component/xmpp/session_error.h"
#include "component/xmpp/xml_element.h"

namespace herald::xmpp {

// A hostile room could list thousands of status codes; real ones carry a handful.
inline constexpr size_t kMaxStatusCodes = 16;
// A destroyed room's reason, as far as Herald keeps it (for the log and the room's events).
inline constexpr size_t kMaxDestroyReasonBytes = 256;
// A message body too long for one stanza goes out as at most this many messages.
inline constexpr size_t kMaxMessageParts = 8;
// Room left in the last part for the note that says the rest was cut.
inline constexpr size_t kMessageNoteReserve = 128;

// --- Inbound ---

// What a <message/> means to Herald.
struct InboundMessage {
  // A ChatMessage, a GroupMessage or a direct (XEP-0249) RoomInvite.
  std::optional<InboundEvent> event;
  // A mediated (XEP-0045 §7.8.2) invitation: the room names the inviter, so it may be
  // reported only once the room's service is known to be trusted (muc_services.h).
  std::optional<RoomInvite> mediated_invite;
};

// A <message/>; `own_jid` is the recipient of a chat message without a valid to.
InboundMessage TranslateMessage(const XmlElement& message, const Jid& own_jid);

// A <presence/>: a SubscriptionRequest (to defaults to `own_jid`) or a room occupant's
// RoomPresence. An error presence counts only from one of `rooms` (bare JIDs Herald joined):
// it can only be the room refusing our own join.
std::optional<InboundEvent> TranslatePresence(const XmlElement& presence, const Jid& own_jid,
                                              const absl::flat_hash_set<std::string>& rooms);

// The roster in the result of a roster get; items with an invalid JID are left out.
RosterReceived TranslateRoster(const XmlElement& result);

// The answer owed to a get or set IQ addressed to Herald (nullopt: none). In client mode a
// roster push from Herald's own `account` (or from no one: the server) is acknowledged; the
// rest is what `responder` answers (disco, ping, version, or an error).
std::optional<XmlElement> AnswerIqRequest(const XmlElement& iq, SessionMode mode,
                                          const Jid& account, const IqResponder& responder);

// XEP-0444: at most this many reactions of at most this many bytes each are read from a
// message; a message with more, or a longer one, is dropped whole.
inline constexpr size_t kMaxReactions = 16;
inline constexpr size_t kMaxReactionBytes = 64;

// What `iq` (a result or error) says of the XEP-0410 self-ping sent to `occupant`, or nullopt
// when it does not come from the occupant itself (ids are guessable: anyone else is ignored).
std::optional<SelfPingResult> TranslateSelfPingAnswer(const XmlElement& iq, const Jid& occupant);

// What `iq` (a result or error) says of the disco#info query sent to the client `client`: the
// features it announces (at most kMaxClientFeatures), or not answered with the error's
// condition. Nullopt when it does not come from that client.
inline constexpr size_t kMaxClientFeatures = 512;
std::optional<ClientFeatures> TranslateFeaturesAnswer(const XmlElement& iq, const Jid& client);

// The policy-violation error owed to the sender of a stanza the parser read past for its size
// or depth (`head`: its start tag): a message that is not an error, or a get/set IQ, with a
// from. Nullopt for the rest.
std::optional<XmlElement> OversizedStanzaError(const XmlElement& head);

// --- Outbound ---

// What serializing an action reads of the session.
struct OutboundContext {
  SessionMode mode = SessionMode::kComponent;
  // The from of a stanza that has none, in component mode (XEP-0114: the server routes by it).
  Jid own_jid;
  // No stanza larger than this is produced (SessionOptions::max_outbound_stanza_bytes).
  size_t max_stanza_bytes = 64 * 1024;
  // A fresh stanza id for each message.
  std::function<std::string()> next_id;
  // The ver of Herald's entity capabilities (IqResponder::CapsVerification), which available
  // presence carries; "" for none.
  std::string caps_ver;
};

// Adds XEP-0115 entity capabilities (<c hash='sha-1' node=kCapsNode ver=.../>) to an available
// presence; nothing when `ver` is empty.
void AddCaps(XmlElement& presence, std::string_view ver);

// True for the XEP-0085 states: active, composing, paused, inactive, gone.
bool IsChatState(std::string_view state);

// Serialized stanzas back to back in one buffer. A session keeps one and clears it for each
// action, so serializing allocates nothing once the buffer has grown.
class SerializedStanzas {
 public:
  void Clear() {
    bytes_.clear();
    ends_.clear();
  }
  size_t size() const { return ends_.size(); }
  bool empty() const { return ends_.empty(); }
  std::string_view operator[](size_t i) const {
    const size_t begin = i == 0 ? 0 : ends_[i - 1];
    return std::string_view(bytes_).substr(begin, ends_[i] - begin);
  }

  // For serializers: the bytes of the open stanza are appended to Out(); End() closes it, and
  // Abandon() takes back what was appended since the last stanza closed.
  std::string& Out() { return bytes_; }
  void End() { ends_.push_back(bytes_.size()); }
  void Abandon() { bytes_.resize(ends_.empty() ? 0 : ends_.back()); }

 private:
  std::string bytes_;
  std::vector<size_t> ends_;
};

// `stanza` as written on the stream of context.mode (in its content namespace), with
// from = own_jid added in component mode when it has none.
std::string SerializeStanza(XmlElement stanza, const OutboundContext& context);

// A SendMessage as one message, or, when its body makes it larger than
// context.max_stanza_bytes, as up to kMaxMessageParts messages cut after a line where
// possible, the last saying how much was left out. None when even an empty body would not fit.
// Written straight into `out`, byte for byte what AppendXml writes for the same message built
// as an XmlElement, without building one.
void SerializeChatMessage(const SendMessage& message, const OutboundContext& context,
                          SerializedStanzas& out);

// Appends the stanzas that perform `action` to `out`, in order; none (and a log line) when it
// cannot be sent: an unknown chat state, an invalid room or nick, a raw stanza that fails
// ValidateRawStanza. A JoinRoom adds its room to `rooms` (or removes it when leaving): a chat
// state to one of `rooms` is a groupchat message. Not for a SelfPing, a DiscoverFeatures or a
// QueryArchive, whose answers the session awaits (SelfPingRequest, FeaturesRequest,
// ArchiveRequest).
void SerializeAction(const OutboundAction& action, const OutboundContext& context,
                     absl::flat_hash_set<std::string>& rooms, SerializedStanzas& out);

// The XEP-0045 §10.1.2 owner form that makes configure.room an instant room: <iq type='set'
// id=`id`/> with an empty submitted muc#owner data form.
XmlElement InstantRoomRequest(const ConfigureRoom& configure, std::string_view id);

// The XEP-0410 ping <iq type='get' id=`id`/> to ping.occupant.
XmlElement SelfPingRequest(const SelfPing& ping, std::string_view id);

// The XEP-0030 <iq type='get' id=`id`><query xmlns=disco#info/></iq> to discover.to.
XmlElement FeaturesRequest(const DiscoverFeatures& discover, std::string_view id);

}  // namespace herald::xmpp
