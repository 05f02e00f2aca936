// component/xmpp/oob_translation.h
//
// Reading XEP-0066 out-of-band data in a message: the files a sender attached as links, one
// <x xmlns='jabber:x:oob'><url/><desc/></x> per file. Conversations, Dino and Monal upload the
// file (XEP-0363) and send its URL both in an <x/> and as the body, so a body that is exactly
// one of the URLs is told apart: the message is the attachment alone.
//
// Only what is safe to hand on is kept (the bounds are OobAttachment's, events.h): an http or
// https URL of at most kMaxUrlBytes, without spaces or control characters, each URL once, at
// most kMaxPerMessage of them; a description is cut to kMaxDescriptionBytes on a character
// boundary. On the stanza path a message without OOB data costs one inline look at its
// children (HasOobData): no call, no allocation.
//
//   std::vector<OobAttachment> attachments;
//   if (HasOobData(message)) attachments = TranslateOobAttachments(message, from);
//   bool only_the_file = BodyIsAttachmentUrl(text, attachments);
#pragma once

#include <string_view>
#include <vector>

#include "component/xmpp/events.h"
#include "component/xmpp/jid.h"
#include "component/xmpp/namespaces.h"
#include "component/xmpp/xml_element.h"

namespace herald::xmpp {

// True when `message` has an <x xmlns='jabber:x:oob'/> child. Inline and spelled out: it runs
// for every message, and a few instructions per child is all it may cost.
inline bool HasOobData(const XmlElement& message) {
  for (const XmlNode& node : message.children()) {
    const XmlElement* child = node.element.get();
    if (child != nullptr && child->name().size() == 1 && child->name()[0] == 'x' &&
        child->xmlns() == ns::kOob) {
      return true;
    }
  }
  return false;
}

// The attachments of `message`, in document order; what was left out is logged with `from`.
std::vector<OobAttachment> TranslateOobAttachments(const XmlElement& message, const Jid& from);

// True when `body`, without the white space around it, is the URL of one of `attachments`.
bool BodyIsAttachmentUrl(std::string_view body, const std::vector<OobAttachment>& attachments);

}  // namespace herald::xmpp
