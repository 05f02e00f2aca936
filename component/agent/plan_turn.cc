#include "component/agent/plan_turn.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <memory>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "component/agent/blocking_work.h"
#include "component/agent/plan.h"
#include "component/agent/quota_gate.h"
#include "component/base/absl_string_view.h"
#include "component/base/conversation_ref.h"
#include "glog/logging.h"
#include "skills/approvals/pending_actions.h"

namespace herald::agent {
namespace {

using providers::LlmMessage;
using providers::LlmRequest;
using providers::LlmResponse;
using skills::ActionResolution;
using skills::PendingAction;
using Outcome = ActionResolution::Outcome;

constexpr char kStepFailedMarker[] = "STEP FAILED:";
constexpr size_t kMaxStepOutputBytes = 4000;  // of a step's result, passed on and kept
constexpr size_t kMaxShownBytes = 300;        // of a step's result, in a progress line

std::string Cut(std::string_view text, size_t limit) {
  if (text.size() <= limit) return std::string(text);
  return absl::StrCat(AbslView(text.substr(0, limit)), "…");
}

std::string FirstLine(std::string_view text) {
  const size_t newline = text.find('\n');
  return Cut(newline == std::string_view::npos ? text : text.substr(0, newline), kMaxShownBytes);
}

memory::MemoryEntry Note(const PlanTurn& turn, std::string text) {
  return memory::MemoryEntry{.time = turn.services.clock(),
                             .role = "note",
                             .author = turn.services.options.name,
                             .text = std::move(text)};
}

void Account(PlanOutcome& outcome, const LlmResponse& response) {
  outcome.usage.input_tokens += response.usage.input_tokens;
  outcome.usage.output_tokens += response.usage.output_tokens;
  outcome.model = absl::StrCat(response.provider, ":", response.model);
}

// What a plan of `tokens` costs with the default model's price: estimated tokens are taken
// as three parts input to one part output.
CostOf CostFor(RuntimeServices& services) {
  if (services.ledger == nullptr) return nullptr;
  const std::string model = services.router.ModelFor(providers::Tier::kDefault).ToString();
  return [&services, model](int64_t tokens) -> std::optional<double> {
    const ledger::PriceTable::Estimate estimate =
        services.ledger->EstimateCost(model, tokens * 3 / 4, tokens - tokens * 3 / 4);
    if (!estimate.known) return std::nullopt;
    return estimate.usd;
  };
}

struct StepResult {
  bool ok = false;
  std::string text;  // the step's result, or why it failed
  absl::Duration took;
};

// Asks the model for plans; one more try when its answer cannot be used. Fails only when the
// model cannot be reached; an answer without a usable plan is InvalidArgument (not a
// provider failure) with the problem.
asio::awaitable<absl::StatusOr<std::vector<Plan>>> AskForPlans(PlanTurn& turn,
                                                               const std::string& so_far,
                                                               PlanOutcome& outcome) {
  absl::flat_hash_set<std::string> names;
  std::vector<std::pair<std::string, std::string>> listed;
  for (const providers::ToolSpec& tool : turn.tools) {
    names.insert(tool.name);
    listed.emplace_back(tool.name, tool.description);
  }
  LlmRequest request = turn.base;
  absl::StrAppend(&request.system, "\n\n", PlanningInstructions(listed));
  // What happened so far holds tools' output, text from anywhere: it goes with the task as
  // data, never into the instructions.
  if (!so_far.empty() && !request.messages.empty() &&
      request.messages.back().role == LlmMessage::Role::kUser) {
    absl::StrAppend(&request.messages.back().text,
                    "\n\nA plan chosen for this task could not be completed. What happened:\n",
                    so_far,
                    "Propose plans for what remains. Steps that are done need not be done "
                    "again; their results are given to the new plan's steps.");
  }
  request.tools.clear();
  request.stream = false;
  std::string problem;
  for (int attempt = 0; attempt < 2; ++attempt) {
    absl::StatusOr<LlmResponse> response = co_await turn.call_model(request, nullptr);
    if (!response.ok()) co_return response.status();
    Account(outcome, *response);
    absl::StatusOr<std::vector<Plan>> plans = ParsePlans(response->text, names);
    if (plans.ok()) co_return plans;
    problem = std::string(plans.status().message());
    LOG(INFO) << "turn " << turn.tool_turn.turn_id << ": plans refused: " << problem;
    request.messages.push_back(
        LlmMessage{.role = LlmMessage::Role::kAssistant, .text = Cut(response->text, 8000)});
    request.messages.push_back(
        LlmMessage{.role = LlmMessage::Role::kUser,
                   .text = absl::StrCat("Those plans cannot be used: ", problem,
                                        ". Answer again with the JSON only, in the shape given.")});
  }
  co_return absl::InvalidArgumentError(problem);
}

// Proposes `plans` and waits for the choice (re-asking when a step edit does not fit).
asio::awaitable<std::pair<ActionResolution, std::optional<Plan>>> ProposeAndWait(
    PlanTurn& turn, const std::vector<Plan>& plans) {
  RuntimeServices& services = turn.services;
  const ToolCallTurn& tool_turn = turn.tool_turn;
  const std::string text = FormatPlans(plans, CostFor(services));
  const std::string plans_json = PlansToJson(plans).dump();
  while (true) {
    ActionWaiter waiter(
        *services.pending_actions,
        PendingAction{.kind = PendingAction::Kind::kPlanChoice,
                      .conversation = base::ConversationName(tool_turn.ref),
                      .chat_owner = tool_turn.chat_user,
                      .credential_owner = CredentialOwnerOf(tool_turn.ref),
                      .run_id = tool_turn.run_id,
                      .skill = "plan",
                      .arguments_json = plans_json,
                      .plan_count = static_cast<int>(plans.size()),
                      .description = absl::StrCat("choose one of ", plans.size(), " plans")},
        kPlanChoiceTimeout);
    const std::string& id = waiter.id();
    tool_turn.emit(RunEvent{.kind = RunEvent::Kind::kPlanProposed,
                            .text = text,
                            .arguments_json = plans_json,
                            .action_id = id,
                            .action = RunEvent::Action::kPlanChoice});
    tool_turn.publish(events::EventType::kPlanProposed,
                      absl::StrCat(plans.size(), " plan(s) proposed (action ", id, ")"),
                      {{"action_id", id}, {"plans", absl::StrCat(plans.size())}});
    tool_turn.publish(events::EventType::kActionRequired,
                      absl::StrCat("plan choice needed (action ", id, ")"),
                      {{"action_id", id}, {"kind", "plan choice"}, {"tool", "plan"}});
    turn.say(text);
    ActionResolution resolution = co_await waiter.Wait();
    const std::string outcome(skills::OutcomeName(resolution.outcome));
    tool_turn.publish(events::EventType::kActionResolved,
                      absl::StrCat("plan choice ", outcome,
                                   resolution.outcome == Outcome::kChosen
                                       ? absl::StrCat(": plan ", resolution.plan)
                                       : std::string()),
                      {{"action_id", id},
                       {"kind", "plan choice"},
                       {"outcome", outcome},
                       {"by", resolution.by},
                       {"plan", absl::StrCat(resolution.plan)}});
    if (services.audit != nullptr) {
      services.audit->Append(ledger::AuditEntry{
          .time = services.clock(),
          .actor = resolution.by.empty() ? "herald" : resolution.by,
          .action = "plan choice",
          .target = base::ConversationName(tool_turn.ref),
          .outcome = outcome,
          .detail = absl::StrCat("action ", id, "; plan ", resolution.plan, "; ",
                                 resolution.step_edits.size(), " step(s) changed")});
    }
    if (resolution.outcome != Outcome::kChosen) co_return std::make_pair(resolution, std::nullopt);
    absl::StatusOr<Plan> chosen = ApplyStepEdits(plans[resolution.plan - 1], resolution.step_edits);
    if (chosen.ok()) co_return std::make_pair(resolution, std::optional<Plan>(*std::move(chosen)));
    turn.say(
        absl::StrCat("That change does not fit: ", chosen.status().message(), ". Choose again."));
  }
}

// One step: a short run in which the model may call only the step's tools.
asio::awaitable<StepResult> RunStep(PlanTurn& turn, const Plan& plan, const PlanStep& step,
                                    std::string inputs, PlanOutcome& outcome) {
  const absl::Time started = turn.services.clock();
  const ToolCallTurn& tool_turn = turn.tool_turn;
  LlmRequest request;
  request.system = absl::StrCat(
      turn.base.system,
      "\n\nYou are carrying out one step of a plan the person chose. Do this step only, with "
      "the tools given (if any), and answer with its result. If you cannot do it, begin your "
      "answer with \"",
      kStepFailedMarker, "\" and say why.");
  std::string brief =
      absl::StrCat("The task: ", turn.task, "\nThe plan: ", plan.title, "\nThis step (",
                   step.number, " of ", plan.steps.size(), "): ", step.description);
  if (!step.expected_output.empty())
    absl::StrAppend(&brief, "\nIt should yield: ", step.expected_output);
  if (!inputs.empty()) absl::StrAppend(&brief, "\n\nResults of earlier steps:\n", inputs);
  request.messages.push_back(LlmMessage{.role = LlmMessage::Role::kUser, .text = brief});
  request.max_tokens = turn.base.max_tokens;
  request.stream = false;
  std::vector<providers::ToolSpec> offered;
  for (const providers::ToolSpec& tool : turn.tools) {
    if (std::find(step.tools.begin(), step.tools.end(), tool.name) != step.tools.end()) {
      offered.push_back(tool);
    }
  }
  for (int round = 0;; ++round) {
    request.tools = round < turn.max_tool_rounds ? offered : std::vector<providers::ToolSpec>{};
    absl::StatusOr<LlmResponse> response = co_await turn.call_model(request, nullptr);
    if (tool_turn.cancelled()) co_return StepResult{.ok = false, .text = "cancelled"};
    if (!response.ok()) {
      LOG(WARNING) << "turn " << tool_turn.turn_id << ": step " << step.number
                   << " failed: " << response.status();
      co_return StepResult{.ok = false,
                           .text = IsLimitStatus(response.status())
                                       ? std::string(response.status().message())
                                       : "the model could not be reached",
                           .took = turn.services.clock() - started};
    }
    Account(outcome, *response);
    if (response->tool_calls.empty() || request.tools.empty()) {
      std::string text = Cut(response->text, kMaxStepOutputBytes);
      const bool failed =
          absl::StartsWith(absl::StripLeadingAsciiWhitespace(text), kStepFailedMarker);
      co_return StepResult{.ok = !failed && !text.empty(),
                           .text = text.empty() ? "the step gave no result" : text,
                           .took = turn.services.clock() - started};
    }
    ++outcome.tool_rounds;
    LlmMessage call{.role = LlmMessage::Role::kAssistant,
                    .text = response->text,
                    .tool_calls = response->tool_calls};
    LlmMessage results{.role = LlmMessage::Role::kTool};
    for (const providers::ToolCall& tool_call : response->tool_calls) {
      tool_turn.emit(RunEvent{.kind = RunEvent::Kind::kToolStarted,
                              .call_id = tool_call.id,
                              .tool = tool_call.name,
                              .arguments_json = tool_call.arguments.dump(),
                              .step = step.number});
      tool_turn.publish(events::EventType::kToolStarted, absl::StrCat("tool ", tool_call.name),
                        {{"tool", tool_call.name},
                         {"call_id", tool_call.id},
                         {"step", absl::StrCat(step.number)}});
      providers::ToolResult result;
      if (std::find(step.tools.begin(), step.tools.end(), tool_call.name) == step.tools.end()) {
        // The plan the person chose is what may run.
        result = providers::ToolResult{
            .tool_call_id = tool_call.id,
            .name = tool_call.name,
            .content = absl::StrCat("tool '", tool_call.name, "' is not part of this step"),
            .is_error = true};
      } else {
        result = co_await turn.registry_tools.Run(tool_turn, tool_call);
      }
      if (tool_turn.cancelled()) co_return StepResult{.ok = false, .text = "cancelled"};
      tool_turn.emit(RunEvent{
          .kind = result.is_error ? RunEvent::Kind::kToolFailed : RunEvent::Kind::kToolCompleted,
          .text = result.content,
          .call_id = tool_call.id,
          .tool = tool_call.name,
          .step = step.number});
      tool_turn.publish(
          result.is_error ? events::EventType::kToolFailed : events::EventType::kToolCompleted,
          absl::StrCat("tool ", tool_call.name, result.is_error ? " failed" : " done"),
          {{"tool", tool_call.name},
           {"call_id", tool_call.id},
           {"step", absl::StrCat(step.number)}});
      outcome.notes.push_back(memory::MemoryEntry{
          .time = turn.services.clock(),
          .role = "tool",
          .author = tool_call.name,
          .text = absl::StrCat(tool_call.arguments.dump(), result.is_error ? " → error: " : " → ",
                               Cut(result.content, 2000))});
      results.tool_results.push_back(std::move(result));
    }
    request.messages.push_back(std::move(call));
    request.messages.push_back(std::move(results));
  }
}

struct Execution {
  std::vector<std::pair<std::string, std::string>> done;  // "step N: what" → result
  std::optional<std::pair<int, std::string>> failed;      // step number → why
};

// Runs `plan`: each step once the steps it depends on are done, at most kMaxParallelSteps at
// a time; after a failure no step starts, and the running ones are waited for.
asio::awaitable<Execution> Execute(PlanTurn& turn, const Plan& plan,
                                   const std::vector<std::pair<std::string, std::string>>& before,
                                   PlanOutcome& outcome) {
  enum class State { kWaiting, kRunning, kDone, kFailed };
  const size_t n = plan.steps.size();
  std::vector<State> state(n, State::kWaiting);
  std::vector<StepResult> results(n);
  int running = 0;
  int finished_unseen = 0;
  Execution execution;
  auto executor = co_await asio::this_coro::executor;
  asio::steady_timer wake(executor);
  const ToolCallTurn& tool_turn = turn.tool_turn;
  while (true) {
    const bool stopping = execution.failed.has_value() || tool_turn.cancelled();
    for (size_t i = 0; i < n && !stopping && running < kMaxParallelSteps; ++i) {
      if (state[i] != State::kWaiting) continue;
      const PlanStep& step = plan.steps[i];
      const bool ready = std::all_of(step.depends_on.begin(), step.depends_on.end(),
                                     [&state](int k) { return state[k - 1] == State::kDone; });
      if (!ready) continue;
      std::string inputs;
      for (const auto& [label, text] : before) absl::StrAppend(&inputs, label, ": ", text, "\n");
      for (int k : step.depends_on) {
        absl::StrAppend(&inputs, "step ", k, " (", plan.steps[k - 1].description,
                        "): ", results[k - 1].text, "\n");
      }
      state[i] = State::kRunning;
      ++running;
      tool_turn.emit(RunEvent{
          .kind = RunEvent::Kind::kStepStarted, .text = step.description, .step = step.number});
      tool_turn.publish(events::EventType::kPlanStep,
                        absl::StrCat("step ", step.number, " started"),
                        {{"step", absl::StrCat(step.number)}, {"state", "started"}});
      turn.say(absl::StrCat("Step ", step.number, "/", n, " started: ", step.description));
      asio::co_spawn(executor, RunStep(turn, plan, step, std::move(inputs), outcome),
                     [&, i](std::exception_ptr error, StepResult result) {
                       if (error) result = StepResult{.ok = false, .text = "internal error"};
                       results[i] = std::move(result);
                       state[i] = results[i].ok ? State::kDone : State::kFailed;
                       --running;
                       ++finished_unseen;
                       wake.cancel();
                     });
    }
    if (running == 0 && finished_unseen == 0) break;
    if (finished_unseen == 0) {
      wake.expires_at(asio::steady_timer::time_point::max());
      std::error_code ignored;
      co_await wake.async_wait(asio::redirect_error(asio::use_awaitable, ignored));
    }
    finished_unseen = 0;
    // Report what finished, in step order.
    for (size_t i = 0; i < n; ++i) {
      if (state[i] != State::kDone && state[i] != State::kFailed) continue;
      if (results[i].took < absl::ZeroDuration()) continue;  // reported already
      const PlanStep& step = plan.steps[i];
      const bool ok = state[i] == State::kDone;
      const std::string took = absl::StrFormat("%.1f s", absl::ToDoubleSeconds(results[i].took));
      tool_turn.emit(
          RunEvent{.kind = ok ? RunEvent::Kind::kStepCompleted : RunEvent::Kind::kStepFailed,
                   .text = results[i].text,
                   .step = step.number});
      tool_turn.publish(events::EventType::kPlanStep,
                        absl::StrCat("step ", step.number, ok ? " done" : " failed"),
                        {{"step", absl::StrCat(step.number)}, {"state", ok ? "done" : "failed"}});
      if (!tool_turn.cancelled()) {
        turn.say(ok ? absl::StrCat("Step ", step.number, "/", n, " done (", took,
                                   "): ", FirstLine(results[i].text))
                    : absl::StrCat("Step ", step.number, "/", n, " failed (", took,
                                   "): ", FirstLine(results[i].text)));
      }
      outcome.notes.push_back(
          Note(turn, absl::StrCat("Plan step ", step.number, " (", step.description, ") ",
                                  ok ? "done: " : "failed: ", results[i].text)));
      if (ok) {
        execution.done.emplace_back(absl::StrCat("step ", step.number, " (", step.description, ")"),
                                    results[i].text);
      } else if (!execution.failed.has_value()) {
        execution.failed = std::make_pair(step.number, results[i].text);
      }
      results[i].took = -absl::Seconds(1);  // reported
    }
  }
  co_return execution;
}

}  // namespace

providers::ToolSpec ProposePlansTool() {
  return providers::ToolSpec{
      .name = kProposePlansTool,
      .description =
          "Before acting on a task with several parts, or steps that depend on each other or "
          "could go wrong, propose plans for the person to choose from; they run once chosen. "
          "Answer simple requests directly instead.",
      .parameters = {{"type", "object"},
                     {"properties",
                      {{"task",
                        {{"type", "string"},
                         {"minLength", 1},
                         {"maxLength", 2000},
                         {"description", "The task to plan, in the person's words."}}}}},
                     {"required", {"task"}},
                     {"additionalProperties", false}}};
}

asio::awaitable<PlanOutcome> RunPlanTurn(PlanTurn& turn) {
  PlanOutcome outcome;
  const ToolCallTurn& tool_turn = turn.tool_turn;
  if (turn.services.pending_actions == nullptr) {
    outcome.status = absl::FailedPreconditionError("plans need the pending-action table");
    co_return outcome;
  }
  std::vector<std::pair<std::string, std::string>> done;  // across re-plans
  std::string so_far;
  bool completed = false;
  for (int attempt = 0; attempt <= kMaxReplans; ++attempt) {
    absl::StatusOr<std::vector<Plan>> plans = co_await AskForPlans(turn, so_far, outcome);
    if (tool_turn.cancelled()) co_return outcome;
    if (absl::IsInvalidArgument(plans.status())) {
      outcome.answer = absl::StrCat("I could not make a usable plan for this (",
                                    plans.status().message(), "). Ask me again, or without /plan.");
      co_return outcome;
    }
    if (!plans.ok()) {
      outcome.status = plans.status();
      co_return outcome;
    }
    auto [resolution, chosen] = co_await ProposeAndWait(turn, *plans);
    if (tool_turn.cancelled()) co_return outcome;
    outcome.notes.push_back(Note(turn, FormatPlans(*plans, nullptr)));
    if (!chosen.has_value()) {
      const bool timed_out = resolution.outcome == Outcome::kTimedOut;
      outcome.notes.push_back(
          Note(turn, timed_out ? "No plan was chosen in time." : "No plan was chosen."));
      outcome.answer = timed_out ? "No plan was chosen in time, so I did not start."
                                 : "OK, none of the plans runs.";
      co_return outcome;
    }
    outcome.notes.push_back(Note(
        turn, absl::StrCat("Plan ", resolution.plan, " chosen", resolution.by.empty() ? "" : " by ",
                           resolution.by, ": ", chosen->title)));
    turn.say(absl::StrCat("Running plan ", resolution.plan, ": ", chosen->title, " (",
                          chosen->steps.size(),
                          chosen->steps.size() == 1 ? " step)." : " steps)."));
    Execution execution = co_await Execute(turn, *chosen, done, outcome);
    if (tool_turn.cancelled()) co_return outcome;
    done.insert(done.end(), execution.done.begin(), execution.done.end());
    if (!execution.failed.has_value()) {
      completed = true;
      break;
    }
    so_far.clear();
    for (const auto& [label, text] : done)
      absl::StrAppend(&so_far, "Done: ", label, ": ", Cut(text, 500), "\n");
    absl::StrAppend(&so_far, "Failed: step ", execution.failed->first, " (",
                    chosen->steps[execution.failed->first - 1].description,
                    "): ", execution.failed->second, "\n");
    if (attempt < kMaxReplans) {
      turn.say(absl::StrCat("Step ", execution.failed->first,
                            " failed, so here are other ways to finish the task."));
    }
  }

  // The answer, from what the steps yielded.
  LlmRequest request = turn.base;
  absl::StrAppend(&request.system,
                  "\n\nThe person's request was planned and carried out step by step; the "
                  "results are given with it. Write the answer to the request from them. ",
                  completed ? "" : "Not every step could be done: say plainly what is missing.");
  std::string results;
  for (const auto& [label, text] : done) absl::StrAppend(&results, "\n- ", label, ": ", text);
  if (!request.messages.empty() && request.messages.back().role == LlmMessage::Role::kUser) {
    absl::StrAppend(&request.messages.back().text,
                    "\n\nResults of the plan's steps:", results.empty() ? "\n(none)" : results);
  }
  request.tools.clear();
  absl::StatusOr<LlmResponse> response = co_await turn.call_model(request, turn.on_answer_text);
  if (!response.ok()) {
    outcome.status = response.status();
    co_return outcome;
  }
  Account(outcome, *response);
  outcome.answer = response->text;
  outcome.notes.push_back(
      Note(turn, completed ? "The plan is done." : "The plan stopped before its end."));
  co_return outcome;
}

}  // namespace herald::agent
