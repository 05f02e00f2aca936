// component/agent/plan_turn.h
//
// A turn that plans before it acts (S9; reference 003, flows C and D), for "/plan <task>" in
// a chat or a SessionService.Converse message that starts with "/plan ":
//
//   1. the model is asked for 2 or 3 plans (plan.h: steps, dependencies, tools, expected
//      outputs, estimated tokens and cost, confidence) and they are checked;
//   2. they are proposed — numbered in chat, a kPlanProposed RunEvent for a program, a
//      plan_proposed event on the bus — and the run waits for a choice: the person's number
//      (or "2 step 3: <new text>"), or SkillService.ChoosePlan; "cancel" or no answer within
//      kPlanChoiceTimeout ends the turn;
//   3. the chosen plan runs: a step starts once the steps it depends on are done, so
//      independent steps run at the same time (at most kMaxParallelSteps); each step is a
//      short run of its own in which the model may call only the tools the plan gave that
//      step (through the same checks as any tool call: enabled, schema, approval,
//      credentials), and progress is reported against the plan (a line per step in chat,
//      kStepStarted/kStepCompleted/kStepFailed RunEvents, plan_step events);
//   4. a step that fails (the model says it could not, or cannot be reached) stops the
//      plan: once the running steps end, the model proposes revised plans for the rest,
//      knowing what is done and what failed, and the person chooses again (at most
//      kMaxReplans times);
//   5. the model writes the answer from the steps' results.
//
// The plan proposed, the choice and each step's outcome are kept in the conversation's
// history as notes; the answer as the assistant's entry, like any turn's.
//
//   PlanTurn plan{.services = services_, .tool_turn = tool_turn, ...};
//   PlanOutcome outcome = co_await RunPlanTurn(plan);
#pragma once

#include <asio.hpp>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "component/agent/conversation.h"
#include "component/agent/registry_tools.h"
#include "component/agent/run_events.h"
#include "component/agent/tool_call.h"
#include "component/memory/memory_store.h"
#include "providers/provider.h"

namespace herald::agent {

inline constexpr int kMaxParallelSteps = 3;
inline constexpr int kMaxReplans = 2;
inline constexpr absl::Duration kPlanChoiceTimeout = absl::Minutes(15);

// With [agent] planning = "auto", the tool a turn's model may call to plan instead of acting:
// {"task": "..."} turns the turn into a plan turn for that task.
inline constexpr char kProposePlansTool[] = "propose_plans";
providers::ToolSpec ProposePlansTool();

// One LLM call with the turn's quota checks and usage records (a block-mode limit fails it
// with quota_gate.h's LimitStatus).
using CallModel = std::function<asio::awaitable<absl::StatusOr<providers::LlmResponse>>(
    providers::LlmRequest request, providers::LlmProvider::OnText on_text)>;

struct PlanTurn {
  RuntimeServices& services;
  const ToolCallTurn& tool_turn;  // approvals, credentials, events of tool calls
  RegistryTools& registry_tools;
  // What the turn may offer the model (the enabled tools and the registry tools loaded in the
  // run): the only tools a plan may name.
  std::vector<providers::ToolSpec> tools;
  std::string task;  // what the person asked to plan
  // The turn's request so far: the system prompt, the session and the task as the last user
  // message. Planning, steps and the answer start from it.
  providers::LlmRequest base;
  CallModel call_model;
  // A line to the person (nothing for a program's turn).
  std::function<void(std::string)> say;
  // Streams the final answer (as a turn's answer streams), or nullptr.
  providers::LlmProvider::OnText on_answer_text;
  int max_tool_rounds = 6;  // per step
};

struct PlanOutcome {
  // Not ok when the model could not be reached (or a limit stopped it); `answer` is empty.
  absl::Status status;
  std::string answer;  // what the person reads last
  providers::Usage usage;
  std::string model;
  int tool_rounds = 0;
  std::vector<memory::MemoryEntry> notes;  // kept in the history before the answer
};

asio::awaitable<PlanOutcome> RunPlanTurn(PlanTurn& turn);

}  // namespace herald::agent
