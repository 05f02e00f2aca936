// skills/approvals/approval_rules.h
//
// Whether a tool run must wait for a person's yes (S7). The operator's [skills.approvals]
// settings, the skill's manifest and the user's safe mode decide, in this order:
//
//   1. safe mode for the user whose turn it is      → ask (safe mode confirms every run)
//   2. the skill is in exempt_skills                 → run
//   3. the skill is in skills                        → ask
//   4. the manifest says approval = "always"         → ask;  "never" → run
//   5. the skill's category is in categories ("*" = every category) → ask
//   6. otherwise                                     → run
//
// Builtins have the category "builtin"; MCP tools "mcp"; manifests name theirs ("external"
// unless they say otherwise).
//
//   ApprovalFacts facts{.skill = "delete_file", .category = "destructive"};
//   if (NeedsApproval(rules, facts, /*safe_mode=*/false)) { /* ask */ }
#pragma once

#include <string>
#include <vector>

#include "skills/manifest/manifest.h"

namespace herald::skills {

// [skills.approvals]: which tool runs wait for a person's yes (S7; docs/skills.md).
struct ApprovalRules {
  // Runs of skills in these categories (a manifest's `category`) are confirmed first.
  std::vector<std::string> categories = {"destructive"};
  // Runs of these skills are confirmed first, whatever their category or manifest says.
  std::vector<std::string> skills;
  // Never confirmed, whatever their category or manifest says (safe mode still asks).
  std::vector<std::string> exempt_skills;
  // Safe mode: every tool run of these users' turns is confirmed first (bare JIDs).
  std::vector<std::string> safe_mode_jids;
  int timeout_seconds = 300;  // an unanswered request is a denial

  friend bool operator==(const ApprovalRules&, const ApprovalRules&) = default;
};

struct ApprovalFacts {
  std::string skill;
  std::string category = "builtin";
  ApprovalPolicy manifest_policy = ApprovalPolicy::kCategory;
};

bool NeedsApproval(const ApprovalRules& rules, const ApprovalFacts& facts, bool safe_mode);

}  // namespace herald::skills
