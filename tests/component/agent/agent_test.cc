#include "component/agent/agent.h"

#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace herald::agent {
namespace {

xmpp::Jid J(std::string_view text) { return xmpp::Jid::Parse(text).value(); }

class AgentTest : public ::testing::Test {
 protected:
  Agent MakeAgent(config::RefusalMode refusal = config::RefusalMode::kSilent) {
    config::AgentConfig agent;
    agent.name = "Herald";
    agent.allowed_jids = {"alice@localhost"};
    agent.allowed_domains = {"localhost"};
    agent.unallowed = refusal;
    return Agent(
        AccessPolicy::Create(agent).value(), agent,
        [this](xmpp::OutboundAction action) { actions_.push_back(std::move(action)); },
        [this] { return now_; });
  }

  xmpp::ChatMessage Message(std::string from, std::string body) {
    return xmpp::ChatMessage{.from = J(from),
                             .to = J("agent.localhost"),
                             .id = "m1",
                             .type = "chat",
                             .body = std::move(body)};
  }

  std::vector<xmpp::SendMessage> Messages() const {
    std::vector<xmpp::SendMessage> out;
    for (const auto& action : actions_) {
      if (auto* message = std::get_if<xmpp::SendMessage>(&action)) out.push_back(*message);
    }
    return out;
  }

  std::vector<xmpp::OutboundAction> actions_;
  absl::Time now_ = absl::FromUnixSeconds(1700000000);
};

TEST_F(AgentTest, AnswersPingWithPongToTheSendersFullJid) {
  Agent agent = MakeAgent();
  agent.Handle(Message("alice@localhost/phone", "/ping"));
  ASSERT_EQ(Messages().size(), 1u);
  EXPECT_TRUE(absl::StartsWith(Messages()[0].body, "pong"));
  EXPECT_EQ(Messages()[0].to.ToString(), "alice@localhost/phone");
  EXPECT_EQ(Messages()[0].from.ToString(), "agent.localhost");
  EXPECT_EQ(Messages()[0].type, "chat");
}

TEST_F(AgentTest, AnswersPingWithSurroundingWhitespaceAndArguments) {
  Agent agent = MakeAgent();
  agent.Handle(Message("alice@localhost/phone", "  /ping  "));
  agent.Handle(Message("alice@localhost/phone", "/ping 42"));
  ASSERT_EQ(Messages().size(), 2u);
  EXPECT_EQ(Messages()[0].body, "pong");
  EXPECT_EQ(Messages()[1].body, "pong");
}

TEST_F(AgentTest, ListsItsCommandsOnHelp) {
  Agent agent = MakeAgent();
  agent.Handle(Message("alice@localhost/phone", "/help"));
  ASSERT_EQ(Messages().size(), 1u);
  EXPECT_NE(Messages()[0].body.find("/ping"), std::string::npos);
  EXPECT_NE(Messages()[0].body.find("/help"), std::string::npos);
}

TEST_F(AgentTest, DoesNotMistakeAnotherWordForPing) {
  EXPECT_EQ(Agent::AnswerCommand("/pingpong"), "");
  EXPECT_EQ(Agent::AnswerCommand("ping"), "");
}

TEST_F(AgentTest, TellsAnAllowedUserWhatItCanDoForOtherText) {
  Agent agent = MakeAgent();
  agent.Handle(Message("alice@localhost/phone", "hello"));
  ASSERT_EQ(Messages().size(), 1u);
  EXPECT_NE(Messages()[0].body.find("/ping"), std::string::npos);
}

TEST_F(AgentTest, StaysSilentForASenderThatIsNotAllowedByDefault) {
  Agent agent = MakeAgent();
  agent.Handle(Message("bob@localhost/pc", "/ping"));
  agent.Handle(Message("eve@evil.example/pc", "/ping"));
  EXPECT_TRUE(actions_.empty());
}

TEST_F(AgentTest, RefusesOncePerHourWhenConfiguredToReply) {
  Agent agent = MakeAgent(config::RefusalMode::kReply);
  agent.Handle(Message("bob@localhost/pc", "/ping"));
  agent.Handle(Message("bob@localhost/laptop", "/ping"));
  ASSERT_EQ(Messages().size(), 1u);
  EXPECT_EQ(Messages()[0].body.find("pong"), std::string::npos);
  now_ += absl::Hours(2);
  agent.Handle(Message("bob@localhost/pc", "/ping"));
  EXPECT_EQ(Messages().size(), 2u);
}

TEST_F(AgentTest, AcceptsAndReturnsTheSubscriptionOfAnAllowedJid) {
  Agent agent = MakeAgent();
  agent.Handle(xmpp::SubscriptionRequest{.from = J("alice@localhost"), .to = J("bot@localhost")});
  ASSERT_EQ(actions_.size(), 2u);
  auto* subscribed = std::get_if<xmpp::SendPresence>(&actions_[0]);
  auto* subscribe = std::get_if<xmpp::SendPresence>(&actions_[1]);
  ASSERT_TRUE(subscribed && subscribe);
  EXPECT_EQ(subscribed->type, "subscribed");
  EXPECT_EQ(subscribe->type, "subscribe");
  EXPECT_EQ(subscribed->to.ToString(), "alice@localhost");
}

TEST_F(AgentTest, IgnoresTheSubscriptionOfAJidThatIsNotAllowed) {
  Agent agent = MakeAgent();
  agent.Handle(xmpp::SubscriptionRequest{.from = J("bob@localhost"), .to = J("bot@localhost")});
  EXPECT_TRUE(actions_.empty());
}

TEST_F(AgentTest, AsksForThePresenceOfListedJidsMissingFromTheRoster) {
  Agent agent = MakeAgent();
  agent.Handle(xmpp::RosterReceived{});
  ASSERT_EQ(actions_.size(), 1u);
  auto* subscribe = std::get_if<xmpp::SendPresence>(&actions_[0]);
  ASSERT_NE(subscribe, nullptr);
  EXPECT_EQ(subscribe->type, "subscribe");
  EXPECT_EQ(subscribe->to.ToString(), "alice@localhost");

  actions_.clear();
  agent.Handle(
      xmpp::RosterReceived{.items = {{.jid = J("alice@localhost"), .subscription = "both"}}});
  EXPECT_TRUE(actions_.empty());
}

}  // namespace
}  // namespace herald::agent
