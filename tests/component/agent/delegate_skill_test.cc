// Delegation (docs/agent-protocol.md §6): the `delegate` skill asks a configured agent over the
// transport its target names, one hop further and never past its own run's deadline, refuses
// what would loop or could not be answered in time, gives the model the answer with its cost and
// audits each delegation; AgentCalls carries it over XMPP as a CallAgent and settles it with the
// session's AgentAnswer.
#include "component/agent/delegate_skill.h"

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "component/agent/agent_calls.h"
#include "component/agent/agent_protocol.h"
#include "component/ledger/audit_format.h"
#include "component/ledger/audit_log.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace herald::agent {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

xmpp::Jid J(std::string_view text) { return xmpp::Jid::Parse(text).value(); }

// A transport that records what it is asked and answers as the test tells it: at once with
// `answer` when set, else when the test calls the recorded `done`.
class FakeTransport : public DelegateTransport {
 public:
  struct Sent {
    DelegateTarget target;
    DelegateRequest request;
    Done done;
  };
  void Call(const DelegateTarget& target, DelegateRequest request, Done done) override {
    sent.push_back({target, request, done});
    if (answer.has_value()) done(*answer);
  }
  std::vector<Sent> sent;
  std::optional<absl::StatusOr<DelegateResult>> answer;
};

const DelegateTarget kResearch{.name = "a",
                               .description = "the research team's Herald",
                               .jid = "research.example.org",
                               .timeout_seconds = 60};
const DelegateTarget kOps{.name = "b", .grpc = "127.0.0.1:50051", .timeout_seconds = 30};

class DelegateSkillTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/herald-delegate-test-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
    audit_ = ledger::AuditLog::Open(dir_ + "/audit.log").value();
  }
  void TearDown() override {
    audit_.reset();
    std::filesystem::remove_all(dir_);
  }

  DelegateSkill Skill(std::vector<DelegateTarget> targets = {kResearch, kOps},
                      DelegateTransport* over_grpc = nullptr) {
    return DelegateSkill(std::move(targets), max_hops_, &xmpp_,
                         over_grpc == nullptr ? &grpc_ : over_grpc, audit_.get(),
                         [this] { return now_; });
  }

  // Runs `skill` with `arguments` in alice's chat; its outcome, or nullopt while unanswered.
  std::optional<absl::StatusOr<std::string>> Run(DelegateSkill& skill, nlohmann::json arguments) {
    outcome_.reset();
    skill.Execute(arguments, context_,
                  [this](absl::StatusOr<std::string> result) { outcome_ = std::move(result); });
    return outcome_;
  }

  std::vector<ledger::AuditEntry> Audited() {
    EXPECT_TRUE(audit_->Flush().ok());
    std::vector<ledger::AuditEntry> entries;
    std::ifstream file(dir_ + "/audit.log");
    for (std::string line; std::getline(file, line);) {
      absl::StatusOr<ledger::ParsedAuditLine> parsed = ledger::ParseAuditLine(line);
      EXPECT_TRUE(parsed.ok()) << parsed.status();
      if (parsed.ok()) entries.push_back(parsed->entry);
    }
    return entries;
  }

  std::string dir_;
  std::unique_ptr<ledger::AuditLog> audit_;
  FakeTransport xmpp_;
  FakeTransport grpc_;
  int max_hops_ = 3;
  absl::Time now_ = absl::FromUnixSeconds(1763800000);
  skills::SkillContext context_{
      .conversation_id = "turn-17",  // for log lines; the audit names the conversation
      .conversation = {.kind = base::ConversationRef::Kind::kDirect, .address = "alice@localhost"}};
  std::optional<absl::StatusOr<std::string>> outcome_;
};

