#include "component/agent/plan.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "component/base/absl_string_view.h"

namespace herald::agent {
namespace {

using nlohmann::json;

constexpr size_t kMaxTextBytes = 1000;
constexpr int64_t kMaxStepTokens = 1'000'000;

// The first balanced JSON object in `text` (strings and escapes respected), or "".
std::string_view FirstObject(std::string_view text) {
  const size_t start = text.find('{');
  if (start == std::string_view::npos) return {};
  int depth = 0;
  bool in_string = false;
  for (size_t i = start; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') in_string = true;
    if (c == '{') ++depth;
    if (c == '}' && --depth == 0) return text.substr(start, i - start + 1);
  }
  return {};
}

absl::StatusOr<std::string> Text(const json& object, const char* key, const std::string& where,
                                 bool required) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) {
    if (required) return absl::InvalidArgumentError(absl::StrCat(where, ": ", key, " is missing"));
    return std::string();
  }
  if (!it->is_string()) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": ", key, " must be a string"));
  }
  std::string text = it->get<std::string>();
  if (required && absl::StripAsciiWhitespace(text).empty()) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": ", key, " is empty"));
  }
  if (text.size() > kMaxTextBytes) text.resize(kMaxTextBytes);
  return text;
}

absl::StatusOr<PlanStep> ReadStep(const json& value, int number, const std::string& plan,
                                  const absl::flat_hash_set<std::string>& tools) {
  const std::string where = absl::StrCat(plan, " step ", number);
  if (!value.is_object()) return absl::InvalidArgumentError(where + " is not an object");
  PlanStep step{.number = number};
  if (auto it = value.find("step");
      it != value.end() && !(it->is_number_integer() && it->get<int64_t>() == number)) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": steps are numbered 1, 2, 3... in order"));
  }
  absl::StatusOr<std::string> description = Text(value, "description", where, true);
  if (!description.ok()) return description.status();
  step.description = *std::move(description);
  absl::StatusOr<std::string> expected = Text(value, "expected_output", where, false);
  if (!expected.ok()) return expected.status();
  step.expected_output = *std::move(expected);
  if (auto it = value.find("tools"); it != value.end() && !it->is_null()) {
    if (!it->is_array() || it->size() > static_cast<size_t>(kMaxToolsPerStep)) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": tools must be a list of at most ", kMaxToolsPerStep, " names"));
    }
    for (const json& tool : *it) {
      if (!tool.is_string() || !tools.contains(tool.get<std::string>())) {
        return absl::InvalidArgumentError(
            absl::StrCat(where, ": ", tool.is_string() ? tool.get<std::string>() : tool.dump(),
                         " is not one of the tools offered"));
      }
      if (std::find(step.tools.begin(), step.tools.end(), tool.get<std::string>()) ==
          step.tools.end()) {
        step.tools.push_back(tool.get<std::string>());
      }
    }
  }
  if (auto it = value.find("depends_on"); it != value.end() && !it->is_null()) {
    if (!it->is_array()) {
      return absl::InvalidArgumentError(where + ": depends_on must be a list of step numbers");
    }
    for (const json& other : *it) {
      if (!other.is_number_integer() || other.get<int64_t>() < 1 ||
          other.get<int64_t>() >= number) {
        return absl::InvalidArgumentError(
            absl::StrCat(where, ": depends_on may name only earlier steps"));
      }
      const int earlier = static_cast<int>(other.get<int64_t>());
      if (std::find(step.depends_on.begin(), step.depends_on.end(), earlier) ==
          step.depends_on.end()) {
        step.depends_on.push_back(earlier);
      }
    }
    std::sort(step.depends_on.begin(), step.depends_on.end());
  }
  if (auto it = value.find("estimated_tokens"); it != value.end() && it->is_number()) {
    const double tokens = it->get<double>();
    if (std::isfinite(tokens) && tokens > 0) {
      step.estimated_tokens = static_cast<int64_t>(std::min<double>(tokens, kMaxStepTokens));
    }
  }
  return step;
}

