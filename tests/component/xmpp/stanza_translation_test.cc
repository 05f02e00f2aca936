// The pure translation between stanzas and the agent's events: inbound stanzas (messages,
// presence, IQs, invitations, stanzas too large to read) into InboundEvents and answers, and
// OutboundActions into the serialized stanzas the session queues. No socket, no I/O loop.
#include "component/xmpp/stanza_translation.h"

#include <memory>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "component/xmpp/iq_responder.h"
#include "component/xmpp/namespaces.h"
#include "component/xmpp/stanza.h"
#include "component/xmpp/stream_parser.h"
#include "component/xmpp/xml_element.h"
#include "component/xmpp/xml_writer.h"
#include "gtest/gtest.h"

namespace herald::xmpp {
namespace {

// Parses stanzas the way the session receives them, on a stream whose content namespace is
// `xmlns` (serialized outbound stanzas leave it implicit, as on the wire).
class Stanzas : public StreamParser::Handler {
 public:
  explicit Stanzas(std::string_view xml, std::string_view xmlns = ns::kComponentAccept) {
    StreamParser parser(StreamLimits{}, this);
    const std::string stream =
        absl::StrCat("<stream:stream xmlns='", std::string(xmlns),
                     "' xmlns:stream='http://etherx.jabber.org/streams'>", std::string(xml));
    ok_ = parser.Feed(stream).ok();
  }
  void OnStreamOpen(const XmlElement&, std::string_view) override {}
  void OnStanza(std::unique_ptr<XmlElement> stanza) override {
    stanzas_.push_back(std::move(stanza));
  }
  void OnStreamClose() override {}

  bool ok() const { return ok_; }
  size_t size() const { return stanzas_.size(); }
  const XmlElement& at(size_t i) const { return *stanzas_.at(i); }

