// component/agent/access_policy.h
//
// AccessPolicy decides who may talk to Herald (A6, SPEC §9), before anything else looks at a
// message. A sender is allowed when its bare JID is listed in [agent] allowed_jids (or in
// admin_jids), or when allowed_jids holds "*" and the sender's domain is in allowed_domains
// (["*"] there means any domain, i.e. federation). Everyone else is refused, and nothing they
// send reaches the agent, memory or the ledger.
//
//   AccessPolicy policy = AccessPolicy::Create(config.agent).value();
//   if (!policy.Allows(message.from)) return;   // logged by the caller
#pragma once

#include <string>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "component/agent/agent_options.h"
#include "component/xmpp/jid.h"

namespace herald::agent {

class AccessPolicy {
 public:
  // Fails when an entry is not a bare JID, a domain or "*" (or, in shared_memory_writers,
  // "admins").
  static absl::StatusOr<AccessPolicy> Create(const agent::AgentOptions& agent);

  bool Allows(const xmpp::Jid& sender) const;
  bool IsAdmin(const xmpp::Jid& sender) const;
  // Whether the sender may add notes to the shared knowledge folder (M3): [memory]
  // shared_writers names them, or "admins" there names the admins.
  bool MayWriteSharedMemory(const xmpp::Jid& sender) const;

  // The explicitly listed JIDs (not "*"), whose presence Herald asks to see.
  const absl::flat_hash_set<std::string>& listed_jids() const { return jids_; }

 private:
  AccessPolicy() = default;

  absl::flat_hash_set<std::string> jids_;     // bare, normalised
  absl::flat_hash_set<std::string> admins_;   // bare, normalised
  absl::flat_hash_set<std::string> domains_;  // normalised
  bool any_jid_of_allowed_domains_ = false;
  bool any_domain_ = false;
  absl::flat_hash_set<std::string> shared_memory_writers_;  // bare, normalised
  bool admins_write_shared_memory_ = false;
};

}  // namespace herald::agent
