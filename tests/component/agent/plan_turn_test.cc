#include "component/agent/plan_turn.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "skills/approvals/pending_actions.h"
#include "skills/skill.h"
#include "tests/component/agent/agent_fixture.h"
#include "tests/component/agent/scripted_model.h"

namespace herald::agent {
namespace {

using providers::LlmRequest;
using testing::AgentFixture;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::Step;

// Two plans: the first has two steps that need nothing (1: shout "alpha", 2: no tool) and a
// third that needs both; the second has one step.
constexpr char kPlans[] = R"({"plans": [
  {"title": "Shout both then join", "confidence": 0.9, "reasoning": "Simple.",
   "steps": [
     {"step": 1, "description": "Shout alpha", "tools": ["shout"], "expected_output": "ALPHA",
      "estimated_tokens": 100},
     {"step": 2, "description": "Think of beta", "expected_output": "beta",
      "estimated_tokens": 100},
     {"step": 3, "description": "Join them", "depends_on": [1, 2], "estimated_tokens": 50}]},
  {"title": "Do it in one go", "confidence": 0.4,
   "steps": [{"step": 1, "description": "Everything at once"}]}]})";

bool IsPlanning(const LlmRequest& request) {
  return absl::StrContains(request.system, "propose 2 or 3 different plans");
}
bool IsStep(const LlmRequest& request, int number) {
  return absl::StrContains(request.system, "You are carrying out one step of a plan") &&
         absl::StrContains(request.messages.front().text,
                           absl::StrCat("This step (", number, " of "));
}
bool IsFinal(const LlmRequest& request) {
  return absl::StrContains(request.system, "planned and carried out step by step");
}
bool HasToolResult(const LlmRequest& request) {
  return request.messages.back().role == providers::LlmMessage::Role::kTool;
}

class PlanTurnTest : public AgentFixture {
 protected:
  void SetUp() override {
    AgentFixture::SetUp();
    pending_ = std::make_unique<skills::PendingActions>(io_);
    services_->pending_actions = pending_.get();
    // Steps 1 and 2 take a while, so that both are seen running at once.
    model_->respond = [this](const LlmRequest& request) -> Step {
      if (IsPlanning(request)) return {.text = planning_answer};
      if (IsStep(request, 1) &&
          absl::StrContains(request.messages.front().text, "Everything at once")) {
        return {.text = "did everything"};
      }
      if (IsStep(request, 1)) {
        if (HasToolResult(request))
          return {.text = "step 1 says ALPHA", .delay = absl::Milliseconds(50)};
        return {.calls = {{.id = "s1", .name = "shout", .arguments = {{"text", "alpha"}}}},
                .delay = absl::Milliseconds(100)};
      }
      if (IsStep(request, 2)) return {.text = step2_answer, .delay = absl::Milliseconds(150)};
      if (IsStep(request, 3)) return {.text = "joined: ALPHA and beta"};
      if (IsFinal(request)) return {.text = "All done: ALPHA and beta."};
      return {.text = "unexpected request"};
    };
  }

  void TearDown() override {
    agent_.reset();
    pending_.reset();
    AgentFixture::TearDown();
  }

  std::vector<std::string> Bodies() const {
    std::vector<std::string> bodies;
    for (const xmpp::SendMessage& message : Messages()) bodies.push_back(message.body);
    return bodies;
  }

  size_t IndexOf(const std::string& prefix) const {
    const std::vector<std::string> bodies = Bodies();
    for (size_t i = 0; i < bodies.size(); ++i) {
      if (absl::StartsWith(bodies[i], prefix)) return i;
    }
    return bodies.size() + 1000;
  }

  std::string planning_answer = kPlans;
  std::string step2_answer = "beta";
  std::unique_ptr<skills::PendingActions> pending_;
};

