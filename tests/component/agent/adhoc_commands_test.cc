// The slash-command table as XEP-0050 ad-hoc commands: who sees which commands (developer and
// admin commands for them only), running one at once, a command with arguments asking for them
// in a form first (typed fields: a number with its default, a choice of waiting runs, a JID),
// sessions that belong to their owner and expire, and refusals for strangers and unknown
// commands.
#include "component/agent/adhoc_commands.h"

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "component/agent/agent.h"
#include "gtest/gtest.h"
#include "skills/approvals/pending_actions.h"
#include "tests/component/agent/agent_fixture.h"

namespace herald::agent {
namespace {

using testing::AgentFixture;
using testing::J;
using Kind = xmpp::CommandRequest::Kind;
using Status = xmpp::AnswerCommand::Status;

class AdhocCommandsTest : public AgentFixture {
 protected:
  void Request(std::string from, Kind kind, std::string node = "", std::string session = "",
               std::vector<std::pair<std::string, std::string>> fields = {}) {
    agent_->Handle(xmpp::CommandRequest{.from = J(from),
                                        .to = J("agent.localhost"),
                                        .iq_id = absl::StrCat("iq", ++iq_),
                                        .kind = kind,
                                        .node = std::move(node),
                                        .session_id = std::move(session),
                                        .fields = std::move(fields)});
  }

  std::vector<xmpp::AnswerCommand> Answers() const {
    std::vector<xmpp::AnswerCommand> out;
    for (const auto& action : actions_) {
      if (const auto* answer = std::get_if<xmpp::AnswerCommand>(&action)) out.push_back(*answer);
    }
    return out;
  }

  // The answer to the last request, once it came.
  xmpp::AnswerCommand Last() {
    const std::string id = absl::StrCat("iq", iq_);
    EXPECT_TRUE(RunUntil([&] {
      for (const auto& answer : Answers()) {
        if (answer.iq_id == id) return true;
      }
      return false;
    }));
    for (const auto& answer : Answers()) {
      if (answer.iq_id == id) return answer;
    }
    return {};
  }

  static std::vector<std::string> Nodes(const xmpp::AnswerCommand& answer) {
    std::vector<std::string> nodes;
    for (const auto& item : answer.items) nodes.push_back(item.node);
    return nodes;
  }

