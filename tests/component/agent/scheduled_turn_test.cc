// Schedules and presence through the agent: a due schedule is a turn of its chat on the light tier,
// said to the person; for someone whose presence says they are offline it waits until they are
// back; the schedule skill makes schedules of the conversation it answers.
#include <memory>
#include <string>
#include <vector>

#include "component/agent/schedule_skill.h"
#include "component/schedule/scheduler.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/component/agent/agent_fixture.h"

namespace herald::agent {
namespace {

using testing::AgentFixture;
using ::testing::HasSubstr;
using testing::J;

class ScheduledTurnTest : public AgentFixture {
 protected:
  void SetUp() override {
    AgentFixture::SetUp();
    llm_.tiers["light"] = "fake:small-model";
    router_.reset();
    auto model = std::make_unique<testing::ScriptedModel>(io_);
    model_ = model.get();
    std::vector<std::unique_ptr<providers::LlmProvider>> providers;
    providers.push_back(std::move(model));
    router_ = providers::ModelRouter::Create(llm_, std::move(providers)).value();
    scheduler_ =
        schedule::Scheduler::Open(io_, workers_, {.path = dir_ + "/schedules.db"}, {}, [this] {
          return now_;
        }).value();
    MakeAgent();
    services_->scheduler = scheduler_.get();
  }

  void TearDown() override {
    scheduler_.reset();
    AgentFixture::TearDown();
  }

  schedule::Schedule Due(const std::string& jid, const std::string& prompt) {
    absl::StatusOr<schedule::Schedule> made = scheduler_->Add(
        {.kind = base::ConversationRef::Kind::kDirect, .address = jid}, jid, prompt, "in 1m", jid);
    EXPECT_TRUE(made.ok()) << made.status();
    return *made;
  }

  void Presence(const std::string& full, bool available) {
    agent_->Handle(xmpp::ContactPresence{
        .from = J(full), .to = J("herald.localhost"), .available = available});
  }

