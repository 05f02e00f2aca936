// component/xmpp/namespaces.h
//
// The XML namespaces Herald speaks, named once so that a typo cannot split a protocol in two.
#pragma once

namespace herald::xmpp::ns {

inline constexpr char kStreams[] = "http://etherx.jabber.org/streams";
inline constexpr char kStreamErrors[] = "urn:ietf:params:xml:ns:xmpp-streams";
inline constexpr char kStanzaErrors[] = "urn:ietf:params:xml:ns:xmpp-stanzas";
inline constexpr char kComponentAccept[] = "jabber:component:accept";
inline constexpr char kClient[] = "jabber:client";
inline constexpr char kTls[] = "urn:ietf:params:xml:ns:xmpp-tls";
inline constexpr char kSasl[] = "urn:ietf:params:xml:ns:xmpp-sasl";
inline constexpr char kBind[] = "urn:ietf:params:xml:ns:xmpp-bind";
inline constexpr char kSession[] = "urn:ietf:params:xml:ns:xmpp-session";
inline constexpr char kRoster[] = "jabber:iq:roster";
inline constexpr char kDiscoInfo[] = "http://jabber.org/protocol/disco#info";
inline constexpr char kDiscoItems[] = "http://jabber.org/protocol/disco#items";
inline constexpr char kPing[] = "urn:xmpp:ping";
inline constexpr char kVersion[] = "jabber:iq:version";
inline constexpr char kChatStates[] = "http://jabber.org/protocol/chatstates";
inline constexpr char kMuc[] = "http://jabber.org/protocol/muc";
inline constexpr char kMucUser[] = "http://jabber.org/protocol/muc#user";
inline constexpr char kMucOwner[] = "http://jabber.org/protocol/muc#owner";
inline constexpr char kDataForms[] = "jabber:x:data";
inline constexpr char kConference[] = "jabber:x:conference";  // XEP-0249 direct invitations
inline constexpr char kDelay[] = "urn:xmpp:delay";
inline constexpr char kLegacyDelay[] = "jabber:x:delay";  // XEP-0091, still sent by old rooms
inline constexpr char kHints[] = "urn:xmpp:hints";
inline constexpr char kCommands[] = "http://jabber.org/protocol/commands";  // XEP-0050
inline constexpr char kReply[] = "urn:xmpp:reply:0";                        // XEP-0461
inline constexpr char kFallback[] = "urn:xmpp:fallback:0";                  // XEP-0428
inline constexpr char kStanzaId[] = "urn:xmpp:sid:0";                       // XEP-0359
inline constexpr char kCaps[] = "http://jabber.org/protocol/caps";          // XEP-0115
inline constexpr char kReceipts[] = "urn:xmpp:receipts";                    // XEP-0184
inline constexpr char kChatMarkers[] = "urn:xmpp:chat-markers:0";           // XEP-0333
inline constexpr char kMessageCorrect[] = "urn:xmpp:message-correct:0";     // XEP-0308
inline constexpr char kReactions[] = "urn:xmpp:reactions:0";                // XEP-0444
inline constexpr char kMam[] = "urn:xmpp:mam:2";                            // XEP-0313
inline constexpr char kForward[] = "urn:xmpp:forward:0";                    // XEP-0297
inline constexpr char kRsm[] = "http://jabber.org/protocol/rsm";            // XEP-0059
inline constexpr char kSm[] = "urn:xmpp:sm:3";                              // XEP-0198
inline constexpr char kOob[] = "jabber:x:oob";                              // XEP-0066
inline constexpr char kHttpUpload[] = "urn:xmpp:http:upload:0";             // XEP-0363
inline constexpr char kPubsub[] = "http://jabber.org/protocol/pubsub";      // XEP-0060
inline constexpr char kPubsubEvent[] = "http://jabber.org/protocol/pubsub#event";
inline constexpr char kAgent[] = "urn:herald:agent:0";          // docs/agent-protocol.md
inline constexpr char kAtom[] = "http://www.w3.org/2005/Atom";  // RFC 4287, a common payload

}  // namespace herald::xmpp::ns
