#include "component/agent/access_policy.h"

#include "absl/strings/str_cat.h"
#include "component/base/absl_string_view.h"

namespace herald::agent {
namespace {

// Entries go through the same parser as senders, so "Alice@LocalHost" in the config matches
// a message from alice@localhost.
absl::StatusOr<std::string> NormalisedBareJid(std::string_view entry, std::string_view key) {
  absl::StatusOr<xmpp::Jid> jid = xmpp::Jid::Parse(entry);
  if (!jid.ok() || !jid->IsBare() || jid->local().empty()) {
    return absl::InvalidArgumentError(absl::StrCat(AbslView(key), ": '", AbslView(entry),
                                                   "' is not a bare JID like user@example.org"));
  }
  return jid->BareString();
}

}  // namespace

absl::StatusOr<AccessPolicy> AccessPolicy::Create(const agent::AgentOptions& agent) {
  AccessPolicy policy;
  for (const std::string& entry : agent.allowed_jids) {
    if (entry == "*") {
      policy.any_jid_of_allowed_domains_ = true;
      continue;
    }
    absl::StatusOr<std::string> jid = NormalisedBareJid(entry, "agent.allowed_jids");
    if (!jid.ok()) return jid.status();
    policy.jids_.insert(*std::move(jid));
  }
  for (const std::string& entry : agent.admin_jids) {
    absl::StatusOr<std::string> jid = NormalisedBareJid(entry, "agent.admin_jids");
    if (!jid.ok()) return jid.status();
    policy.admins_.insert(*std::move(jid));
  }
  for (const std::string& entry : agent.allowed_domains) {
    if (entry == "*") {
      policy.any_domain_ = true;
      continue;
    }
    absl::StatusOr<xmpp::Jid> domain = xmpp::Jid::Parse(entry);
    if (!domain.ok() || !domain->IsDomain()) {
      return absl::InvalidArgumentError(
          absl::StrCat("agent.allowed_domains: '", entry, "' is not a domain"));
    }
    policy.domains_.insert(domain->domain());
  }
  for (const std::string& entry : agent.shared_memory_writers) {
    if (entry == "admins") {
      policy.admins_write_shared_memory_ = true;
      continue;
    }
    absl::StatusOr<std::string> jid = NormalisedBareJid(entry, "memory.shared_writers");
    if (!jid.ok()) return jid.status();
    policy.shared_memory_writers_.insert(*std::move(jid));
  }
  return policy;
}

// Every message asks these: a list that is empty (the usual case for all but one of them)
// costs neither the bare JID's string nor a hash.
bool AccessPolicy::Allows(const xmpp::Jid& sender) const {
  if (sender.local().empty()) return false;  // servers and components are not users
  if (any_jid_of_allowed_domains_ && (any_domain_ || domains_.contains(sender.domain()))) {
    return true;
  }
  if (jids_.empty() && admins_.empty()) return false;
  const std::string bare = sender.BareString();
  return jids_.contains(bare) || admins_.contains(bare);
}

bool AccessPolicy::IsAdmin(const xmpp::Jid& sender) const {
  return !admins_.empty() && admins_.contains(sender.BareString());
}

bool AccessPolicy::MayWriteSharedMemory(const xmpp::Jid& sender) const {
  if (sender.local().empty()) return false;
  return (admins_write_shared_memory_ && IsAdmin(sender)) ||
         (!shared_memory_writers_.empty() && shared_memory_writers_.contains(sender.BareString()));
}

}  // namespace herald::agent