  int iq_ = 0;
};

TEST_F(AdhocCommandsTest, EachUserSeesTheCommandsTheyMayRun) {
  Request("alice@localhost/phone", Kind::kList);
  xmpp::AnswerCommand alice = Last();
  EXPECT_TRUE(alice.error.empty());
  EXPECT_EQ(alice.to, J("alice@localhost/phone"));
  EXPECT_EQ(alice.from, J("agent.localhost"));
  std::vector<std::string> nodes = Nodes(alice);
  ASSERT_FALSE(nodes.empty());
  EXPECT_EQ(nodes.front(), "help");  // table order, no slash
  EXPECT_NE(std::find(nodes.begin(), nodes.end(), "ping"), nodes.end());
  EXPECT_EQ(std::find(nodes.begin(), nodes.end(), "raw"), nodes.end());
  EXPECT_EQ(std::find(nodes.begin(), nodes.end(), "debug"), nodes.end());

  Request("dev@localhost/laptop", Kind::kList);
  nodes = Nodes(Last());
  EXPECT_NE(std::find(nodes.begin(), nodes.end(), "raw"), nodes.end());
}

TEST_F(AdhocCommandsTest, AStrangerIsRefusedWhateverTheyAsk) {
  Request("mallory@evil.example/x", Kind::kList);
  EXPECT_EQ(Last().error, "forbidden");
  Request("mallory@evil.example/x", Kind::kExecute, "ping");
  EXPECT_EQ(Last().error, "forbidden");
  EXPECT_TRUE(Messages().empty());
}

TEST_F(AdhocCommandsTest, ACommandWithoutArgumentsRunsAtOnceAndAnswersInTheResult) {
  Request("alice@localhost/phone", Kind::kExecute, "ping");
  xmpp::AnswerCommand answer = Last();
  EXPECT_TRUE(answer.error.empty());
  EXPECT_EQ(answer.status, Status::kCompleted);
  EXPECT_EQ(answer.node, "ping");
  EXPECT_EQ(answer.note.rfind("pong", 0), 0u) << answer.note;
  EXPECT_TRUE(Messages().empty());  // the answer is the IQ's, not a chat message
  EXPECT_TRUE(model_->requests.empty());
}

TEST_F(AdhocCommandsTest, ACommandWithArgumentsAsksForThemFirst) {
  model_->script.push_back({.text = "noted"});
  Send("alice@localhost/phone", "remember this");
  ASSERT_TRUE(WaitForMessages(1));
  ASSERT_TRUE(WaitForIdle());

  Request("alice@localhost/phone", Kind::kExecute, "history");
  xmpp::AnswerCommand form = Last();
  EXPECT_EQ(form.status, Status::kExecuting);
  EXPECT_FALSE(form.session_id.empty());
  EXPECT_EQ(form.form_title, "/history");
  ASSERT_EQ(form.fields.size(), 1u);
  EXPECT_EQ(form.fields[0].var, "n");
  EXPECT_EQ(form.fields[0].type, "text-single");
  EXPECT_EQ(form.fields[0].value, "10");

  Request("alice@localhost/phone", Kind::kExecute, "history", form.session_id, {{"n", "1"}});
  xmpp::AnswerCommand done = Last();  // /history waits for file work: answered later
  EXPECT_TRUE(done.error.empty()) << done.error;
  EXPECT_EQ(done.status, Status::kCompleted);
  EXPECT_NE(done.note.find("noted"), std::string::npos) << done.note;
  EXPECT_EQ(done.note.find("remember this"), std::string::npos) << "asked for 1, got more";

  // The session is over: submitting again is a bad session.
  Request("alice@localhost/phone", Kind::kExecute, "history", form.session_id, {{"n", "1"}});
  EXPECT_EQ(Last().error, "bad-sessionid");
}

TEST_F(AdhocCommandsTest, ASessionBelongsToWhoStartedItAndCanBeCancelled) {
  Request("alice@localhost/phone", Kind::kExecute, "history");
  const std::string session = Last().session_id;
  Request("bob@localhost/pc", Kind::kExecute, "history", session, {{"n", "5"}});
  EXPECT_EQ(Last().error, "bad-sessionid");

  Request("alice@localhost/phone", Kind::kCancel, "history", session);
  xmpp::AnswerCommand canceled = Last();
  EXPECT_EQ(canceled.status, Status::kCanceled);
  Request("alice@localhost/phone", Kind::kExecute, "history", session, {{"n", "5"}});
  EXPECT_EQ(Last().error, "bad-sessionid");
}

TEST_F(AdhocCommandsTest, UnknownAndDeveloperCommandsAreNotFoundForOthers) {
  Request("alice@localhost/phone", Kind::kExecute, "nonsense");
  EXPECT_EQ(Last().error, "item-not-found");
  Request("alice@localhost/phone", Kind::kExecute, "debug");
  EXPECT_EQ(Last().error, "item-not-found");
  Request("dev@localhost/laptop", Kind::kExecute, "debug");
  EXPECT_TRUE(Last().error.empty());
}

TEST_F(AdhocCommandsTest, RunningCommandsCountsAgainstTheSendersRate) {
  // The fixture allows 100 messages a minute per sender; commands share that budget.
  for (int i = 0; i < 100; ++i) Send("alice@localhost/phone", "/ping");
  ASSERT_TRUE(WaitForMessages(100));
  Request("alice@localhost/phone", Kind::kExecute, "ping");
  EXPECT_EQ(Last().error, "resource-constraint");
  Request("bob@localhost/pc", Kind::kExecute, "ping");  // another sender is not held back
  EXPECT_TRUE(Last().error.empty());
}

class AdhocApprovalsTest : public AdhocCommandsTest {
 protected:
  void SetUp() override {
    AdhocCommandsTest::SetUp();
    options_.admin_jids = {"dev@localhost"};
    MakeAgent();
    pending_ = std::make_unique<skills::PendingActions>(io_, [this] { return now_; });
    services_->pending_actions = pending_.get();
  }
  void TearDown() override {
    services_->pending_actions = nullptr;
    pending_.reset();
    AdhocCommandsTest::TearDown();
  }
  // A run of `owner`'s waiting for approval; its id. The outcome lands in `outcomes_`.
  std::string Waiting(std::string owner, std::string skill) {
    return pending_->Open(skills::PendingAction{.kind = skills::PendingAction::Kind::kApproval,
                                                .conversation = "direct:" + owner,
                                                .chat_owner = owner,
                                                .skill = std::move(skill),
                                                .description = "delete notes.txt"},
                          absl::Minutes(5), [this](skills::ActionResolution resolution) {
                            outcomes_.push_back(resolution);
                          });
  }
  std::vector<std::string> Options(const xmpp::AnswerCommand::Field& field) {
    std::vector<std::string> values;
    for (const auto& option : field.options) values.push_back(option.value);
    return values;
  }