TEST_F(PlanTurnTest, APlanChosenByNumberRunsIndependentStepsTogetherAndAnswers) {
  Send("alice@localhost/phone", "/plan shout alpha and beta, then join them");
  ASSERT_TRUE(WaitForMessages(1));
  const std::string proposal = Messages()[0].body;
  EXPECT_THAT(proposal, ::testing::StartsWith("Here are 2 plans."));
  EXPECT_THAT(proposal, HasSubstr("1. Shout both then join — confidence 90%, ~250 tokens"));
  EXPECT_THAT(proposal, HasSubstr("   3) Join them (after 1, 2)"));
  ASSERT_EQ(model_->requests.size(), 1u);
  EXPECT_TRUE(model_->requests[0].tools.empty()) << "the planning call runs nothing";
  EXPECT_THAT(model_->requests[0].system, HasSubstr("- shout: "));
  EXPECT_EQ(model_->requests[0].messages.back().text, "shout alpha and beta, then join them");
  ASSERT_EQ(pending_->size(), 1u);

  Send("alice@localhost/phone", "1");
  ASSERT_TRUE(WaitForMessages(9)) << ::testing::PrintToString(Bodies());
  ASSERT_TRUE(WaitForIdle());
  const std::vector<std::string> bodies = Bodies();
  EXPECT_EQ(bodies.back(), "All done: ALPHA and beta.");
  EXPECT_EQ(bodies[1], "Running plan 1: Shout both then join (3 steps).");
  // Steps 1 and 2 both start before either ends; step 3 only after both.
  EXPECT_LT(IndexOf("Step 2/3 started"), IndexOf("Step 1/3 done"));
  EXPECT_LT(IndexOf("Step 1/3 done"), IndexOf("Step 3/3 started"));
  EXPECT_LT(IndexOf("Step 2/3 done"), IndexOf("Step 3/3 started"));
  EXPECT_NE(IndexOf("Step 1/3 done (0.0 s): step 1 says ALPHA"), bodies.size() + 1000)
      << ::testing::PrintToString(bodies);

  // A step is offered only its own tools, and gets the results it depends on.
  for (const LlmRequest& request : model_->requests) {
    if (IsStep(request, 1)) EXPECT_EQ(request.tools.size(), 1u);
    if (IsStep(request, 2) || IsStep(request, 3)) EXPECT_TRUE(request.tools.empty());
    if (IsStep(request, 3)) {
      EXPECT_THAT(request.messages.front().text,
                  HasSubstr("step 1 (Shout alpha): step 1 says ALPHA"));
      EXPECT_THAT(request.messages.front().text, HasSubstr("step 2 (Think of beta): beta"));
    }
    if (IsFinal(request)) {
      EXPECT_THAT(request.messages.back().text, HasSubstr("Results of the plan's steps:"));
      EXPECT_THAT(request.messages.back().text, HasSubstr("joined: ALPHA and beta"));
    }
  }
  // The plan and its outcome are in the history.
  std::string history;
  for (const memory::MemoryEntry& entry : History("alice@localhost")) {
    absl::StrAppend(&history, entry.role, ": ", entry.text, "\n");
  }
  EXPECT_THAT(history, HasSubstr("note: Plan 1 chosen by alice@localhost: Shout both then join"));
  EXPECT_THAT(history, HasSubstr("note: Plan step 2 (Think of beta) done: beta"));
  EXPECT_THAT(history, HasSubstr("tool: {\"text\":\"alpha\"} → ALPHA"));
  EXPECT_THAT(history, HasSubstr("assistant: All done: ALPHA and beta."));
  EXPECT_EQ(pending_->size(), 0u);
}

TEST_F(PlanTurnTest, APersonCanChangeAStepBeforeItRuns) {
  Send("alice@localhost/phone", "/plan shout alpha and beta");
  ASSERT_TRUE(WaitForMessages(1));
  Send("alice@localhost/phone", "1 step 2: Think of Gamma instead");
  ASSERT_TRUE(RunUntil([&] { return Bodies().back() == "All done: ALPHA and beta."; }));
  bool seen = false;
  for (const LlmRequest& request : model_->requests) {
    if (IsStep(request, 2)) {
      seen = true;
      EXPECT_THAT(request.messages.front().text, HasSubstr("): Think of Gamma instead"));
    }
  }
  EXPECT_TRUE(seen);
}

TEST_F(PlanTurnTest, CancelRunsNothingAndOtherAnswersAreExplained) {
  Send("alice@localhost/phone", "/plan shout alpha and beta");
  ASSERT_TRUE(WaitForMessages(1));
  Send("alice@localhost/phone", "the blue one");
  ASSERT_TRUE(WaitForMessages(2));
  EXPECT_EQ(Messages()[1].body,
            "Reply with a plan's number (1 to 2), \"1 step 2: <new text>\" to change a step "
            "first, or \"cancel\".");
  Send("alice@localhost/phone", "cancel");
  ASSERT_TRUE(WaitForMessages(3));
  ASSERT_TRUE(WaitForIdle());
  EXPECT_EQ(Messages()[2].body, "OK, none of the plans runs.");
  EXPECT_EQ(model_->requests.size(), 1u) << "only the planning call";
}

