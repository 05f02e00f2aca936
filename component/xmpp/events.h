// component/xmpp/events.h
//
// The seam between the XMPP layer and the agent. The XMPP session turns stanzas into
// InboundEvents and turns OutboundActions into stanzas; it knows nothing of LLMs, memory or
// policy, and the agent never sees XML. Everything the agent may want from the network is a
// new alternative here, not a reach into the session.
//
//   session->Perform(SendMessage{.to = event.from.Bare(), .body = "pong"});
#pragma once

#include <string>
#include <variant>
#include <vector>

#include "component/xmpp/jid.h"

namespace herald::xmpp {

// A 1:1 message with a body (type "chat" or "normal"). Errors and groupchat are not this.
struct ChatMessage {
  Jid from;
  Jid to;
  std::string id;
  std::string type;  // "chat" | "normal"
  std::string body;
  std::string thread;
};

// Someone asked to see Herald's presence (<presence type='subscribe'/>).
struct SubscriptionRequest {
  Jid from;
  Jid to;
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
};

using InboundEvent = std::variant<ChatMessage, SubscriptionRequest, RosterReceived, SessionOnline>;

struct SendMessage {
  Jid to;
  std::string body;
  std::string type = "chat";
  std::string thread;
  // Empty: the session's own address (the component domain, or nothing in client mode,
  // where the server stamps it).
  Jid from;
};

// type: "" (available), "unavailable", "subscribe", "subscribed", "unsubscribed".
struct SendPresence {
  Jid to;
  std::string type;
  Jid from;
};

using OutboundAction = std::variant<SendMessage, SendPresence>;

}  // namespace herald::xmpp
