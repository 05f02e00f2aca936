// AgentProtocol, the answering side of urn:herald:agent:0 (docs/agent-protocol.md), through the
// agent runtime: only configured peers are served, within their scopes, rate, share of runs and
// the hop limit; skills are listed and run, questions are turns of the peer's API conversation,
// runs send progress notes and end at their deadline; every request of a peer is one audit
// entry. And the API conversation names a peer's questions go to.
#include "component/agent/agent_protocol.h"

#include <algorithm>
#include <fstream>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "component/base/conversation_ref.h"
#include "component/ledger/audit_format.h"
#include "component/ledger/audit_log.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "skills/approvals/pending_actions.h"
#include "tests/component/agent/agent_fixture.h"

namespace herald::agent {
namespace {

using testing::AgentFixture;
using ::testing::HasSubstr;
using testing::J;
using Kind = xmpp::AgentRequest::Kind;

// A skill that answers only when the test says so (it keeps its `done`).
class HeldSkill : public skills::Skill {
 public:
  explicit HeldSkill(std::string name, std::vector<skills::CredentialRequirement> credentials = {})
      : spec_{.name = std::move(name),
              .description = "Answers when told.",
              .parameters = {{"type", "object"}}},
        credentials_(std::move(credentials)) {}
  const providers::ToolSpec& spec() const override { return spec_; }
  std::vector<skills::CredentialRequirement> credentials() const override { return credentials_; }
  void Execute(const nlohmann::json&, const skills::SkillContext& context, Done done) override {
    last_context = context;
    held = std::move(done);
  }

  Done held;
  skills::SkillContext last_context;

 private:
  providers::ToolSpec spec_;
  std::vector<skills::CredentialRequirement> credentials_;
};

class AgentProtocolTest : public AgentFixture {
 protected:
  void SetUp() override {
    AgentFixture::SetUp();
    auto held = std::make_unique<HeldSkill>("held");
    held_ = held.get();
    ASSERT_TRUE(registry_.Register(std::move(held)).ok());
    ASSERT_TRUE(registry_.Register(std::make_unique<HeldSkill>("whisper")).ok());
    ASSERT_TRUE(registry_
                    .Register(std::make_unique<HeldSkill>(
                        "keyring", std::vector<skills::CredentialRequirement>{{.name = "KEY"}}))
                    .ok());
    ASSERT_TRUE(registry_.SetEnabled({"shout", "held", "keyring"}).ok());
    audit_ = ledger::AuditLog::Open(dir_ + "/audit.log").value();
    services_->audit = audit_.get();
    protocol_options_ = {
        .enabled = true,
        .peers = {{.jid = "alice@localhost", .scopes = {"read", "execute", "operate"}},
                  {.jid = "reader.example.org", .scopes = {"read"}}}};
  }

  void TearDown() override {
    protocol_.reset();
    services_->pending_actions = nullptr;
    pending_.reset();
    services_->audit = nullptr;
    audit_.reset();
    AgentFixture::TearDown();
  }

  AgentProtocol& Protocol() {
    if (protocol_ == nullptr) {
      protocol_ =
          std::make_unique<AgentProtocol>(*services_, *agent_, protocol_options_, progress_every_);
    }
    return *protocol_;
  }

  xmpp::AgentRequest Request(Kind kind, std::string from = "alice@localhost/laptop") {
    return xmpp::AgentRequest{.from = J(from),
                              .to = J("research.example.org"),
                              .iq_id = absl::StrCat("r", ++next_id_),
                              .kind = kind};
  }
  xmpp::AgentRequest Execute(std::string skill, std::string arguments_json) {
    xmpp::AgentRequest request = Request(Kind::kExecute);
    request.skill = std::move(skill);
    request.arguments_json = std::move(arguments_json);
    return request;
  }
  xmpp::AgentRequest Ask(std::string text, std::string thread = "") {
    xmpp::AgentRequest request = Request(Kind::kAsk);
    request.text = std::move(text);
    request.thread = std::move(thread);
    return request;
  }

  std::vector<xmpp::AnswerAgent> Answers() const { return ActionsOf<xmpp::AnswerAgent>(); }
  xmpp::AnswerAgent Last() const { return Answers().back(); }
  bool WaitForAnswers(size_t count) {
    return RunUntil([&] { return Answers().size() >= count; });
  }

  // Everything appended to the audit log so far.
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

