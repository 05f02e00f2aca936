// component/agent/plan.h
//
// Plans (S9): what the model proposes when asked to plan a task, checked before anyone sees
// it, and shown to a person to choose from. A plan is a few steps; each says what it does,
// which tools it may use (only those, when it runs), which earlier steps it needs, what it
// should yield and about how many tokens it costs. The model answers a planning request with
// JSON in this shape (PlanningInstructions says so):
//
//   {"plans": [{"title": "Compare by reviews", "confidence": 0.8, "reasoning": "...",
//               "warnings": [],
//               "steps": [{"step": 1, "description": "Find reviews of A",
//                          "tools": ["web_search"], "depends_on": [],
//                          "expected_output": "three reviews", "estimated_tokens": 800}]}]}
//
// ParsePlans refuses what does not fit (a step that needs a later step, a tool that is not
// offered) with a message the model can act on; FormatPlans is the numbered text a person
// reads in chat; ParsePlanChoice reads their answer ("2", or "2 step 3: <new text>").
//
//   absl::StatusOr<std::vector<Plan>> plans = ParsePlans(response.text, offered_tools);
//   say(FormatPlans(*plans, cost_of));
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace herald::agent {

inline constexpr int kMaxPlans = 3;
inline constexpr int kMaxPlanSteps = 8;
inline constexpr int kMaxToolsPerStep = 5;

struct PlanStep {
  int number = 0;  // 1, 2, ... in order
  std::string description;
  std::vector<std::string> tools;
  std::vector<int> depends_on;  // earlier step numbers
  std::string expected_output;
  int64_t estimated_tokens = 0;
};

struct Plan {
  std::string title;
  double confidence = 0;  // 0 to 1
  std::string reasoning;
  std::vector<std::string> warnings;
  std::vector<PlanStep> steps;

  int64_t EstimatedTokens() const;
};

// The system prompt's addition for a planning call: the JSON shape above, 2 or 3 plans, only
// `tools` (name and description) in them.
std::string PlanningInstructions(const std::vector<std::pair<std::string, std::string>>& tools);

// The plans in the model's answer (the first JSON object in it, inside a code fence or
// not). At most kMaxPlans are kept. Fails when there is no valid plan; the message says why.
absl::StatusOr<std::vector<Plan>> ParsePlans(std::string_view text,
                                             const absl::flat_hash_set<std::string>& tools);

// The plans as JSON (the shape above), for events and the pending action.
nlohmann::json PlansToJson(const std::vector<Plan>& plans);

// What a plan of `tokens` costs in USD, when the model has a price.
using CostOf = std::function<std::optional<double>(int64_t tokens)>;

// The numbered text a person chooses from.
std::string FormatPlans(const std::vector<Plan>& plans, const CostOf& cost_of);

// A person's answer to a plan choice: "2", "plan 2", "2 step 3: <text>" (choose plan 2 with
// step 3 changed); "cancel", "none", "no" or "stop" choose none (plan 0). Nullopt for
// anything else, and for a number that is not one of the `plan_count` plans.
struct PlanChoice {
  int plan = 0;  // 0: none
  std::map<int, std::string> step_edits;
};
std::optional<PlanChoice> ParsePlanChoice(std::string_view text, int plan_count);

// `plan` with the edits applied; InvalidArgument for a step it does not have.
absl::StatusOr<Plan> ApplyStepEdits(Plan plan, const std::map<int, std::string>& edits);

}  // namespace herald::agent