TEST_F(DelegateSkillTest, TheSpecListsTheTargetsAndAnEmptyOneNone) {
  DelegateSkill skill = Skill();
  const nlohmann::json& parameters = skill.spec().parameters;
  EXPECT_EQ(skill.spec().name, "delegate");
  EXPECT_EQ(parameters["properties"]["agent"]["enum"], nlohmann::json::array({"a", "b"}));
  EXPECT_EQ(parameters["required"], nlohmann::json::array({"agent"}));
  EXPECT_THAT(skill.spec().description, HasSubstr("a (the research team's Herald)"));

  DelegateSkill none = Skill({});
  EXPECT_FALSE(none.spec().parameters["properties"]["agent"].contains("enum"))
      << "a schema's enum may not be empty";
  EXPECT_THAT(none.spec().description, HasSubstr("none configured"));
}

TEST_F(DelegateSkillTest, AnUnknownAgentIsNotFound) {
  DelegateSkill skill = Skill();
  std::optional<absl::StatusOr<std::string>> outcome =
      Run(skill, {{"agent", "nobody"}, {"question", "hi"}});
  ASSERT_TRUE(outcome.has_value());
  EXPECT_EQ(outcome->status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(outcome->status().message()), HasSubstr("nobody"));
  EXPECT_TRUE(xmpp_.sent.empty());
  EXPECT_TRUE(grpc_.sent.empty());
}

TEST_F(DelegateSkillTest, EitherASkillOrAQuestion) {
  DelegateSkill skill = Skill();
  for (const nlohmann::json& arguments :
       {nlohmann::json{{"agent", "a"}},
        nlohmann::json{{"agent", "a"}, {"skill", "s"}, {"question", "q"}},
        nlohmann::json{{"agent", "a"}, {"skill", ""}, {"question", ""}}}) {
    std::optional<absl::StatusOr<std::string>> outcome = Run(skill, arguments);
    ASSERT_TRUE(outcome.has_value()) << arguments;
    EXPECT_EQ(outcome->status().code(), absl::StatusCode::kInvalidArgument) << arguments;
  }
  EXPECT_TRUE(xmpp_.sent.empty());
  EXPECT_TRUE(Audited().empty());
}

