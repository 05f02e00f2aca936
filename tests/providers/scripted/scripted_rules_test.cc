#include "providers/scripted/scripted_rules.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "providers/provider.h"

namespace herald::providers {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::SizeIs;

ScriptedRules MustParse(std::string_view toml) {
  absl::StatusOr<ScriptedRules> rules = ScriptedRules::Parse(toml, "rules.toml");
  EXPECT_TRUE(rules.ok()) << rules.status();
  return rules.ok() ? *std::move(rules) : ScriptedRules();
}

std::string ParseError(std::string_view toml) {
  absl::StatusOr<ScriptedRules> rules = ScriptedRules::Parse(toml, "rules.toml");
  EXPECT_TRUE(absl::IsInvalidArgument(rules.status())) << rules.status();
  return std::string(rules.status().message());
}

LlmRequest UserSays(std::string text, std::vector<std::string> tools = {}) {
  LlmRequest request;
  request.model = "demo";
  request.messages.push_back({.role = LlmMessage::Role::kUser, .text = std::move(text)});
  for (std::string& tool : tools) request.tools.push_back({.name = std::move(tool)});
  return request;
}

// `request` after the model called `tool` and the tool answered `result`.
LlmRequest WithToolResult(LlmRequest request, const std::string& tool, std::string result,
                          bool name_in_result = true) {
  request.messages.push_back(
      {.role = LlmMessage::Role::kAssistant, .tool_calls = {{.id = "call-1", .name = tool}}});
  request.messages.push_back({.role = LlmMessage::Role::kTool,
                              .tool_results = {{.tool_call_id = "call-1",
                                                .name = name_in_result ? tool : "",
                                                .content = std::move(result)}}});
  return request;
}

std::string Reply(const ScriptedRules& rules, const LlmRequest& request) {
  LlmResponse response = rules.Answer(request);
  EXPECT_THAT(response.tool_calls, IsEmpty());
  return response.text;
}

TEST(ScriptedRulesTest, ContainsMatchesWholeWordsIgnoringCase) {
  ScriptedRules rules = MustParse(R"(
[[rule]]
contains = "hi"
reply = "greeting"
[[rule]]
reply = "other"
)");
  EXPECT_EQ(Reply(rules, UserSays("Oh HI there")), "greeting");
  EXPECT_EQ(Reply(rules, UserSays("hi!")), "greeting");
  EXPECT_EQ(Reply(rules, UserSays("this is history")), "other");
}

TEST(ScriptedRulesTest, StartsWithMatchesOnlyAtTheStartOfTheMessage) {
  ScriptedRules rules = MustParse(R"(
[[rule]]
starts_with = "remember"
reply = "noted"
[[rule]]
reply = "other"
)");
  EXPECT_EQ(Reply(rules, UserSays("  Remember   the milk")), "noted");
  EXPECT_EQ(Reply(rules, UserSays("do you remember")), "other");
  EXPECT_EQ(Reply(rules, UserSays("remembering")), "other");
}

TEST(ScriptedRulesTest, EqualsIgnoresCaseSpacingAndTrailingPunctuation) {
  ScriptedRules rules = MustParse(R"(
[[rule]]
equals = ["good night", "bye"]
reply = "sleep well"
[[rule]]
reply = "other"
)");
  EXPECT_EQ(Reply(rules, UserSays(" Good\n night! ")), "sleep well");
  EXPECT_EQ(Reply(rules, UserSays("BYE")), "sleep well");
  EXPECT_EQ(Reply(rules, UserSays("good night everyone")), "other");
}

TEST(ScriptedRulesTest, EveryKeyOfARuleMustMatch) {
  ScriptedRules rules = MustParse(R"(
[[rule]]
starts_with = "please"
contains = ["coffee", "tea"]
reply = "brewing"
[[rule]]
reply = "other"
)");
  EXPECT_EQ(Reply(rules, UserSays("please make tea")), "brewing");
  EXPECT_EQ(Reply(rules, UserSays("make tea please")), "other");
  EXPECT_EQ(Reply(rules, UserSays("please make soup")), "other");
}

TEST(ScriptedRulesTest, TheFirstMatchingRuleAnswers) {
  ScriptedRules rules = MustParse(R"(
[[rule]]
contains = "weather"
reply = "first"
[[rule]]
contains = "weather"
reply = "second"
)");
  EXPECT_EQ(Reply(rules, UserSays("weather?")), "first");
}

TEST(ScriptedRulesTest, FillsPlaceholdersAndKeepsEscapedBraces) {
  ScriptedRules rules = MustParse(R"(
[[rule]]
starts_with = "echo"
reply = "{{{rest}}} from '{message}' on {model}"
)");
  EXPECT_EQ(Reply(rules, UserSays("Echo: Hello   World!")),
            "{Hello World} from 'Echo: Hello World!' on demo");
}

TEST(ScriptedRulesTest, RestIsTheWholeMessageWhenNothingFollowsTheMatch) {
  ScriptedRules rules = MustParse(R"(
[[rule]]
contains = "weather"
reply = "[{rest}]"
)");
  EXPECT_EQ(Reply(rules, UserSays("How is the weather?")), "[How is the weather]");
}

TEST(ScriptedRulesTest, AToolRuleAnswersWithACallWhoseArgumentsAreFilledIn) {
  ScriptedRules rules = MustParse(R"(
[[rule]]
contains = "search for"
tool = "web_search"
arguments = { query = "{rest}", limit = 3, options = { safe = true, tags = ["a", "{model}"] } }
)");
  LlmResponse response = rules.Answer(UserSays("please search for Cheap Flights.", {"web_search"}));
  ASSERT_THAT(response.tool_calls, SizeIs(1));
  EXPECT_EQ(response.tool_calls[0].name, "web_search");
  EXPECT_EQ(response.tool_calls[0].id, "scripted_call_1");
  EXPECT_EQ(response.tool_calls[0].arguments,
            nlohmann::json::parse(R"({"query": "Cheap Flights", "limit": 3,
                                      "options": {"safe": true, "tags": ["a", "demo"]}})"));
  EXPECT_EQ(response.stop_reason, StopReason::kToolUse);
  EXPECT_THAT(response.text, IsEmpty());
}

TEST(ScriptedRulesTest, AToolRuleIsSkippedWhenTheRequestDoesNotOfferTheTool) {
  ScriptedRules rules = MustParse(R"(
[[rule]]
contains = "time"
tool = "current_time"
[[rule]]
contains = "time"
reply = "no clock"
)");
  EXPECT_EQ(Reply(rules, UserSays("what time is it", {"memory_recall"})), "no clock");
}

TEST(ScriptedRulesTest, AnAfterToolRuleAnswersWithTheToolResult) {
  ScriptedRules rules = MustParse(R"toml(
[[rule]]
after_tool = "current_time"
reply = "It is {tool_result} ({tool}, asked: {message})"
[[rule]]
after_tool = "*"
reply = "{tool} said {tool_result}"
[[rule]]
reply = "a user message rule"
)toml");
  LlmRequest asked = UserSays("time?", {"current_time"});
  EXPECT_EQ(Reply(rules, WithToolResult(asked, "current_time", "12:00 UTC")),
            "It is 12:00 UTC (current_time, asked: time?)");
  EXPECT_EQ(Reply(rules, WithToolResult(asked, "current_time", "12:00", false)),
            "It is 12:00 (current_time, asked: time?)");
  EXPECT_EQ(Reply(rules, WithToolResult(asked, "dice", "4")), "dice said 4");
  EXPECT_EQ(Reply(rules, asked), "a user message rule");
}

TEST(ScriptedRulesTest, CallsAToolThenAnswersWithItsResult) {
  ScriptedRules rules = MustParse(R"(
[[rule]]
after_tool = "current_time"
reply = "It is {tool_result}."
[[rule]]
contains = "what time"
tool = "current_time"
)");
  LlmRequest request = UserSays("What time is it?", {"current_time"});
  LlmResponse call = rules.Answer(request);
  ASSERT_THAT(call.tool_calls, SizeIs(1));
  request.messages.push_back({.role = LlmMessage::Role::kAssistant, .tool_calls = call.tool_calls});
  request.messages.push_back(
      {.role = LlmMessage::Role::kTool,
       .tool_results = {{.tool_call_id = call.tool_calls[0].id, .content = "09:30 UTC"}}});
  LlmResponse answer = rules.Answer(request);
  EXPECT_EQ(answer.text, "It is 09:30 UTC.");
  EXPECT_EQ(answer.stop_reason, StopReason::kEndTurn);
}

TEST(ScriptedRulesTest, WithoutAMatchingRuleSaysSoOrPassesTheToolResultOn) {
  ScriptedRules rules = MustParse(R"(
[[rule]]
equals = "ping"
reply = "pong"
)");
  EXPECT_THAT(Reply(rules, UserSays("hello")), HasSubstr("no rule for this message"));
  EXPECT_EQ(Reply(rules, WithToolResult(UserSays("x"), "dice", "6")), "6");
}

TEST(ScriptedRulesTest, RefusesInvalidTomlNamingTheLine) {
  EXPECT_THAT(ParseError("[[rule]]\nreply = \"unterminated\n"), HasSubstr("rules.toml:2:"));
}

TEST(ScriptedRulesTest, RefusesAnUnknownFieldNamingTheRuleAndField) {
  std::string error = ParseError(R"([[rule]]
reply = "a"

[[rule]]
name = "second"
contians = "typo"
reply = "b"
)");
  EXPECT_THAT(error, HasSubstr("rules.toml:6: rule 2 ('second'), 'contians': unknown field"));
}

TEST(ScriptedRulesTest, RefusesARuleWithBothOrNeitherAnswer) {
  EXPECT_THAT(ParseError("[[rule]]\nreply = \"a\"\ntool = \"t\"\n"),
              HasSubstr("rule 1, 'tool': a rule answers with either 'reply' or 'tool'"));
  EXPECT_THAT(ParseError("[[rule]]\ncontains = \"a\"\n"), HasSubstr("rule 1, 'reply': missing"));
}

TEST(ScriptedRulesTest, RefusesUnknownAndMisplacedPlaceholders) {
  EXPECT_THAT(ParseError("[[rule]]\nreply = \"hi {nmae}\"\n"),
              HasSubstr("rule 1, 'reply': unknown placeholder '{nmae}'"));
  EXPECT_THAT(ParseError("[[rule]]\nreply = \"it is {tool_result}\"\n"),
              HasSubstr("'{tool_result}' is only known in a rule with 'after_tool'"));
  EXPECT_THAT(ParseError("[[rule]]\nreply = \"open { brace\"\n"), HasSubstr("'{' without"));
  EXPECT_THAT(ParseError("[[rule]]\ntool = \"t\"\narguments = { q = \"{bad}\" }\n"),
              HasSubstr("rule 1, 'arguments': unknown placeholder"));
}

TEST(ScriptedRulesTest, RefusesFieldsOfTheWrongShape) {
  EXPECT_THAT(ParseError("[[rule]]\ncontains = 3\nreply = \"a\"\n"),
              HasSubstr("rules.toml:2: rule 1, 'contains': must be a string or a non-empty array"));
  EXPECT_THAT(ParseError("[[rule]]\nstarts_with = [\"a\", 1]\nreply = \"a\"\n"),
              HasSubstr("'starts_with': must hold strings only"));
  EXPECT_THAT(ParseError("[[rule]]\ncontains = \"  \"\nreply = \"a\"\n"),
              HasSubstr("'contains': a phrase is empty"));
  EXPECT_THAT(ParseError("[[rule]]\ntool = \"t\"\narguments = \"q\"\n"),
              HasSubstr("'arguments': must be a table"));
  EXPECT_THAT(ParseError("[[rule]]\nreply = \"a\"\narguments = { q = 1 }\n"),
              HasSubstr("'arguments': only a rule with 'tool' has arguments"));
  EXPECT_THAT(ParseError("[[rule]]\ntool = \"t\"\narguments = { at = 1979-05-27 }\n"),
              HasSubstr("'arguments': dates and times are not JSON values"));
  EXPECT_THAT(ParseError("[[rule]]\ntool = \"rm -rf\"\n"),
              HasSubstr("'tool': must be a tool name"));
  EXPECT_THAT(ParseError("[[rule]]\nafter_tool = \"\"\nreply = \"a\"\n"),
              HasSubstr("'after_tool': must be a tool name"));
  EXPECT_THAT(ParseError("[[rule]]\nname = 5\nreply = \"a\"\n"), HasSubstr("'name': must be"));
}

TEST(ScriptedRulesTest, RefusesAFileWithoutRulesOrWithOtherTopLevelKeys) {
  EXPECT_THAT(ParseError(""), HasSubstr("no [[rule]] tables"));
  EXPECT_THAT(ParseError("rule = \"x\"\n"), HasSubstr("'rule' must be written as [[rule]]"));
  EXPECT_THAT(ParseError("[rules]\nreply = \"a\"\n"), HasSubstr("unknown top-level key 'rules'"));
}

TEST(ScriptedRulesTest, AMisspeltKeyGetsTheKeyItMostLikelyMeant) {
  EXPECT_THAT(ParseError("[[rule]]\ncontians = \"a\"\nreply = \"b\"\n"),
              HasSubstr("unknown field (fields: name, contains, starts_with, equals, after_tool, "
                        "reply, tool, arguments); did you mean 'contains'?"));
  EXPECT_THAT(ParseError("[rules]\nreply = \"a\"\n"), HasSubstr("; did you mean 'rule'?"));
  EXPECT_THAT(ParseError("[[rule]]\ncolour = \"a\"\nreply = \"b\"\n"),
              Not(HasSubstr("did you mean")));
}

TEST(ScriptedRulesTest, RefusesAnOversizeFile) {
  std::string huge = "[[rule]]\nreply = \"" + std::string(ScriptedRules::kMaxBytes, 'a') + "\"\n";
  EXPECT_THAT(ParseError(huge), HasSubstr("the limit is"));
}

// ---- The built-in demo rules ----

const std::vector<std::string> kDemoTools = {"current_time", "memory_recall"};

TEST(ScriptedDemoRulesTest, Parse) {
  absl::StatusOr<ScriptedRules> rules = ScriptedRules::Parse(ScriptedRules::DemoText(), "demo");
  ASSERT_TRUE(rules.ok()) << rules.status();
  EXPECT_EQ(rules->rules().size(), ScriptedRules::Demo().rules().size());
  EXPECT_FALSE(rules->rules().empty());
}

TEST(ScriptedDemoRulesTest, GreetAndIntroduceThemselves) {
  std::string reply = Reply(ScriptedRules::Demo(), UserSays("Hello!", kDemoTools));
  EXPECT_THAT(reply, HasSubstr("Hello! I'm Herald"));
  EXPECT_THAT(reply, HasSubstr("what time is it?"));
}

TEST(ScriptedDemoRulesTest, AskTheClockAndTellTheTime) {
  const ScriptedRules& rules = ScriptedRules::Demo();
  LlmRequest request = UserSays("hey, what time is it?", kDemoTools);
  LlmResponse call = rules.Answer(request);
  ASSERT_THAT(call.tool_calls, SizeIs(1));
  EXPECT_EQ(call.tool_calls[0].name, "current_time");
  EXPECT_EQ(call.tool_calls[0].arguments, nlohmann::json::object());
  EXPECT_EQ(Reply(rules, WithToolResult(request, "current_time", "2025-03-01 10:15 UTC")),
            "It is 2025-03-01 10:15 UTC.");
}

TEST(ScriptedDemoRulesTest, SayWhenTheClockSkillIsNotEnabled) {
  EXPECT_THAT(Reply(ScriptedRules::Demo(), UserSays("What time is it?", {"memory_recall"})),
              HasSubstr("current_time skill is not enabled"));
}

TEST(ScriptedDemoRulesTest, NoteWhatToRememberAndRecallItWithTheMemoryTool) {
  const ScriptedRules& rules = ScriptedRules::Demo();
  EXPECT_THAT(Reply(rules, UserSays("Remember that my cat is called Tom.", kDemoTools)),
              HasSubstr("Noted: my cat is called Tom."));

  LlmRequest request = UserSays("What did I say about my cat?", kDemoTools);
  LlmResponse call = rules.Answer(request);
  ASSERT_THAT(call.tool_calls, SizeIs(1));
  EXPECT_EQ(call.tool_calls[0].name, "memory_recall");
  EXPECT_EQ(call.tool_calls[0].arguments, nlohmann::json({{"query", "my cat"}}));
  EXPECT_EQ(Reply(rules, WithToolResult(request, "memory_recall", "- my cat is called Tom")),
            "Here is what I found in your notes:\n- my cat is called Tom");
}

TEST(ScriptedDemoRulesTest, FallBackToExplainingHowToConfigureARealModel) {
  std::string reply = Reply(ScriptedRules::Demo(), UserSays("Explain quantum physics", kDemoTools));
  EXPECT_THAT(reply, HasSubstr("scripted provider"));
  EXPECT_THAT(reply, HasSubstr("[llm] default"));
  EXPECT_THAT(reply, HasSubstr("api_key = \"${ANTHROPIC_API_KEY}\""));
}

}  // namespace
}  // namespace herald::providers
