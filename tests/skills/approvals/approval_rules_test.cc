#include "skills/approvals/approval_rules.h"

#include "gtest/gtest.h"

namespace herald::skills {
namespace {

TEST(ApprovalRulesTest, TheDefaultsAskForDestructiveSkillsOnly) {
  const skills::ApprovalRules rules;
  EXPECT_TRUE(NeedsApproval(rules, {.skill = "rm", .category = "destructive"}, false));
  EXPECT_FALSE(NeedsApproval(rules, {.skill = "wc", .category = "external"}, false));
  EXPECT_FALSE(NeedsApproval(rules, {.skill = "current_time"}, false));
}

TEST(ApprovalRulesTest, SafeModeAsksForEverything) {
  skills::ApprovalRules rules;
  rules.exempt_skills = {"current_time"};
  EXPECT_TRUE(NeedsApproval(rules, {.skill = "current_time"}, /*safe_mode=*/true));
  EXPECT_TRUE(NeedsApproval(rules, {.skill = "wc", .manifest_policy = ApprovalPolicy::kNever},
                            /*safe_mode=*/true));
}

TEST(ApprovalRulesTest, TheOperatorsListsWinOverTheManifest) {
  skills::ApprovalRules rules;
  rules.skills = {"wc"};
  rules.exempt_skills = {"rm"};
  EXPECT_TRUE(NeedsApproval(
      rules, {.skill = "wc", .category = "external", .manifest_policy = ApprovalPolicy::kNever},
      false));
  EXPECT_FALSE(NeedsApproval(
      rules, {.skill = "rm", .category = "destructive", .manifest_policy = ApprovalPolicy::kAlways},
      false));
}

TEST(ApprovalRulesTest, TheManifestWinsOverTheCategory) {
  const skills::ApprovalRules rules;  // categories = ["destructive"]
  EXPECT_TRUE(NeedsApproval(
      rules, {.skill = "send", .category = "external", .manifest_policy = ApprovalPolicy::kAlways},
      false));
  EXPECT_FALSE(NeedsApproval(
      rules,
      {.skill = "trash", .category = "destructive", .manifest_policy = ApprovalPolicy::kNever},
      false));
}

TEST(ApprovalRulesTest, AStarCategoryAsksForEveryCategory) {
  skills::ApprovalRules rules;
  rules.categories = {"*"};
  EXPECT_TRUE(NeedsApproval(rules, {.skill = "current_time"}, false));
  EXPECT_TRUE(NeedsApproval(rules, {.skill = "files__read", .category = "mcp"}, false));
  rules.categories = {};
  EXPECT_FALSE(NeedsApproval(rules, {.skill = "rm", .category = "destructive"}, false));
}

}  // namespace
}  // namespace herald::skills
