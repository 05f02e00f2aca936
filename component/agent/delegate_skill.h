// component/agent/delegate_skill.h
//
// `delegate` (F1, docs/agent-protocol.md): the model asks another agent of [[delegate.agent]]
// to run one of its skills or to answer a question, over XMPP (the agent protocol) or over
// another Herald's control plane (gRPC with a token). The request carries one more hop than
// the run that makes it, and never outlives that run's own deadline; past [agent_protocol]
// max_hops it is not sent at all, so agents that delegate to each other stop. The answer goes
// back to the model with what it cost ("(research answered in 1.2 s; 340 tokens)"), and every
// delegation is one audit entry.
//
//   registry.Register(std::make_unique<DelegateSkill>(targets, max_hops, &xmpp_calls,
//                                                      grpc_client.get(), audit, absl::Now));
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "component/agent/agent_options.h"
#include "component/agent/delegation.h"
#include "component/ledger/audit_log.h"
#include "skills/skill.h"

namespace herald::agent {

class DelegateSkill : public skills::Skill {
 public:
  // `over_xmpp` serves the targets with a jid, `over_grpc` those with a grpc address; either
  // may be null (its targets are then refused), and `audit` too. All must outlive every run.
  DelegateSkill(std::vector<DelegateTarget> targets, int max_hops, DelegateTransport* over_xmpp,
                DelegateTransport* over_grpc, ledger::AuditLog* audit,
                std::function<absl::Time()> clock);

  const providers::ToolSpec& spec() const override { return spec_; }
  void Execute(const nlohmann::json& arguments, const skills::SkillContext& context,
               Done done) override;

 private:
  const DelegateTarget* Find(const std::string& name) const;

  std::vector<DelegateTarget> targets_;
  int max_hops_;
  DelegateTransport* over_xmpp_;
  DelegateTransport* over_grpc_;
  ledger::AuditLog* audit_;
  std::function<absl::Time()> clock_;
  providers::ToolSpec spec_;
};

}  // namespace herald::agent