  absl::Time now_ = absl::Now();
  std::unique_ptr<schedule::Scheduler> scheduler_;
};

TEST_F(ScheduledTurnTest, ADueScheduleIsATurnOnTheLightTier) {
  model_->script.push_back({.text = "Time to send the report!"});
  agent_->RunScheduled(Due("alice@localhost", "Remind me to send the report"),
                       J("herald.localhost"));
  ASSERT_TRUE(WaitForMessages(1, "alice@localhost"));
  EXPECT_EQ(Messages("alice@localhost")[0].body, "Time to send the report!");
  ASSERT_EQ(model_->requests.size(), 1u);
  EXPECT_EQ(model_->requests[0].model, "small-model");
  const std::string& asked = model_->requests[0].messages.back().text;
  EXPECT_THAT(asked, HasSubstr("Schedule #1 (made by alice@localhost) is due now"));
  EXPECT_THAT(asked, HasSubstr("Remind me to send the report"));
}

TEST_F(ScheduledTurnTest, WaitsForSomeoneOfflineUntilTheyAreBack) {
  Presence("alice@localhost/phone", true);
  Presence("alice@localhost/phone", false);
  ASSERT_TRUE(agent_->KnownOffline("alice@localhost"));
  model_->script.push_back({.text = "Stretch!"});
  agent_->RunScheduled(Due("alice@localhost", "Remind me to stretch"), J("herald.localhost"));
  WatchFor(absl::Milliseconds(200));
  EXPECT_TRUE(Messages("alice@localhost").empty());
  EXPECT_TRUE(model_->requests.empty()) << "nothing runs while she is away";

  Presence("alice@localhost/laptop", true);
  ASSERT_TRUE(WaitForMessages(1, "alice@localhost"));
  EXPECT_EQ(Messages("alice@localhost")[0].body, "Stretch!");
  EXPECT_FALSE(agent_->KnownOffline("alice@localhost"));
}

TEST_F(ScheduledTurnTest, GreetsSomeoneBackAfterALongAbsenceOnly) {
  options_.greet_after_hours = 2;
  services_->clock = [this] { return now_; };
  Presence("alice@localhost/phone", true);  // never seen offline: no greeting
  Presence("alice@localhost/phone", false);
  now_ += absl::Minutes(30);
  Presence("alice@localhost/phone", true);  // back after half an hour: no greeting
  Presence("alice@localhost/phone", false);
  now_ += absl::Hours(3);
  model_->script.push_back({.text = "Welcome back!"});
  Presence("alice@localhost/laptop", true);
  ASSERT_TRUE(WaitForMessages(1, "alice@localhost"));
  EXPECT_EQ(Messages("alice@localhost")[0].body, "Welcome back!");
  ASSERT_EQ(model_->requests.size(), 1u);
  EXPECT_EQ(model_->requests[0].model, "small-model");
  EXPECT_THAT(model_->requests[0].messages.back().text,
              HasSubstr("came back online after 3 hours away"));
  // A second resource coming online is no return.
  Presence("alice@localhost/phone", true);
  WatchFor(absl::Milliseconds(100));
  EXPECT_EQ(model_->requests.size(), 1u);
}

TEST_F(ScheduledTurnTest, PubsubItemsOfAConfiguredNodeAreSaidOrBecomeTurns) {
  options_.pubsub = {{.service = "pubsub.localhost", .node = "alerts", .to = "alice@localhost"},
                     {.service = "pubsub.localhost",
                      .node = "releases",
                      .to = "bob@localhost",
                      .prompt = "Summarise it in one line."}};
  agent_->Handle(xmpp::SessionOnline{.own_jid = J("herald.localhost")});
  std::vector<std::string> subscribed;
  for (const xmpp::OutboundAction& action : actions_) {
    if (const auto* s = std::get_if<xmpp::SubscribeNode>(&action)) subscribed.push_back(s->node);
  }
  EXPECT_EQ(subscribed, (std::vector<std::string>{"alerts", "releases"}));

  auto items = [](std::string node, std::string id, std::string text) {
    return xmpp::PubsubItems{.service = J("pubsub.localhost"),
                             .node = std::move(node),
                             .items = {{.id = std::move(id), .text = std::move(text)}}};
  };
  agent_->Handle(items("alerts", "a1", "disk 91% on db1"));
  agent_->Handle(items("alerts", "a1", "disk 91% on db1"));  // sent again: said once
  agent_->Handle(items("elsewhere", "x", "not a configured node"));
  xmpp::PubsubItems replayed = items("alerts", "a0", "published before Herald subscribed");
  replayed.delayed = true;
  agent_->Handle(std::move(replayed));
  ASSERT_TRUE(WaitForMessages(1, "alice@localhost"));
  WatchFor(absl::Milliseconds(100));
  ASSERT_EQ(Messages("alice@localhost").size(), 1u);
  EXPECT_EQ(Messages("alice@localhost")[0].body, "disk 91% on db1");

  model_->script.push_back({.text = "Herald 1.1 is out."});
  agent_->Handle(items("releases", "r1", "Herald 1.1\nSchedules and hooks."));
  ASSERT_TRUE(WaitForMessages(1, "bob@localhost"));
  EXPECT_EQ(Messages("bob@localhost")[0].body, "Herald 1.1 is out.");
  ASSERT_EQ(model_->requests.size(), 1u);
  EXPECT_EQ(model_->requests[0].model, "small-model");
  const std::string& asked = model_->requests[0].messages.back().text;
  EXPECT_THAT(asked, HasSubstr("Summarise it in one line."));
  EXPECT_THAT(asked, HasSubstr("> Herald 1.1\n> Schedules and hooks."));
}

TEST_F(ScheduledTurnTest, NobodyUnknownWaitsAndStrangersAreNotTracked) {
  // No presence seen: taken as reachable.
  model_->script.push_back({.text = "Hello bob"});
  agent_->RunScheduled(Due("bob@localhost", "Say hello"), J("herald.localhost"));
  ASSERT_TRUE(WaitForMessages(1, "bob@localhost"));
  // A stranger's presence is not kept.
  Presence("mallory@elsewhere.example/x", false);
  EXPECT_FALSE(agent_->KnownOffline("mallory@elsewhere.example"));
}

TEST_F(ScheduledTurnTest, TheSkillMakesSchedulesOfTheChatItAnswers) {
  ScheduleSkill skill(io_, *scheduler_);
  const skills::SkillContext alice{
      .conversation = {.kind = base::ConversationRef::Kind::kDirect, .address = "alice@localhost"}};
  auto run = [&](const nlohmann::json& arguments, const skills::SkillContext& context) {
    std::optional<absl::StatusOr<std::string>> result;
    skill.Execute(arguments, context, [&](absl::StatusOr<std::string> r) { result = r; });
    RunUntil([&] { return result.has_value(); });
    return result.value_or(absl::DeadlineExceededError("no answer"));
  };
  absl::StatusOr<std::string> made =
      run({{"action", "create"}, {"when", "every 1d"}, {"prompt", "Ask how the day went"}}, alice);
  ASSERT_TRUE(made.ok()) << made.status();
  EXPECT_THAT(*made, HasSubstr("Scheduled: #1 every 1d"));
  EXPECT_THAT(*run({{"action", "list"}}, alice), HasSubstr("Ask how the day went"));

  const skills::SkillContext bob{
      .conversation = {.kind = base::ConversationRef::Kind::kDirect, .address = "bob@localhost"}};
  EXPECT_EQ(*run({{"action", "list"}}, bob), "There are no schedules in this chat.");
  EXPECT_EQ(run({{"action", "cancel"}, {"id", 1}}, bob).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_THAT(
      run({{"action", "create"}, {"when", "whenever"}, {"prompt", "x"}}, alice).status().message(),
      HasSubstr("say when as"));
  EXPECT_EQ(*run({{"action", "cancel"}, {"id", 1}}, alice), "Cancelled schedule #1.");
}

TEST_F(ScheduledTurnTest, SlashCommandsListCancelAndSetTheZone) {
  Due("alice@localhost", "Water the plants");
  Send("alice@localhost/phone", "/schedules");
  ASSERT_TRUE(WaitForMessages(1, "alice@localhost"));
  EXPECT_THAT(Messages("alice@localhost")[0].body, HasSubstr("#1 once at"));
  EXPECT_THAT(Messages("alice@localhost")[0].body, HasSubstr("Water the plants"));

  Send("alice@localhost/phone", "/timezone Mars/Base");
  ASSERT_TRUE(WaitForMessages(2, "alice@localhost"));
  EXPECT_THAT(Messages("alice@localhost")[1].body, HasSubstr("Not changed: unknown time zone"));
  Send("alice@localhost/phone", "/timezone Europe/Paris");
  ASSERT_TRUE(WaitForMessages(3, "alice@localhost"));
  EXPECT_EQ(scheduler_->TimeZoneName("alice@localhost"), "Europe/Paris");

  Send("bob@localhost/phone", "/schedules cancel 1");
  ASSERT_TRUE(WaitForMessages(1, "bob@localhost"));
  EXPECT_EQ(Messages("bob@localhost")[0].body, "Not cancelled: no schedule 1 here");
  Send("alice@localhost/phone", "/schedules cancel 1");
  ASSERT_TRUE(WaitForMessages(4, "alice@localhost"));
  EXPECT_EQ(Messages("alice@localhost")[3].body, "Cancelled schedule #1.");
  EXPECT_TRUE(scheduler_->List(nullptr).empty());
  EXPECT_TRUE(model_->requests.empty()) << "commands never reach the model";
}

}  // namespace
}  // namespace herald::agent
