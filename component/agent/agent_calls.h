// component/agent/agent_calls.h
//
// AgentCalls is the XMPP way of delegating (delegation.h): a request goes to the target's JID
// as a CallAgent (the agent protocol's execute or ask, component/xmpp/agent_protocol.h), and
// the AgentAnswer the session reports for it — the answer, an error the other agent gave, or
// "timeout" / "disconnected" — settles the call. The session bounds the wait by the request's
// timeout, so every call is settled.
//
// I/O loop only.
//
//   AgentCalls calls(act, [&] { return session->own_jid(); });
//   calls.Call(target, request, done);   // ... later, from the session's events:
//   calls.OnAnswer(answer);
#pragma once

#include <functional>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "component/agent/delegation.h"
#include "component/xmpp/events.h"
#include "component/xmpp/jid.h"

namespace herald::agent {

class AgentCalls : public DelegateTransport {
 public:
  using Act = std::function<void(const xmpp::OutboundAction&)>;
  AgentCalls(Act act, std::function<xmpp::Jid()> own_jid)
      : act_(std::move(act)), own_jid_(std::move(own_jid)) {}
  AgentCalls(const AgentCalls&) = delete;
  AgentCalls& operator=(const AgentCalls&) = delete;

  void Call(const DelegateTarget& target, DelegateRequest request, Done done) override;

  // Settles the call the answer is for; an answer for no call of ours is ignored.
  void OnAnswer(const xmpp::AgentAnswer& answer);

  size_t pending() const { return pending_.size(); }

 private:
  Act act_;
  std::function<xmpp::Jid()> own_jid_;
  uint64_t next_call_ = 0;
  absl::flat_hash_map<std::string, Done> pending_;
};

}  // namespace herald::agent
