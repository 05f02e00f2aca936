// component/xmpp/agent_protocol.h
//
// Herald's agent protocol (urn:herald:agent:0, docs/agent-protocol.md) on the wire, as a pure
// translation, both ways: the IQs another agent sends Herald become AgentRequests and an
// AnswerAgent becomes the IQ that answers one (with SendAgentProgress as a bodiless message
// while a run lasts); a CallAgent becomes the IQ Herald sends another agent, and that agent's
// answer an AgentAnswer. Who may ask what, and what runs, is the agent's business
// (component/agent/agent_protocol.h).
//
//   if (std::optional<AgentRequest> request = TranslateAgentRequest(iq)) Emit(*request);
//   Send(AgentAnswerStanza(answer));
#pragma once

#include <optional>
#include <string>

#include "component/xmpp/events.h"
#include "component/xmpp/jid.h"
#include "component/xmpp/xml_element.h"

namespace herald::xmpp {

// Bounds of what a request may carry; more is malformed (AgentRequest::malformed).
inline constexpr size_t kMaxAgentArgumentsBytes = 64 * 1024;
inline constexpr size_t kMaxAgentTextBytes = 16 * 1024;
inline constexpr size_t kMaxAgentThreadBytes = 128;
inline constexpr size_t kMaxAgentNameBytes = 256;  // a skill's name, an action's id
inline constexpr int kMaxAgentHops = 100;
inline constexpr int kMaxAgentTimeoutSeconds = 24 * 3600;

// The request `iq` (a get or set addressed to Herald) makes, or nullopt when its payload is not
// in urn:herald:agent:0 (or the IQ has no id or sender to answer).
std::optional<AgentRequest> TranslateAgentRequest(const XmlElement& iq);

// The IQ result (or error) that answers `answer`.
XmlElement AgentAnswerStanza(const AnswerAgent& answer);

// The message that tells a requester its run goes on.
XmlElement AgentProgressStanza(const SendAgentProgress& progress);

// The IQ set that asks `call.to`, with IQ id `id`.
XmlElement AgentCallRequest(const CallAgent& call, const std::string& id);

// The answer `iq` (a result or an error) from `asked` gives the call `call_id`; nullopt when it
// comes from someone else.
std::optional<AgentAnswer> TranslateAgentAnswer(const XmlElement& iq, const Jid& asked,
                                                std::string call_id);

}  // namespace herald::xmpp