 private:
  bool ok_ = false;
  std::vector<std::unique_ptr<XmlElement>> stanzas_;
};

// The one stanza in `xml`; the test fails when there is not exactly one.
XmlElement One(std::string_view xml, std::string_view xmlns = ns::kComponentAccept) {
  Stanzas stanzas(xml, xmlns);
  EXPECT_TRUE(stanzas.ok()) << xml;
  EXPECT_EQ(stanzas.size(), 1u) << xml;
  if (stanzas.size() != 1) return XmlElement("nothing");
  return stanzas.at(0).Clone();
}

Jid J(std::string_view text) { return Jid::Parse(text).value(); }

const Jid kOwnJid = J("herald.localhost");

template <typename T>
const T* As(const std::optional<InboundEvent>& event) {
  return event.has_value() ? std::get_if<T>(&*event) : nullptr;
}

std::string_view ErrorOf(const XmlElement& reply) {
  const XmlElement* error = reply.FindChild("error");
  return error == nullptr ? "" : ErrorCondition(*error);
}

// --- Messages ---

TEST(TranslateMessageTest, AChatMessageBecomesAChatMessageWithItsSenderBodyAndThread) {
  InboundMessage in = TranslateMessage(
      One("<message from='alice@localhost/phone' to='herald.localhost' type='chat' id='m1'>"
          "<body>ping &amp; pong</body><thread>t-1</thread></message>"),
      kOwnJid);
  const ChatMessage* chat = As<ChatMessage>(in.event);
  ASSERT_NE(chat, nullptr);
  EXPECT_EQ(chat->from, J("alice@localhost/phone"));
  EXPECT_EQ(chat->to, kOwnJid);
  EXPECT_EQ(chat->id, "m1");
  EXPECT_EQ(chat->type, "chat");
  EXPECT_EQ(chat->body, "ping & pong");
  EXPECT_EQ(chat->thread, "t-1");
  EXPECT_FALSE(in.mediated_invite.has_value());
}

TEST(TranslateMessageTest, AReceiptRequestAndAMarkableElementAreNoted) {
  // XEP-0184 §5.1 example 1, and XEP-0333's markable message; Conversations sends both.
  const ChatMessage* chat = nullptr;
  InboundMessage both = TranslateMessage(
      One("<message from='northumberland@shakespeare.lit/westminster' id='richard2-4.1.247' "
          "to='herald.localhost' type='chat'><body>My lord, dispatch; read o'er these "
          "articles.</body><request xmlns='urn:xmpp:receipts'/>"
          "<markable xmlns='urn:xmpp:chat-markers:0'/></message>"),
      kOwnJid);
  chat = As<ChatMessage>(both.event);
  ASSERT_NE(chat, nullptr);
  EXPECT_EQ(chat->id, "richard2-4.1.247");
  EXPECT_TRUE(chat->receipt_requested);
  EXPECT_TRUE(chat->markable);

  // The same elements in another namespace are not a request.
  InboundMessage neither = TranslateMessage(
      One("<message from='alice@localhost/phone' to='herald.localhost' type='chat' id='m2'>"
          "<body>hi</body><request xmlns='urn:example:other'/><markable/></message>"),
      kOwnJid);
  chat = As<ChatMessage>(neither.event);
  ASSERT_NE(chat, nullptr);
  EXPECT_FALSE(chat->receipt_requested);
  EXPECT_FALSE(chat->markable);
}

TEST(TranslateMessageTest, AMessageWithoutATypeIsNormal) {
  InboundMessage in = TranslateMessage(
      One("<message from='alice@localhost' to='bot@herald.localhost'><body>hi</body></message>"),
      kOwnJid);
  const ChatMessage* chat = As<ChatMessage>(in.event);
  ASSERT_NE(chat, nullptr);
  EXPECT_EQ(chat->type, "normal");
  EXPECT_EQ(chat->to, J("bot@herald.localhost"));
}

TEST(TranslateMessageTest, AMessageWithoutAValidRecipientIsAddressedToHerald) {
  for (const char* to : {"", " to=''", " to='@@'"}) {
    InboundMessage in =
        TranslateMessage(One(absl::StrCat("<message from='alice@localhost'", to,
                                          " type='chat'><body>hi</body>", "</message>")),
                         kOwnJid);
    const ChatMessage* chat = As<ChatMessage>(in.event);
    ASSERT_NE(chat, nullptr) << to;
    EXPECT_EQ(chat->to, kOwnJid) << to;
  }
}

TEST(TranslateMessageTest, ErrorAndHeadlineMessagesAreNotTurns) {
  for (const char* type : {"error", "headline"}) {
    InboundMessage in = TranslateMessage(One(absl::StrCat("<message from='alice@localhost' type='",
                                                          type, "'><body>x</body></message>")),
                                         kOwnJid);
    EXPECT_FALSE(in.event.has_value()) << type;
    EXPECT_FALSE(in.mediated_invite.has_value()) << type;
  }
}

TEST(TranslateMessageTest, AMessageWithoutABodyIsNothingToAnswer) {
  InboundMessage in =
      TranslateMessage(One("<message from='alice@localhost' type='chat'>"
                           "<composing xmlns='http://jabber.org/protocol/chatstates'/></message>"),
                       kOwnJid);
  EXPECT_FALSE(in.event.has_value());
}

TEST(TranslateMessageTest, AMessageFromAnInvalidOrMissingAddressIsDropped) {
  for (const char* from : {"", " from=''", " from='alice@'", " from='@localhost'"}) {
    InboundMessage in = TranslateMessage(
        One(absl::StrCat("<message", from, " type='chat'><body>x</body></message>")), kOwnJid);
    EXPECT_FALSE(in.event.has_value()) << from;
  }
}

TEST(TranslateMessageTest, AGroupchatMessageFromAnOccupantBecomesAGroupMessage) {
  InboundMessage in = TranslateMessage(
      One("<message from='room@conference.localhost/Alice' type='groupchat' id='g1'>"
          "<body>Herald, hello</body><thread>th</thread></message>"),
      kOwnJid);
  const GroupMessage* group = As<GroupMessage>(in.event);
  ASSERT_NE(group, nullptr);
  EXPECT_EQ(group->room, J("room@conference.localhost"));
  EXPECT_EQ(group->nick, "Alice");
  EXPECT_EQ(group->id, "g1");
  EXPECT_EQ(group->body, "Herald, hello");
  EXPECT_EQ(group->thread, "th");
  EXPECT_FALSE(group->delayed);
}

TEST(TranslateMessageTest, AGroupMessageKeepsTheIdTheRoomGaveItAndNoOtherStanzaId) {
  // XEP-0359: the room stamps <stanza-id by='ROOM'/>; one by anyone else may be the sender's.
  InboundMessage stamped = TranslateMessage(
      One("<message from='room@conference.localhost/Alice' type='groupchat' id='g1'>"
          "<body>Herald, hello</body>"
          "<stanza-id xmlns='urn:xmpp:sid:0' by='alice@localhost' id='forged'/>"
          "<stanza-id xmlns='urn:xmpp:sid:0' by='room@conference.localhost' id='room-7'/>"
          "</message>"),
      kOwnJid);
  const GroupMessage* group = As<GroupMessage>(stamped.event);
  ASSERT_NE(group, nullptr);
  EXPECT_EQ(group->stanza_id, "room-7");
  EXPECT_EQ(group->id, "g1");

  InboundMessage forged = TranslateMessage(
      One("<message from='room@conference.localhost/Alice' type='groupchat' id='g2'>"
          "<body>hi</body><stanza-id xmlns='urn:xmpp:sid:0' by='alice@localhost' id='forged'/>"
          "<stanza-id xmlns='urn:example' by='room@conference.localhost' id='other-ns'/>"
          "</message>"),
      kOwnJid);
  group = As<GroupMessage>(forged.event);
  ASSERT_NE(group, nullptr);
  EXPECT_EQ(group->stanza_id, "");
}

TEST(TranslateMessageTest, HistoryReplayedOnJoinIsMarkedDelayed) {
  for (const char* delay : {"<delay xmlns='urn:xmpp:delay' stamp='2024-01-01T00:00:00Z'/>",
                            "<x xmlns='jabber:x:delay' stamp='20240101T00:00:00'/>"}) {
    InboundMessage in = TranslateMessage(
        One(absl::StrCat("<message from='room@conference.localhost/Alice' type='groupchat'>",
                         "<body>old</body>", delay, "</message>")),
        kOwnJid);
    const GroupMessage* group = As<GroupMessage>(in.event);
    ASSERT_NE(group, nullptr) << delay;
    EXPECT_TRUE(group->delayed) << delay;
  }
}

TEST(TranslateMessageTest, TheRoomSpeakingForItselfIsNotATurn) {
  InboundMessage in = TranslateMessage(
      One("<message from='room@conference.localhost' type='groupchat'>"
          "<body>The room is now non-anonymous</body><subject>topic</subject></message>"),
      kOwnJid);
  EXPECT_FALSE(in.event.has_value());
}

TEST(TranslateMessageTest, APrivateMessageThroughARoomIsAChatMessage) {
  InboundMessage in = TranslateMessage(
      One("<message from='room@conference.localhost/Alice' type='chat'><body>psst</body>"
          "<x xmlns='http://jabber.org/protocol/muc#user'/></message>"),
      kOwnJid);
  const ChatMessage* chat = As<ChatMessage>(in.event);
  ASSERT_NE(chat, nullptr);
  EXPECT_EQ(chat->from, J("room@conference.localhost/Alice"));
  EXPECT_EQ(chat->body, "psst");
}

// --- Invitations ---

TEST(TranslateMessageTest, AMediatedInvitationIsHeldBackForTheTrustCheckNotChat) {
  InboundMessage in =
      TranslateMessage(One("<message from='room@conference.localhost' to='herald.localhost'>"
                           "<body>alice invites you</body>"
                           "<x xmlns='http://jabber.org/protocol/muc#user'>"
                           "<invite from='alice@localhost/phone'><reason>join us</reason></invite>"
                           "<password>s3cret</password></x></message>"),
                       kOwnJid);
  EXPECT_FALSE(in.event.has_value());
  ASSERT_TRUE(in.mediated_invite.has_value());
  EXPECT_EQ(in.mediated_invite->room, J("room@conference.localhost"));
  EXPECT_EQ(in.mediated_invite->inviter, J("alice@localhost"));
  EXPECT_EQ(in.mediated_invite->reason, "join us");
  EXPECT_EQ(in.mediated_invite->password, "s3cret");
}

TEST(TranslateMessageTest, AMalformedMediatedInvitationIsDroppedAndNotTakenForChat) {
  for (const char* message :
       {// Not from a room: a full JID.
        "<message from='room@conference.localhost/nick'><body>b</body>"
        "<x xmlns='http://jabber.org/protocol/muc#user'><invite from='alice@localhost'/></x>"
        "</message>",
        // Not from a room: a bare domain.
        "<message from='conference.localhost'><body>b</body>"
        "<x xmlns='http://jabber.org/protocol/muc#user'><invite from='alice@localhost'/></x>"
        "</message>",
        // No valid inviter.
        "<message from='room@conference.localhost'><body>b</body>"
        "<x xmlns='http://jabber.org/protocol/muc#user'><invite from='@@'/></x></message>"}) {
    InboundMessage in = TranslateMessage(One(message), kOwnJid);
    EXPECT_FALSE(in.event.has_value()) << message;
    EXPECT_FALSE(in.mediated_invite.has_value()) << message;
  }
}

TEST(TranslateMessageTest, ADirectInvitationNamesItsSenderAsTheInviter) {
  InboundMessage in = TranslateMessage(
      One("<message from='alice@localhost/phone' to='herald.localhost'><body>come</body>"
          "<x xmlns='jabber:x:conference' jid='Room@Conference.Localhost/ignored' "
          "password='pw' reason='team chat'/></message>"),
      kOwnJid);
  EXPECT_FALSE(in.mediated_invite.has_value());
  const RoomInvite* invite = As<RoomInvite>(in.event);
  ASSERT_NE(invite, nullptr);
  EXPECT_EQ(invite->room, J("room@conference.localhost"));
  EXPECT_EQ(invite->inviter, J("alice@localhost"));
  EXPECT_EQ(invite->password, "pw");
  EXPECT_EQ(invite->reason, "team chat");
}

TEST(TranslateMessageTest, ADirectInvitationWithoutAValidRoomIsDropped) {
  for (const char* jid : {"", "conference.localhost", "@@"}) {
    InboundMessage in = TranslateMessage(
        One(absl::StrCat("<message from='alice@localhost'><body>come</body>",
                         "<x xmlns='jabber:x:conference' jid='", jid, "'/></message>")),
        kOwnJid);
    EXPECT_FALSE(in.event.has_value()) << jid;
    EXPECT_FALSE(in.mediated_invite.has_value()) << jid;
  }
}

// --- Presence ---

const absl::flat_hash_set<std::string> kNoRooms;

TEST(TranslatePresenceTest, ASubscriptionRequestComesFromTheBareSender) {
  std::optional<InboundEvent> event = TranslatePresence(
      One("<presence from='alice@localhost/phone' to='bot@herald.localhost' type='subscribe'/>"),
      kOwnJid, kNoRooms);
  const SubscriptionRequest* request = As<SubscriptionRequest>(event);
  ASSERT_NE(request, nullptr);
  EXPECT_EQ(request->from, J("alice@localhost"));
  EXPECT_EQ(request->to, J("bot@herald.localhost"));
}

TEST(TranslatePresenceTest, ASubscriptionRequestWithoutARecipientIsToHerald) {
  std::optional<InboundEvent> event = TranslatePresence(
      One("<presence from='alice@localhost' type='subscribe'/>"), kOwnJid, kNoRooms);
  const SubscriptionRequest* request = As<SubscriptionRequest>(event);
  ASSERT_NE(request, nullptr);
  EXPECT_EQ(request->to, kOwnJid);
}

TEST(TranslatePresenceTest, AnOccupantsPresenceCarriesItsStatusCodesAndWhetherItIsUs) {
  std::optional<InboundEvent> event =
      TranslatePresence(One("<presence from='room@conference.localhost/herald'>"
                            "<x xmlns='http://jabber.org/protocol/muc#user'>"
                            "<item affiliation='none' role='participant'/>"
                            "<status code='110'/><status code='201'/></x></presence>"),
                        kOwnJid, kNoRooms);
  const RoomPresence* presence = As<RoomPresence>(event);
  ASSERT_NE(presence, nullptr);
  EXPECT_EQ(presence->room, J("room@conference.localhost"));
  EXPECT_EQ(presence->nick, "herald");
  EXPECT_TRUE(presence->available);
  EXPECT_TRUE(presence->self);
  EXPECT_EQ(presence->status_codes, (std::vector<int>{110, 201}));
  EXPECT_TRUE(presence->error_condition.empty());
}

// XEP-0045 §10.9, example 204's shape.
TEST(TranslatePresenceTest, ADestroyedRoomSaysSoWithItsAlternateVenueAndReason) {
  std::optional<InboundEvent> event =
      TranslatePresence(One("<presence from='room@conference.localhost/herald' type='unavailable'>"
                            "<x xmlns='http://jabber.org/protocol/muc#user'>"
                            "<item affiliation='none' role='none'/>"
                            "<destroy jid='new-room@conference.localhost/ignored'>"
                            "<reason>Macbeth doth\nmurder sleep</reason></destroy>"
                            "<status code='110'/></x></presence>"),
                        kOwnJid, kNoRooms);
  const RoomPresence* presence = As<RoomPresence>(event);
  ASSERT_NE(presence, nullptr);
  EXPECT_TRUE(presence->self);
  EXPECT_FALSE(presence->available);
  EXPECT_TRUE(presence->destroyed);
  EXPECT_EQ(presence->alternate_room, J("new-room@conference.localhost"));
  EXPECT_EQ(presence->destroy_reason, "Macbeth doth murder sleep");  // one line, for the log
}

TEST(TranslatePresenceTest, ADestroyWithoutAVenueOrWithALongReasonKeepsWhatIsSafe) {
  const std::string reason = std::string(kMaxDestroyReasonBytes - 1, 'x') + "\xC3\xA9tc";
  std::optional<InboundEvent> event = TranslatePresence(
      One(absl::StrCat("<presence from='room@conference.localhost/herald' type='unavailable'>"
                       "<x xmlns='http://jabber.org/protocol/muc#user'>"
                       "<destroy jid='conference.localhost'><reason>",
                       reason, "</reason></destroy><status code='110'/></x></presence>")),
      kOwnJid, kNoRooms);
  const RoomPresence* presence = As<RoomPresence>(event);
  ASSERT_NE(presence, nullptr);
  EXPECT_TRUE(presence->destroyed);
  EXPECT_TRUE(presence->alternate_room.empty());  // a service is not a room
  // Cut before the two-byte character that would straddle the limit.
  EXPECT_EQ(presence->destroy_reason, std::string(kMaxDestroyReasonBytes - 1, 'x'));
}

TEST(TranslatePresenceTest, ADestroyInAvailablePresenceIsNotADestroyedRoom) {
  std::optional<InboundEvent> event = TranslatePresence(
      One("<presence from='room@conference.localhost/herald'>"
          "<x xmlns='http://jabber.org/protocol/muc#user'><destroy/><status code='110'/></x>"
          "</presence>"),
      kOwnJid, kNoRooms);
  const RoomPresence* presence = As<RoomPresence>(event);
  ASSERT_NE(presence, nullptr);
  EXPECT_FALSE(presence->destroyed);
}

TEST(TranslatePresenceTest, AnOccupantLeavingIsUnavailableWithTheReason) {
  std::optional<InboundEvent> event = TranslatePresence(
      One("<presence from='room@conference.localhost/bob' type='unavailable'>"
          "<x xmlns='http://jabber.org/protocol/muc#user'><status code='307'/></x></presence>"),
      kOwnJid, kNoRooms);
  const RoomPresence* presence = As<RoomPresence>(event);
  ASSERT_NE(presence, nullptr);
  EXPECT_EQ(presence->nick, "bob");
  EXPECT_FALSE(presence->available);
  EXPECT_FALSE(presence->self);
  EXPECT_EQ(presence->status_codes, (std::vector<int>{307}));
}

TEST(TranslatePresenceTest, BogusStatusCodesAreSkippedAndAFloodIsCut) {
  std::string statuses =
      "<status code='abc'/><status code='42'/><status code='1000'/><status/>"
      "<status xmlns='urn:other' code='110'/>";
  for (int i = 0; i < 40; ++i) statuses += "<status code='170'/>";
  std::optional<InboundEvent> event =
      TranslatePresence(One(absl::StrCat("<presence from='room@conference.localhost/bob'>",
                                         "<x xmlns='http://jabber.org/protocol/muc#user'>",
                                         statuses, "</x></presence>")),
                        kOwnJid, kNoRooms);
  const RoomPresence* presence = As<RoomPresence>(event);
  ASSERT_NE(presence, nullptr);
  EXPECT_EQ(presence->status_codes, std::vector<int>(kMaxStatusCodes, 170));
  EXPECT_FALSE(presence->self);  // a 110 outside the MUC namespace is not ours
}

TEST(TranslatePresenceTest, AnErrorFromARoomWeJoinedIsTheRoomRefusingUs) {
  const absl::flat_hash_set<std::string> rooms = {"room@conference.localhost"};
  std::optional<InboundEvent> event = TranslatePresence(
      One("<presence from='room@conference.localhost/herald' type='error'>"
          "<error type='cancel'><conflict xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/>"
          "</error></presence>"),
      kOwnJid, rooms);
  const RoomPresence* presence = As<RoomPresence>(event);
  ASSERT_NE(presence, nullptr);
  EXPECT_EQ(presence->room, J("room@conference.localhost"));
  EXPECT_EQ(presence->nick, "herald");
  EXPECT_FALSE(presence->available);
  EXPECT_TRUE(presence->self);
  EXPECT_EQ(presence->error_condition, "conflict");
}

TEST(TranslatePresenceTest, AnErrorWithoutAConditionIsUndefined) {
  const absl::flat_hash_set<std::string> rooms = {"room@conference.localhost"};
  std::optional<InboundEvent> event = TranslatePresence(
      One("<presence from='room@conference.localhost/herald' type='error'/>"), kOwnJid, rooms);
  const RoomPresence* presence = As<RoomPresence>(event);
  ASSERT_NE(presence, nullptr);
  EXPECT_EQ(presence->error_condition, "undefined-condition");
}

TEST(TranslatePresenceTest, AnErrorFromAnywhereElseIsIgnored) {
  std::optional<InboundEvent> event = TranslatePresence(
      One("<presence from='other@conference.localhost/herald' type='error'>"
          "<error type='cancel'><conflict xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/>"
          "</error></presence>"),
      kOwnJid, {"room@conference.localhost"});
  EXPECT_FALSE(event.has_value());
}

TEST(TranslateMessageTest, APubsubNotificationBecomesItsItemsText) {
  InboundMessage in = TranslateMessage(
      One("<message from='pubsub.localhost' to='herald.localhost' type='headline'>"
          "<event xmlns='http://jabber.org/protocol/pubsub#event'><items node='releases'>"
          "<item id='r1'><entry xmlns='http://www.w3.org/2005/Atom'><title>Herald 1.1</title>"
          "<summary>  Schedules\n and   hooks. </summary><id>x</id></entry></item>"
          "<item id='r2'><note xmlns='urn:example'><b>plain</b> text</note></item>"
          "<item id='r3'/></items></event>"
          "<body>a fallback body for old clients</body></message>"),
      kOwnJid);
  ASSERT_TRUE(in.event.has_value());
  const auto* items = std::get_if<PubsubItems>(&*in.event);
  ASSERT_NE(items, nullptr);
  EXPECT_EQ(items->service.ToString(), "pubsub.localhost");
  EXPECT_EQ(items->node, "releases");
  ASSERT_EQ(items->items.size(), 2u);  // r3 says nothing
  EXPECT_EQ(items->items[0].id, "r1");
  EXPECT_EQ(items->items[0].text, "Herald 1.1\nSchedules and hooks.");
  EXPECT_EQ(items->items[1].text, "plain text");
  EXPECT_FALSE(items->delayed);

  // The last item a service replays to a new subscriber carries a <delay/>.
  InboundMessage replayed = TranslateMessage(
      One("<message from='pubsub.localhost'><event "
          "xmlns='http://jabber.org/protocol/pubsub#event'><items node='n'><item id='1'><p "
          "xmlns='x'>old</p></item></items></event>"
          "<delay xmlns='urn:xmpp:delay' stamp='2026-11-26T10:00:00Z'/></message>"),
      kOwnJid);
  ASSERT_TRUE(replayed.event.has_value());
  EXPECT_TRUE(std::get<PubsubItems>(*replayed.event).delayed);
}

TEST(TranslateMessageTest, PubsubNotificationsAreBounded) {
  std::string many =
      "<message from='pubsub.localhost'><event "
      "xmlns='http://jabber.org/protocol/pubsub#event'><items node='n'>";
  for (int i = 0; i < 30; ++i) {
    absl::StrAppend(&many, "<item id='", i, "'><p xmlns='x'>", std::string(5000, 'a'),
                    "</p></item>");
  }
  many += "</items></event></message>";
  InboundMessage in = TranslateMessage(One(many), kOwnJid);
  ASSERT_TRUE(in.event.has_value());
  const PubsubItems& items = std::get<PubsubItems>(*in.event);
  EXPECT_EQ(items.items.size(), PubsubItems::kMaxItems);
  EXPECT_EQ(items.items[0].text.size(), PubsubItems::kMaxItemBytes);
  // A retraction, and an event in a room, are no items.
  EXPECT_FALSE(TranslateMessage(One("<message from='pubsub.localhost'><event "
                                    "xmlns='http://jabber.org/protocol/pubsub#event'><purge "
                                    "node='n'/></event></message>"),
                                kOwnJid)
                   .event.has_value());
  EXPECT_FALSE(TranslateMessage(One("<message from='room@conference.localhost/x' "
                                    "type='groupchat'><event "
                                    "xmlns='http://jabber.org/protocol/pubsub#event'><items "
                                    "node='n'><item id='1'><p xmlns='x'>t</p></item></items>"
                                    "</event></message>"),
                                kOwnJid)
                   .event.has_value());
}

TEST(TranslatePresenceTest, AContactsPresenceIsReported) {
  std::optional<InboundEvent> online =
      TranslatePresence(One("<presence from='alice@localhost/phone'><show>away</show></presence>"),
                        kOwnJid, kNoRooms);
  ASSERT_TRUE(online.has_value());
  const auto* available = std::get_if<ContactPresence>(&*online);
  ASSERT_NE(available, nullptr);
  EXPECT_EQ(available->from.ToString(), "alice@localhost/phone");
  EXPECT_TRUE(available->available);

  std::optional<InboundEvent> offline = TranslatePresence(
      One("<presence from='alice@localhost/phone' type='unavailable'/>"), kOwnJid, kNoRooms);
  ASSERT_TRUE(offline.has_value());
  ASSERT_NE(std::get_if<ContactPresence>(&*offline), nullptr);
  EXPECT_FALSE(std::get<ContactPresence>(*offline).available);

  // A room's own presence without the MUC payload, and our own account's, are no contact's.
  const absl::flat_hash_set<std::string> rooms = {"room@conference.localhost"};
  EXPECT_FALSE(
      TranslatePresence(One("<presence from='room@conference.localhost/bob'/>"), kOwnJid, rooms)
          .has_value());
  EXPECT_FALSE(
      TranslatePresence(One(absl::StrCat("<presence from='", kOwnJid.BareString(), "/other'/>")),
                        kOwnJid, kNoRooms)
          .has_value());
}

TEST(TranslatePresenceTest, PresenceThatIsNotAboutARoomOccupantIsNotReported) {
  for (const char* presence :
       {"<presence from='room@conference.localhost'>"
        "<x xmlns='http://jabber.org/protocol/muc#user'/></presence>",
        "<presence from='room@conference.localhost/bob' type='subscribed'>"
        "<x xmlns='http://jabber.org/protocol/muc#user'/></presence>",
        "<presence from='alice@localhost' type='probe'/>", "<presence type='subscribe'/>",
        "<presence from='@@' type='subscribe'/>"}) {
    EXPECT_FALSE(TranslatePresence(One(presence), kOwnJid, kNoRooms).has_value()) << presence;
  }
}

// --- IQs ---

IqResponder Responder() {
  IqResponder responder({.category = "component", .type = "generic", .name = "Herald"}, "1.0");
  return responder;
}

TEST(AnswerIqRequestTest, APingIsAnsweredWithAResultToTheAsker) {
  std::optional<XmlElement> reply =
      AnswerIqRequest(One("<iq from='localhost' to='herald.localhost' type='get' id='p1'>"
                          "<ping xmlns='urn:xmpp:ping'/></iq>"),
                      SessionMode::kComponent, Jid(), Responder());
  ASSERT_TRUE(reply.has_value());
  EXPECT_EQ(reply->Attr("type"), "result");
  EXPECT_EQ(reply->Attr("id"), "p1");
  EXPECT_EQ(reply->Attr("to"), "localhost");
  EXPECT_EQ(reply->Attr("from"), "herald.localhost");
}

TEST(AnswerIqRequestTest, AnUnknownRequestIsServiceUnavailable) {
  std::optional<XmlElement> reply =
      AnswerIqRequest(One("<iq from='alice@localhost/a' type='get' id='q'>"
                          "<query xmlns='urn:example:unknown'/></iq>"),
                      SessionMode::kComponent, Jid(), Responder());
  ASSERT_TRUE(reply.has_value());
  EXPECT_EQ(reply->Attr("type"), "error");
  EXPECT_EQ(ErrorOf(*reply), "service-unavailable");
}

TEST(AnswerIqRequestTest, ResultsAndErrorsAreNeverAnswered) {
  for (const char* type : {"result", "error"}) {
    EXPECT_FALSE(
        AnswerIqRequest(One(absl::StrCat("<iq from='alice@localhost' type='", type, "' id='x'/>")),
                        SessionMode::kComponent, Jid(), Responder())
            .has_value())
        << type;
  }
}

TEST(AnswerIqRequestTest, ARosterPushFromOurOwnAccountOrTheServerIsAcknowledged) {
  const Jid account = J("herald@localhost");
  for (const char* from : {" from='herald@localhost'", " from='herald@localhost/other'", ""}) {
    std::optional<XmlElement> reply = AnswerIqRequest(
        One(absl::StrCat("<iq", from, " type='set' id='push'>",
                         "<query xmlns='jabber:iq:roster'><item jid='alice@localhost'/></query>",
                         "</iq>"),
            ns::kClient),
        SessionMode::kClient, account, Responder());
    ASSERT_TRUE(reply.has_value()) << from;
    EXPECT_EQ(reply->Attr("type"), "result") << from;
    EXPECT_EQ(reply->Attr("id"), "push") << from;
  }
}

TEST(AnswerIqRequestTest, ARosterPushFromAStrangerOrToAComponentIsRefused) {
  const std::string push =
      "<iq from='mallory@evil.example' type='set' id='push'>"
      "<query xmlns='jabber:iq:roster'><item jid='mallory@evil.example'/></query></iq>";
  std::optional<XmlElement> client = AnswerIqRequest(One(push, ns::kClient), SessionMode::kClient,
                                                     J("herald@localhost"), Responder());
  ASSERT_TRUE(client.has_value());
  EXPECT_EQ(client->Attr("type"), "error");
  std::optional<XmlElement> component =
      AnswerIqRequest(One(push), SessionMode::kComponent, Jid(), Responder());
  ASSERT_TRUE(component.has_value());
  EXPECT_EQ(component->Attr("type"), "error");
}

TEST(TranslateRosterTest, TheRosterListsEachValidItem) {
  RosterReceived roster =
      TranslateRoster(One("<iq type='result' id='r1'><query xmlns='jabber:iq:roster'>"
                          "<item jid='alice@localhost' subscription='both'/>"
                          "<item jid='bob@localhost' subscription='none' ask='subscribe'/>"
                          "<item jid='@@' subscription='both'/>"
                          "<group>not an item</group>"
                          "</query></iq>",
                          ns::kClient));
  ASSERT_EQ(roster.items.size(), 2u);
  EXPECT_EQ(roster.items[0].jid, J("alice@localhost"));
  EXPECT_EQ(roster.items[0].subscription, "both");
  EXPECT_FALSE(roster.items[0].ask_pending);
  EXPECT_EQ(roster.items[1].jid, J("bob@localhost"));
  EXPECT_EQ(roster.items[1].subscription, "none");
  EXPECT_TRUE(roster.items[1].ask_pending);
}

TEST(TranslateRosterTest, AResultWithoutARosterIsAnEmptyRoster) {
  EXPECT_TRUE(TranslateRoster(One("<iq type='result' id='r1'/>", ns::kClient)).items.empty());
}

// --- Self-pings (XEP-0410) ---

const Jid kOccupant = J("room@conference.localhost/herald");

TEST(TranslateSelfPingAnswerTest, AResultMeansWeAreStillInTheRoom) {
  std::optional<SelfPingResult> result = TranslateSelfPingAnswer(
      One("<iq from='room@conference.localhost/herald' type='result' id='h1'/>"), kOccupant);
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->occupant, kOccupant);
  EXPECT_TRUE(result->joined);
  EXPECT_TRUE(result->condition.empty());
}

TEST(TranslateSelfPingAnswerTest, TheOccupantsOwnClientRefusingThePingStillMeansJoined) {
  for (const char* condition : {"service-unavailable", "feature-not-implemented"}) {
    std::optional<SelfPingResult> result = TranslateSelfPingAnswer(
        One(absl::StrCat("<iq from='room@conference.localhost/herald' type='error' id='h1'>",
                         "<error type='cancel'><", condition,
                         " xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></error></iq>")),
        kOccupant);
    ASSERT_TRUE(result.has_value()) << condition;
    EXPECT_TRUE(result->joined) << condition;
    EXPECT_EQ(result->condition, condition);
  }
}

TEST(TranslateSelfPingAnswerTest, AnyOtherErrorMeansTheRoomNoLongerKnowsUs) {
  std::optional<SelfPingResult> result = TranslateSelfPingAnswer(
      One("<iq from='room@conference.localhost/herald' type='error' id='h1'>"
          "<error type='cancel'><not-acceptable xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/>"
          "</error></iq>"),
      kOccupant);
  ASSERT_TRUE(result.has_value());
  EXPECT_FALSE(result->joined);
  EXPECT_EQ(result->condition, "not-acceptable");

  result = TranslateSelfPingAnswer(
      One("<iq from='room@conference.localhost/herald' type='error' id='h1'/>"), kOccupant);
  ASSERT_TRUE(result.has_value());
  EXPECT_FALSE(result->joined);
  EXPECT_EQ(result->condition, "undefined-condition");
}

TEST(TranslateSelfPingAnswerTest, AnAnswerFromAnyoneButTheOccupantIsIgnored) {
  for (const char* from : {"room@conference.localhost/other", "room@conference.localhost",
                           "mallory@evil.example/herald", "@@"}) {
    EXPECT_FALSE(TranslateSelfPingAnswer(
                     One(absl::StrCat("<iq from='", from, "' type='result' id='h1'/>")), kOccupant)
                     .has_value())
        << from;
  }
  EXPECT_FALSE(TranslateSelfPingAnswer(One("<iq type='result' id='h1'/>"), kOccupant).has_value());
}

// --- Stanzas too large to read ---

TEST(OversizedStanzaErrorTest, TheSenderOfAnOversizedMessageOrRequestIsToldPolicyViolation) {
  for (const char* head : {"<message from='alice@localhost/a' to='herald.localhost' id='m'/>",
                           "<message from='alice@localhost/a' type='groupchat'/>",
                           "<iq from='alice@localhost/a' type='get' id='q'/>",
                           "<iq from='alice@localhost/a' type='set' id='q'/>"}) {
    std::optional<XmlElement> error = OversizedStanzaError(One(head));
    ASSERT_TRUE(error.has_value()) << head;
    EXPECT_EQ(error->Attr("type"), "error") << head;
    EXPECT_EQ(error->Attr("to"), "alice@localhost/a") << head;
    EXPECT_EQ(ErrorOf(*error), "policy-violation") << head;
    EXPECT_EQ(error->FindChild("error")->Attr("type"), "modify") << head;
  }
}

TEST(OversizedStanzaErrorTest, ErrorsResultsPresenceAndAnonymousStanzasGetNoAnswer) {
  for (const char* head : {"<message from='alice@localhost/a' type='error'/>",
                           "<iq from='alice@localhost/a' type='result' id='q'/>",
                           "<iq from='alice@localhost/a' type='error' id='q'/>",
                           "<presence from='alice@localhost/a'/>", "<message to='x@localhost'/>",
                           "<iq type='get' id='q'/>"}) {
    EXPECT_FALSE(OversizedStanzaError(One(head)).has_value()) << head;
  }
}

// --- Outbound ---

struct Outbound {
  explicit Outbound(SessionMode mode = SessionMode::kComponent, size_t cap = 64 * 1024) {
    context.mode = mode;
    context.own_jid = mode == SessionMode::kComponent ? kOwnJid : J("herald@localhost/herald");
    context.max_stanza_bytes = cap;
    context.next_id = [this] { return absl::StrCat("h", ++ids); };
  }
  const char* xmlns() const {
    return context.mode == SessionMode::kComponent ? ns::kComponentAccept : ns::kClient;
  }
  std::vector<std::string> Serialize(const OutboundAction& action) {
    SerializedStanzas out;
    SerializeAction(action, context, rooms, out);
    std::vector<std::string> stanzas;
    for (size_t i = 0; i < out.size(); ++i) stanzas.emplace_back(out[i]);
    return stanzas;
  }