TEST_F(PlanTurnTest, AFailedStepLeadsToNewPlansForWhatRemains) {
  step2_answer = "STEP FAILED: beta is not available";
  Send("alice@localhost/phone", "/plan shout alpha and beta");
  ASSERT_TRUE(WaitForMessages(1));
  Send("alice@localhost/phone", "1");
  ASSERT_TRUE(RunUntil([&] { return pending_->size() == 1 && IndexOf("Step 2/3 failed") < 100; }));
  EXPECT_NE(IndexOf("Step 2 failed, so here are other ways to finish the task."),
            1000 + Bodies().size());
  EXPECT_EQ(IndexOf("Step 3/3 started"), Bodies().size() + 1000) << "step 3 needs step 2";
  // The second planning call knows what is done and what failed.
  const LlmRequest& replanning = model_->requests.back();
  ASSERT_TRUE(IsPlanning(replanning));
  const std::string& told = replanning.messages.back().text;
  EXPECT_THAT(told, HasSubstr("Done: step 1 (Shout alpha): step 1 says ALPHA"));
  EXPECT_THAT(told,
              HasSubstr("Failed: step 2 (Think of beta): STEP FAILED: beta is not available"));
  // Tools' output is data for the model, never part of its instructions.
  EXPECT_THAT(replanning.system, Not(HasSubstr("ALPHA")));
  step2_answer = "beta";
  Send("alice@localhost/phone", "2");
  ASSERT_TRUE(RunUntil(
      [&] { return !Bodies().empty() && Bodies().back() == "All done: ALPHA and beta."; }));
}

// A second tool, so that a step can be given one and call the other.
class WhisperSkill : public skills::Skill {
 public:
  const providers::ToolSpec& spec() const override { return spec_; }
  void Execute(const nlohmann::json&, const skills::SkillContext&, Done done) override {
    done(std::string("psst"));
  }

 private:
  providers::ToolSpec spec_{
      .name = "whisper", .description = "Whispers.", .parameters = {{"type", "object"}}};
};

TEST_F(PlanTurnTest, AStepCannotRunAToolItsPlanDidNotGiveIt) {
  ASSERT_TRUE(registry_.Register(std::make_unique<WhisperSkill>()).ok());
  ASSERT_TRUE(registry_.SetEnabled({"shout", "whisper"}).ok());
  model_->respond = [](const LlmRequest& request) -> Step {
    if (IsPlanning(request)) {
      return {.text = R"({"plans": [{"title": "t", "steps": [
                  {"description": "whisper only", "tools": ["whisper"]}]}]})"};
    }
    if (IsStep(request, 1) && !HasToolResult(request)) {
      return {.calls = {{.id = "x", .name = "shout", .arguments = {{"text", "sneaky"}}}}};
    }
    if (IsStep(request, 1)) return {.text = request.messages.back().tool_results[0].content};
    return {.text = "final"};
  };
  Send("alice@localhost/phone", "/plan something");
  ASSERT_TRUE(WaitForMessages(1));
  EXPECT_THAT(Messages()[0].body, ::testing::StartsWith("Here is a plan. Reply with 1 to run it"));
  Send("alice@localhost/phone", "1");
  ASSERT_TRUE(RunUntil([&] { return !Bodies().empty() && Bodies().back() == "final"; }));
  // The step was offered whisper only; a call of shout is refused, not run.
  EXPECT_NE(IndexOf("Step 1/1 done (0.0 s): tool 'shout' is not part of this step"),
            Bodies().size() + 1000)
      << ::testing::PrintToString(Bodies());
}

