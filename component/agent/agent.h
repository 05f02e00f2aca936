// component/agent/agent.h
//
// Agent is the runtime side of the seam: it takes InboundEvents from the XMPP session and
// answers with OutboundActions. It checks every sender against the AccessPolicy first; a
// refused sender gets silence (or, with [agent] unallowed = "reply", one short refusal per
// hour) and a log line, and nothing of theirs goes further. For an allowed sender, `/ping`
// is answered with "pong" and `/help` with the command list, without any model involved;
// presence subscriptions of allowed JIDs are accepted and returned.
//
//   Agent agent(policy, config.agent, [&](xmpp::OutboundAction a) { session.Perform(a); });
//   agent.Handle(std::move(event));
#pragma once

#include <functional>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/time/time.h"
#include "component/agent/access_policy.h"
#include "component/config/config.h"
#include "component/xmpp/events.h"

namespace herald::agent {

class Agent {
 public:
  using ActionSink = std::function<void(xmpp::OutboundAction)>;
  using Clock = std::function<absl::Time()>;

  Agent(AccessPolicy policy, const config::AgentConfig& config, ActionSink act,
        Clock clock = absl::Now);

  void Handle(xmpp::InboundEvent event);

  // The reply to a slash command, or "" when `body` is not one Herald knows yet.
  static std::string AnswerCommand(std::string_view body);

 private:
  void OnChatMessage(const xmpp::ChatMessage& message);
  void OnSubscriptionRequest(const xmpp::SubscriptionRequest& request);
  void OnRoster(const xmpp::RosterReceived& roster);
  void Refuse(const xmpp::Jid& sender, const xmpp::Jid& to, std::string_view what);

  AccessPolicy policy_;
  std::string name_;
  config::RefusalMode refusal_;
  ActionSink act_;
  Clock clock_;
  // Last refusal reply per bare JID, so a refused bot cannot start a reply loop.
  absl::flat_hash_map<std::string, absl::Time> refused_at_;
};

}  // namespace herald::agent
