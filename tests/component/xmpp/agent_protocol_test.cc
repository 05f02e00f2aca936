// urn:herald:agent:0 on the wire (docs/agent-protocol.md): the IQs another agent sends Herald,
// read into AgentRequests (each malformed one marked, never dropped, so that it is answered
// bad-request); the answers and progress notes written from AnswerAgent and SendAgentProgress;
// the IQ a CallAgent becomes and the AgentAnswer its answer gives. The stanzas follow the
// protocol document's examples.
#include "component/xmpp/agent_protocol.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "component/xmpp/namespaces.h"
#include "component/xmpp/xml_element.h"
#include "gtest/gtest.h"
#include "tests/component/xmpp/one_stanza.h"

namespace herald::xmpp {
namespace {

using testing::OneStanza;
using Kind = AgentRequest::Kind;

Jid J(std::string_view text) { return Jid::Parse(text).value(); }

// An IQ from alice's laptop to Herald with `payload` inside, parsed as the session reads it.
std::optional<AgentRequest> Request(const std::string& type, const std::string& payload) {
  OneStanza iq(absl::StrCat("<iq type='", type,
                            "' id='r1' from='alice@localhost/laptop' to='research.example.org'>",
                            payload, "</iq>"));
  return TranslateAgentRequest(iq.get());
}

// The request's `malformed`, or "(not ours)" when the IQ was not read as one at all.
std::string MalformedOf(const std::string& type, const std::string& payload) {
  std::optional<AgentRequest> request = Request(type, payload);
  return request.has_value() ? request->malformed : "(not ours)";
}

TEST(TranslateAgentRequestTest, ListingSkillsIsAGetWithAnEmptySkillsElement) {
  std::optional<AgentRequest> request = Request("get", "<skills xmlns='urn:herald:agent:0'/>");
  ASSERT_TRUE(request.has_value());
  EXPECT_EQ(request->kind, Kind::kSkills);
  EXPECT_EQ(request->from, J("alice@localhost/laptop"));
  EXPECT_EQ(request->to, J("research.example.org"));
  EXPECT_EQ(request->iq_id, "r1");
  EXPECT_EQ(request->hops, 0);
  EXPECT_EQ(request->timeout, absl::ZeroDuration()) << "unsaid: the agent picks its default";
  EXPECT_EQ(request->malformed, "");
}

TEST(TranslateAgentRequestTest, ExecuteCarriesTheSkillItsArgumentsHopsAndTimeout) {
  std::optional<AgentRequest> request =
      Request("set",
              "<execute xmlns='urn:herald:agent:0' skill='current_time' hops='1' timeout='30'>"
              "<arguments>{\"timezone\":\"Europe/Paris\"}</arguments></execute>");
  ASSERT_TRUE(request.has_value());
  EXPECT_EQ(request->kind, Kind::kExecute);
  EXPECT_EQ(request->skill, "current_time");
  EXPECT_EQ(request->arguments_json, "{\"timezone\":\"Europe/Paris\"}");
  EXPECT_EQ(request->hops, 1);
  EXPECT_EQ(request->timeout, absl::Seconds(30));
  EXPECT_EQ(request->malformed, "");
}

TEST(TranslateAgentRequestTest, ExecuteWithoutArgumentsHopsOrTimeoutTakesTheDefaults) {
  std::optional<AgentRequest> request =
      Request("set", "<execute xmlns='urn:herald:agent:0' skill='current_time'/>");
  ASSERT_TRUE(request.has_value());
  EXPECT_EQ(request->kind, Kind::kExecute);
  EXPECT_EQ(request->arguments_json, "") << "absent means {}";
  EXPECT_EQ(request->hops, 0);
  EXPECT_EQ(request->timeout, absl::ZeroDuration());
  EXPECT_EQ(request->malformed, "");
}

TEST(TranslateAgentRequestTest, AskCarriesItsTextAndThread) {
  std::optional<AgentRequest> request =
      Request("set",
              "<ask xmlns='urn:herald:agent:0' hops='2' timeout='120' thread='build'>"
              "<text>What changed in the build today?</text></ask>");
  ASSERT_TRUE(request.has_value());
  EXPECT_EQ(request->kind, Kind::kAsk);
  EXPECT_EQ(request->text, "What changed in the build today?");
  EXPECT_EQ(request->thread, "build");
  EXPECT_EQ(request->hops, 2);
  EXPECT_EQ(request->timeout, absl::Seconds(120));
  EXPECT_EQ(request->malformed, "");
}

TEST(TranslateAgentRequestTest, ConfirmApprovesOrDeniesWithAReason) {
  std::optional<AgentRequest> approve =
      Request("set", "<confirm xmlns='urn:herald:agent:0' action='7f3c1a90' decision='approve'/>");
  ASSERT_TRUE(approve.has_value());
  EXPECT_EQ(approve->kind, Kind::kConfirm);
  EXPECT_EQ(approve->action_id, "7f3c1a90");
  EXPECT_TRUE(approve->approve);
  EXPECT_EQ(approve->reason, "");
  EXPECT_EQ(approve->malformed, "");

  std::optional<AgentRequest> deny =
      Request("set",
              "<confirm xmlns='urn:herald:agent:0' action='7f3c1a90' decision='deny'>"
              "<reason>not on a Friday</reason></confirm>");
  ASSERT_TRUE(deny.has_value());
  EXPECT_FALSE(deny->approve);
  EXPECT_EQ(deny->reason, "not on a Friday");
  EXPECT_EQ(deny->malformed, "");
}

TEST(TranslateAgentRequestTest, BadHopsOrTimeoutNumbersAreMalformed) {
  for (const char* attributes :
       {"hops='-1'", "hops='x'", "hops='101'", "hops='1.5'", "hops=''", "timeout='-5'",
        "timeout='86401'", "timeout='ten'", "timeout='99999999999999999999'"}) {
    const std::string payload =
        absl::StrCat("<execute xmlns='urn:herald:agent:0' skill='s' ", attributes, "/>");
    EXPECT_NE(MalformedOf("set", payload), "") << attributes;
    EXPECT_NE(MalformedOf("set", payload), "(not ours)") << attributes;
  }
  // The bounds themselves are fine.
  std::optional<AgentRequest> bounds = Request(
      "set", absl::StrCat("<ask xmlns='urn:herald:agent:0' hops='", kMaxAgentHops, "' timeout='",
                          kMaxAgentTimeoutSeconds, "'><text>hi</text></ask>"));
  ASSERT_TRUE(bounds.has_value());
  EXPECT_EQ(bounds->malformed, "");
  EXPECT_EQ(bounds->hops, kMaxAgentHops);
  EXPECT_EQ(bounds->timeout, absl::Seconds(kMaxAgentTimeoutSeconds));
  // The text names what is wrong.
  EXPECT_NE(MalformedOf("get", "<skills xmlns='urn:herald:agent:0' hops='x'/>").find("hops"),
            std::string::npos);
  EXPECT_NE(MalformedOf("get", "<skills xmlns='urn:herald:agent:0' timeout='x'/>").find("timeout"),
            std::string::npos);
}

TEST(TranslateAgentRequestTest, AWrongIqTypeAnUnknownElementOrTwoPayloadsAreMalformed) {
  EXPECT_NE(MalformedOf("set", "<skills xmlns='urn:herald:agent:0'/>"), "");
  EXPECT_NE(MalformedOf("get", "<execute xmlns='urn:herald:agent:0' skill='s'/>"), "");
  EXPECT_NE(MalformedOf("get", "<ask xmlns='urn:herald:agent:0'><text>hi</text></ask>"), "");
  EXPECT_NE(MalformedOf("get", "<confirm xmlns='urn:herald:agent:0' action='a' decision='deny'/>"),
            "");
  const std::string unknown = MalformedOf("set", "<frobnicate xmlns='urn:herald:agent:0'/>");
  EXPECT_NE(unknown, "");
  EXPECT_NE(unknown, "(not ours)");
  EXPECT_NE(unknown.find("frobnicate"), std::string::npos) << unknown;

  const std::string two = MalformedOf(
      "get", "<skills xmlns='urn:herald:agent:0'/><skills xmlns='urn:herald:agent:0'/>");
  EXPECT_NE(two.find("exactly one payload"), std::string::npos) << two;
  // Ours second, after a payload of another namespace: still ours, still malformed.
  const std::string mixed =
      MalformedOf("get", "<query xmlns='jabber:iq:version'/><skills xmlns='urn:herald:agent:0'/>");
  EXPECT_NE(mixed.find("exactly one payload"), std::string::npos) << mixed;
}

TEST(TranslateAgentRequestTest, AMalformedRequestKeepsTheKindOfItsElement) {
  // So that the refusal is audited as what it was.
  std::optional<AgentRequest> execute =
      Request("get", "<execute xmlns='urn:herald:agent:0' skill='s'/>");
  ASSERT_TRUE(execute.has_value());
  EXPECT_EQ(execute->kind, AgentRequest::Kind::kExecute);
  std::optional<AgentRequest> confirm = Request(
      "set", "<confirm xmlns='urn:herald:agent:0' action='a' decision='deny'/><x xmlns='y'/>");
  ASSERT_TRUE(confirm.has_value());
  EXPECT_EQ(confirm->kind, AgentRequest::Kind::kConfirm);
  EXPECT_NE(confirm->malformed, "");
}

TEST(TranslateAgentRequestTest, MissingOrEmptyRequiredPartsAreMalformed) {
  EXPECT_NE(MalformedOf("set", "<execute xmlns='urn:herald:agent:0'/>"), "");
  EXPECT_NE(MalformedOf("set", "<ask xmlns='urn:herald:agent:0'/>"), "");
  EXPECT_NE(MalformedOf("set", "<ask xmlns='urn:herald:agent:0'><text></text></ask>"), "");
  EXPECT_NE(MalformedOf("set", "<confirm xmlns='urn:herald:agent:0' decision='approve'/>"), "");
  EXPECT_NE(MalformedOf("set", "<confirm xmlns='urn:herald:agent:0' action='a' decision='yes'/>"),
            "");
  EXPECT_NE(MalformedOf("set", "<confirm xmlns='urn:herald:agent:0' action='a'/>"), "");
}

TEST(TranslateAgentRequestTest, OversizedArgumentsTextOrThreadAreMalformed) {
  const auto execute = [](size_t bytes) {
    return absl::StrCat("<execute xmlns='urn:herald:agent:0' skill='s'><arguments>{\"a\":\"",
                        std::string(bytes - 8, 'x'), "\"}</arguments></execute>");
  };
  EXPECT_EQ(MalformedOf("set", execute(kMaxAgentArgumentsBytes)), "");
  EXPECT_NE(MalformedOf("set", execute(kMaxAgentArgumentsBytes + 1)).find("arguments"),
            std::string::npos);

  const auto ask = [](size_t text, size_t thread) {
    return absl::StrCat("<ask xmlns='urn:herald:agent:0' thread='", std::string(thread, 't'),
                        "'><text>", std::string(text, 'q'), "</text></ask>");
  };
  EXPECT_EQ(MalformedOf("set", ask(kMaxAgentTextBytes, kMaxAgentThreadBytes)), "");
  EXPECT_NE(MalformedOf("set", ask(kMaxAgentTextBytes + 1, 1)).find("text"), std::string::npos);
  EXPECT_NE(MalformedOf("set", ask(1, kMaxAgentThreadBytes + 1)).find("thread"), std::string::npos);
}

TEST(TranslateAgentRequestTest, IqsThatAreNotRequestsOfOursAreLeftAlone) {
  EXPECT_FALSE(Request("get", "<query xmlns='jabber:iq:version'/>").has_value());
  EXPECT_FALSE(Request("get", "<skills/>").has_value()) << "no namespace of ours";
  EXPECT_FALSE(Request("get", "").has_value());
  EXPECT_FALSE(Request("result", "<skills xmlns='urn:herald:agent:0'/>").has_value());
  EXPECT_FALSE(Request("error", "<skills xmlns='urn:herald:agent:0'/>").has_value());
  OneStanza no_id(
      "<iq type='get' from='alice@localhost/laptop'><skills xmlns='urn:herald:agent:0'/></iq>");
  EXPECT_FALSE(TranslateAgentRequest(no_id.get()).has_value());
  OneStanza no_sender("<iq type='get' id='r2'><skills xmlns='urn:herald:agent:0'/></iq>");
  EXPECT_FALSE(TranslateAgentRequest(no_sender.get()).has_value());
}

// --- Answers ---------------------------------------------------------------------------------

const AnswerAgent kAnswerBase{
    .to = Jid::Parse("alice@localhost/laptop").value(),
    .from = Jid::Parse("research.example.org").value(),
    .iq_id = "x1",
};

AnswerAgent Answer(Kind kind) {
  AnswerAgent answer = kAnswerBase;
  answer.kind = kind;
  return answer;
}

TEST(AgentAnswerStanzaTest, TheSkillsListHasEachSkillWithItsSchema) {
  AnswerAgent answer = Answer(Kind::kSkills);
  answer.skills = {{.name = "current_time",
                    .source = "builtin",
                    .description = "The current date and time.",
                    .parameters_json = "{\"type\":\"object\"}"},
                   {.name = "shout", .source = "manifest", .description = "Shouts."}};
  XmlElement iq = AgentAnswerStanza(answer);
  EXPECT_EQ(iq.name(), "iq");
  EXPECT_EQ(iq.Attr("type"), "result");
  EXPECT_EQ(iq.Attr("id"), "x1");
  EXPECT_EQ(iq.Attr("to"), "alice@localhost/laptop");
  EXPECT_EQ(iq.Attr("from"), "research.example.org");
  const XmlElement* skills = iq.FindChild("skills", ns::kAgent);
  ASSERT_NE(skills, nullptr);
  std::vector<const XmlElement*> items;
  for (const XmlNode& node : skills->children()) {
    if (node.element != nullptr) items.push_back(node.element.get());
  }
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(items[0]->name(), "skill");
  EXPECT_EQ(items[0]->Attr("name"), "current_time");
  EXPECT_EQ(items[0]->Attr("source"), "builtin");
  EXPECT_EQ(items[0]->ChildText("description"), "The current date and time.");
  EXPECT_EQ(items[0]->ChildText("parameters"), "{\"type\":\"object\"}");
  EXPECT_EQ(items[1]->Attr("name"), "shout");
  EXPECT_EQ(items[1]->Attr("source"), "manifest");
}

TEST(AgentAnswerStanzaTest, AnEmptySkillsListIsAnEmptySkillsElement) {
  XmlElement iq = AgentAnswerStanza(Answer(Kind::kSkills));
  const XmlElement* skills = iq.FindChild("skills", ns::kAgent);
  ASSERT_NE(skills, nullptr);
  EXPECT_EQ(skills->FirstChildElement(), nullptr);
}

TEST(AgentAnswerStanzaTest, AnExecutesResultHasItsOutputAndDurationButNoModel) {
  AnswerAgent answer = Answer(Kind::kExecute);
  answer.ok = true;
  answer.output = "2026-11-26 22:00 CET";
  answer.duration = absl::Milliseconds(12);
  XmlElement iq = AgentAnswerStanza(answer);
  EXPECT_EQ(iq.Attr("type"), "result");
  const XmlElement* result = iq.FindChild("result", ns::kAgent);
  ASSERT_NE(result, nullptr);
  EXPECT_EQ(result->Attr("ok"), "true");
  EXPECT_EQ(result->Attr("duration-ms"), "12");
  EXPECT_FALSE(result->HasAttr("model"));
  EXPECT_FALSE(result->HasAttr("input-tokens"));
  EXPECT_FALSE(result->HasAttr("output-tokens"));
  EXPECT_EQ(result->ChildText("output"), "2026-11-26 22:00 CET");
  EXPECT_EQ(result->FindChild("error"), nullptr);
}

TEST(AgentAnswerStanzaTest, AFailedAskSaysWhyWithItsModelAndTokens) {
  AnswerAgent answer = Answer(Kind::kAsk);
  answer.ok = false;
  answer.failure = "the model provider is down";
  answer.model = "anthropic:claude-sonnet-4-5";
  answer.input_tokens = 1830;
  answer.output_tokens = 212;
  answer.duration = absl::Milliseconds(8400);
  XmlElement iq = AgentAnswerStanza(answer);
  EXPECT_EQ(iq.Attr("type"), "result") << "the protocol worked; the run did not";
  const XmlElement* result = iq.FindChild("result", ns::kAgent);
  ASSERT_NE(result, nullptr);
  EXPECT_EQ(result->Attr("ok"), "false");
  EXPECT_EQ(result->Attr("duration-ms"), "8400");
  EXPECT_EQ(result->Attr("model"), "anthropic:claude-sonnet-4-5");
  EXPECT_EQ(result->Attr("input-tokens"), "1830");
  EXPECT_EQ(result->Attr("output-tokens"), "212");
  EXPECT_EQ(result->ChildText("error"), "the model provider is down");
  EXPECT_EQ(result->FindChild("output"), nullptr);
}

TEST(AgentAnswerStanzaTest, AConfirmIsAnEmptyResult) {
  XmlElement iq = AgentAnswerStanza(Answer(Kind::kConfirm));
  EXPECT_EQ(iq.Attr("type"), "result");
  EXPECT_EQ(iq.Attr("id"), "x1");
  EXPECT_EQ(iq.FirstChildElement(), nullptr);
}

TEST(AgentAnswerStanzaTest, EachRefusalHasItsConditionTypeAndText) {
  const std::vector<std::pair<std::string, std::string>> conditions = {
      {"forbidden", "auth"},          {"resource-constraint", "wait"},
      {"bad-request", "modify"},      {"service-unavailable", "cancel"},
      {"policy-violation", "cancel"}, {"item-not-found", "cancel"},
      {"not-allowed", "cancel"},
  };
  for (const auto& [condition, type] : conditions) {
    AnswerAgent answer = Answer(Kind::kExecute);
    answer.error = condition;
    answer.error_text = absl::StrCat("because ", condition);
    answer.output = "never sent";
    XmlElement iq = AgentAnswerStanza(answer);
    EXPECT_EQ(iq.Attr("type"), "error") << condition;
    EXPECT_EQ(iq.Attr("id"), "x1");
    EXPECT_EQ(iq.Attr("to"), "alice@localhost/laptop");
    EXPECT_EQ(iq.FindChild("result", ns::kAgent), nullptr) << condition;
    const XmlElement* error = iq.FindChild("error");
    ASSERT_NE(error, nullptr) << condition;
    EXPECT_EQ(error->Attr("type"), type) << condition;
    EXPECT_NE(error->FindChild(condition, ns::kStanzaErrors), nullptr) << condition;
    const XmlElement* text = error->FindChild("text", ns::kStanzaErrors);
    ASSERT_NE(text, nullptr) << condition;
    EXPECT_EQ(text->Text(), absl::StrCat("because ", condition));
    EXPECT_EQ(text->Attr("xml:lang"), "en");
  }
  // Without a text, no <text/>.
  AnswerAgent bare = Answer(Kind::kSkills);
  bare.error = "forbidden";
  XmlElement iq = AgentAnswerStanza(bare);
  ASSERT_NE(iq.FindChild("error"), nullptr);
  EXPECT_EQ(iq.FindChild("error")->FindChild("text", ns::kStanzaErrors), nullptr);
}

TEST(AgentProgressStanzaTest, AProgressNoteIsABodilessUnstoredMessage) {
  XmlElement message = AgentProgressStanza({.to = J("alice@localhost/laptop"),
                                            .from = J("research.example.org"),
                                            .iq_id = "a1",
                                            .text = "still running",
                                            .elapsed = absl::Seconds(10)});
  EXPECT_EQ(message.name(), "message");
  EXPECT_EQ(message.Attr("type"), "normal");
  EXPECT_EQ(message.Attr("to"), "alice@localhost/laptop");
  EXPECT_EQ(message.Attr("from"), "research.example.org");
  EXPECT_EQ(message.FindChild("body"), nullptr);
  const XmlElement* progress = message.FindChild("progress", ns::kAgent);
  ASSERT_NE(progress, nullptr);
  EXPECT_EQ(progress->Attr("id"), "a1");
  EXPECT_EQ(progress->Attr("elapsed-ms"), "10000");
  EXPECT_EQ(progress->Text(), "still running");
  EXPECT_NE(message.FindChild("no-store", ns::kHints), nullptr);
}

// --- Calls of another agent --------------------------------------------------------------------

TEST(AgentCallRequestTest, AnExecuteCallIsReadBackAsTheSameRequest) {
  const CallAgent call{.call_id = "d1",
                       .to = J("research.example.org"),
                       .from = J("herald@localhost/herald"),
                       .kind = Kind::kExecute,
                       .skill = "current_time",
                       .arguments_json = "{\"timezone\":\"Europe/Paris\"}",
                       .hops = 2,
                       .timeout = absl::Seconds(30)};
  XmlElement iq = AgentCallRequest(call, "q7");
  EXPECT_EQ(iq.Attr("type"), "set");
  EXPECT_EQ(iq.Attr("id"), "q7");
  EXPECT_EQ(iq.Attr("to"), "research.example.org");
  std::optional<AgentRequest> request = TranslateAgentRequest(iq);
  ASSERT_TRUE(request.has_value());
  EXPECT_EQ(request->malformed, "");
  EXPECT_EQ(request->kind, Kind::kExecute);
  EXPECT_EQ(request->iq_id, "q7");
  EXPECT_EQ(request->from, J("herald@localhost/herald"));
  EXPECT_EQ(request->to, J("research.example.org"));
  EXPECT_EQ(request->skill, "current_time");
  EXPECT_EQ(request->arguments_json, "{\"timezone\":\"Europe/Paris\"}");
  EXPECT_EQ(request->hops, 2);
  EXPECT_EQ(request->timeout, absl::Seconds(30));
}

TEST(AgentCallRequestTest, AnAskCallCarriesItsThread) {
  const CallAgent call{.call_id = "d2",
                       .to = J("research.example.org"),
                       .from = J("herald@localhost/herald"),
                       .kind = Kind::kAsk,
                       .text = "What changed today?",
                       .thread = "delegated-direct_alice",
                       .hops = 1,
                       .timeout = absl::Seconds(120)};
  std::optional<AgentRequest> request = TranslateAgentRequest(AgentCallRequest(call, "q8"));
  ASSERT_TRUE(request.has_value());
  EXPECT_EQ(request->malformed, "");
  EXPECT_EQ(request->kind, Kind::kAsk);
  EXPECT_EQ(request->text, "What changed today?");
  EXPECT_EQ(request->thread, "delegated-direct_alice");
  EXPECT_EQ(request->hops, 1);
  EXPECT_EQ(request->timeout, absl::Seconds(120));
  EXPECT_EQ(request->skill, "");

  // An ask without a thread says none.
  CallAgent unthreaded = call;
  unthreaded.thread = "";
  XmlElement iq = AgentCallRequest(unthreaded, "q9");
  ASSERT_NE(iq.FindChild("ask", ns::kAgent), nullptr);
  EXPECT_FALSE(iq.FindChild("ask", ns::kAgent)->HasAttr("thread"));
}

TEST(AgentCallRequestTest, TheTimeoutIsRoundedUpToWholeSecondsAndAtLeastOne) {
  const std::vector<std::pair<absl::Duration, std::string>> cases = {
      {absl::Milliseconds(1500), "2"}, {absl::Milliseconds(1001), "2"}, {absl::Seconds(30), "30"},
      {absl::Milliseconds(200), "1"},  {absl::ZeroDuration(), "1"},     {absl::Seconds(-3), "1"},
  };
  for (const auto& [timeout, said] : cases) {
    const CallAgent call{.call_id = "d3",
                         .to = J("research.example.org"),
                         .kind = Kind::kExecute,
                         .skill = "s",
                         .timeout = timeout};
    XmlElement iq = AgentCallRequest(call, "q1");
    const XmlElement* execute = iq.FindChild("execute", ns::kAgent);
    ASSERT_NE(execute, nullptr);
    EXPECT_EQ(execute->Attr("timeout"), said) << timeout;
    EXPECT_EQ(execute->FindChild("arguments"), nullptr) << "no arguments: none sent";
    EXPECT_FALSE(iq.HasAttr("from")) << "no own JID: the server stamps it";
  }
}

const Jid kAsked = Jid::Parse("research.example.org").value();

TEST(TranslateAgentAnswerTest, AResultGivesTheOutcomeOfTheCall) {
  OneStanza iq(
      "<iq type='result' id='q1' from='research.example.org' to='herald@localhost/herald'>"
      "<result xmlns='urn:herald:agent:0' ok='true' duration-ms='8400' "
      "model='anthropic:claude-sonnet-4-5' input-tokens='1830' output-tokens='212'>"
      "<output>Two commits landed.</output></result></iq>");
  std::optional<AgentAnswer> answer = TranslateAgentAnswer(iq.get(), kAsked, "d1");
  ASSERT_TRUE(answer.has_value());
  EXPECT_EQ(answer->call_id, "d1");
  EXPECT_EQ(answer->from, kAsked);
  EXPECT_EQ(answer->condition, "");
  EXPECT_TRUE(answer->ok);
  EXPECT_EQ(answer->output, "Two commits landed.");
  EXPECT_EQ(answer->model, "anthropic:claude-sonnet-4-5");
  EXPECT_EQ(answer->input_tokens, 1830);
  EXPECT_EQ(answer->output_tokens, 212);
  EXPECT_EQ(answer->duration, absl::Milliseconds(8400));

  OneStanza failed(
      "<iq type='result' id='q1' from='research.example.org'>"
      "<result xmlns='urn:herald:agent:0' ok='false' duration-ms='x' input-tokens='-4'>"
      "<error>no such city</error></result></iq>");
  answer = TranslateAgentAnswer(failed.get(), kAsked, "d1");
  ASSERT_TRUE(answer.has_value());
  EXPECT_EQ(answer->condition, "");
  EXPECT_FALSE(answer->ok);
  EXPECT_EQ(answer->failure, "no such city");
  EXPECT_EQ(answer->input_tokens, 0) << "a bad number is left out";
  EXPECT_EQ(answer->duration, absl::ZeroDuration());
}

TEST(TranslateAgentAnswerTest, AnErrorGivesItsConditionAndText) {
  OneStanza iq(
      "<iq type='error' id='q1' from='research.example.org'><error type='auth'>"
      "<forbidden xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/>"
      "<text xmlns='urn:ietf:params:xml:ns:xmpp-stanzas' xml:lang='en'>peer 'herald@localhost' "
      "lacks the 'execute' scope</text></error></iq>");
  std::optional<AgentAnswer> answer = TranslateAgentAnswer(iq.get(), kAsked, "d1");
  ASSERT_TRUE(answer.has_value());
  EXPECT_EQ(answer->call_id, "d1");
  EXPECT_EQ(answer->condition, "forbidden");
  EXPECT_EQ(answer->error_text, "peer 'herald@localhost' lacks the 'execute' scope");
  EXPECT_FALSE(answer->ok);

  OneStanza bare_error("<iq type='error' id='q1' from='research.example.org'/>");
  answer = TranslateAgentAnswer(bare_error.get(), kAsked, "d1");
  ASSERT_TRUE(answer.has_value());
  EXPECT_EQ(answer->condition, "undefined-condition");
}

TEST(TranslateAgentAnswerTest, AnAnswerFromSomeoneElseIsNotTheCallsAnswer) {
  OneStanza forged(
      "<iq type='result' id='q1' from='mallory@evil.example/x'>"
      "<result xmlns='urn:herald:agent:0' ok='true' duration-ms='1'><output>trust me</output>"
      "</result></iq>");
  EXPECT_FALSE(TranslateAgentAnswer(forged.get(), kAsked, "d1").has_value());
  OneStanza resource("<iq type='result' id='q1' from='research.example.org/other'/>");
  EXPECT_FALSE(TranslateAgentAnswer(resource.get(), kAsked, "d1").has_value());
  OneStanza anonymous("<iq type='result' id='q1'/>");
  EXPECT_FALSE(TranslateAgentAnswer(anonymous.get(), kAsked, "d1").has_value());
}

TEST(TranslateAgentAnswerTest, AResultWithoutOurResultIsABadRequest) {
  OneStanza iq("<iq type='result' id='q1' from='research.example.org'/>");
  std::optional<AgentAnswer> answer = TranslateAgentAnswer(iq.get(), kAsked, "d1");
  ASSERT_TRUE(answer.has_value());
  EXPECT_EQ(answer->condition, "bad-request");
  EXPECT_NE(answer->error_text, "");
  EXPECT_FALSE(answer->ok);
}

TEST(TranslateAgentAnswerTest, OurOwnAnswerStanzaIsReadBack) {
  AnswerAgent sent = Answer(Kind::kAsk);
  sent.ok = true;
  sent.output = "42";
  sent.model = "model";
  sent.input_tokens = 10;
  sent.output_tokens = 5;
  sent.duration = absl::Milliseconds(1234);
  std::optional<AgentAnswer> answer =
      TranslateAgentAnswer(AgentAnswerStanza(sent), J("research.example.org"), "d9");
  ASSERT_TRUE(answer.has_value());
  EXPECT_EQ(answer->condition, "");
  EXPECT_TRUE(answer->ok);
  EXPECT_EQ(answer->output, "42");
  EXPECT_EQ(answer->model, "model");
  EXPECT_EQ(answer->input_tokens, 10);
  EXPECT_EQ(answer->output_tokens, 5);
  EXPECT_EQ(answer->duration, absl::Milliseconds(1234));

  AnswerAgent refused = Answer(Kind::kAsk);
  refused.error = "policy-violation";
  refused.error_text = "hop limit 3 reached";
  answer = TranslateAgentAnswer(AgentAnswerStanza(refused), J("research.example.org"), "d9");
  ASSERT_TRUE(answer.has_value());
  EXPECT_EQ(answer->condition, "policy-violation");
  EXPECT_EQ(answer->error_text, "hop limit 3 reached");
}

}  // namespace
}  // namespace herald::xmpp
