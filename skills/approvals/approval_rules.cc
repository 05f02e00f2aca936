#include "skills/approvals/approval_rules.h"

#include <algorithm>

namespace herald::skills {
namespace {

bool Contains(const std::vector<std::string>& list, const std::string& value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

}  // namespace

bool NeedsApproval(const ApprovalRules& rules, const ApprovalFacts& facts, bool safe_mode) {
  if (safe_mode) return true;
  if (Contains(rules.exempt_skills, facts.skill)) return false;
  if (Contains(rules.skills, facts.skill)) return true;
  switch (facts.manifest_policy) {
    case ApprovalPolicy::kAlways:
      return true;
    case ApprovalPolicy::kNever:
      return false;
    case ApprovalPolicy::kCategory:
      break;
  }
  return Contains(rules.categories, "*") || Contains(rules.categories, facts.category);
}

}  // namespace herald::skills