TEST_F(PlanTurnTest, WithAutoPlanningTheModelMayChooseToPlan) {
  // Without "auto" the model is not offered the choice.
  Send("alice@localhost/phone", "hello");
  ASSERT_TRUE(WaitForMessages(1));
  ASSERT_TRUE(WaitForIdle());
  for (const providers::ToolSpec& tool : model_->requests.back().tools) {
    EXPECT_NE(tool.name, kProposePlansTool);
  }

  options_.planning = "auto";
  auto respond = model_->respond;
  model_->respond = [respond](const LlmRequest& request) -> Step {
    const bool offered =
        std::any_of(request.tools.begin(), request.tools.end(),
                    [](const auto& tool) { return tool.name == kProposePlansTool; });
    if (offered && request.messages.back().text == "organise the move") {
      return {.calls = {{.id = "p",
                         .name = kProposePlansTool,
                         .arguments = {{"task", "organise the move, in steps"}}}}};
    }
    return respond(request);
  };
  Send("alice@localhost/phone", "organise the move");
  ASSERT_TRUE(WaitForMessages(2));
  EXPECT_THAT(Messages()[1].body, ::testing::StartsWith("Here are 2 plans."));
  ASSERT_TRUE(IsPlanning(model_->requests.back()));
  EXPECT_TRUE(model_->requests.back().tools.empty());
  Send("alice@localhost/phone", "2");
  ASSERT_TRUE(RunUntil(
      [&] { return !Bodies().empty() && Bodies().back() == "All done: ALPHA and beta."; }));
  bool step_seen = false;
  for (const LlmRequest& request : model_->requests) {
    if (!IsStep(request, 1)) continue;
    step_seen = true;
    EXPECT_THAT(request.messages.front().text, HasSubstr("The task: organise the move, in steps"));
    for (const providers::ToolSpec& tool : request.tools) EXPECT_NE(tool.name, kProposePlansTool);
  }
  EXPECT_TRUE(step_seen);
}

TEST_F(PlanTurnTest, AProgramGetsThePlansAsAnEventAndChoosesWithTheActionId) {
  std::vector<RunEvent> seen;
  ASSERT_TRUE(agent_
                  ->Converse("nightly", "/plan shout alpha and beta",
                             [&](const RunEvent& event) { seen.push_back(event); })
                  .ok());
  ASSERT_TRUE(RunUntil([&] {
    return std::any_of(seen.begin(), seen.end(),
                       [](const RunEvent& e) { return e.kind == RunEvent::Kind::kPlanProposed; });
  }));
  const RunEvent& proposed = *std::find_if(seen.begin(), seen.end(), [](const RunEvent& e) {
    return e.kind == RunEvent::Kind::kPlanProposed;
  });
  EXPECT_THAT(proposed.arguments_json, HasSubstr("\"title\":\"Shout both then join\""));
  EXPECT_THAT(proposed.text, ::testing::StartsWith("Here are 2 plans."));
  ASSERT_FALSE(proposed.action_id.empty());
  const skills::PendingAction* action = pending_->Find(proposed.action_id);
  ASSERT_NE(action, nullptr);
  EXPECT_EQ(action->chat_owner, "") << "only an operator answers a program's plan";
  EXPECT_EQ(action->plan_count, 2);
  EXPECT_FALSE(pending_
                   ->Resolve(proposed.action_id,
                             {.outcome = skills::ActionResolution::Outcome::kChosen, .plan = 3})
                   .ok());
  ASSERT_TRUE(
      pending_
          ->Resolve(proposed.action_id, {.outcome = skills::ActionResolution::Outcome::kChosen,
                                         .by = "operator ops",
                                         .plan = 1})
          .ok());
  ASSERT_TRUE(
      RunUntil([&] { return !seen.empty() && seen.back().kind == RunEvent::Kind::kCompleted; }));
  EXPECT_EQ(seen.back().text, "All done: ALPHA and beta.");
  int started = 0, completed = 0;
  for (const RunEvent& event : seen) {
    started += event.kind == RunEvent::Kind::kStepStarted;
    completed += event.kind == RunEvent::Kind::kStepCompleted;
  }
  EXPECT_EQ(started, 3);
  EXPECT_EQ(completed, 3);
  // The step's tool call says which step it belongs to.
  const auto shout = std::find_if(seen.begin(), seen.end(), [](const RunEvent& e) {
    return e.kind == RunEvent::Kind::kToolStarted && e.tool == "shout";
  });
  ASSERT_NE(shout, seen.end());
  EXPECT_EQ(shout->step, 1);
  EXPECT_TRUE(Messages().empty()) << "a program's turn sends nothing over XMPP";
}

}  // namespace
}  // namespace herald::agent