absl::StatusOr<Plan> ReadPlan(const json& value, int number,
                              const absl::flat_hash_set<std::string>& tools) {
  const std::string where = absl::StrCat("plan ", number);
  if (!value.is_object()) return absl::InvalidArgumentError(where + " is not an object");
  Plan plan;
  absl::StatusOr<std::string> title = Text(value, "title", where, true);
  if (!title.ok()) return title.status();
  plan.title = *std::move(title);
  absl::StatusOr<std::string> reasoning = Text(value, "reasoning", where, false);
  if (!reasoning.ok()) return reasoning.status();
  plan.reasoning = *std::move(reasoning);
  if (auto it = value.find("confidence"); it != value.end() && it->is_number()) {
    const double confidence = it->get<double>();
    plan.confidence = std::isfinite(confidence) ? std::clamp(confidence, 0.0, 1.0) : 0;
  }
  if (auto it = value.find("warnings"); it != value.end() && it->is_array()) {
    for (const json& warning : *it) {
      if (warning.is_string() && plan.warnings.size() < 5) {
        plan.warnings.push_back(warning.get<std::string>().substr(0, kMaxTextBytes));
      }
    }
  }
  auto steps = value.find("steps");
  if (steps == value.end() || !steps->is_array() || steps->empty() ||
      steps->size() > static_cast<size_t>(kMaxPlanSteps)) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": steps must be a list of 1 to ", kMaxPlanSteps, " steps"));
  }
  for (size_t i = 0; i < steps->size(); ++i) {
    absl::StatusOr<PlanStep> step = ReadStep((*steps)[i], static_cast<int>(i + 1), where, tools);
    if (!step.ok()) return step.status();
    plan.steps.push_back(*std::move(step));
  }
  return plan;
}

std::string Tokens(int64_t tokens) {
  std::string digits = absl::StrCat(tokens);
  for (int i = static_cast<int>(digits.size()) - 3; i > 0; i -= 3) digits.insert(i, ",");
  return digits;
}

}  // namespace

int64_t Plan::EstimatedTokens() const {
  int64_t total = 0;
  for (const PlanStep& step : steps) total += step.estimated_tokens;
  return total;
}

std::string PlanningInstructions(const std::vector<std::pair<std::string, std::string>>& tools) {
  std::string text =
      "Do not carry out the task yet: propose 2 or 3 different plans for it, for the person to "
      "choose from. Each plan has a short title, a confidence from 0 to 1 that it achieves the "
      "task, one sentence of reasoning, warnings if any, and 1 to 8 steps. A step says what "
      "it does, the tools it may use (only from the list below; none if it needs none), the "
      "earlier steps it needs (steps that need none of each other run at the same time), what "
      "it should yield, and about how many tokens it will take. Answer with JSON only, in "
      "exactly this shape:\n"
      "{\"plans\": [{\"title\": \"...\", \"confidence\": 0.8, \"reasoning\": \"...\", "
      "\"warnings\": [], \"steps\": [{\"step\": 1, \"description\": \"...\", \"tools\": [], "
      "\"depends_on\": [], \"expected_output\": \"...\", \"estimated_tokens\": 500}]}]}\n\n"
      "Tools:";
  if (tools.empty()) absl::StrAppend(&text, " none.");
  for (const auto& [name, description] : tools) {
    absl::StrAppend(&text, "\n- ", name, ": ", description.substr(0, 300));
  }
  return text;
}

absl::StatusOr<std::vector<Plan>> ParsePlans(std::string_view text,
                                             const absl::flat_hash_set<std::string>& tools) {
  const std::string_view object = FirstObject(text);
  if (object.empty()) return absl::InvalidArgumentError("the answer holds no JSON object");
  json document = json::parse(object, nullptr, /*allow_exceptions=*/false);
  if (document.is_discarded()) {
    return absl::InvalidArgumentError("the plans are not valid JSON");
  }
  auto list = document.find("plans");
  if (list == document.end() || !list->is_array() || list->empty()) {
    return absl::InvalidArgumentError("\"plans\" must be a non-empty list");
  }
  std::vector<Plan> plans;
  std::string first_problem;
  for (size_t i = 0; i < list->size() && plans.size() < static_cast<size_t>(kMaxPlans); ++i) {
    absl::StatusOr<Plan> plan = ReadPlan((*list)[i], static_cast<int>(i + 1), tools);
    if (plan.ok()) {
      plans.push_back(*std::move(plan));
    } else if (first_problem.empty()) {
      first_problem = std::string(plan.status().message());
    }
  }
  if (plans.empty()) return absl::InvalidArgumentError(first_problem);
  return plans;
}

json PlansToJson(const std::vector<Plan>& plans) {
  json list = json::array();
  for (const Plan& plan : plans) {
    json steps = json::array();
    for (const PlanStep& step : plan.steps) {
      steps.push_back({{"step", step.number},
                       {"description", step.description},
                       {"tools", step.tools},
                       {"depends_on", step.depends_on},
                       {"expected_output", step.expected_output},
                       {"estimated_tokens", step.estimated_tokens}});
    }
    list.push_back({{"title", plan.title},
                    {"confidence", plan.confidence},
                    {"reasoning", plan.reasoning},
                    {"warnings", plan.warnings},
                    {"estimated_tokens", plan.EstimatedTokens()},
                    {"steps", std::move(steps)}});
  }
  return {{"plans", std::move(list)}};
}

