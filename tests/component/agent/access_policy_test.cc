#include "component/agent/access_policy.h"

#include "gtest/gtest.h"

namespace herald::agent {
namespace {

xmpp::Jid J(std::string_view text) { return xmpp::Jid::Parse(text).value(); }

AccessPolicy Policy(std::vector<std::string> jids, std::vector<std::string> domains,
                    std::vector<std::string> admins = {}) {
  agent::AgentOptions agent;
  agent.allowed_jids = std::move(jids);
  agent.allowed_domains = std::move(domains);
  agent.admin_jids = std::move(admins);
  absl::StatusOr<AccessPolicy> policy = AccessPolicy::Create(agent);
  EXPECT_TRUE(policy.ok()) << policy.status();
  return *std::move(policy);
}

TEST(AccessPolicyTest, AllowsAListedJidFromAnyOfItsResources) {
  AccessPolicy policy = Policy({"alice@localhost"}, {"localhost"});
  EXPECT_TRUE(policy.Allows(J("alice@localhost/phone")));
  EXPECT_TRUE(policy.Allows(J("alice@localhost")));
}

TEST(AccessPolicyTest, ComparesLocalpartAndDomainCaseInsensitively) {
  AccessPolicy policy = Policy({"Alice@LocalHost"}, {"localhost"});
  EXPECT_TRUE(policy.Allows(J("ALICE@localhost/pc")));
}

TEST(AccessPolicyTest, RefusesAJidThatIsNotListed) {
  AccessPolicy policy = Policy({"alice@localhost"}, {"localhost"});
  EXPECT_FALSE(policy.Allows(J("bob@localhost/pc")));
  EXPECT_FALSE(policy.Allows(J("alice@evil.example/pc")));
}

TEST(AccessPolicyTest, StarAllowsEveryoneFromAnAllowedDomainOnly) {
  AccessPolicy policy = Policy({"*"}, {"localhost"});
  EXPECT_TRUE(policy.Allows(J("bob@localhost/pc")));
  EXPECT_FALSE(policy.Allows(J("bob@other.example/pc")));
}

TEST(AccessPolicyTest, StarWithAnyDomainAllowsFederatedUsers) {
  AccessPolicy policy = Policy({"*"}, {"*"});
  EXPECT_TRUE(policy.Allows(J("bob@other.example/pc")));
}

TEST(AccessPolicyTest, NeverAllowsServersOrComponentsAsUsers) {
  AccessPolicy policy = Policy({"*"}, {"*"});
  EXPECT_FALSE(policy.Allows(J("localhost")));
  EXPECT_FALSE(policy.Allows(J("conference.localhost/room")));
}

TEST(AccessPolicyTest, AnEmptyAllowlistAllowsNobody) {
  AccessPolicy policy = Policy({}, {"localhost"});
  EXPECT_FALSE(policy.Allows(J("alice@localhost/pc")));
}

TEST(AccessPolicyTest, AdminsAreAllowedAndRecognised) {
  AccessPolicy policy = Policy({}, {"localhost"}, {"root@localhost"});
  EXPECT_TRUE(policy.Allows(J("root@localhost/pc")));
  EXPECT_TRUE(policy.IsAdmin(J("root@localhost/pc")));
  EXPECT_FALSE(policy.IsAdmin(J("alice@localhost/pc")));
}

TEST(AccessPolicyTest, SharedMemoryWritersAreTheNamedJidsAndTheAdminsWhenSaidSo) {
  agent::AgentOptions agent;
  agent.admin_jids = {"root@localhost"};
  agent.shared_memory_writers = {"admins", "Editor@Localhost"};
  absl::StatusOr<AccessPolicy> policy = AccessPolicy::Create(agent);
  ASSERT_TRUE(policy.ok()) << policy.status();
  EXPECT_TRUE(policy->MayWriteSharedMemory(J("root@localhost/pc")));
  EXPECT_TRUE(policy->MayWriteSharedMemory(J("editor@localhost/phone")));
  EXPECT_FALSE(policy->MayWriteSharedMemory(J("alice@localhost/pc")));
  EXPECT_FALSE(policy->MayWriteSharedMemory(J("localhost")));
  // Without "admins", admins are not writers.
  agent.shared_memory_writers = {"editor@localhost"};
  policy = AccessPolicy::Create(agent);
  ASSERT_TRUE(policy.ok());
  EXPECT_FALSE(policy->MayWriteSharedMemory(J("root@localhost/pc")));
  EXPECT_TRUE(policy->MayWriteSharedMemory(J("editor@localhost/pc")));
  agent.shared_memory_writers = {"editor@localhost/phone"};
  policy = AccessPolicy::Create(agent);
  ASSERT_FALSE(policy.ok());
  EXPECT_EQ(policy.status().message(),
            "memory.shared_writers: 'editor@localhost/phone' is not a bare JID like "
            "user@example.org");
}

TEST(AccessPolicyTest, RefusesAnAllowlistEntryThatIsNotABareJid) {
  agent::AgentOptions agent;
  agent.allowed_jids = {"alice@localhost/phone"};
  absl::StatusOr<AccessPolicy> policy = AccessPolicy::Create(agent);
  ASSERT_FALSE(policy.ok());
  EXPECT_NE(policy.status().message().find("allowed_jids"), absl::string_view::npos);
}

}  // namespace
}  // namespace herald::agent
