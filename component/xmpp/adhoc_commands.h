// component/xmpp/adhoc_commands.h
//
// XEP-0050 ad-hoc commands on the wire, as a pure translation: the IQs a client sends to list
// Herald's commands (disco#items at the commands node) or to run one become a CommandRequest,
// and an AnswerCommand becomes the IQ that answers it. Which commands exist and what they say is
// the agent's business (component/agent/adhoc_commands.h).
//
//   if (std::optional<CommandRequest> request = TranslateCommandRequest(iq)) Emit(*request);
//   XmlElement reply = CommandAnswerStanza(answer, own_jid);
#pragma once

#include <optional>

#include "component/xmpp/events.h"
#include "component/xmpp/jid.h"
#include "component/xmpp/xml_element.h"

namespace herald::xmpp {

// The request `iq` (a get or set addressed to Herald) makes, or nullopt when it is not about
// ad-hoc commands. A submitted form keeps at most kMaxFormFields fields of kMaxFieldBytes each.
inline constexpr size_t kMaxFormFields = 16;
inline constexpr size_t kMaxFieldBytes = 4096;
std::optional<CommandRequest> TranslateCommandRequest(const XmlElement& iq);

// The IQ result (or error) that answers `answer`; `own_jid` names Herald in the items of a list.
XmlElement CommandAnswerStanza(const AnswerCommand& answer, const Jid& own_jid);

}  // namespace herald::xmpp