std::string FormatPlans(const std::vector<Plan>& plans, const CostOf& cost_of) {
  std::string text = absl::StrCat(
      plans.size() == 1 ? "Here is a plan" : absl::StrCat("Here are ", plans.size(), " plans"),
      ". Reply with ", plans.size() == 1 ? "1" : "its number", " to run ",
      plans.size() == 1 ? "it" : "one",
      ", \"1 step 2: <new text>\" to change a step first, or \"cancel\".");
  for (size_t p = 0; p < plans.size(); ++p) {
    const Plan& plan = plans[p];
    absl::StrAppend(&text, "\n\n", p + 1, ". ", plan.title, " — confidence ",
                    static_cast<int>(std::lround(plan.confidence * 100)), "%");
    if (const int64_t tokens = plan.EstimatedTokens(); tokens > 0) {
      absl::StrAppend(&text, ", ~", Tokens(tokens), " tokens");
      if (std::optional<double> usd = cost_of ? cost_of(tokens) : std::nullopt) {
        absl::StrAppend(&text, absl::StrFormat(" (~$%.4f)", *usd));
      }
    }
    if (!plan.reasoning.empty()) absl::StrAppend(&text, "\n   ", plan.reasoning);
    for (const PlanStep& step : plan.steps) {
      absl::StrAppend(&text, "\n   ", step.number, ") ", step.description);
      if (!step.tools.empty()) absl::StrAppend(&text, " [", absl::StrJoin(step.tools, ", "), "]");
      if (!step.depends_on.empty()) {
        absl::StrAppend(&text, " (after ", absl::StrJoin(step.depends_on, ", "), ")");
      }
      if (!step.expected_output.empty()) absl::StrAppend(&text, " → ", step.expected_output);
    }
    for (const std::string& warning : plan.warnings) {
      absl::StrAppend(&text, "\n   ⚠ ", warning);
    }
  }
  return text;
}

std::optional<PlanChoice> ParsePlanChoice(std::string_view text, int plan_count) {
  std::string lower = absl::AsciiStrToLower(absl::StripAsciiWhitespace(AbslView(text)));
  while (!lower.empty() && (lower.back() == '.' || lower.back() == '!')) lower.pop_back();
  if (lower == "cancel" || lower == "none" || lower == "no" || lower == "stop") {
    return PlanChoice{};
  }
  absl::string_view rest(lower);
  absl::ConsumePrefix(&rest, "plan");
  rest = absl::StripLeadingAsciiWhitespace(rest);
  size_t digits = 0;
  while (digits < rest.size() && absl::ascii_isdigit(static_cast<unsigned char>(rest[digits]))) {
    ++digits;
  }
  int plan = 0;
  if (digits == 0 || digits > 2 || !absl::SimpleAtoi(rest.substr(0, digits), &plan) || plan < 1 ||
      plan > plan_count) {
    return std::nullopt;
  }
  rest = absl::StripLeadingAsciiWhitespace(rest.substr(digits));
  PlanChoice choice{.plan = plan};
  if (rest.empty()) return choice;
  // "step N: text" — the text is taken from the original, not lower-cased.
  absl::ConsumePrefix(&rest, ",");
  rest = absl::StripLeadingAsciiWhitespace(rest);
  if (!absl::ConsumePrefix(&rest, "step")) return std::nullopt;
  rest = absl::StripLeadingAsciiWhitespace(rest);
  size_t step_digits = 0;
  while (step_digits < rest.size() &&
         absl::ascii_isdigit(static_cast<unsigned char>(rest[step_digits]))) {
    ++step_digits;
  }
  int step = 0;
  if (step_digits == 0 || step_digits > 2 ||
      !absl::SimpleAtoi(rest.substr(0, step_digits), &step)) {
    return std::nullopt;
  }
  rest = absl::StripLeadingAsciiWhitespace(rest.substr(step_digits));
  if (!absl::ConsumePrefix(&rest, ":")) return std::nullopt;
  // The same offset in the original text (lower-casing keeps byte lengths).
  const absl::string_view stripped = absl::StripAsciiWhitespace(AbslView(text));
  const std::string_view trimmed(stripped.data(), stripped.size());
  const size_t offset = static_cast<size_t>(rest.data() - lower.data());
  std::string edit(absl::StripAsciiWhitespace(AbslView(trimmed.substr(offset))));
  if (edit.empty()) return std::nullopt;
  choice.step_edits[step] = edit.substr(0, kMaxTextBytes);
  return choice;
}

absl::StatusOr<Plan> ApplyStepEdits(Plan plan, const std::map<int, std::string>& edits) {
  for (const auto& [number, description] : edits) {
    if (number < 1 || number > static_cast<int>(plan.steps.size())) {
      return absl::InvalidArgumentError(
          absl::StrCat("the plan has steps 1 to ", plan.steps.size(), ", not ", number));
    }
    if (absl::StripAsciiWhitespace(description).empty()) {
      return absl::InvalidArgumentError(absl::StrCat("step ", number, "'s new text is empty"));
    }
    plan.steps[number - 1].description = description.substr(0, kMaxTextBytes);
  }
  return plan;
}

}  // namespace herald::agent