  std::unique_ptr<skills::PendingActions> pending_;
  std::vector<skills::ActionResolution> outcomes_;
};

TEST_F(AdhocApprovalsTest, ApproveOffersTheSendersOwnWaitingRunsToChooseFrom) {
  Request("alice@localhost/phone", Kind::kExecute, "approve");
  EXPECT_EQ(Last().status, Status::kCompleted);  // nothing to choose from
  EXPECT_EQ(Last().note, "Nothing is waiting for your answer.");

  const std::string alices = Waiting("alice@localhost", "delete_file");
  Waiting("bob@localhost", "send_mail");
  Request("alice@localhost/phone", Kind::kExecute, "approve");
  const xmpp::AnswerCommand form = Last();
  ASSERT_EQ(form.status, Status::kExecuting);
  ASSERT_EQ(form.fields.size(), 1u);
  EXPECT_EQ(form.fields[0].type, "list-single");
  EXPECT_TRUE(form.fields[0].required);
  EXPECT_EQ(Options(form.fields[0]), std::vector<std::string>{alices});  // not bob's

  Request("alice@localhost/phone", Kind::kExecute, "approve", form.session_id, {{"id", alices}});
  EXPECT_EQ(Last().note, "OK, running delete_file.");
  ASSERT_TRUE(RunUntil([&] { return !outcomes_.empty(); }));
  EXPECT_EQ(outcomes_[0].outcome, skills::ActionResolution::Outcome::kApproved);
  EXPECT_EQ(outcomes_[0].by, "alice@localhost");
}

TEST_F(AdhocApprovalsTest, PendingIsForAdminsAndAnswersAnyonesRun) {
  const std::string bobs = Waiting("bob@localhost", "send_mail");
  Request("alice@localhost/phone", Kind::kList);
  const std::vector<xmpp::AnswerCommand::Item> items = Last().items;
  EXPECT_TRUE(std::none_of(items.begin(), items.end(),
                           [](const auto& item) { return item.node == "pending"; }));
  Request("alice@localhost/phone", Kind::kExecute, "pending");
  EXPECT_EQ(Last().error, "item-not-found");

  Request("dev@localhost/laptop", Kind::kList);
  const std::vector<xmpp::AnswerCommand::Item> admin_items = Last().items;
  EXPECT_TRUE(std::any_of(admin_items.begin(), admin_items.end(),
                          [](const auto& item) { return item.node == "pending"; }));
  Request("dev@localhost/laptop", Kind::kExecute, "pending");
  const xmpp::AnswerCommand form = Last();
  ASSERT_EQ(form.fields.size(), 3u);
  EXPECT_EQ(Options(form.fields[0]), std::vector<std::string>{bobs});
  EXPECT_EQ(form.fields[1].var, "decision");
  EXPECT_EQ(Options(form.fields[1]), (std::vector<std::string>{"approve", "deny"}));

  Request("dev@localhost/laptop", Kind::kExecute, "pending", form.session_id,
          {{"id", bobs}, {"decision", "deny"}, {"reason", "not today"}});
  EXPECT_EQ(Last().note, "OK, I won't run send_mail.");
  ASSERT_TRUE(RunUntil([&] { return !outcomes_.empty(); }));
  EXPECT_EQ(outcomes_[0].outcome, skills::ActionResolution::Outcome::kDenied);
  EXPECT_EQ(outcomes_[0].by, "chat:dev@localhost");
  EXPECT_EQ(outcomes_[0].reason, "not today");
}

TEST_F(AdhocApprovalsTest, PendingInChatListsEveryWaitingRunForAnAdmin) {
  const std::string bobs = Waiting("bob@localhost", "send_mail");
  Send("dev@localhost/laptop", "/pending");
  ASSERT_TRUE(WaitForMessages(1, "dev@localhost"));
  const std::string listed = Messages("dev@localhost")[0].body;
  EXPECT_NE(listed.find(bobs + "  approve send_mail in direct:bob@localhost (5m left): delete "
                               "notes.txt"),
            std::string::npos)
      << listed;
  Send("alice@localhost/phone", "/pending");
  ASSERT_TRUE(WaitForMessages(1, "alice@localhost"));
  EXPECT_TRUE(Messages("alice@localhost")[0].body.starts_with("Unknown command /pending."));
}

TEST_F(AdhocApprovalsTest, AnAdminChangesTheAllowlistAndRoomsThroughForms) {
  // The control plane's side, as a fake: it records what it was asked and answers later.
  std::vector<RuntimeEdit> asked;
  absl::Status answer = absl::OkStatus();
  services_->edits.rooms = [] {
    return std::vector<RoomStatus>{{.jid = "lobby@conference.localhost",
                                    .nick = "herald",
                                    .activation = "mention",
                                    .joined = true}};
  };
  services_->edits.apply = [&](RuntimeEdit edit, std::function<void(absl::Status)> done) {
    asked.push_back(edit);
    asio::post(io_, [&answer, done = std::move(done)] { done(answer); });
  };

  Request("alice@localhost/phone", Kind::kExecute, "allowlist");
  EXPECT_EQ(Last().error, "item-not-found");
  Request("alice@localhost/phone", Kind::kList);
  for (const std::string& node : Nodes(Last())) {
    EXPECT_TRUE(node != "allowlist" && node != "rooms") << node;
  }

  Request("dev@localhost/laptop", Kind::kExecute, "allowlist");
  xmpp::AnswerCommand form = Last();
  ASSERT_EQ(form.status, Status::kExecuting);
  Request("dev@localhost/laptop", Kind::kExecute, "allowlist", form.session_id,
          {{"action", "add"}, {"entry", "carol@localhost"}});
  EXPECT_TRUE(Last().note.starts_with("Added carol@localhost to the allowlist.")) << Last().note;
  ASSERT_EQ(asked.size(), 1u);
  EXPECT_EQ(asked[0].kind, RuntimeEdit::Kind::kAllow);
  EXPECT_EQ(asked[0].entry, "carol@localhost");

  answer = absl::InvalidArgumentError("'example' is not a domain or \"*\"");
  Request("dev@localhost/laptop", Kind::kExecute, "allowlist");
  form = Last();
  Request("dev@localhost/laptop", Kind::kExecute, "allowlist", form.session_id,
          {{"action", "remove"}, {"entry", "example"}});
  EXPECT_EQ(Last().note, "The allowlist is unchanged: 'example' is not a domain or \"*\"");
  ASSERT_EQ(asked.size(), 2u);
  EXPECT_EQ(asked[1].kind, RuntimeEdit::Kind::kDisallow);

  answer = absl::OkStatus();
  Request("dev@localhost/laptop", Kind::kExecute, "rooms");
  form = Last();
  Request("dev@localhost/laptop", Kind::kExecute, "rooms", form.session_id,
          {{"action", "join"}, {"room", "tech@conference.localhost"}, {"activation", "all"}});
  EXPECT_EQ(Last().note,
            "Joining tech@conference.localhost; it answers everything there. /rooms shows when it "
            "is in.");
  ASSERT_EQ(asked.size(), 3u);
  EXPECT_EQ(asked[2].kind, RuntimeEdit::Kind::kJoinRoom);
  EXPECT_EQ(asked[2].activation, "all");
  Request("dev@localhost/laptop", Kind::kExecute, "rooms");
  form = Last();
  Request("dev@localhost/laptop", Kind::kExecute, "rooms", form.session_id, {{"action", "show"}});
  EXPECT_EQ(Last().note,
            "Rooms:\n  lobby@conference.localhost: joined as herald, answers mentions\n"
            "Change them with /rooms join <room> [mention|all] or /rooms leave <room>.");

  // Bad command lines never reach the control plane.
  Send("dev@localhost/laptop", "/rooms join");
  Send("dev@localhost/laptop", "/allowlist frob bob@localhost");
  ASSERT_TRUE(WaitForMessages(2, "dev@localhost"));
  EXPECT_EQ(Messages("dev@localhost")[0].body,
            "Usage: /rooms [join <room> [mention|all] | leave <room>]");
  EXPECT_EQ(Messages("dev@localhost")[1].body, "Usage: /allowlist [add|remove <jid or domain>]");
  EXPECT_EQ(asked.size(), 3u);

  // Without a control plane (unwired), the commands say so.
  services_->edits = {};
  Send("dev@localhost/laptop", "/allowlist add carol@localhost");
  ASSERT_TRUE(WaitForMessages(3, "dev@localhost"));
  EXPECT_EQ(Messages("dev@localhost")[2].body, "The allowlist cannot be changed from chat here.");
}

TEST(CommandFormTest, EachArgumentIsAFieldAndTheFormMakesTheCommandLine) {
  const FormAudience user{.sender = "alice@localhost"};
  const FormAudience admin{.sender = "root@localhost", .admin = true};
  EXPECT_TRUE(CommandForm(*FindCommand("ping"), user).empty());
  EXPECT_TRUE(CommandForm(*FindCommand("usage"), user).empty());  // runs at once, for oneself
  ASSERT_EQ(CommandForm(*FindCommand("usage"), admin).size(), 1u);
  EXPECT_EQ(CommandForm(*FindCommand("usage"), admin)[0].type, "jid-single");
  EXPECT_EQ(CommandForm(*FindCommand("raw"), user)[0].var, "arguments");  // the generic field

  EXPECT_EQ(CommandLine(*FindCommand("history"), {{"n", "5"}}), "/history 5");
  EXPECT_EQ(CommandLine(*FindCommand("history"), {}), "/history");
  EXPECT_EQ(CommandLine(*FindCommand("safemode"), {{"mode", "show"}}), "/safemode");
  EXPECT_EQ(CommandLine(*FindCommand("safemode"), {{"mode", "off"}}), "/safemode off");
  EXPECT_EQ(CommandLine(*FindCommand("deny"), {{"id", "k7"}, {"reason", "no"}}), "/deny k7 no");
  EXPECT_EQ(CommandLine(*FindCommand("usage"), {{"jid", "bob@localhost"}}), "/usage bob@localhost");
  EXPECT_EQ(CommandLine(*FindCommand("pending"), {{"id", "k7"}, {"decision", "approve"}}),
            "/approve k7");
  EXPECT_EQ(CommandLine(*FindCommand("pending"), {{"id", "k7"}, {"decision", "deny"}}), "/deny k7");
  EXPECT_EQ(CommandLine(*FindCommand("pending"), {}), "/pending");
  EXPECT_EQ(CommandLine(*FindCommand("raw"), {{"arguments", "<presence/>"}}), "/raw <presence/>");
}

TEST(CommandFormTest, AllowlistAndRoomsFormsMakeTheirCommandLines) {
  const FormAudience admin{.sender = "root@localhost", .admin = true};
  const std::vector<xmpp::AnswerCommand::Field> allowlist =
      CommandForm(*FindCommand("allowlist"), admin);
  ASSERT_EQ(allowlist.size(), 2u);
  EXPECT_EQ(allowlist[0].var, "action");
  EXPECT_EQ(allowlist[0].type, "list-single");
  EXPECT_EQ(allowlist[0].value, "show");
  EXPECT_EQ(allowlist[1].var, "entry");
  const std::vector<xmpp::AnswerCommand::Field> rooms = CommandForm(*FindCommand("rooms"), admin);
  ASSERT_EQ(rooms.size(), 3u);
  EXPECT_EQ(rooms[1].type, "jid-single");
  EXPECT_EQ(rooms[2].value, "mention");

  const CommandEntry& allow = *FindCommand("allowlist");
  EXPECT_EQ(CommandLine(allow, {{"action", "show"}, {"entry", "bob@localhost"}}), "/allowlist");
  EXPECT_EQ(CommandLine(allow, {{"action", "add"}, {"entry", "bob@localhost"}}),
            "/allowlist add bob@localhost");
  EXPECT_EQ(CommandLine(allow, {{"action", "remove"}, {"entry", "example.org"}}),
            "/allowlist remove example.org");
  const CommandEntry& room = *FindCommand("rooms");
  EXPECT_EQ(CommandLine(room, {{"action", "show"}}), "/rooms");
  EXPECT_EQ(CommandLine(room, {{"action", "join"},
                               {"room", "lobby@conference.localhost"},
                               {"activation", "all"}}),
            "/rooms join lobby@conference.localhost all");
  EXPECT_EQ(CommandLine(room, {{"action", "leave"},
                               {"room", "lobby@conference.localhost"},
                               {"activation", "mention"}}),
            "/rooms leave lobby@conference.localhost");
}

TEST(AdhocSessionsTest, SessionsExpireAndAreBounded) {
  AdhocSessions sessions;
  const absl::Time start = absl::FromUnixSeconds(1'000'000);
  const std::string id = sessions.Start("history", "alice@localhost", start);
  EXPECT_FALSE(sessions.Finish(id, "identity", "alice@localhost", start));  // another command
  EXPECT_FALSE(sessions.Finish(id, "history", "alice@localhost", start + AdhocSessions::kLifetime));
  for (size_t i = 0; i < AdhocSessions::kMaxSessions + 10; ++i) {
    sessions.Start("history", "alice@localhost", start);
  }
  EXPECT_EQ(sessions.size(), AdhocSessions::kMaxSessions);
  const std::string last = sessions.Start("tier", "bob@localhost", start);
  EXPECT_TRUE(sessions.Finish(last, "tier", "bob@localhost", start + absl::Minutes(1)));
}

}  // namespace
}  // namespace herald::agent
