#include "component/agent/plan.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace herald::agent {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Optional;

const absl::flat_hash_set<std::string> kTools = {"web_search", "url_fetch"};

constexpr char kTwoPlans[] = R"(Here you are:
```json
{"plans": [
  {"title": "Compare by reviews", "confidence": 0.8, "reasoning": "Reviews say most.",
   "warnings": ["Reviews may be old"],
   "steps": [
     {"step": 1, "description": "Find reviews of A", "tools": ["web_search"],
      "depends_on": [], "expected_output": "reviews of A", "estimated_tokens": 800},
     {"step": 2, "description": "Find reviews of B", "tools": ["web_search"],
      "expected_output": "reviews of B", "estimated_tokens": 800},
     {"step": 3, "description": "Compare them", "depends_on": [1, 2, 2],
      "expected_output": "a verdict", "estimated_tokens": 900}]},
  {"title": "Read the makers' pages", "confidence": 0.55,
   "steps": [{"step": 1, "description": "Fetch both pages", "tools": ["url_fetch"]}]}
]}
```
Pick one.)";

TEST(PlanTest, ReadsPlansFromTheModelsAnswer) {
  absl::StatusOr<std::vector<Plan>> plans = ParsePlans(kTwoPlans, kTools);
  ASSERT_TRUE(plans.ok()) << plans.status();
  ASSERT_EQ(plans->size(), 2u);
  const Plan& first = (*plans)[0];
  EXPECT_EQ(first.title, "Compare by reviews");
  EXPECT_DOUBLE_EQ(first.confidence, 0.8);
  EXPECT_THAT(first.warnings, ElementsAre("Reviews may be old"));
  ASSERT_EQ(first.steps.size(), 3u);
  EXPECT_EQ(first.steps[2].number, 3);
  EXPECT_THAT(first.steps[2].depends_on, ElementsAre(1, 2));  // duplicates folded
  EXPECT_THAT(first.steps[0].tools, ElementsAre("web_search"));
  EXPECT_EQ(first.EstimatedTokens(), 2500);
  EXPECT_EQ((*plans)[1].steps[0].estimated_tokens, 0);
}

TEST(PlanTest, RefusesWhatCannotRun) {
  auto problem = [](const std::string& steps) {
    const std::string text =
        "{\"plans\": [{\"title\": \"t\", \"confidence\": 1, \"steps\": " + steps + "}]}";
    absl::StatusOr<std::vector<Plan>> plans = ParsePlans(text, kTools);
    return plans.ok() ? std::string("ok") : std::string(plans.status().message());
  };
  EXPECT_EQ(problem(R"([{"description": "a", "depends_on": [2]}, {"description": "b"}])"),
            "plan 1 step 1: depends_on may name only earlier steps");
  EXPECT_EQ(problem(R"([{"description": "a", "depends_on": [1]}])"),
            "plan 1 step 1: depends_on may name only earlier steps");
  EXPECT_EQ(problem(R"([{"description": "a", "tools": ["rm_rf"]}])"),
            "plan 1 step 1: rm_rf is not one of the tools offered");
  EXPECT_EQ(problem(R"([{"step": 2, "description": "a"}])"),
            "plan 1 step 1: steps are numbered 1, 2, 3... in order");
  EXPECT_EQ(problem(R"([{"description": "  "}])"), "plan 1 step 1: description is empty");
  EXPECT_EQ(problem("[]"), "plan 1: steps must be a list of 1 to 8 steps");
  EXPECT_EQ(problem(R"([{"description": "a"}])"), "ok");
  EXPECT_EQ(ParsePlans("no plans today", kTools).status().message(),
            "the answer holds no JSON object");
  EXPECT_EQ(ParsePlans("{\"plans\": []}", kTools).status().message(),
            "\"plans\" must be a non-empty list");
  EXPECT_EQ(ParsePlans("{\"plans\": [1,", kTools).status().message(),
            "the answer holds no JSON object");
  // A bad plan beside good ones is left out; only when none is left is it an error.
  absl::StatusOr<std::vector<Plan>> plans = ParsePlans(
      R"({"plans": [{"title": "bad", "steps": []},
                    {"title": "good", "steps": [{"description": "x"}]},
                    {"title": "2", "steps": [{"description": "x"}]},
                    {"title": "3", "steps": [{"description": "x"}]}]})",
      kTools);
  ASSERT_TRUE(plans.ok());
  ASSERT_EQ(plans->size(), 3u);  // at most three
  EXPECT_EQ((*plans)[0].title, "good");
}

TEST(PlanTest, ShowsThePlansNumberedWithTheirCost) {
  std::vector<Plan> plans = ParsePlans(kTwoPlans, kTools).value();
  const std::string text =
      FormatPlans(plans, [](int64_t tokens) { return std::optional<double>(tokens * 1e-5); });
  EXPECT_EQ(text,
            "Here are 2 plans. Reply with its number to run one, \"1 step 2: <new text>\" to "
            "change a step first, or \"cancel\".\n\n"
            "1. Compare by reviews — confidence 80%, ~2,500 tokens (~$0.0250)\n"
            "   Reviews say most.\n"
            "   1) Find reviews of A [web_search] → reviews of A\n"
            "   2) Find reviews of B [web_search] → reviews of B\n"
            "   3) Compare them (after 1, 2) → a verdict\n"
            "   ⚠ Reviews may be old\n\n"
            "2. Read the makers' pages — confidence 55%\n"
            "   1) Fetch both pages [url_fetch]");
  EXPECT_THAT(PlansToJson(plans).dump(),
              HasSubstr(R"("depends_on":[1,2],"description":"Compare them")"));
}

TEST(PlanTest, ReadsAPersonsChoice) {
  EXPECT_THAT(ParsePlanChoice(" 2 ", 3), Optional(::testing::Field(&PlanChoice::plan, 2)));
  EXPECT_THAT(ParsePlanChoice("Plan 1.", 3), Optional(::testing::Field(&PlanChoice::plan, 1)));
  EXPECT_THAT(ParsePlanChoice("cancel", 3), Optional(::testing::Field(&PlanChoice::plan, 0)));
  EXPECT_EQ(ParsePlanChoice("4", 3), std::nullopt);
  EXPECT_EQ(ParsePlanChoice("0", 3), std::nullopt);
  EXPECT_EQ(ParsePlanChoice("the second one", 3), std::nullopt);
  EXPECT_EQ(ParsePlanChoice("2 please", 3), std::nullopt);
  std::optional<PlanChoice> edited = ParsePlanChoice("2 step 3: Compare Prices Only", 3);
  ASSERT_TRUE(edited.has_value());
  EXPECT_EQ(edited->plan, 2);
  EXPECT_EQ(edited->step_edits, (std::map<int, std::string>{{3, "Compare Prices Only"}}));
  EXPECT_EQ(ParsePlanChoice("2 step 3:", 3), std::nullopt);
}

TEST(PlanTest, AppliesAStepEditOnlyToAStepThePlanHas) {
  Plan plan = ParsePlans(kTwoPlans, kTools).value()[0];
  absl::StatusOr<Plan> edited = ApplyStepEdits(plan, {{2, "Find reviews of C"}});
  ASSERT_TRUE(edited.ok());
  EXPECT_EQ(edited->steps[1].description, "Find reviews of C");
  EXPECT_EQ(ApplyStepEdits(plan, {{4, "x"}}).status().message(),
            "the plan has steps 1 to 3, not 4");
}

}  // namespace
}  // namespace herald::agent
