// Streamed answers (XEP-0308) through the agent runtime: a client is asked whether it shows
// corrections while the model thinks; one that does sees the answer grow in one message, one
// that does not (or does not say) gets the whole answer once, and /cancel corrects a
// half-written answer to say it stopped.
#include <string>
#include <variant>
#include <vector>

#include "component/agent/agent.h"
#include "component/xmpp/namespaces.h"
#include "gtest/gtest.h"
#include "tests/component/agent/agent_fixture.h"

namespace herald::agent {
namespace {

using testing::AgentFixture;
using testing::J;
using testing::Step;

constexpr char kPhone[] = "alice@localhost/phone";

class StreamingTest : public AgentFixture {
 protected:
  void SetUp() override {
    AgentFixture::SetUp();
    turn_.stream = true;
    // Each delta comes 400 ms after the one before (the clock is the test's).
    model_->before_delta = [this](size_t) { now_ += absl::Milliseconds(400); };
  }

  std::vector<xmpp::DiscoverFeatures> Queries() const {
    return ActionsOf<xmpp::DiscoverFeatures>();
  }

  void Answer(std::string_view client, bool corrections) {
    agent_->Handle(xmpp::ClientFeatures{
        .of = J(client),
        .answered = true,
        .features = corrections ? std::vector<std::string>{xmpp::ns::kMessageCorrect}
                                : std::vector<std::string>{"jabber:iq:version"}});
  }

  static Step Streamed() {
    return Step{.text = "First sentence here. Second one. Third one.",
                .delay = absl::Milliseconds(20),
                .deltas = {"First sentence", " here.", " Second", " one.", " Third one."}};
  }
};

TEST_F(StreamingTest, AClientThatShowsCorrectionsSeesTheAnswerGrowInOneMessage) {
  model_->script.push_back(Streamed());
  Send(kPhone, "tell me three things");
  ASSERT_EQ(Queries().size(), 1u);
  EXPECT_EQ(Queries()[0].to, J(kPhone));
  EXPECT_EQ(Queries()[0].from, J("agent.localhost"));
  Answer(kPhone, /*corrections=*/true);
  ASSERT_TRUE(WaitForIdle());

  const std::vector<xmpp::SendMessage> sent = Messages("alice@localhost");
  ASSERT_GE(sent.size(), 3u);
  EXPECT_EQ(sent[0].body, "First sentence here.");
  EXPECT_TRUE(sent[0].replace_id.empty());
  for (size_t i = 1; i < sent.size(); ++i) {
    EXPECT_EQ(sent[i].replace_id, sent[0].id) << i;
    EXPECT_EQ(sent[i].no_store, i + 1 < sent.size()) << i;
  }
  EXPECT_EQ(sent.back().body, "First sentence here. Second one. Third one.");
  EXPECT_EQ(sent.back().chat_state, "active");

  // The second message is not asked about again.
  model_->script.push_back(Streamed());
  Send(kPhone, "again");
  ASSERT_TRUE(WaitForIdle());
  EXPECT_EQ(Queries().size(), 1u);
}

TEST_F(StreamingTest, AClientThatDoesNotShowCorrectionsOrDoesNotSayGetsOneMessage) {
  model_->script.push_back(Streamed());
  model_->script.push_back(Streamed());
  Send(kPhone, "tell me three things");
  Answer(kPhone, /*corrections=*/false);
  ASSERT_TRUE(WaitForIdle());
  Send("bob@localhost/laptop", "and to me");  // asked, never answers
  ASSERT_TRUE(WaitForIdle());
  for (std::string_view who : {"alice@localhost", "bob@localhost"}) {
    const std::vector<xmpp::SendMessage> sent = Messages(who);
    ASSERT_EQ(sent.size(), 1u) << who;
    EXPECT_EQ(sent[0].body, "First sentence here. Second one. Third one.");
    EXPECT_TRUE(sent[0].replace_id.empty());
  }
}

TEST_F(StreamingTest, StreamingOffOrAlwaysAsksNobody) {
  options_.stream_answers = "always";
  model_->script.push_back(Streamed());
  Send(kPhone, "tell me three things");
  ASSERT_TRUE(WaitForIdle());
  EXPECT_TRUE(Queries().empty());
  EXPECT_GE(Messages("alice@localhost").size(), 3u);  // streamed without asking

  options_.stream_answers = "off";
  actions_.clear();
  model_->script.push_back(Streamed());
  Send(kPhone, "once more");
  ASSERT_TRUE(WaitForIdle());
  EXPECT_TRUE(Queries().empty());
  EXPECT_EQ(Messages("alice@localhost").size(), 1u);
}

TEST_F(StreamingTest, CancellingCorrectsTheHalfWrittenAnswerToSayItStopped) {
  Step step = Streamed();
  step.delay = absl::Seconds(30);  // the model is still writing when /cancel comes
  model_->script.push_back(step);
  Send(kPhone, "tell me three things");
  Answer(kPhone, /*corrections=*/true);
  ASSERT_TRUE(WaitForMessages(1, "alice@localhost"));
  ASSERT_TRUE(
      RunUntil([&] { return Messages("alice@localhost").size() >= 2 || model_->script.empty(); }));
  Send(kPhone, "/cancel");
  ASSERT_TRUE(RunUntil([&] {
    for (const xmpp::SendMessage& m : Messages("alice@localhost")) {
      if (m.body.ends_with("[stopped]")) return true;
    }
    return false;
  }));
  const std::vector<xmpp::SendMessage> sent = Messages("alice@localhost");
  const auto stopped = std::find_if(sent.begin(), sent.end(), [](const xmpp::SendMessage& m) {
    return m.body.ends_with("[stopped]");
  });
  EXPECT_EQ(stopped->replace_id, sent[0].id);
  EXPECT_FALSE(stopped->no_store);
  EXPECT_TRUE(stopped->body.starts_with("First sentence here."));
}

}  // namespace
}  // namespace herald::agent
