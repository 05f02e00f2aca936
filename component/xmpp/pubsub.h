// component/xmpp/pubsub.h
//
// XEP-0060 Publish-Subscribe (and XEP-0163 PEP, which speaks it) as far as Herald follows
// nodes: the subscribe request, and a notification's <event/> read into PubsubItems (each
// item's payload as text: an Atom entry's title and summary, else all its text; bounded).
//
//   std::optional<PubsubItems> items = TranslatePubsubEvent(*event, from);
//   XmlElement iq = SubscribeRequest(subscribe, id);
#pragma once

#include <optional>
#include <string_view>

#include "component/xmpp/events.h"
#include "component/xmpp/jid.h"
#include "component/xmpp/xml_element.h"

namespace herald::xmpp {

// The items an <event/> from `from` notifies; nullopt for anything else (retractions,
// purges, items without text).
std::optional<PubsubItems> TranslatePubsubEvent(const XmlElement& event, const Jid& from);

// <iq type='set'><pubsub><subscribe node=... jid=(from, bare)/></pubsub></iq> (XEP-0060 §6.1).
XmlElement SubscribeRequest(const SubscribeNode& subscribe, std::string_view id);

}  // namespace herald::xmpp
