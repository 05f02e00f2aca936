// Tool calls that wait for a person (S7, S8), through the whole runtime: the approval asked
// in a 1:1 chat and answered with yes/no, /approve, /deny, safe mode, a timeout or /cancel;
// and a skill that needs a credential the user sends in chat — which must then reach the
// skill's environment and nothing else: not memory, not the model, not the tool's result.
#include "component/agent/tool_call.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "skills/approvals/pending_actions.h"
#include "skills/credentials/credential_store.h"
#include "skills/external/external_skill.h"
#include "skills/manifest/manifest.h"
#include "skills/sandbox/sandbox_runner.h"
#include "tests/component/agent/agent_fixture.h"
#include "tests/skills/sandbox/sandbox_test_support.h"

namespace herald::agent {
namespace {

using skills::PendingAction;
using testing::AgentFixture;
using testing::J;
using testing::Step;

providers::ToolCall Call(std::string name, nlohmann::json arguments) {
  return {.id = "t1", .name = std::move(name), .arguments = std::move(arguments)};
}

// Every file under `folder`, concatenated: to prove a secret was written nowhere.
std::string AllFileBytes(const std::string& folder) {
  std::string bytes;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(folder)) {
    if (!entry.is_regular_file()) continue;
    std::ifstream in(entry.path(), std::ios::binary);
    bytes.append(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  return bytes;
}

class ToolCallTest : public AgentFixture {
 protected:
  void SetUp() override {
    AgentFixture::SetUp();
    pending_ = std::make_unique<skills::PendingActions>(io_);
    services_->pending_actions = pending_.get();
  }

  void TearDown() override {
    agent_.reset();
    pending_.reset();
    AgentFixture::TearDown();
  }

  // The last tool result the model was given.
  std::string LastToolResult() const {
    for (auto request = model_->requests.rbegin(); request != model_->requests.rend(); ++request) {
      for (auto message = request->messages.rbegin(); message != request->messages.rend();
           ++message) {
        if (!message->tool_results.empty()) return message->tool_results.back().content;
      }
    }
    return "";
  }

  bool WaitForPending(size_t count) {
    return RunUntil([&] { return pending_->size() == count; });
  }

  std::string LastBody() const {
    std::vector<xmpp::SendMessage> messages = Messages();
    return messages.empty() ? "" : messages.back().body;
  }

  std::unique_ptr<skills::PendingActions> pending_;
};

TEST_F(ToolCallTest, AnApprovedRunGoesAheadAfterTheUserSaysYes) {
  turn_.approvals.skills = {"shout"};
  model_->script.push_back({.calls = {Call("shout", {{"text", "hi"}})}});
  model_->script.push_back({.text = "It says HI."});
  Send("alice@localhost/phone", "shout hi");
  ASSERT_TRUE(WaitForMessages(1));
  const std::string question = Messages()[0].body;
  EXPECT_TRUE(absl::StrContains(question, "I'd like to run shout with {\"text\":\"hi\"}"))
      << question;
  EXPECT_TRUE(absl::StrContains(question, "Reply yes or no")) << question;
  ASSERT_EQ(pending_->size(), 1u);
  const PendingAction action = pending_->List()[0];
  EXPECT_EQ(action.kind, PendingAction::Kind::kApproval);
  EXPECT_EQ(action.chat_owner, "alice@localhost");
  EXPECT_EQ(action.conversation, "direct:alice@localhost");
  EXPECT_TRUE(absl::StrContains(question, "/approve " + action.id)) << question;
  EXPECT_EQ(model_->requests.size(), 1u) << "the run waits";

  Send("alice@localhost/phone", "yes");
  ASSERT_TRUE(WaitForMessages(3));
  EXPECT_EQ(Messages()[1].body, "OK, running shout.");
  EXPECT_EQ(Messages()[2].body, "It says HI.");
  EXPECT_EQ(LastToolResult(), "HI");
  EXPECT_EQ(pending_->size(), 0u);
  std::vector<events::EventType> types = EventTypes();
  EXPECT_NE(std::find(types.begin(), types.end(), events::EventType::kActionRequired), types.end());
  EXPECT_NE(std::find(types.begin(), types.end(), events::EventType::kActionResolved), types.end());
}

TEST_F(ToolCallTest, AThumbsUpOnTheQuestionApprovesAndOneElsewhereDoesNot) {
  turn_.approvals.skills = {"shout"};
  model_->script.push_back({.calls = {Call("shout", {{"text", "hi"}})}});
  model_->script.push_back({.text = "It says HI."});
  Send("alice@localhost/phone", "shout hi");
  ASSERT_TRUE(WaitForPending(1));
  const xmpp::SendMessage question = Messages().back();
  EXPECT_TRUE(absl::StrContains(question.body, "react \xF0\x9F\x91\x8D or \xF0\x9F\x91\x8E"))
      << question.body;
  ASSERT_FALSE(question.id.empty());
  auto react = [&](std::string id, std::string emoji) {
    agent_->Handle(xmpp::MessageReactions{.from = J("alice@localhost/phone"),
                                          .to = J("agent.localhost"),
                                          .id = std::move(id),
                                          .reactions = {std::move(emoji)}});
  };
  react("some-other-message", "\xF0\x9F\x91\x8D");
  react(question.id, "\xF0\x9F\x98\x80");  // 😀 says neither yes nor no
  EXPECT_EQ(pending_->size(), 1u);
  react(question.id, "\xF0\x9F\x91\x8D\xF0\x9F\x8F\xBD");  // 👍 in a skin tone
  EXPECT_EQ(pending_->size(), 0u);
  ASSERT_TRUE(WaitForMessages(3));
  EXPECT_EQ(Messages()[1].body, "OK, running shout.");
  EXPECT_EQ(LastToolResult(), "HI");
}

TEST_F(ToolCallTest, AThumbsDownOnTheQuestionDenies) {
  turn_.approvals.skills = {"shout"};
  model_->script.push_back({.calls = {Call("shout", {{"text", "hi"}})}});
  model_->script.push_back({.text = "Understood."});
  Send("alice@localhost/phone", "shout hi");
  ASSERT_TRUE(WaitForPending(1));
  agent_->Handle(xmpp::MessageReactions{.from = J("alice@localhost/phone"),
                                        .to = J("agent.localhost"),
                                        .id = Messages().back().id,
                                        .reactions = {"\xF0\x9F\x91\x8E"}});
  ASSERT_TRUE(WaitForMessages(3));
  EXPECT_EQ(Messages()[1].body, "OK, I won't run shout.");
  EXPECT_TRUE(absl::StrContains(LastToolResult(), "did not approve running shout"));
}

TEST_F(ToolCallTest, ADenialTellsTheModelAndTheToolDoesNotRun) {
  turn_.approvals.skills = {"shout"};
  model_->script.push_back({.calls = {Call("shout", {{"text", "hi"}})}});
  model_->script.push_back({.text = "Understood, I did not run it."});
  Send("alice@localhost/phone", "shout hi");
  ASSERT_TRUE(WaitForPending(1));
  Send("alice@localhost/phone", "No");
  ASSERT_TRUE(WaitForMessages(3));
  EXPECT_EQ(Messages()[1].body, "OK, I won't run shout.");
  EXPECT_TRUE(absl::StrContains(LastToolResult(), "did not approve running shout"))
      << LastToolResult();
}

TEST_F(ToolCallTest, SlashCommandsAnswerByIdAndOnlyTheOwnerOrAnAdminMay) {
  options_.admin_jids = {"dev@localhost"};
  MakeAgent();
  services_->pending_actions = pending_.get();
  turn_.approvals.skills = {"shout"};
  model_->script.push_back({.calls = {Call("shout", {{"text", "a"}})}});
  model_->script.push_back({.text = "denied then"});
  Send("alice@localhost/phone", "shout a");
  ASSERT_TRUE(WaitForPending(1));
  const std::string id = pending_->List()[0].id;

  Send("bob@localhost/pc", "/approve " + id);
  ASSERT_TRUE(WaitForMessages(1, "bob@localhost"));
  EXPECT_EQ(Messages("bob@localhost")[0].body,
            absl::StrCat("Nothing with the id '", id, "' is waiting for your answer."));
  EXPECT_EQ(pending_->size(), 1u);

  Send("dev@localhost/pc", absl::StrCat("/deny ", id, " not today"));
  ASSERT_TRUE(WaitForMessages(1, "dev@localhost"));
  EXPECT_EQ(Messages("dev@localhost")[0].body, "OK, I won't run shout.");
  ASSERT_TRUE(WaitForMessages(2, "alice@localhost"));
  EXPECT_TRUE(absl::StrContains(LastToolResult(), "(not today)")) << LastToolResult();
}

TEST_F(ToolCallTest, NoAnswerInTimeIsADenial) {
  turn_.approvals.skills = {"shout"};
  turn_.approvals.timeout_seconds = 1;
  model_->script.push_back({.calls = {Call("shout", {{"text", "a"}})}});
  model_->script.push_back({.text = "nobody answered"});
  Send("alice@localhost/phone", "shout a");
  ASSERT_TRUE(WaitForMessages(2));
  EXPECT_EQ(Messages()[1].body, "nobody answered");
  EXPECT_TRUE(absl::StrContains(LastToolResult(), "No one approved running shout within 1 minute"))
      << LastToolResult();
  EXPECT_EQ(pending_->size(), 0u);
}

TEST_F(ToolCallTest, SafeModeAsksBeforeEveryToolAndCanBeTurnedOff) {
  Send("alice@localhost/phone", "/safemode on");
  ASSERT_TRUE(WaitForMessages(1));
  EXPECT_EQ(Messages()[0].body, "Safe mode is on: I ask before every tool I run for you.");
  model_->script.push_back({.calls = {Call("shout", {{"text", "a"}})}});
  model_->script.push_back({.text = "done"});
  Send("alice@localhost/phone", "shout a");
  ASSERT_TRUE(WaitForPending(1));
  EXPECT_TRUE(absl::StrContains(pending_->List()[0].description, "(safe mode)"));
  Send("alice@localhost/phone", "yes");
  ASSERT_TRUE(WaitForMessages(4));

  // Bob is not in safe mode; and Alice can leave it.
  model_->script.push_back({.calls = {Call("shout", {{"text", "b"}})}});
  model_->script.push_back({.text = "done"});
  Send("bob@localhost/pc", "shout b");
  ASSERT_TRUE(WaitForMessages(1, "bob@localhost"));
  EXPECT_EQ(Messages("bob@localhost")[0].body, "done");
  Send("alice@localhost/phone", "/safemode off");
  EXPECT_TRUE(RunUntil([&] {
    return LastBody() == "Safe mode is off: I ask only where the operator's rules say so.";
  }));
}

TEST_F(ToolCallTest, OtherMessagesWaitTheirTurnAndCancelEndsTheWait) {
  turn_.approvals.skills = {"shout"};
  model_->script.push_back({.calls = {Call("shout", {{"text", "a"}})}});
  Send("alice@localhost/phone", "shout a");
  ASSERT_TRUE(WaitForPending(1));
  Send("alice@localhost/phone", "what's the weather?");  // not an answer: queued
  // Send() queued it at once, and the run goes on waiting. Were it wrongly taken as an answer
  // or handed to the model, that would happen on the loop within a few ms (nothing here has a
  // delay); 200 ms of running the loop is ample.
  WatchFor(absl::Milliseconds(200));
  EXPECT_EQ(pending_->size(), 1u);
  EXPECT_EQ(model_->requests.size(), 1u);
  Send("alice@localhost/phone", "/cancel");
  ASSERT_TRUE(WaitForMessages(2));
  EXPECT_EQ(Messages()[1].body, "Cancelled.");
  EXPECT_EQ(pending_->size(), 0u);
  // The run ends once it sees the wait cancelled; the queued message went with it, so when
  // the conversation is idle nothing more can reach the model.
  ASSERT_TRUE(WaitForIdle());
  EXPECT_EQ(model_->requests.size(), 1u) << "the queued message was cancelled with the run";
}

TEST_F(ToolCallTest, ASkillDisabledWhileTheRunWaitedDoesNotRun) {
  turn_.approvals.skills = {"shout"};
  model_->script.push_back({.calls = {Call("shout", {{"text", "a"}})}});
  model_->script.push_back({.text = "gone"});
  Send("alice@localhost/phone", "shout a");
  ASSERT_TRUE(WaitForPending(1));
  ASSERT_TRUE(registry_.SetEnabled({}).ok());  // e.g. a reload took it out
  Send("alice@localhost/phone", "yes");
  ASSERT_TRUE(RunUntil([&] { return LastBody() == "gone"; }));
  EXPECT_TRUE(absl::StrContains(LastToolResult(), "shout is no longer available"))
      << LastToolResult();
}

TEST_F(ToolCallTest, WithoutAnyoneToAskTheRunIsRefused) {
  services_->pending_actions = nullptr;
  turn_.approvals.skills = {"shout"};
  model_->script.push_back({.calls = {Call("shout", {{"text", "a"}})}});
  model_->script.push_back({.text = "ok"});
  Send("alice@localhost/phone", "shout a");
  ASSERT_TRUE(WaitForMessages(1));
  EXPECT_TRUE(absl::StrContains(LastToolResult(), "needs a person's approval")) << LastToolResult();
}

TEST_F(ToolCallTest, AnApiConversationReportsTheActionAndAnOperatorAnswers) {
  turn_.approvals.skills = {"shout"};
  model_->script.push_back({.calls = {Call("shout", {{"text", "q"}})}});
  model_->script.push_back({.text = "Q it is"});
  std::vector<RunEvent> seen;
  ASSERT_TRUE(
      agent_->Converse("nightly", "shout q", [&](const RunEvent& e) { seen.push_back(e); }).ok());
  ASSERT_TRUE(RunUntil(
      [&] { return !seen.empty() && seen.back().kind == RunEvent::Kind::kRequiresAction; }));
  const RunEvent& asked = seen.back();
  EXPECT_EQ(asked.action, RunEvent::Action::kApproval);
  EXPECT_EQ(asked.tool, "shout");
  const PendingAction* action = pending_->Find(asked.action_id);
  ASSERT_NE(action, nullptr);
  EXPECT_EQ(action->chat_owner, "") << "no one may answer an API run in chat";
  EXPECT_EQ(action->credential_owner, "api:nightly");
  ASSERT_TRUE(
      pending_
          ->Resolve(asked.action_id,
                    {.outcome = skills::ActionResolution::Outcome::kApproved, .by = "operator ops"})
          .ok());
  ASSERT_TRUE(WaitForRunEnd(seen));
  EXPECT_EQ(seen.back().kind, RunEvent::Kind::kCompleted);
  EXPECT_EQ(LastToolResult(), "Q");
  EXPECT_TRUE(Messages().empty());
}

// A manifest skill that needs a credential: it runs in the sandbox and echoes its
// environment's EXAMPLE_TOKEN back, which the runtime must redact.
class CredentialTest : public ToolCallTest {
 protected:
  void SetUp() override {
    ToolCallTest::SetUp();
    absl::StatusOr<std::unique_ptr<skills::sandbox::SandboxRunner>> runner =
        skills::sandbox::SandboxRunner::Create(io_, workers_,
                                               skills::sandbox::testing::TestRunnerOptions());
    ASSERT_TRUE(runner.ok()) << runner.status();
    runner_ = *std::move(runner);
    const char* runfiles = ::getenv("TEST_SRCDIR");
    folder_.CopyExecutable(absl::StrCat(runfiles != nullptr ? runfiles : ".",
                                        "/herald/tests/skills/external/testdata/echo_skill.py"),
                           "echo_skill.py");
    const std::string path = folder_.Write("echo.toml", R"(name = "echo"
description = "Echoes."
executable = "echo_skill.py"
approval = "never"
[parameters]
type = "object"
properties.text = { type = "string" }
[[credentials]]
name = "EXAMPLE_TOKEN"
description = "your example.org API token"
where_to_get = "https://example.org/tokens"
)");
    skills::ManifestParse parse = skills::ReadManifest(path);
    ASSERT_TRUE(parse.manifest.has_value()) << absl::StrJoin(parse.problems, "\n");
    ASSERT_TRUE(
        registry_.Register(std::make_unique<skills::ExternalSkill>(*parse.manifest, *runner_))
            .ok());
    ASSERT_TRUE(registry_.SetEnabled({"shout", "echo"}).ok());

    const std::string key_file = dir_ + "/credentials.key";
    {
      std::ofstream key(key_file);
      key << std::string(64, 'a') << "\n";
    }
    ::chmod(key_file.c_str(), 0600);
    absl::StatusOr<std::unique_ptr<skills::CredentialStore>> store = skills::CredentialStore::Open(
        {.path = dir_ + "/credentials/credentials.db", .key_file = key_file});
    ASSERT_TRUE(store.ok()) << store.status();
    credentials_ = *std::move(store);
    services_->credentials = credentials_.get();
  }

  void TearDown() override {
    agent_.reset();
    runner_.reset();
    ToolCallTest::TearDown();
    credentials_.reset();
  }

  std::string AllModelInput() const {
    std::string all;
    for (const providers::LlmRequest& request : model_->requests) {
      absl::StrAppend(&all, request.system);
      for (const providers::LlmMessage& message : request.messages) {
        absl::StrAppend(&all, message.text);
        for (const providers::ToolResult& result : message.tool_results) {
          absl::StrAppend(&all, result.content);
        }
      }
    }
    return all;
  }

  skills::sandbox::testing::PublicFolder folder_;
  std::unique_ptr<skills::sandbox::SandboxRunner> runner_;
  std::unique_ptr<skills::CredentialStore> credentials_;
};

constexpr char kSecret[] = "tok-9f8e7d6c5b4a";

TEST_F(CredentialTest, AMissingCredentialIsAskedForUsedRedactedAndNeverRemembered) {
  model_->script.push_back({.calls = {Call("echo", {{"text", "x"}})}});
  model_->script.push_back({.text = "Echoed."});
  Send("alice@localhost/phone", "echo x");
  ASSERT_TRUE(WaitForMessages(1));
  const std::string question = Messages()[0].body;
  EXPECT_TRUE(absl::StrContains(question, "To run echo I need a secret I don't have yet:"))
      << question;
  EXPECT_TRUE(absl::StrContains(question,
                                "• EXAMPLE_TOKEN: your example.org API token (get one at "
                                "https://example.org/tokens)"))
      << question;
  ASSERT_EQ(pending_->size(), 1u);
  EXPECT_EQ(pending_->List()[0].kind, PendingAction::Kind::kCredentials);

  Send("alice@localhost/phone", kSecret);
  ASSERT_TRUE(WaitForMessages(3));
  EXPECT_EQ(Messages()[1].body, "Thanks, I stored EXAMPLE_TOKEN encrypted for you. Carrying on.");
  EXPECT_EQ(Messages()[2].body, "Echoed.");
  const std::string result = LastToolResult();
  EXPECT_TRUE(absl::StrContains(result, "[redacted EXAMPLE_TOKEN]")) << result;
  ASSERT_TRUE(WaitForIdle());  // the run saved what it keeps before it ended
  EXPECT_FALSE(absl::StrContains(AllModelInput(), kSecret));
  // Memory, the credential database (sealed), everything Herald wrote.
  EXPECT_FALSE(absl::StrContains(AllFileBytes(dir_), kSecret));
  for (const auto& action : actions_) {
    if (auto* m = std::get_if<xmpp::SendMessage>(&action)) {
      EXPECT_FALSE(absl::StrContains(m->body, kSecret)) << m->body;
    }
  }
  EXPECT_EQ(credentials_->Get("alice@localhost", {"EXAMPLE_TOKEN"}).value().at("EXAMPLE_TOKEN"),
            kSecret);

  // Stored: the next run does not ask.
  model_->script.push_back({.calls = {Call("echo", {{"text", "y"}})}});
  model_->script.push_back({.text = "Again."});
  Send("alice@localhost/phone", "echo y");
  ASSERT_TRUE(WaitForMessages(4));
  EXPECT_EQ(Messages()[3].body, "Again.");
  EXPECT_TRUE(absl::StrContains(LastToolResult(), "[redacted EXAMPLE_TOKEN]"));
}

TEST_F(CredentialTest, AnApprovalAndACredentialPauseTheRunTwice) {
  turn_.approvals.skills = {"echo"};
  model_->script.push_back({.calls = {Call("echo", {{"text", "x"}})}});
  model_->script.push_back({.text = "Done."});
  Send("alice@localhost/phone", "echo x");
  ASSERT_TRUE(WaitForPending(1));
  EXPECT_EQ(pending_->List()[0].kind, PendingAction::Kind::kApproval);
  Send("alice@localhost/phone", "yes");
  ASSERT_TRUE(RunUntil([&] {
    return pending_->size() == 1 && pending_->List()[0].kind == PendingAction::Kind::kCredentials;
  }));
  Send("alice@localhost/phone", absl::StrCat("EXAMPLE_TOKEN=", kSecret));
  ASSERT_TRUE(RunUntil([&] { return LastBody() == "Done."; }));
  EXPECT_TRUE(absl::StrContains(LastToolResult(), "[redacted EXAMPLE_TOKEN]"));
}

TEST_F(CredentialTest, ABadAnswerIsExplainedAndNothingIsStored) {
  skills::PendingAction action{.kind = PendingAction::Kind::kCredentials,
                               .chat_owner = "alice@localhost",
                               .credential_owner = "alice@localhost",
                               .skill = "echo",
                               .credentials = {{.name = "A_KEY"}, {.name = "B_KEY"}}};
  pending_->Open(action, absl::Minutes(1), [](skills::ActionResolution) {});
  Send("alice@localhost/phone", "just-a-value");
  ASSERT_TRUE(WaitForMessages(1));
  EXPECT_EQ(Messages()[0].body,
            "Please send one line per secret as NAME=value, for A_KEY, B_KEY. (Nothing was "
            "stored.)");
  EXPECT_EQ(pending_->size(), 1u);
  EXPECT_TRUE(credentials_->Names("alice@localhost").value().empty());
}

TEST_F(CredentialTest, ADeclinedCredentialMeansTheToolDoesNotRun) {
  model_->script.push_back({.calls = {Call("echo", {{"text", "x"}})}});
  model_->script.push_back({.text = "Without it I can't."});
  Send("alice@localhost/phone", "echo x");
  ASSERT_TRUE(WaitForPending(1));
  Send("alice@localhost/phone", "/deny " + pending_->List()[0].id);
  ASSERT_TRUE(RunUntil([&] { return LastBody() == "Without it I can't."; }));
  EXPECT_TRUE(absl::StrContains(LastToolResult(),
                                "echo needs EXAMPLE_TOKEN, which the user declined to provide"))
      << LastToolResult();
}

}  // namespace
}  // namespace herald::agent