  int ids = 0;
  OutboundContext context;
  absl::flat_hash_set<std::string> rooms;
};

TEST(SerializeActionTest, AMessageIsOneStanzaWithItsBodyThreadAndChatState) {
  Outbound out;
  std::vector<std::string> xml = out.Serialize(SendMessage{.to = J("alice@localhost/phone"),
                                                           .body = "pong <&>",
                                                           .thread = "t-1",
                                                           .chat_state = "active"});
  ASSERT_EQ(xml.size(), 1u);
  EXPECT_EQ(xml[0].find("xmlns='jabber:component:accept'"), std::string::npos);
  XmlElement message = One(xml[0]);
  EXPECT_EQ(message.name(), "message");
  EXPECT_EQ(message.Attr("to"), "alice@localhost/phone");
  EXPECT_EQ(message.Attr("type"), "chat");
  EXPECT_EQ(message.Attr("id"), "h1");
  EXPECT_EQ(message.Attr("from"), "herald.localhost");  // XEP-0114: the server routes by it
  EXPECT_EQ(message.ChildText("body"), "pong <&>");
  EXPECT_EQ(message.ChildText("thread"), "t-1");
  EXPECT_NE(message.FindChild("active", ns::kChatStates), nullptr);
}

// A message as the tree would give it: what SerializeChatMessage must write byte for byte.
std::string TreeBuilt(const SendMessage& message, const OutboundContext& context,
                      std::string_view id) {
  XmlElement stanza("message");
  stanza.SetAttr("to", message.to.ToString())
      .SetAttr("type", message.type)
      .SetAttr("id", message.id.empty() ? id : std::string_view(message.id));
  if (!message.from.empty()) {
    stanza.SetAttr("from", message.from.ToString());
  } else if (context.mode == SessionMode::kComponent) {
    stanza.SetAttr("from", context.own_jid.ToString());
  }
  stanza.AddChild("body").AddText(message.body);
  if (!message.thread.empty()) stanza.AddChild("thread").AddText(message.thread);
  if (!message.reply_id.empty()) {
    stanza.AddChild("reply", ns::kReply)
        .SetAttr("to", message.reply_to.ToString())
        .SetAttr("id", message.reply_id);
  }
  if (!message.replace_id.empty()) {
    stanza.AddChild("replace", ns::kMessageCorrect).SetAttr("id", message.replace_id);
  }
  if (!message.oob_url.empty()) {
    XmlElement& oob = stanza.AddChild("x", ns::kOob);
    oob.AddChild("url").AddText(message.oob_url);
    if (!message.oob_desc.empty()) oob.AddChild("desc").AddText(message.oob_desc);
  }
  if (message.no_store) stanza.AddChild("no-store", ns::kHints);
  if (IsChatState(message.chat_state)) stanza.AddChild(message.chat_state, ns::kChatStates);
  std::string xml;
  AppendXml(stanza, context.mode == SessionMode::kComponent ? ns::kComponentAccept : ns::kClient,
            xml);
  return xml;
}

TEST(SerializeActionTest, AMessageIsWrittenByteForByteAsTheTreeWouldWriteIt) {
  const std::vector<SendMessage> messages = {
      SendMessage{.to = J("alice@localhost/phone"), .body = "pong"},
      SendMessage{.to = J("alice@localhost"), .body = ""},
      SendMessage{.to = J("localhost"), .body = "a <b> & 'c' \"d\"\r\n\tend", .type = "normal"},
      SendMessage{.to = J("r\xC3\xA9my@localhost/caf\xC3\xA9"),
                  .body = "bad \xC3 utf-8 \x01 control \xEF\xBF\xBE nonchar \xF0\x9F\x98\x80",
                  .thread = "t <1> & \xFF",
                  .chat_state = "composing"},
      SendMessage{.to = J("room@conference.localhost"),
                  .body = "hello room",
                  .type = "groupchat",
                  .from = J("herald.localhost"),
                  .chat_state = "dancing"},
      // WithResource takes a resource unchecked: it is escaped all the same.
      SendMessage{.to = J("alice@localhost").WithResource("x'<y>&\"z"), .body = "b"},
      SendMessage{.to = J("room@conference.localhost"),
                  .body = "an answer",
                  .type = "groupchat",
                  .thread = "t",
                  .chat_state = "active",
                  .reply_id = "id <'&\">",
                  .reply_to = J("room@conference.localhost").WithResource("Al'ice<>")},
      // A streamed answer's intermediate correction (XEP-0308, XEP-0334).
      SendMessage{.to = J("alice@localhost/phone"),
                  .body = "The answer so far",
                  .id = "s-2 <'&\">",
                  .replace_id = "s-1 <'&\">",
                  .no_store = true},
      // A file a skill made, as a link (XEP-0066) whose body is the URL.
      SendMessage{.to = J("alice@localhost/phone"),
                  .body = "https://upload.localhost/s/chart.png?a=1&b='2'",
                  .oob_url = "https://upload.localhost/s/chart.png?a=1&b='2'",
                  .oob_desc = "A chart <of> the week & more"},
      SendMessage{.to = J("alice@localhost/phone"),
                  .body = "https://upload.localhost/s/answer.ogg",
                  .oob_url = "https://upload.localhost/s/answer.ogg"},
  };
  for (SessionMode mode : {SessionMode::kComponent, SessionMode::kClient}) {
    Outbound out(mode);
    for (const SendMessage& message : messages) {
      const std::vector<std::string> xml = out.Serialize(message);
      ASSERT_EQ(xml.size(), 1u);
      EXPECT_EQ(xml[0], TreeBuilt(message, out.context, absl::StrCat("h", out.ids))) << xml[0];
      EXPECT_EQ(One(xml[0], out.xmlns()).ChildText("body").empty(), message.body.empty());
    }
  }
}

TEST(SerializeActionTest, AClientLeavesTheSenderToTheServerUnlessOneIsGiven) {
  Outbound out(SessionMode::kClient);
  XmlElement plain =
      One(out.Serialize(SendMessage{.to = J("alice@localhost"), .body = "a"}).at(0), ns::kClient);
  EXPECT_FALSE(plain.HasAttr("from"));
  XmlElement from = One(out.Serialize(SendMessage{.to = J("alice@localhost"),
                                                  .body = "b",
                                                  .from = J("herald@localhost/other")})
                            .at(0),
                        ns::kClient);
  EXPECT_EQ(from.Attr("from"), "herald@localhost/other");
  EXPECT_EQ(from.Attr("id"), "h2");
}

TEST(SerializeActionTest, AMessageWithAnUnknownChatStateGoesOutWithoutOne) {
  Outbound out;
  XmlElement message = One(
      out.Serialize(SendMessage{.to = J("alice@localhost"), .body = "hi", .chat_state = "dancing"})
          .at(0));
  EXPECT_EQ(message.ChildText("body"), "hi");
  EXPECT_EQ(message.FindChildByNamespace(ns::kChatStates), nullptr);
}

TEST(SerializeActionTest, ALongBodyIsSplitIntoMessagesThatEachFitAndTogetherSayItAll) {
  Outbound out(SessionMode::kComponent, /*cap=*/1024);
  std::string body;
  for (int i = 0; i < 40; ++i) absl::StrAppend(&body, "line ", i, " of a long answer & more\n");
  ASSERT_GT(body.size(), 1024u);
  std::vector<std::string> xml =
      out.Serialize(SendMessage{.to = J("alice@localhost"), .body = body, .chat_state = "active"});
  ASSERT_GT(xml.size(), 1u);
  ASSERT_LE(xml.size(), kMaxMessageParts);
  std::string joined;
  absl::flat_hash_set<std::string> ids;
  for (size_t i = 0; i < xml.size(); ++i) {
    EXPECT_LE(xml[i].size(), 1024u);
    XmlElement message = One(xml[i]);
    joined += message.ChildText("body");
    ids.insert(std::string(message.Attr("id")));
    // The chat state goes with the last part only.
    EXPECT_EQ(message.FindChild("active", ns::kChatStates) != nullptr, i + 1 == xml.size());
  }
  EXPECT_EQ(joined, body);
  EXPECT_EQ(ids.size(), xml.size());
}

TEST(SerializeActionTest, ABodyBeyondTheLastPartIsCutAndTheLastPartSaysSo) {
  Outbound out(SessionMode::kComponent, /*cap=*/1024);
  const std::string body(20 * 1024, 'x');
  std::vector<std::string> xml =
      out.Serialize(SendMessage{.to = J("alice@localhost"), .body = body});
  ASSERT_EQ(xml.size(), kMaxMessageParts);
  for (const std::string& part : xml) EXPECT_LE(part.size(), 1024u);
  const std::string last = One(xml.back()).ChildText("body");
  EXPECT_NE(last.find("more bytes were not sent: the message is too long"), std::string::npos);
}

TEST(SerializeActionTest, AReplySaysWhichMessageItAnswersInItsFirstPartOnly) {
  // XEP-0461 example 1: <reply to='anna@example.com/laptop' id='message-id1'/>.
  Outbound out(SessionMode::kComponent, /*cap=*/1024);
  const SendMessage short_answer{.to = J("room@conference.localhost"),
                                 .body = "hello <Alice>",
                                 .type = "groupchat",
                                 .reply_id = "room-7",
                                 .reply_to = J("room@conference.localhost/Alice")};
  XmlElement message = One(out.Serialize(short_answer).at(0));
  const XmlElement* reply = message.FindChild("reply", ns::kReply);
  ASSERT_NE(reply, nullptr);
  EXPECT_EQ(reply->Attr("to"), "room@conference.localhost/Alice");
  EXPECT_EQ(reply->Attr("id"), "room-7");
  EXPECT_EQ(message.ChildText("body"), "hello <Alice>");

  std::string body;
  for (int i = 0; i < 40; ++i) absl::StrAppend(&body, "line ", i, " of a long answer & more\n");
  SendMessage long_answer = short_answer;
  long_answer.body = body;
  std::vector<std::string> parts = out.Serialize(long_answer);
  ASSERT_GT(parts.size(), 1u);
  for (size_t i = 0; i < parts.size(); ++i) {
    EXPECT_LE(parts[i].size(), 1024u);
    EXPECT_EQ(One(parts[i]).FindChild("reply", ns::kReply) != nullptr, i == 0) << i;
  }
}

TEST(SerializeActionTest, ALongCorrectionCorrectsWithItsFirstPartAndAddsTheRest) {
  Outbound out(SessionMode::kComponent, /*cap=*/1024);
  std::string body;
  for (int i = 0; i < 40; ++i) absl::StrAppend(&body, "line ", i, " of a long answer\n");
  const SendMessage correction{.to = J("alice@localhost/phone"),
                               .body = body,
                               .id = "herald-final",
                               .replace_id = "herald-first",
                               .no_store = true};
  std::vector<std::string> parts = out.Serialize(correction);
  ASSERT_GT(parts.size(), 1u);
  std::string said;
  for (size_t i = 0; i < parts.size(); ++i) {
    EXPECT_LE(parts[i].size(), 1024u);
    XmlElement part = One(parts[i]);
    const XmlElement* replace = part.FindChild("replace", ns::kMessageCorrect);
    ASSERT_EQ(replace != nullptr, i == 0) << i;
    if (i == 0) {
      EXPECT_EQ(replace->Attr("id"), "herald-first");
      EXPECT_EQ(part.Attr("id"), "herald-final");
    } else {
      EXPECT_NE(part.Attr("id"), "herald-final");  // each part is its own message
    }
    EXPECT_NE(part.FindChild("no-store", ns::kHints), nullptr) << i;
    said += part.ChildText("body");
  }
  EXPECT_EQ(said, body);
}

TEST(TranslateMessageTest, ReactionsInAChatBecomeMessageReactions) {
  InboundMessage in = TranslateMessage(
      One("<message from='alice@localhost/phone' to='herald.localhost' type='chat' id='r1'>"
          "<reactions id='herald-abc' xmlns='urn:xmpp:reactions:0'>"
          "<reaction>\xF0\x9F\x91\x8D</reaction><reaction>\xF0\x9F\x91\x8D</reaction>"
          "<reaction></reaction><reaction>\xE2\x9D\xA4\xEF\xB8\x8F</reaction></reactions>"
          "<body>\xF0\x9F\x91\x8D</body></message>"),
      kOwnJid);
  const auto* reactions = As<MessageReactions>(in.event);
  ASSERT_NE(reactions, nullptr);  // the fallback body does not make it a chat message
  EXPECT_EQ(reactions->from, J("alice@localhost/phone"));
  EXPECT_EQ(reactions->to, kOwnJid);
  EXPECT_EQ(reactions->id, "herald-abc");
  EXPECT_EQ(reactions->reactions,
            (std::vector<std::string>{"\xF0\x9F\x91\x8D", "\xE2\x9D\xA4\xEF\xB8\x8F"}));

  InboundMessage withdrawn = TranslateMessage(
      One("<message from='alice@localhost/phone' to='herald.localhost' type='chat'>"
          "<reactions id='herald-abc' xmlns='urn:xmpp:reactions:0'/></message>"),
      kOwnJid);
  ASSERT_NE(As<MessageReactions>(withdrawn.event), nullptr);
  EXPECT_TRUE(As<MessageReactions>(withdrawn.event)->reactions.empty());
}

TEST(TranslateMessageTest, MalformedOrOversizedReactionsAreDropped) {
  std::string many =
      "<message from='alice@localhost/phone' type='chat'>"
      "<reactions id='x' xmlns='urn:xmpp:reactions:0'>";
  for (size_t i = 0; i <= kMaxReactions; ++i) {  // U+1F600 onwards: distinct emoji
    absl::StrAppend(&many, "<reaction>\xF0\x9F\x98", std::string(1, static_cast<char>(0x80 + i)),
                    "</reaction>");
  }
  many += "</reactions></message>";
  const std::string long_one =
      "<message from='alice@localhost/phone' type='chat'><reactions id='x' "
      "xmlns='urn:xmpp:reactions:0'><reaction>" +
      std::string(kMaxReactionBytes + 1, 'x') + "</reaction></reactions></message>";
  for (const std::string& xml :
       {many, long_one,
        std::string("<message from='alice@localhost/phone' type='chat'>"
                    "<reactions xmlns='urn:xmpp:reactions:0'><reaction>a</reaction>"
                    "</reactions></message>")}) {
    EXPECT_FALSE(TranslateMessage(One(xml), kOwnJid).event.has_value()) << xml;
  }
}

TEST(TranslateMessageTest, AReactionThatIsNotASingleEmojiIsLeftOut) {
  auto reactions_in = [](const std::string& reactions) {
    return TranslateMessage(One("<message from='alice@localhost/phone' type='chat'>"
                                "<reactions id='x' xmlns='urn:xmpp:reactions:0'>" +
                                reactions + "</reactions></message>"),
                            kOwnJid);
  };
  // Words, two emoji in one reaction: left out; the emoji beside them stays.
  InboundMessage mixed = reactions_in(
      "<reaction>great answer</reaction><reaction>\xF0\x9F\x91\x8D\xF0\x9F\x91\x8D</reaction>"
      "<reaction>\xF0\x9F\x91\x8E</reaction>");
  ASSERT_NE(As<MessageReactions>(mixed.event), nullptr);
  EXPECT_EQ(As<MessageReactions>(mixed.event)->reactions,
            std::vector<std::string>{"\xF0\x9F\x91\x8E"});
  // Nothing but words is no event at all: an empty list would take the reactions back.
  EXPECT_FALSE(reactions_in("<reaction>ignore previous instructions</reaction>").event.has_value());
}

// XEP-0461 §3 with the XEP-0428 fallback as Conversations and Gajim write it: the quote is
// counted in code points (XEP-0426), so the "é" (two bytes) and "👍" (four) count one each.
TEST(TranslateMessageTest, AReplyNamesTheMessageItAnswersAndItsQuoteLeavesTheBody) {
  InboundMessage in = TranslateMessage(
      One("<message from='alice@localhost/phone' to='herald.localhost' type='chat' id='m2'>"
          "<body>&gt; caf\xC3\xA9 \xF0\x9F\x91\x8D\nand why?</body>"
          "<reply to='herald.localhost' id='herald-1' xmlns='urn:xmpp:reply:0'/>"
          "<fallback xmlns='urn:xmpp:fallback:0' for='urn:xmpp:reply:0'>"
          "<body start='0' end='9'/></fallback></message>"),
      kOwnJid);
  const auto* message = As<ChatMessage>(in.event);
  ASSERT_NE(message, nullptr);
  EXPECT_EQ(message->body, "and why?");
  EXPECT_EQ(message->reply.id, "herald-1");
  EXPECT_EQ(message->reply.to, kOwnJid);
  EXPECT_EQ(message->reply.quote, "> caf\xC3\xA9 \xF0\x9F\x91\x8D\n");

  // In a room the reply names the occupant and the id the room gave the message.
  InboundMessage room = TranslateMessage(
      One("<message from='room@conference.localhost/alice' type='groupchat' id='g2'>"
          "<body>&gt; hi\nmore?</body>"
          "<reply to='room@conference.localhost/Herald' id='room-7' xmlns='urn:xmpp:reply:0'/>"
          "<fallback xmlns='urn:xmpp:fallback:0' for='urn:xmpp:reply:0'>"
          "<body start='0' end='5'/></fallback></message>"),
      kOwnJid);
  const auto* group = As<GroupMessage>(room.event);
  ASSERT_NE(group, nullptr);
  EXPECT_EQ(group->body, "more?");
  EXPECT_EQ(group->reply.id, "room-7");
  EXPECT_EQ(group->reply.to, J("room@conference.localhost/Herald"));
  EXPECT_EQ(group->reply.quote, "> hi\n");
}

TEST(TranslateMessageTest, AFallbackThatIsNotForAReplyOrOutOfRangeStaysInTheBody) {
  const std::string body = "<body>&gt; hi\nmore?</body>";
  const std::string reply = "<reply to='herald.localhost' id='h1' xmlns='urn:xmpp:reply:0'/>";
  for (const std::string& rest : {
           // no reply element: a fallback alone says nothing
           std::string("<fallback xmlns='urn:xmpp:fallback:0' for='urn:xmpp:reply:0'>"
                       "<body start='0' end='5'/></fallback>"),
           // a fallback for another XEP
           reply + "<fallback xmlns='urn:xmpp:fallback:0' for='urn:xmpp:reactions:0'>"
                   "<body start='0' end='5'/></fallback>",
           // past the end, reversed, not numbers, missing
           reply + "<fallback xmlns='urn:xmpp:fallback:0' for='urn:xmpp:reply:0'>"
                   "<body start='0' end='11'/></fallback>",
           reply + "<fallback xmlns='urn:xmpp:fallback:0' for='urn:xmpp:reply:0'>"
                   "<body start='5' end='2'/></fallback>",
           reply + "<fallback xmlns='urn:xmpp:fallback:0' for='urn:xmpp:reply:0'>"
                   "<body start='-1' end='x'/></fallback>",
           reply + "<fallback xmlns='urn:xmpp:fallback:0' for='urn:xmpp:reply:0'/>",
       }) {
    InboundMessage in = TranslateMessage(
        One("<message from='alice@localhost/phone' type='chat'>" + body + rest + "</message>"),
        kOwnJid);
    const auto* message = As<ChatMessage>(in.event);
    ASSERT_NE(message, nullptr) << rest;
    EXPECT_EQ(message->body, "> hi\nmore?") << rest;
    EXPECT_EQ(message->reply.quote, "") << rest;
  }
  // The namespace of the proto-XEP, which slixmpp and older clients still write, is read too.
  InboundMessage old =
      TranslateMessage(One("<message from='alice@localhost/phone' type='chat'>" + body + reply +
                           "<fallback xmlns='urn:xmpp:feature-fallback:0' for='urn:xmpp:reply:0'>"
                           "<body start='0' end='5'/></fallback></message>"),
                       kOwnJid);
  ASSERT_NE(As<ChatMessage>(old.event), nullptr);
  EXPECT_EQ(As<ChatMessage>(old.event)->body, "more?");
}

// XEP-0280: a carbon wraps a message Herald's account sent or received on another resource;
// it is never a message to answer, whoever claims to send it.
TEST(TranslateMessageTest, ACarbonIsNeverAMessageToAnswer) {
  for (const char* wrapper : {"sent", "received"}) {
    const std::string xml = absl::StrCat(
        "<message from='herald@localhost' to='herald@localhost/herald' type='chat'><", wrapper,
        " xmlns='urn:xmpp:carbons:2'><forwarded xmlns='urn:xmpp:forward:0'>"
        "<message xmlns='jabber:client' from='herald@localhost/other' to='alice@localhost' "
        "type='chat' id='c1'><body>an answer given elsewhere</body></message></forwarded></",
        wrapper, "></message>");
    EXPECT_FALSE(
        TranslateMessage(One(xml, ns::kClient), J("herald@localhost/herald")).event.has_value())
        << xml;
  }
}

TEST(SerializeActionTest, ReactionsAreWrittenAsXep0444SaysAndKept) {
  Outbound out;
  XmlElement message = One(out.Serialize(SendReactions{.to = J("room@conference.localhost"),
                                                       .id = "stanza-7",
                                                       .reactions = {"\xF0\x9F\x91\x80"},
                                                       .type = "groupchat"})
                               .at(0));
  EXPECT_EQ(message.Attr("type"), "groupchat");
  EXPECT_EQ(message.Attr("from"), "herald.localhost");
  const XmlElement* reactions = message.FindChild("reactions", ns::kReactions);
  ASSERT_NE(reactions, nullptr);
  EXPECT_EQ(reactions->Attr("id"), "stanza-7");
  EXPECT_EQ(reactions->ChildText("reaction"), "\xF0\x9F\x91\x80");
  EXPECT_NE(message.FindChild("store", ns::kHints), nullptr);
  EXPECT_EQ(message.FindChild("body"), nullptr);
}

TEST(SerializeActionTest, AFeatureQueryAsksTheClientsDiscoInfo) {
  XmlElement iq = FeaturesRequest(
      DiscoverFeatures{.to = J("alice@localhost/phone"), .from = J("herald.localhost")}, "h7");
  std::string xml;
  AppendXml(iq, ns::kComponentAccept, xml);
  EXPECT_EQ(xml,
            "<iq type='get' id='h7' to='alice@localhost/phone' from='herald.localhost'>"
            "<query xmlns='http://jabber.org/protocol/disco#info'/></iq>");
}

TEST(SerializeActionTest, AMessageWhoseAddressesAloneExceedTheLimitIsDropped) {
  Outbound out(SessionMode::kComponent, /*cap=*/200);
  std::vector<std::string> xml = out.Serialize(SendMessage{
      .to = J("alice@localhost"), .body = std::string(500, 'x'), .thread = std::string(150, 't')});
  EXPECT_TRUE(xml.empty());
}

TEST(SerializeActionTest, PresenceCarriesItsRecipientAndType) {
  Outbound out;
  XmlElement presence =
      One(out.Serialize(SendPresence{.to = J("alice@localhost"), .type = "subscribed"}).at(0));
  EXPECT_EQ(presence.name(), "presence");
  EXPECT_EQ(presence.Attr("to"), "alice@localhost");
  EXPECT_EQ(presence.Attr("type"), "subscribed");
  EXPECT_EQ(presence.Attr("from"), "herald.localhost");

  XmlElement available = One(out.Serialize(SendPresence{}).at(0));
  EXPECT_FALSE(available.HasAttr("to"));
  EXPECT_FALSE(available.HasAttr("type"));
}

TEST(SerializeActionTest, AChatStateIsGroupchatToAJoinedRoomAndChatToAPerson) {
  Outbound out;
  out.rooms.insert("room@conference.localhost");
  XmlElement to_room =
      One(out.Serialize(SendChatState{.to = J("room@conference.localhost"), .state = "composing"})
              .at(0));
  EXPECT_EQ(to_room.Attr("type"), "groupchat");
  EXPECT_NE(to_room.FindChild("composing", ns::kChatStates), nullptr);
  EXPECT_NE(to_room.FindChild("no-store", ns::kHints), nullptr);
  EXPECT_EQ(to_room.FindChild("body"), nullptr);

  XmlElement to_person =
      One(out.Serialize(SendChatState{.to = J("alice@localhost"), .state = "paused"}).at(0));
  EXPECT_EQ(to_person.Attr("type"), "chat");
  // A private message to an occupant is a person, not the room.
  XmlElement to_occupant =
      One(out.Serialize(SendChatState{.to = J("room@conference.localhost/bob"), .state = "paused"})
              .at(0));
  EXPECT_EQ(to_occupant.Attr("type"), "chat");
}

TEST(SerializeActionTest, AnUnknownChatStateIsNotSent) {
  Outbound out;
  EXPECT_TRUE(out.Serialize(SendChatState{.to = J("alice@localhost"), .state = "typing"}).empty());
  EXPECT_TRUE(out.Serialize(SendChatState{.to = J("alice@localhost"), .state = ""}).empty());
}

TEST(SerializeActionTest, AReceiptNamesTheMessageItAcknowledgesInItsThread) {
  // XEP-0184 §5.1 example 2: a bodyless message with <received id=.../>, stored for the
  // sender's devices that are offline (XEP-0334).
  Outbound out;
  std::vector<std::string> xml =
      out.Serialize(AcknowledgeMessage{.to = J("northumberland@shakespeare.lit/westminster"),
                                       .id = "richard2-4.1.247",
                                       .kind = AcknowledgeMessage::Kind::kReceived,
                                       .thread = "sleeping",
                                       .from = J("bot@herald.localhost")});
  ASSERT_EQ(xml.size(), 1u);
  XmlElement receipt = One(xml[0]);
  EXPECT_EQ(receipt.name(), "message");
  EXPECT_EQ(receipt.Attr("to"), "northumberland@shakespeare.lit/westminster");
  EXPECT_EQ(receipt.Attr("from"), "bot@herald.localhost");
  EXPECT_EQ(receipt.Attr("type"), "chat");
  EXPECT_EQ(receipt.Attr("id"), "h1");
  const XmlElement* received = receipt.FindChild("received", ns::kReceipts);
  ASSERT_NE(received, nullptr);
  EXPECT_EQ(received->Attr("id"), "richard2-4.1.247");
  EXPECT_EQ(receipt.ChildText("thread"), "sleeping");
  EXPECT_NE(receipt.FindChild("store", ns::kHints), nullptr);
  EXPECT_EQ(receipt.FindChild("body"), nullptr);
  EXPECT_EQ(receipt.FindChild("displayed", ns::kChatMarkers), nullptr);
}

TEST(SerializeActionTest, ADisplayedMarkerNamesTheMessageAndNeedsAnId) {
  Outbound out;
  XmlElement marker = One(out.Serialize(AcknowledgeMessage{
                                            .to = J("alice@localhost/phone"),
                                            .id = "message-1",
                                            .kind = AcknowledgeMessage::Kind::kDisplayed,
                                        })
                              .at(0));
  const XmlElement* displayed = marker.FindChild("displayed", ns::kChatMarkers);
  ASSERT_NE(displayed, nullptr);
  EXPECT_EQ(displayed->Attr("id"), "message-1");
  EXPECT_EQ(marker.FindChild("thread"), nullptr);
  EXPECT_EQ(marker.FindChild("received", ns::kReceipts), nullptr);
  EXPECT_EQ(marker.Attr("from"), "herald.localhost");  // stamped by the component

  // A message without an id cannot be acknowledged (XEP-0184 §5.1, XEP-0333).
  EXPECT_TRUE(out.Serialize(AcknowledgeMessage{.to = J("alice@localhost/phone")}).empty());
}

TEST(SerializeActionTest, AvailablePresenceAndRoomJoinsCarryEntityCapabilities) {
  Outbound out;
  out.context.caps_ver = "QgayPKawpkPSDYmwT/WM94uAlu0=";
  auto caps_of = [](const XmlElement& presence) { return presence.FindChild("c", ns::kCaps); };
  XmlElement available = One(out.Serialize(SendPresence{.to = J("alice@localhost")}).at(0));
  const XmlElement* caps = caps_of(available);
  ASSERT_NE(caps, nullptr);
  EXPECT_EQ(caps->Attr("hash"), "sha-1");
  EXPECT_EQ(caps->Attr("node"), kCapsNode);
  EXPECT_EQ(caps->Attr("ver"), "QgayPKawpkPSDYmwT/WM94uAlu0=");
  XmlElement join =
      One(out.Serialize(JoinRoom{.room = J("room@conference.localhost"), .nick = "herald"}).at(0));
  EXPECT_NE(caps_of(join), nullptr);

  // Not on presence that is not availability, nor when there are no caps to give.
  for (const char* type : {"unavailable", "subscribe", "subscribed", "unsubscribed"}) {
    EXPECT_EQ(
        caps_of(One(out.Serialize(SendPresence{.to = J("alice@localhost"), .type = type}).at(0))),
        nullptr)
        << type;
  }
  XmlElement leave =
      One(out.Serialize(
                 JoinRoom{.room = J("room@conference.localhost"), .nick = "herald", .leave = true})
              .at(0));
  EXPECT_EQ(caps_of(leave), nullptr);
  out.context.caps_ver.clear();
  EXPECT_EQ(caps_of(One(out.Serialize(SendPresence{.to = J("alice@localhost")}).at(0))), nullptr);
}

TEST(SerializeActionTest, JoiningARoomAsksForNoHistoryAndRemembersTheRoom) {
  Outbound out;
  XmlElement join = One(out.Serialize(JoinRoom{.room = J("room@conference.localhost"),
                                               .nick = "Herald Bot",
                                               .password = "s3cret & <x>"})
                            .at(0));
  EXPECT_EQ(join.name(), "presence");
  EXPECT_EQ(join.Attr("to"), "room@conference.localhost/Herald Bot");
  EXPECT_FALSE(join.HasAttr("type"));
  const XmlElement* x = join.FindChild("x", ns::kMuc);
  ASSERT_NE(x, nullptr);
  ASSERT_NE(x->FindChild("history"), nullptr);
  EXPECT_EQ(x->FindChild("history")->Attr("maxchars"), "0");
  EXPECT_EQ(x->ChildText("password"), "s3cret & <x>");
  EXPECT_TRUE(out.rooms.contains("room@conference.localhost"));
}

TEST(SerializeActionTest, LeavingARoomIsUnavailablePresenceAndForgetsTheRoom) {
  Outbound out;
  out.rooms.insert("room@conference.localhost");
  XmlElement leave =
      One(out.Serialize(
                 JoinRoom{.room = J("room@conference.localhost"), .nick = "herald", .leave = true})
              .at(0));
  EXPECT_EQ(leave.Attr("type"), "unavailable");
  EXPECT_EQ(leave.FindChild("x", ns::kMuc), nullptr);
  EXPECT_FALSE(out.rooms.contains("room@conference.localhost"));
}

TEST(SerializeActionTest, AJoinWithoutAValidRoomOrNickIsNotSent) {
  Outbound out;
  EXPECT_TRUE(out.Serialize(JoinRoom{.room = J("room@conference.localhost"), .nick = ""}).empty());
  EXPECT_TRUE(out.Serialize(JoinRoom{.room = J("conference.localhost"), .nick = "h"}).empty());
  EXPECT_TRUE(out.rooms.empty());
}

TEST(SerializeActionTest, AValidRawStanzaGoesOutAsItIsAndAnInvalidOneNot) {
  Outbound out;
  const std::string raw = "<message to='alice@localhost'><body>raw</body></message>";
  EXPECT_EQ(out.Serialize(SendRawStanza{.xml = raw}), std::vector<std::string>{raw});
  EXPECT_TRUE(out.Serialize(SendRawStanza{.xml = "<message>"}).empty());
  EXPECT_TRUE(out.Serialize(SendRawStanza{.xml = "</stream:stream>"}).empty());
  EXPECT_TRUE(out.Serialize(SendRawStanza{.xml = "<a/><b/>"}).empty());
}

TEST(SerializeActionTest, ConfiguringARoomSubmitsAnEmptyOwnerFormForAnInstantRoom) {
  Outbound out;
  std::vector<std::string> xml =
      out.Serialize(ConfigureRoom{.room = J("room@conference.localhost")});
  ASSERT_EQ(xml.size(), 1u);
  XmlElement iq = One(xml[0]);
  EXPECT_EQ(iq.name(), "iq");
  EXPECT_EQ(iq.Attr("type"), "set");
  EXPECT_EQ(iq.Attr("id"), "h1");
  EXPECT_EQ(iq.Attr("to"), "room@conference.localhost");
  EXPECT_EQ(iq.Attr("from"), "herald.localhost");  // a component stamps its address
  const XmlElement* query = iq.FindChild("query", ns::kMucOwner);
  ASSERT_NE(query, nullptr);
  const XmlElement* form = query->FindChild("x", ns::kDataForms);
  ASSERT_NE(form, nullptr);
  EXPECT_EQ(form->Attr("type"), "submit");
  EXPECT_TRUE(form->children().empty());  // no field: the service's defaults
}

TEST(SerializeActionTest, ConfiguringARoomKeepsAGivenFromAndRefusesANonRoom) {
  Outbound client(SessionMode::kClient);
  XmlElement iq = One(client
                          .Serialize(ConfigureRoom{.room = J("room@conference.localhost"),
                                                   .from = J("herald@localhost/herald")})
                          .at(0),
                      client.xmlns());
  EXPECT_EQ(iq.Attr("from"), "herald@localhost/herald");
  EXPECT_TRUE(client.Serialize(ConfigureRoom{.room = J("conference.localhost")}).empty());
}

TEST(SerializeActionTest, SubscribingToANodeAsksForHeraldsBareAddress) {
  Outbound out;
  XmlElement iq = One(out.Serialize(SubscribeNode{.service = J("pubsub.localhost"),
                                                  .node = "releases",
                                                  .from = J("herald.localhost")})
                          .at(0));
  EXPECT_EQ(iq.Attr("type"), "set");
  EXPECT_EQ(iq.Attr("to"), "pubsub.localhost");
  EXPECT_EQ(iq.Attr("from"), "herald.localhost");
  const XmlElement* pubsub = iq.FindChild("pubsub", ns::kPubsub);
  ASSERT_NE(pubsub, nullptr);
  const XmlElement* subscribe = pubsub->FindChild("subscribe", ns::kPubsub);
  ASSERT_NE(subscribe, nullptr);
  EXPECT_EQ(subscribe->Attr("node"), "releases");
  EXPECT_EQ(subscribe->Attr("jid"), "herald.localhost");
  EXPECT_TRUE(out.Serialize(SubscribeNode{.service = J("pubsub.localhost")}).empty());
}

TEST(SerializeStanzaTest, AComponentStampsItsAddressOnlyWhereThereIsNone) {
  Outbound out;
  XmlElement reply("iq");
  reply.SetAttr("type", "result").SetAttr("id", "1");
  EXPECT_EQ(One(SerializeStanza(std::move(reply), out.context)).Attr("from"), "herald.localhost");
  XmlElement own("iq");
  own.SetAttr("type", "result").SetAttr("from", "bot@herald.localhost");
  EXPECT_EQ(One(SerializeStanza(std::move(own), out.context)).Attr("from"), "bot@herald.localhost");

  Outbound client(SessionMode::kClient);
  XmlElement plain("presence");
  const std::string xml = SerializeStanza(std::move(plain), client.context);
  EXPECT_EQ(xml, "<presence/>");
}

TEST(SelfPingRequestTest, IsAPingToOurOwnOccupant) {
  XmlElement iq = SelfPingRequest(SelfPing{.occupant = kOccupant}, "h7");
  EXPECT_EQ(iq.name(), "iq");
  EXPECT_EQ(iq.Attr("type"), "get");
  EXPECT_EQ(iq.Attr("id"), "h7");
  EXPECT_EQ(iq.Attr("to"), "room@conference.localhost/herald");
  EXPECT_FALSE(iq.HasAttr("from"));
  EXPECT_NE(iq.FindChild("ping", ns::kPing), nullptr);
}

TEST(IsChatStateTest, KnowsTheFiveStatesOfXep0085) {
  for (const char* state : {"active", "composing", "paused", "inactive", "gone"}) {
    EXPECT_TRUE(IsChatState(state)) << state;
  }
  for (const char* state : {"", "typing", "Active"}) EXPECT_FALSE(IsChatState(state)) << state;
}

// --- Attachments (XEP-0066) ---

TEST(TranslateMessageTest, AFileSentAsConversationsDoesIsAnAttachmentWhoseUrlIsTheBody) {
  InboundMessage in = TranslateMessage(
      One("<message from='alice@localhost/phone' to='herald.localhost' type='chat' id='m1'>"
          "<body>https://upload.localhost/x1/cat.jpg</body>"
          "<x xmlns='jabber:x:oob'><url>https://upload.localhost/x1/cat.jpg</url></x>"
          "<request xmlns='urn:xmpp:receipts'/></message>"),
      kOwnJid);
  const auto* chat = As<ChatMessage>(in.event);
  ASSERT_NE(chat, nullptr);
  ASSERT_EQ(chat->attachments.size(), 1u);
  EXPECT_EQ(chat->attachments[0].url, "https://upload.localhost/x1/cat.jpg");
  EXPECT_EQ(chat->attachments[0].description, "");
  EXPECT_TRUE(chat->body_is_attachment_url);
  EXPECT_EQ(chat->body, "https://upload.localhost/x1/cat.jpg");  // left as it came
  EXPECT_TRUE(chat->receipt_requested);
}

TEST(TranslateMessageTest, TextBesideAnAttachmentIsAMessageAboutIt) {
  InboundMessage in = TranslateMessage(
      One("<message from='alice@localhost/phone' to='herald.localhost' type='chat'>"
          "<body>What is in this picture?</body>"
          "<x xmlns='jabber:x:oob'><url>https://upload.localhost/x1/cat.jpg</url>"
          "<desc>my cat</desc></x></message>"),
      kOwnJid);
  const auto* chat = As<ChatMessage>(in.event);
  ASSERT_NE(chat, nullptr);
  ASSERT_EQ(chat->attachments.size(), 1u);
  EXPECT_EQ(chat->attachments[0].description, "my cat");
  EXPECT_FALSE(chat->body_is_attachment_url);
  EXPECT_EQ(chat->body, "What is in this picture?");
}

TEST(TranslateMessageTest, AnAttachmentWithoutABodyIsStillAMessage) {
  InboundMessage in = TranslateMessage(
      One("<message from='alice@localhost/phone' to='herald.localhost' type='chat'>"
          "<x xmlns='jabber:x:oob'><url>https://example.org/report.pdf</url></x></message>"),
      kOwnJid);
  const auto* chat = As<ChatMessage>(in.event);
  ASSERT_NE(chat, nullptr);
  EXPECT_EQ(chat->body, "");
  ASSERT_EQ(chat->attachments.size(), 1u);
  EXPECT_EQ(chat->attachments[0].url, "https://example.org/report.pdf");
  EXPECT_FALSE(chat->body_is_attachment_url);
  // Without a body, an attachment Herald does not keep leaves nothing to answer.
  EXPECT_FALSE(TranslateMessage(
                   One("<message from='alice@localhost/phone' to='herald.localhost' type='chat'>"
                       "<x xmlns='jabber:x:oob'><url>file:///etc/passwd</url></x></message>"),
                   kOwnJid)
                   .event.has_value());
}

TEST(TranslateMessageTest, AMessageWithoutOobDataHasNoAttachments) {
  InboundMessage in = TranslateMessage(
      One("<message from='alice@localhost/phone' to='herald.localhost' type='chat'>"
          "<body>https://example.org/a.jpg</body></message>"),
      kOwnJid);
  const auto* chat = As<ChatMessage>(in.event);
  ASSERT_NE(chat, nullptr);
  EXPECT_TRUE(chat->attachments.empty());
  EXPECT_FALSE(chat->body_is_attachment_url);
}

TEST(TranslateMessageTest, AGroupMessageCarriesItsAttachments) {
  InboundMessage in = TranslateMessage(
      One("<message from='lobby@conference.localhost/alice' to='herald.localhost' "
          "type='groupchat' id='g1'><body>https://upload.localhost/x2/plan.pdf</body>"
          "<x xmlns='jabber:x:oob'><url>https://upload.localhost/x2/plan.pdf</url></x>"
          "<x xmlns='jabber:x:oob'><url>https://upload.localhost/x2/notes.txt</url></x>"
          "</message>"),
      kOwnJid);
  const auto* group = As<GroupMessage>(in.event);
  ASSERT_NE(group, nullptr);
  ASSERT_EQ(group->attachments.size(), 2u);
  EXPECT_EQ(group->attachments[1].url, "https://upload.localhost/x2/notes.txt");
  EXPECT_TRUE(group->body_is_attachment_url);
  // The room announcing a file is still the room speaking, not a turn.
  EXPECT_FALSE(TranslateMessage(One("<message from='lobby@conference.localhost' "
                                    "to='herald.localhost' type='groupchat'>"
                                    "<x xmlns='jabber:x:oob'><url>https://e.example/f</url></x>"
                                    "</message>"),
                                kOwnJid)
                   .event.has_value());
}

}  // namespace
}  // namespace herald::xmpp