  bool ConversationExists(const std::string& name) {
    return agent_->FindConversation({.kind = base::ConversationRef::Kind::kApi, .address = name}) !=
           nullptr;
  }

  AgentProtocolOptions protocol_options_;
  absl::Duration progress_every_ = AgentProtocol::kProgressEvery;
  std::unique_ptr<ledger::AuditLog> audit_;
  std::unique_ptr<skills::PendingActions> pending_;
  std::unique_ptr<AgentProtocol> protocol_;
  HeldSkill* held_ = nullptr;
  int next_id_ = 0;
};

TEST_F(AgentProtocolTest, WhenDisabledEveryRequestIsServiceUnavailable) {
  protocol_options_.enabled = false;
  Protocol().Handle(Request(Kind::kSkills));
  ASSERT_EQ(Answers().size(), 1u);
  EXPECT_EQ(Last().error, "service-unavailable");
  EXPECT_EQ(Last().iq_id, "r1");
  EXPECT_TRUE(Last().skills.empty());
}

TEST_F(AgentProtocolTest, AStrangerIsForbiddenAndNotAudited) {
  Protocol().Handle(Request(Kind::kSkills, "mallory@evil.example/x"));
  // Even a malformed request of a stranger says only that it is not a peer.
  xmpp::AgentRequest malformed = Request(Kind::kExecute, "mallory@evil.example/x");
  malformed.malformed = "hops: a whole number";
  Protocol().Handle(malformed);
  ASSERT_EQ(Answers().size(), 2u);
  for (const xmpp::AnswerAgent& answer : Answers()) {
    EXPECT_EQ(answer.error, "forbidden");
    EXPECT_THAT(answer.error_text, HasSubstr("not a peer"));
    EXPECT_EQ(answer.to, J("mallory@evil.example/x"));
  }
  EXPECT_TRUE(Audited().empty());
}

TEST_F(AgentProtocolTest, APeerWithoutTheScopeIsForbiddenWithTheScopeNamed) {
  xmpp::AgentRequest execute = Request(Kind::kExecute, "reader.example.org");
  execute.skill = "shout";
  Protocol().Handle(execute);
  xmpp::AgentRequest ask = Request(Kind::kAsk, "reader.example.org");
  ask.text = "hi";
  Protocol().Handle(ask);
  Protocol().Handle(Request(Kind::kSkills, "reader.example.org"));
  ASSERT_EQ(Answers().size(), 3u);
  EXPECT_EQ(Answers()[0].error, "forbidden");
  EXPECT_THAT(Answers()[0].error_text, HasSubstr("lacks the 'execute' scope"));
  EXPECT_EQ(Answers()[1].error, "forbidden");
  EXPECT_THAT(Answers()[1].error_text, HasSubstr("lacks the 'operate' scope"));
  EXPECT_EQ(Answers()[2].error, "") << "read is its scope";
  EXPECT_TRUE(model_->requests.empty());
  const std::vector<ledger::AuditEntry> audited = Audited();
  ASSERT_EQ(audited.size(), 3u);
  EXPECT_EQ(audited[0].actor, "xmpp:reader.example.org");
  EXPECT_EQ(audited[0].action, "agent_protocol/execute");
  EXPECT_EQ(audited[0].target, "shout");
  EXPECT_EQ(audited[0].outcome, "PERMISSION_DENIED");
  EXPECT_EQ(audited[1].action, "agent_protocol/ask");
  EXPECT_EQ(audited[1].outcome, "PERMISSION_DENIED");
  EXPECT_EQ(audited[2].action, "agent_protocol/skills");
  EXPECT_EQ(audited[2].outcome, "OK");
}

TEST_F(AgentProtocolTest, AMalformedRequestOfAPeerIsABadRequestWithItsReason) {
  xmpp::AgentRequest request = Execute("shout", "{\"text\":\"hi\"}");
  request.malformed = "timeout: a whole number of seconds up to 86400";
  Protocol().Handle(request);
  ASSERT_EQ(Answers().size(), 1u);
  EXPECT_EQ(Last().error, "bad-request");
  EXPECT_EQ(Last().error_text, "timeout: a whole number of seconds up to 86400");
  const std::vector<ledger::AuditEntry> audited = Audited();
  ASSERT_EQ(audited.size(), 1u);
  EXPECT_EQ(audited[0].outcome, "INVALID_ARGUMENT");
}

TEST_F(AgentProtocolTest, OverItsRateAPeerIsToldToWait) {
  protocol_options_.requests_per_minute = 2;
  for (int i = 0; i < 3; ++i) Protocol().Handle(Request(Kind::kSkills));
  ASSERT_EQ(Answers().size(), 3u);
  EXPECT_EQ(Answers()[0].error, "");
  EXPECT_EQ(Answers()[1].error, "");
  EXPECT_EQ(Answers()[2].error, "resource-constraint");
  EXPECT_THAT(Answers()[2].error_text, HasSubstr("more than 2 requests a minute"));
  // Another peer has its own budget; a minute later, so has this one again.
  Protocol().Handle(Request(Kind::kSkills, "reader.example.org"));
  EXPECT_EQ(Last().error, "");
  now_ += absl::Seconds(61);
  Protocol().Handle(Request(Kind::kSkills));
  EXPECT_EQ(Last().error, "");
  const std::vector<ledger::AuditEntry> audited = Audited();
  ASSERT_EQ(audited.size(), 5u);
  EXPECT_EQ(audited[2].outcome, "RESOURCE_EXHAUSTED");
}

TEST_F(AgentProtocolTest, ARequestPastTheHopLimitIsAPolicyViolation) {
  protocol_options_.max_hops = 3;
  xmpp::AgentRequest looping = Execute("shout", "{\"text\":\"hi\"}");
  looping.hops = 4;
  Protocol().Handle(looping);
  ASSERT_EQ(Answers().size(), 1u);
  EXPECT_EQ(Last().error, "policy-violation");
  EXPECT_THAT(Last().error_text, HasSubstr("hop limit 3 reached"));
  xmpp::AgentRequest last_hop = Execute("shout", "{\"text\":\"hi\"}");
  last_hop.hops = 3;
  Protocol().Handle(last_hop);
  ASSERT_EQ(Answers().size(), 2u);
  EXPECT_EQ(Last().error, "");
  EXPECT_EQ(Last().output, "HI");
  EXPECT_EQ(Audited()[0].outcome, "FAILED_PRECONDITION");
}

TEST_F(AgentProtocolTest, SkillsListsTheEnabledSkillsWithTheirSchemas) {
  Protocol().Handle(Request(Kind::kSkills));
  ASSERT_EQ(Answers().size(), 1u);
  const xmpp::AnswerAgent answer = Last();
  EXPECT_EQ(answer.error, "");
  EXPECT_EQ(answer.kind, Kind::kSkills);
  std::vector<std::string> names;
  for (const xmpp::AnswerAgent::Skill& skill : answer.skills) names.push_back(skill.name);
  EXPECT_EQ(names, (std::vector<std::string>{"shout", "held", "keyring"})) << "whisper is off";
  const xmpp::AnswerAgent::Skill& shout = answer.skills[0];
  EXPECT_EQ(shout.source, "builtin");
  EXPECT_EQ(shout.description, "Upper-cases a text.");
  EXPECT_EQ(nlohmann::json::parse(shout.parameters_json),
            registry_.Check("shout", {{"text", "x"}}).value()->spec().parameters);
  const std::vector<ledger::AuditEntry> audited = Audited();
  ASSERT_EQ(audited.size(), 1u);
  EXPECT_EQ(audited[0].actor, "xmpp:alice@localhost");
  EXPECT_EQ(audited[0].action, "agent_protocol/skills");
  EXPECT_EQ(audited[0].outcome, "OK");
  EXPECT_EQ(audited[0].detail, "3 skills");
}

TEST_F(AgentProtocolTest, ExecuteRunsTheSkillAndAnswersTheIq) {
  xmpp::AgentRequest request = Execute("shout", "{\"text\":\"hello\"}");
  Protocol().Handle(request);
  ASSERT_TRUE(WaitForAnswers(1));
  const xmpp::AnswerAgent answer = Last();
  EXPECT_EQ(answer.error, "");
  EXPECT_EQ(answer.kind, Kind::kExecute);
  EXPECT_EQ(answer.iq_id, request.iq_id);
  EXPECT_EQ(answer.to, J("alice@localhost/laptop"));
  EXPECT_EQ(answer.from, J("research.example.org"));
  EXPECT_TRUE(answer.ok);
  EXPECT_EQ(answer.output, "HELLO");
  EXPECT_EQ(Protocol().running("alice@localhost"), 0);
  const std::vector<ledger::AuditEntry> audited = Audited();
  ASSERT_EQ(audited.size(), 1u);
  EXPECT_EQ(audited[0].action, "agent_protocol/execute");
  EXPECT_EQ(audited[0].target, "shout");
  EXPECT_EQ(audited[0].outcome, "OK");
}

TEST_F(AgentProtocolTest, ASkillRunsInThePeersApiConversationWithItsHopsAndDeadline) {
  xmpp::AgentRequest request = Execute("held", "");
  request.hops = 2;
  request.timeout = absl::Seconds(30);
  Protocol().Handle(request);
  ASSERT_TRUE(held_->held);
  EXPECT_EQ(held_->last_context.conversation.kind, base::ConversationRef::Kind::kApi);
  EXPECT_EQ(held_->last_context.conversation.address, PeerConversationName("alice@localhost", ""));
  EXPECT_EQ(held_->last_context.hops, 2);
  EXPECT_EQ(held_->last_context.deadline, now_ + absl::Seconds(30));
  EXPECT_EQ(Protocol().running("alice@localhost"), 1);
  held_->held(absl::InternalError("the disk is full"));
  ASSERT_EQ(Answers().size(), 1u);
  EXPECT_EQ(Last().error, "") << "a failed skill is a result, not an error";
  EXPECT_FALSE(Last().ok);
  EXPECT_EQ(Last().failure, "the disk is full");
  EXPECT_EQ(Protocol().running("alice@localhost"), 0);
  EXPECT_EQ(Audited()[0].outcome, "OK");
}

TEST_F(AgentProtocolTest, ExecuteRefusesWhatCannotRun) {
  Protocol().Handle(Execute("nonesuch", ""));
  EXPECT_EQ(Last().error, "item-not-found");
  EXPECT_THAT(Last().error_text, HasSubstr("nonesuch"));
  Protocol().Handle(Execute("whisper", ""));
  EXPECT_EQ(Last().error, "not-allowed");
  EXPECT_THAT(Last().error_text, HasSubstr("not enabled"));
  Protocol().Handle(Execute("keyring", ""));
  EXPECT_EQ(Last().error, "not-allowed");
  EXPECT_THAT(Last().error_text, HasSubstr("credentials"));
  for (const char* arguments : {"[1, 2]", "\"text\"", "{not json", "{\"text\": 5}", "{}"}) {
    Protocol().Handle(Execute("shout", arguments));
    EXPECT_EQ(Last().error, "bad-request") << arguments;
    EXPECT_THAT(Last().error_text, HasSubstr("arguments")) << arguments;
  }
  EXPECT_EQ(Answers().size(), 8u);
  EXPECT_EQ(Protocol().running("alice@localhost"), 0);
  std::vector<std::string> outcomes;
  for (const ledger::AuditEntry& entry : Audited()) outcomes.push_back(entry.outcome);
  EXPECT_EQ(outcomes,
            (std::vector<std::string>{"NOT_FOUND", "FAILED_PRECONDITION", "FAILED_PRECONDITION",
                                      "INVALID_ARGUMENT", "INVALID_ARGUMENT", "INVALID_ARGUMENT",
                                      "INVALID_ARGUMENT", "INVALID_ARGUMENT"}));
}

TEST_F(AgentProtocolTest, AnAskIsATurnOfThePeersApiConversation) {
  model_->script.push_back({.text = "Two commits landed."});
  xmpp::AgentRequest request = Ask("What changed in the build today?");
  Protocol().Handle(request);
  ASSERT_TRUE(WaitForAnswers(1));
  const xmpp::AnswerAgent answer = Last();
  EXPECT_EQ(answer.error, "");
  EXPECT_EQ(answer.kind, Kind::kAsk);
  EXPECT_EQ(answer.iq_id, request.iq_id);
  EXPECT_TRUE(answer.ok);
  EXPECT_EQ(answer.output, "Two commits landed.");
  EXPECT_EQ(answer.model, "fake:model") << "as the router names it: provider:model";
  EXPECT_EQ(answer.input_tokens, 10);
  EXPECT_EQ(answer.output_tokens, 5);
  ASSERT_EQ(model_->requests.size(), 1u);
  EXPECT_EQ(model_->requests[0].messages.back().text, "What changed in the build today?");
  EXPECT_TRUE(ConversationExists(PeerConversationName("alice@localhost", "")));
  EXPECT_TRUE(Messages().empty()) << "the answer is the IQ result, not a chat message";
  ASSERT_TRUE(WaitForIdle());
  EXPECT_EQ(Protocol().running("alice@localhost"), 0);
  const std::vector<ledger::AuditEntry> audited = Audited();
  ASSERT_EQ(audited.size(), 1u);
  EXPECT_EQ(audited[0].action, "agent_protocol/ask");
  EXPECT_EQ(audited[0].outcome, "OK");
  EXPECT_THAT(audited[0].detail, HasSubstr("15 tokens"));
}

TEST_F(AgentProtocolTest, AsksWithDifferentThreadsGoToDifferentConversations) {
  Protocol().Handle(Ask("first", "build"));
  Protocol().Handle(Ask("second", "release"));
  ASSERT_TRUE(WaitForAnswers(2));
  for (const xmpp::AnswerAgent& answer : Answers()) EXPECT_TRUE(answer.ok) << answer.failure;
  const std::string build = PeerConversationName("alice@localhost", "build");
  const std::string release = PeerConversationName("alice@localhost", "release");
  EXPECT_NE(build, release);
  EXPECT_TRUE(ConversationExists(build));
  EXPECT_TRUE(ConversationExists(release));
  EXPECT_FALSE(ConversationExists(PeerConversationName("alice@localhost", "")));
  ASSERT_TRUE(WaitForIdle());
}

TEST_F(AgentProtocolTest, MoreRunsThanMaxConcurrentAreToldToWait) {
  protocol_options_.max_concurrent = 1;
  model_->script.push_back({.text = "slow answer", .delay = absl::Milliseconds(100)});
  Protocol().Handle(Ask("first", "a"));
  EXPECT_EQ(Protocol().running("alice@localhost"), 1);
  Protocol().Handle(Ask("second", "b"));
  Protocol().Handle(Execute("shout", "{\"text\":\"x\"}"));
  ASSERT_EQ(Answers().size(), 2u);
  EXPECT_EQ(Answers()[0].error, "resource-constraint");
  EXPECT_THAT(Answers()[0].error_text, HasSubstr("1 of your runs"));
  EXPECT_EQ(Answers()[1].error, "resource-constraint");
  // Another peer's runs are not counted against this one.
  EXPECT_EQ(Protocol().running("reader.example.org"), 0);
  ASSERT_TRUE(WaitForAnswers(3));
  EXPECT_EQ(Last().output, "slow answer");
  EXPECT_EQ(Protocol().running("alice@localhost"), 0);
  Protocol().Handle(Execute("shout", "{\"text\":\"x\"}"));
  EXPECT_EQ(Last().output, "X") << "a slot is free again";
  ASSERT_TRUE(WaitForIdle());
}

TEST_F(AgentProtocolTest, AnAskPastItsTimeoutAnswersTimedOutAndCancelsTheTurn) {
  progress_every_ = absl::Milliseconds(10);
  model_->script.push_back({.text = "too late", .delay = absl::Milliseconds(300)});
  xmpp::AgentRequest request = Ask("a long question");
  request.timeout = absl::Seconds(1);
  Protocol().Handle(request);
  now_ += absl::Seconds(2);  // the next check of the run's timer finds it past its deadline
  ASSERT_TRUE(WaitForAnswers(1));
  const xmpp::AnswerAgent answer = Last();
  EXPECT_EQ(answer.error, "");
  EXPECT_EQ(answer.iq_id, request.iq_id);
  EXPECT_FALSE(answer.ok);
  EXPECT_THAT(answer.failure, HasSubstr("timed out"));
  EXPECT_EQ(Protocol().running("alice@localhost"), 0) << "a cancelled turn frees its slot";
  const std::string conversation =
      absl::StrCat("api:", PeerConversationName("alice@localhost", ""));
  bool cancelled = false;
  for (const events::EventPtr& event : events_) {
    if (event->type == events::EventType::kRunFailed && event->conversation == conversation) {
      cancelled = true;
    }
  }
  EXPECT_TRUE(cancelled) << "the turn was cancelled";
  // The model's late answer answers nothing: the IQ was answered once.
  ASSERT_TRUE(WaitForIdle());
  EXPECT_EQ(Answers().size(), 1u);
  const std::vector<ledger::AuditEntry> audited = Audited();
  ASSERT_EQ(audited.size(), 1u);
  EXPECT_EQ(audited[0].detail, "timed out");
}

TEST_F(AgentProtocolTest, ASkillPastItsTimeoutIsAnsweredButHoldsItsSlotUntilItEnds) {
  progress_every_ = absl::Milliseconds(10);
  protocol_options_.max_timeout_seconds = 30;
  xmpp::AgentRequest request = Execute("held", "");
  request.timeout = absl::Seconds(600);  // cut to 30 s
  Protocol().Handle(request);
  EXPECT_EQ(held_->last_context.deadline, now_ + absl::Seconds(30));
  now_ += absl::Seconds(31);
  ASSERT_TRUE(WaitForAnswers(1));
  EXPECT_FALSE(Last().ok);
  EXPECT_EQ(Last().failure, "timed out after 31s");
  EXPECT_EQ(Last().duration, absl::Seconds(31));
  EXPECT_EQ(Protocol().running("alice@localhost"), 1);
  held_->held(std::string("finally"));
  EXPECT_EQ(Answers().size(), 1u) << "answered once";
  EXPECT_EQ(Protocol().running("alice@localhost"), 0);
}

TEST_F(AgentProtocolTest, ARunSendsProgressNotesWhileItLasts) {
  progress_every_ = absl::Milliseconds(10);
  model_->script.push_back({.calls = {{.id = "t1", .name = "shout", .arguments = {{"text", "x"}}}},
                            .delay = absl::Milliseconds(50)});
  model_->script.push_back({.text = "done", .delay = absl::Milliseconds(50)});
  xmpp::AgentRequest request = Ask("shout for me");
  Protocol().Handle(request);
  EXPECT_TRUE(ActionsOf<xmpp::SendAgentProgress>().empty()) << "no note at the start";
  now_ += absl::Seconds(3);
  ASSERT_TRUE(WaitForAnswers(1));
  EXPECT_TRUE(Last().ok);
  EXPECT_EQ(Last().output, "done");
  const std::vector<xmpp::SendAgentProgress> notes = ActionsOf<xmpp::SendAgentProgress>();
  ASSERT_FALSE(notes.empty());
  bool tool_said = false;
  for (const xmpp::SendAgentProgress& note : notes) {
    EXPECT_EQ(note.iq_id, request.iq_id);
    EXPECT_EQ(note.to, J("alice@localhost/laptop"));
    EXPECT_EQ(note.from, J("research.example.org"));
    EXPECT_EQ(note.elapsed, absl::Seconds(3));
    EXPECT_TRUE(note.text == "still running" || note.text == "running tool shout") << note.text;
    if (note.text == "running tool shout") tool_said = true;
  }
  // The first note comes from the timer (10 ms) before the model's first answer (50 ms).
  EXPECT_EQ(notes[0].text, "still running");
  EXPECT_TRUE(tool_said);
  // None after the answer.
  EXPECT_TRUE(std::holds_alternative<xmpp::AnswerAgent>(actions_.back()));
  const size_t before = notes.size();
  WatchFor(absl::Milliseconds(50));  // five progress periods: a note would have come
  EXPECT_EQ(ActionsOf<xmpp::SendAgentProgress>().size(), before);
  ASSERT_TRUE(WaitForIdle());
}

TEST_F(AgentProtocolTest, ConfirmingAnUnknownActionIsItemNotFound) {
  xmpp::AgentRequest request = Request(Kind::kConfirm);
  request.action_id = "7f3c1a90";
  request.approve = true;
  Protocol().Handle(request);  // no pending actions at all
  EXPECT_EQ(Last().error, "item-not-found");
  EXPECT_THAT(Last().error_text, HasSubstr("7f3c1a90"));
  pending_ = std::make_unique<skills::PendingActions>(io_, [this] { return now_; });
  services_->pending_actions = pending_.get();
  Protocol().Handle(request);
  EXPECT_EQ(Last().error, "item-not-found");
  const std::vector<ledger::AuditEntry> audited = Audited();
  ASSERT_EQ(audited.size(), 2u);
  EXPECT_EQ(audited[0].action, "agent_protocol/confirm");
  EXPECT_EQ(audited[0].target, "7f3c1a90");
  EXPECT_EQ(audited[0].outcome, "NOT_FOUND");
}

TEST_F(AgentProtocolTest, ConfirmSettlesAPendingApprovalOfItsOwnAskWithItsReason) {
  pending_ = std::make_unique<skills::PendingActions>(io_, [this] { return now_; });
  services_->pending_actions = pending_.get();
  // The peer's ask runs (its model is slow), and an approval waits in its conversation.
  model_->script.push_back({.text = "done", .delay = absl::Seconds(30)});
  Protocol().Handle(Ask("do it", "t1"));
  ASSERT_TRUE(RunUntil([&] { return Protocol().running("alice@localhost") == 1; }));
  std::vector<skills::ActionResolution> outcomes;
  const std::string id = pending_->Open(
      skills::PendingAction{
          .kind = skills::PendingAction::Kind::kApproval,
          .conversation = absl::StrCat("api:", PeerConversationName("alice@localhost", "t1")),
          .skill = "shout",
          .description = "shout at everyone"},
      absl::Minutes(5),
      [&](skills::ActionResolution resolution) { outcomes.push_back(resolution); });
  xmpp::AgentRequest request = Request(Kind::kConfirm);
  request.action_id = id;
  request.approve = false;
  request.reason = "not on a Friday";
  Protocol().Handle(request);
  ASSERT_TRUE(RunUntil([&] { return !outcomes.empty(); }));
  EXPECT_EQ(Last().error, "");
  EXPECT_EQ(Last().kind, Kind::kConfirm);
  EXPECT_EQ(outcomes[0].outcome, skills::ActionResolution::Outcome::kDenied);
  EXPECT_EQ(outcomes[0].reason, "not on a Friday");
  EXPECT_THAT(outcomes[0].by, HasSubstr("alice@localhost"));
  Protocol().Handle(request);
  EXPECT_EQ(Last().error, "item-not-found") << "settled already";
}

TEST_F(AgentProtocolTest, APeerCannotConfirmWhatWaitsInSomeoneElsesConversation) {
  pending_ = std::make_unique<skills::PendingActions>(io_, [this] { return now_; });
  services_->pending_actions = pending_.get();
  model_->script.push_back({.text = "done", .delay = absl::Seconds(30)});
  Protocol().Handle(Ask("do it", "t1"));
  ASSERT_TRUE(RunUntil([&] { return Protocol().running("alice@localhost") == 1; }));
  std::vector<skills::ActionResolution> outcomes;
  const std::string id =
      pending_->Open(skills::PendingAction{.kind = skills::PendingAction::Kind::kApproval,
                                           .conversation = "direct:bob@localhost",
                                           .skill = "shout",
                                           .description = "shout at everyone"},
                     absl::Minutes(5),
                     [&](skills::ActionResolution resolution) { outcomes.push_back(resolution); });
  xmpp::AgentRequest request = Request(Kind::kConfirm);
  request.action_id = id;
  request.approve = true;
  Protocol().Handle(request);
  EXPECT_EQ(Last().error, "item-not-found");
  EXPECT_THAT(Last().error_text, HasSubstr("of your requests"));
  EXPECT_TRUE(outcomes.empty());
  EXPECT_NE(pending_->Find(id), nullptr) << "still waiting for bob";
}

TEST_F(AgentProtocolTest, ASecondRequestWithARunningIqIdIsRefused) {
  model_->script.push_back({.text = "done", .delay = absl::Seconds(30)});
  const xmpp::AgentRequest first = Ask("first");
  Protocol().Handle(first);
  ASSERT_TRUE(RunUntil([&] { return Protocol().running("alice@localhost") == 1; }));
  xmpp::AgentRequest second = Ask("second");
  second.iq_id = first.iq_id;
  Protocol().Handle(second);
  EXPECT_EQ(Last().error, "bad-request");
  EXPECT_THAT(Last().error_text, HasSubstr("still running"));
}

TEST_F(AgentProtocolTest, EveryPeerRequestIsOneAuditEntry) {
  model_->script.push_back({.text = "yes"});
  Protocol().Handle(Request(Kind::kSkills));
  Protocol().Handle(Execute("shout", "{\"text\":\"a\"}"));
  Protocol().Handle(Execute("nonesuch", ""));
  Protocol().Handle(Ask("ok?"));
  xmpp::AgentRequest confirm = Request(Kind::kConfirm);
  confirm.action_id = "nope";
  Protocol().Handle(confirm);
  Protocol().Handle(Request(Kind::kSkills, "stranger@localhost/x"));
  ASSERT_TRUE(WaitForAnswers(6));
  ASSERT_TRUE(WaitForIdle());
  const std::vector<ledger::AuditEntry> audited = Audited();
  ASSERT_EQ(audited.size(), 5u) << "the stranger's is not one";
  std::vector<std::string> actions;
  std::vector<std::string> outcomes;
  for (const ledger::AuditEntry& entry : audited) {
    EXPECT_EQ(entry.actor, "xmpp:alice@localhost");
    actions.push_back(entry.action);
    outcomes.push_back(entry.outcome);
  }
  EXPECT_THAT(actions,
              ::testing::UnorderedElementsAre("agent_protocol/skills", "agent_protocol/execute",
                                              "agent_protocol/execute", "agent_protocol/ask",
                                              "agent_protocol/confirm"));
  EXPECT_THAT(outcomes,
              ::testing::UnorderedElementsAre("OK", "OK", "NOT_FOUND", "OK", "NOT_FOUND"));
  absl::StatusOr<ledger::AuditVerifyReport> report = audit_->Verify();
  ASSERT_TRUE(report.ok());
  EXPECT_TRUE(report->ok) << report->problem;
}

// --- Names -----------------------------------------------------------------------------------

bool IsHash(std::string_view text) {
  return text.size() == 12 && std::all_of(text.begin(), text.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

TEST(ApiConversationNameTest, APlainNameIsKept) {
  EXPECT_EQ(ApiConversationName("peer-", "agent.localhost"), "peer-agent.localhost");
  const std::string sixty_four = "peer-" + std::string(59, 'a');
  EXPECT_EQ(ApiConversationName("peer-", std::string(59, 'a')), sixty_four);
}

TEST(ApiConversationNameTest, OtherCharactersAreReplacedAndAHashAdded) {
  const std::string name = ApiConversationName("peer-", "alice@localhost");
  ASSERT_EQ(name.size(), std::string("peer-alice_localhost-").size() + 12);
  EXPECT_TRUE(name.starts_with("peer-alice_localhost-")) << name;
  EXPECT_TRUE(IsHash(name.substr(name.size() - 12))) << name;
  EXPECT_TRUE(base::IsApiConversationName(name));
  EXPECT_EQ(name, ApiConversationName("peer-", "alice@localhost")) << "stable";
}

TEST(ApiConversationNameTest, ALongNameIsCutTo64WithAHash) {
  const std::string name = ApiConversationName("peer-", std::string(60, 'b'));
  EXPECT_EQ(name.size(), 64u);
  EXPECT_TRUE(name.starts_with("peer-bbbb")) << name;
  EXPECT_EQ(name[51], '-');
  EXPECT_TRUE(IsHash(name.substr(52))) << name;
  EXPECT_TRUE(base::IsApiConversationName(name));
  // Two long keys alike in their first characters stay apart.
  EXPECT_NE(ApiConversationName("peer-", std::string(100, 'b') + "1"),
            ApiConversationName("peer-", std::string(100, 'b') + "2"));
  const std::string long_jid =
      PeerConversationName(std::string(200, 'c') + "@localhost", std::string(128, 't'));
  EXPECT_LE(long_jid.size(), 64u);
  EXPECT_TRUE(base::IsApiConversationName(long_jid));
}

TEST(ApiConversationNameTest, KeysThatSanitizeAlikeGetDifferentNames) {
  const std::string plus = ApiConversationName("peer-", "a+b@localhost");
  const std::string equals = ApiConversationName("peer-", "a=b@localhost");
  const std::string underscore = ApiConversationName("peer-", "a_b_localhost");
  EXPECT_NE(plus, equals);
  EXPECT_NE(plus, underscore);
  EXPECT_NE(equals, underscore);
  EXPECT_EQ(underscore, "peer-a_b_localhost");
}

TEST(PeerConversationNameTest, AThreadGetsAConversationOfItsOwn) {
  const std::string plain = PeerConversationName("alice@localhost", "");
  EXPECT_EQ(plain, ApiConversationName("peer-", "alice@localhost"));
  const std::string threaded = PeerConversationName("alice@localhost", "build");
  EXPECT_NE(threaded, plain);
  EXPECT_TRUE(threaded.starts_with("peer-alice_localhost_build-")) << threaded;
  EXPECT_TRUE(base::IsApiConversationName(threaded));
  // A peer's thread never names another peer's conversation.
  EXPECT_NE(PeerConversationName("alice@localhost", "com"),
            PeerConversationName("alice@localhost.com", ""));
  EXPECT_NE(PeerConversationName("agent", "localhost"),
            PeerConversationName("agent.localhost", ""));
  EXPECT_EQ(PeerConversationName("agent.localhost", ""), "peer-agent.localhost");
}

}  // namespace
}  // namespace herald::agent
