// component/xmpp/reply_translation.h
//
// Reading XEP-0461 Message Replies: which message a message replies to, and the XEP-0428
// fallback (the quote a client puts first for clients without replies, counted in code
// points) moved out of the body. A fallback whose range is not inside the body stays.
//
//   std::string text = body->Text();
//   Reply reply = TranslateReply(message, text);   // text no longer starts with the quote
#pragma once

#include <string>

#include "component/xmpp/events.h"
#include "component/xmpp/xml_element.h"

namespace herald::xmpp {

// The message `message` replies to (nothing when none), its fallback quote cut from `body`.
Reply TranslateReply(const XmlElement& message, std::string& body);

}  // namespace herald::xmpp