TEST_F(DelegateSkillTest, ARequestCarriesOneHopMoreAndIsRefusedPastTheLimit) {
  DelegateSkill skill = Skill();
  context_.hops = 2;
  EXPECT_FALSE(Run(skill, {{"agent", "a"}, {"question", "hi"}}).has_value());
  ASSERT_EQ(xmpp_.sent.size(), 1u);
  EXPECT_EQ(xmpp_.sent[0].request.hops, 3);

  context_.hops = 3;
  std::optional<absl::StatusOr<std::string>> outcome =
      Run(skill, {{"agent", "a"}, {"question", "hi"}});
  ASSERT_TRUE(outcome.has_value());
  EXPECT_EQ(outcome->status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(outcome->status().message()),
              HasSubstr("already passed through 3 agents"));
  EXPECT_EQ(xmpp_.sent.size(), 1u) << "nothing sent";

  max_hops_ = 0;
  DelegateSkill strict = Skill();
  context_.hops = 0;
  outcome = Run(strict, {{"agent", "b"}, {"skill", "s"}});
  ASSERT_TRUE(outcome.has_value());
  EXPECT_EQ(outcome->status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(grpc_.sent.empty());
}

TEST_F(DelegateSkillTest, TheTimeoutIsTheTargetsOrWhatIsLeftOfTheRunsDeadline) {
  DelegateSkill skill = Skill();
  Run(skill, {{"agent", "a"}, {"question", "hi"}});  // no deadline: the target's 60 s
  context_.deadline = now_ + absl::Seconds(20);
  Run(skill, {{"agent", "a"}, {"question", "hi"}});  // 20 s left, one kept for the answer
  context_.deadline = now_ + absl::Seconds(2);
  Run(skill, {{"agent", "a"}, {"question", "hi"}});  // just one second
  context_.deadline = now_ + absl::Hours(1);
  Run(skill, {{"agent", "b"}, {"question", "hi"}});  // the target's 30 s
  ASSERT_EQ(xmpp_.sent.size(), 3u);
  EXPECT_EQ(xmpp_.sent[0].request.timeout, absl::Seconds(60));
  EXPECT_EQ(xmpp_.sent[1].request.timeout, absl::Seconds(19));
  EXPECT_EQ(xmpp_.sent[2].request.timeout, absl::Seconds(1));
  ASSERT_EQ(grpc_.sent.size(), 1u);
  EXPECT_EQ(grpc_.sent[0].request.timeout, absl::Seconds(30));

  for (absl::Duration left : {absl::Milliseconds(1999), absl::Seconds(1), absl::Seconds(-5)}) {
    context_.deadline = now_ + left;
    std::optional<absl::StatusOr<std::string>> outcome =
        Run(skill, {{"agent", "a"}, {"question", "hi"}});
    ASSERT_TRUE(outcome.has_value()) << left;
    EXPECT_EQ(outcome->status().code(), absl::StatusCode::kDeadlineExceeded) << left;
  }
  EXPECT_EQ(xmpp_.sent.size(), 3u) << "nothing more sent";
}

TEST_F(DelegateSkillTest, EachTargetGoesByItsOwnTransport) {
  DelegateSkill skill = Skill();
  context_.hops = 1;
  Run(skill, {{"agent", "a"}, {"skill", "web_search"}, {"arguments", {{"q", "herald"}}}});
  Run(skill, {{"agent", "b"}, {"question", "What changed?"}, {"arguments", {{"ignored", 1}}}});
  ASSERT_EQ(xmpp_.sent.size(), 1u);
  ASSERT_EQ(grpc_.sent.size(), 1u);
  EXPECT_EQ(xmpp_.sent[0].target, kResearch);
  EXPECT_EQ(xmpp_.sent[0].request.skill, "web_search");
  EXPECT_EQ(nlohmann::json::parse(xmpp_.sent[0].request.arguments_json),
            nlohmann::json({{"q", "herald"}}));
  EXPECT_EQ(xmpp_.sent[0].request.question, "");
  EXPECT_EQ(grpc_.sent[0].target, kOps);
  EXPECT_EQ(grpc_.sent[0].request.question, "What changed?");
  EXPECT_EQ(grpc_.sent[0].request.skill, "");
  EXPECT_EQ(grpc_.sent[0].request.arguments_json, "") << "a question has no arguments";
  // The question belongs to the asking conversation, named for the other side.
  EXPECT_EQ(grpc_.sent[0].request.conversation,
            ApiConversationName("delegated-", "direct:alice@localhost"));
  EXPECT_TRUE(base::IsApiConversationName(grpc_.sent[0].request.conversation));
}

TEST_F(DelegateSkillTest, ATargetWithoutItsTransportIsUnavailable) {
  DelegateSkill skill(std::vector<DelegateTarget>{kResearch, kOps}, max_hops_, &xmpp_, nullptr,
                      audit_.get(), [this] { return now_; });
  std::optional<absl::StatusOr<std::string>> outcome =
      Run(skill, {{"agent", "b"}, {"question", "hi"}});
  ASSERT_TRUE(outcome.has_value());
  EXPECT_EQ(outcome->status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(outcome->status().message()), HasSubstr("'b'"));
  EXPECT_TRUE(xmpp_.sent.empty());
  EXPECT_TRUE(Audited().empty());
}

TEST_F(DelegateSkillTest, TheAnswerComesWithWhatItCost) {
  DelegateSkill skill = Skill();
  EXPECT_FALSE(Run(skill, {{"agent", "b"}, {"question", "What changed?"}}).has_value());
  ASSERT_EQ(grpc_.sent.size(), 1u);
  now_ += absl::Milliseconds(1500);
  grpc_.sent[0].done(DelegateResult{.ok = true,
                                    .output = "Two commits landed.",
                                    .model = "anthropic:claude",
                                    .input_tokens = 300,
                                    .output_tokens = 40});
  ASSERT_TRUE(outcome_.has_value());
  ASSERT_TRUE(outcome_->ok()) << outcome_->status();
  EXPECT_EQ(**outcome_, "Two commits landed.\n\n(b answered in 1.5 s; 340 tokens)");

  // A skill run costs no tokens: none said.
  xmpp_.answer = DelegateResult{.ok = true, .output = "22:00"};
  std::optional<absl::StatusOr<std::string>> outcome =
      Run(skill, {{"agent", "a"}, {"skill", "current_time"}});
  ASSERT_TRUE(outcome.has_value());
  ASSERT_TRUE(outcome->ok());
  EXPECT_EQ(**outcome, "22:00\n\n(a answered in 0.0 s)");
}

TEST_F(DelegateSkillTest, AFailedRemoteRunIsAnErrorWithTheFailure) {
  DelegateSkill skill = Skill();
  xmpp_.answer = DelegateResult{.ok = false, .failure = "no such city"};
  std::optional<absl::StatusOr<std::string>> outcome =
      Run(skill, {{"agent", "a"}, {"skill", "current_time"}});
  ASSERT_TRUE(outcome.has_value());
  EXPECT_FALSE(outcome->ok());
  EXPECT_THAT(std::string(outcome->status().message()), HasSubstr("no such city"));
  EXPECT_THAT(std::string(outcome->status().message()),
              HasSubstr("a tried (skill current_time) and failed"));
}

TEST_F(DelegateSkillTest, ATransportErrorKeepsItsCodeAndNamesTheAgent) {
  DelegateSkill skill = Skill();
  xmpp_.answer = absl::PermissionDeniedError("research.example.org refused the request");
  std::optional<absl::StatusOr<std::string>> outcome =
      Run(skill, {{"agent", "a"}, {"skill", "current_time"}});
  ASSERT_TRUE(outcome.has_value());
  EXPECT_EQ(outcome->status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(std::string(outcome->status().message()),
              StartsWith("a (skill current_time): research.example.org refused"));
  grpc_.answer = absl::DeadlineExceededError("no answer in time");
  outcome = Run(skill, {{"agent", "b"}, {"question", "hi"}});
  ASSERT_TRUE(outcome.has_value());
  EXPECT_EQ(outcome->status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(std::string(outcome->status().message()), StartsWith("b (ask): "));
}

TEST_F(DelegateSkillTest, EachDelegationIsOneAuditEntry) {
  DelegateSkill skill = Skill();
  xmpp_.answer = DelegateResult{.ok = true, .output = "x", .model = "m", .input_tokens = 7};
  Run(skill, {{"agent", "a"}, {"skill", "web_search"}});
  grpc_.answer = DelegateResult{.ok = false, .failure = "no"};
  Run(skill, {{"agent", "b"}, {"question", "hi"}});
  xmpp_.answer = absl::UnavailableError("not connected");
  Run(skill, {{"agent", "a"}, {"question", "hi"}});
  context_.hops = 3;  // refused before sending: not a delegation
  Run(skill, {{"agent", "a"}, {"question", "hi"}});
  const std::vector<ledger::AuditEntry> audited = Audited();
  ASSERT_EQ(audited.size(), 3u);
  for (const ledger::AuditEntry& entry : audited) {
    EXPECT_EQ(entry.actor, "direct:alice@localhost");
    EXPECT_EQ(entry.action, "delegate");
  }
  EXPECT_EQ(audited[0].target, "a/web_search");
  EXPECT_EQ(audited[0].outcome, "OK");
  EXPECT_THAT(audited[0].detail, HasSubstr("7 tokens (m)"));
  EXPECT_EQ(audited[1].target, "b/ask");
  EXPECT_EQ(audited[1].outcome, "FAILED");
  EXPECT_EQ(audited[2].target, "a/ask");
  EXPECT_EQ(audited[2].outcome, "UNAVAILABLE");
}

// --- AgentCalls: delegation over XMPP ------------------------------------------------------------

class AgentCallsTest : public ::testing::Test {
 protected:
  AgentCallsTest()
      : calls_([this](const xmpp::OutboundAction& action) { actions_.push_back(action); },
               [] { return J("herald@localhost/herald"); }) {}

  std::vector<xmpp::CallAgent> Sent() const {
    std::vector<xmpp::CallAgent> out;
    for (const xmpp::OutboundAction& action : actions_) {
      if (const auto* call = std::get_if<xmpp::CallAgent>(&action)) out.push_back(*call);
    }
    return out;
  }

  // Calls `target` and keeps what `done` got in `results_`.
  void Call(const DelegateTarget& target, DelegateRequest request) {
    calls_.Call(target, std::move(request), [this](absl::StatusOr<DelegateResult> result) {
      results_.push_back(std::move(result));
    });
  }

  std::vector<xmpp::OutboundAction> actions_;
  std::vector<absl::StatusOr<DelegateResult>> results_;
  AgentCalls calls_;
};

TEST_F(AgentCallsTest, ACallIsACallAgentOfTheRightKind) {
  Call(kResearch, {.skill = "current_time",
                   .arguments_json = "{\"timezone\":\"UTC\"}",
                   .hops = 2,
                   .timeout = absl::Seconds(19)});
  Call(kResearch, {.question = "What changed?",
                   .conversation = "delegated-direct_alice",
                   .hops = 1,
                   .timeout = absl::Seconds(60)});
  const std::vector<xmpp::CallAgent> sent = Sent();
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[0].kind, xmpp::AgentRequest::Kind::kExecute);
  EXPECT_EQ(sent[0].to, J("research.example.org"));
  EXPECT_EQ(sent[0].from, J("herald@localhost/herald"));
  EXPECT_EQ(sent[0].skill, "current_time");
  EXPECT_EQ(sent[0].arguments_json, "{\"timezone\":\"UTC\"}");
  EXPECT_EQ(sent[0].hops, 2);
  EXPECT_EQ(sent[0].timeout, absl::Seconds(19));
  EXPECT_EQ(sent[1].kind, xmpp::AgentRequest::Kind::kAsk);
  EXPECT_EQ(sent[1].text, "What changed?");
  EXPECT_EQ(sent[1].thread, "delegated-direct_alice");
  EXPECT_EQ(sent[1].hops, 1);
  EXPECT_EQ(sent[1].timeout, absl::Seconds(60));
  EXPECT_NE(sent[0].call_id, "");
  EXPECT_NE(sent[0].call_id, sent[1].call_id);
  EXPECT_EQ(calls_.pending(), 2u);
  EXPECT_TRUE(results_.empty());
}

TEST_F(AgentCallsTest, ATargetWithoutAValidJidIsRefusedAtOnce) {
  Call({.name = "broken", .jid = "@@bad"}, {.question = "hi"});
  ASSERT_EQ(results_.size(), 1u);
  EXPECT_EQ(results_[0].status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(results_[0].status().message()), HasSubstr("broken"));
  EXPECT_TRUE(Sent().empty());
  EXPECT_EQ(calls_.pending(), 0u);
}

TEST_F(AgentCallsTest, AnAnswerSettlesItsCallOnce) {
  Call(kResearch, {.question = "What changed?"});
  Call(kResearch, {.question = "And yesterday?"});
  const std::vector<xmpp::CallAgent> sent = Sent();
  ASSERT_EQ(sent.size(), 2u);
  const xmpp::AgentAnswer answer{.call_id = sent[1].call_id,
                                 .from = J("research.example.org"),
                                 .ok = true,
                                 .output = "Nothing.",
                                 .model = "fake:model",
                                 .input_tokens = 10,
                                 .output_tokens = 5};
  calls_.OnAnswer(answer);
  calls_.OnAnswer(answer);                                       // again: ignored
  calls_.OnAnswer({.call_id = "d999", .condition = "timeout"});  // no call of ours
  ASSERT_EQ(results_.size(), 1u);
  ASSERT_TRUE(results_[0].ok()) << results_[0].status();
  EXPECT_TRUE(results_[0]->ok);
  EXPECT_EQ(results_[0]->output, "Nothing.");
  EXPECT_EQ(results_[0]->model, "fake:model");
  EXPECT_EQ(results_[0]->input_tokens, 10);
  EXPECT_EQ(results_[0]->output_tokens, 5);
  EXPECT_EQ(calls_.pending(), 1u) << "the first still waits";

  calls_.OnAnswer({.call_id = sent[0].call_id,
                   .from = J("research.example.org"),
                   .ok = false,
                   .failure = "the model is down"});
  ASSERT_EQ(results_.size(), 2u);
  ASSERT_TRUE(results_[1].ok()) << "the call worked; the run did not";
  EXPECT_FALSE(results_[1]->ok);
  EXPECT_EQ(results_[1]->failure, "the model is down");
  EXPECT_EQ(calls_.pending(), 0u);
}

TEST_F(AgentCallsTest, ConditionsBecomeStatuses) {
  const std::vector<std::pair<std::string, absl::StatusCode>> conditions = {
      {"timeout", absl::StatusCode::kDeadlineExceeded},
      {"disconnected", absl::StatusCode::kUnavailable},
      {"forbidden", absl::StatusCode::kPermissionDenied},
      {"not-authorized", absl::StatusCode::kPermissionDenied},
      {"item-not-found", absl::StatusCode::kNotFound},
      {"resource-constraint", absl::StatusCode::kResourceExhausted},
      {"policy-violation", absl::StatusCode::kFailedPrecondition},
      {"bad-request", absl::StatusCode::kInvalidArgument},
      {"not-allowed", absl::StatusCode::kInvalidArgument},
      {"service-unavailable", absl::StatusCode::kUnavailable},
      {"remote-server-not-found", absl::StatusCode::kUnavailable},
  };
  for (const auto& [condition, code] : conditions) {
    results_.clear();
    Call(kResearch, {.skill = "s"});
    calls_.OnAnswer({.call_id = Sent().back().call_id,
                     .from = J("research.example.org"),
                     .condition = condition,
                     .error_text = "because"});
    ASSERT_EQ(results_.size(), 1u) << condition;
    EXPECT_EQ(results_[0].status().code(), code) << condition;
  }
  EXPECT_EQ(calls_.pending(), 0u);

  // What the other agent said goes along.
  results_.clear();
  Call(kResearch, {.skill = "s"});
  calls_.OnAnswer({.call_id = Sent().back().call_id,
                   .from = J("research.example.org"),
                   .condition = "policy-violation",
                   .error_text = "hop limit 3 reached"});
  ASSERT_EQ(results_.size(), 1u);
  EXPECT_THAT(std::string(results_[0].status().message()), HasSubstr("research.example.org"));
  EXPECT_THAT(std::string(results_[0].status().message()), HasSubstr("hop limit 3 reached"));
}

TEST_F(AgentCallsTest, TheDelegateSkillOverXmppEndToEnd) {
  DelegateSkill skill({kResearch}, 3, &calls_, nullptr, nullptr, [] { return absl::Now(); });
  std::optional<absl::StatusOr<std::string>> outcome;
  skill.Execute(
      {{"agent", "a"}, {"question", "What changed?"}},
      {.conversation_id = "direct:alice@localhost",
       .conversation = {.kind = base::ConversationRef::Kind::kDirect, .address = "alice@localhost"},
       .hops = 1},
      [&](absl::StatusOr<std::string> result) { outcome = std::move(result); });
  ASSERT_EQ(Sent().size(), 1u);
  const xmpp::CallAgent call = Sent()[0];
  EXPECT_EQ(call.hops, 2);
  EXPECT_EQ(call.thread, ApiConversationName("delegated-", "direct:alice@localhost"));
  EXPECT_FALSE(outcome.has_value());
  calls_.OnAnswer({.call_id = call.call_id,
                   .from = J("research.example.org"),
                   .ok = true,
                   .output = "Two commits.",
                   .input_tokens = 10,
                   .output_tokens = 5});
  ASSERT_TRUE(outcome.has_value());
  ASSERT_TRUE(outcome->ok()) << outcome->status();
  EXPECT_THAT(**outcome, StartsWith("Two commits.\n\n(a answered in "));
  EXPECT_THAT(**outcome, HasSubstr("; 15 tokens)"));
}

}  // namespace
}  // namespace herald::agent
