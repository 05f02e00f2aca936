// Delivery receipts (XEP-0184) and displayed markers (XEP-0333) for 1:1 messages: a receipt
// goes out only once the message is on disk, a displayed marker when the turn starts working on
// it, and neither for what never becomes a turn (commands, strangers, a message without an id).
#include <string>
#include <variant>
#include <vector>

#include "component/agent/agent.h"
#include "gtest/gtest.h"
#include "tests/component/agent/agent_fixture.h"

namespace herald::agent {
namespace {

using testing::AgentFixture;
using testing::J;
using Kind = xmpp::AcknowledgeMessage::Kind;

class ReceiptsTest : public AgentFixture {
 protected:
  void SendAsking(std::string from, std::string body, std::string id, std::string thread = "",
                  bool receipt = true, bool markable = true) {
    agent_->Handle(xmpp::ChatMessage{.from = J(from),
                                     .to = J("agent.localhost"),
                                     .id = std::move(id),
                                     .type = "chat",
                                     .body = std::move(body),
                                     .thread = std::move(thread),
                                     .receipt_requested = receipt,
                                     .markable = markable});
  }

  std::vector<xmpp::AcknowledgeMessage> Acknowledgements() const {
    std::vector<xmpp::AcknowledgeMessage> out;
    for (const auto& action : actions_) {
      if (const auto* ack = std::get_if<xmpp::AcknowledgeMessage>(&action)) out.push_back(*ack);
    }
    return out;
  }

  // The kinds of the actions performed, in order: "received", "displayed", "message", ...
  std::vector<std::string> Sequence() const {
    std::vector<std::string> out;
    for (const auto& action : actions_) {
      if (const auto* ack = std::get_if<xmpp::AcknowledgeMessage>(&action)) {
        out.push_back(ack->kind == Kind::kReceived ? "received" : "displayed");
      } else if (std::holds_alternative<xmpp::SendMessage>(action)) {
        out.push_back("message");
      }
    }
    return out;
  }
};

TEST_F(ReceiptsTest, TheReceiptFollowsStorageAndTheMarkerTheStartOfWork) {
  // When the receipt goes out, the message must already be in the conversation's history.
  std::vector<size_t> history_at_receipt;
  on_action_ = [&](const xmpp::OutboundAction& action) {
    const auto* ack = std::get_if<xmpp::AcknowledgeMessage>(&action);
    if (ack != nullptr && ack->kind == Kind::kReceived) {
      // The message's thread is its own session (XEP-0201), with its own history.
      const base::ConversationRef thread{.kind = base::ConversationRef::Kind::kDirect,
                                         .address = "alice@localhost",
                                         .thread = "t-7"};
      history_at_receipt.push_back(store_->History(thread, 100).value().size());
    }
  };
  model_->script.push_back({.text = "Hello Alice!"});
  SendAsking("alice@localhost/phone", "hi there", "msg-1", "t-7");
  ASSERT_TRUE(WaitForMessages(1));
  ASSERT_TRUE(WaitForIdle());

  EXPECT_EQ(Sequence(), (std::vector<std::string>{"received", "displayed", "message"}));
  ASSERT_EQ(history_at_receipt, std::vector<size_t>{1});
  std::vector<xmpp::AcknowledgeMessage> acks = Acknowledgements();
  ASSERT_EQ(acks.size(), 2u);
  for (const xmpp::AcknowledgeMessage& ack : acks) {
    EXPECT_EQ(ack.to, J("alice@localhost/phone"));  // the device that sent it
    EXPECT_EQ(ack.from, J("agent.localhost"));
    EXPECT_EQ(ack.id, "msg-1");
    EXPECT_EQ(ack.thread, "t-7");
  }
}

TEST_F(ReceiptsTest, EachIsSentOnlyWhenAskedFor) {
  model_->script.push_back({.text = "one"});
  model_->script.push_back({.text = "two"});
  model_->script.push_back({.text = "three"});
  SendAsking("alice@localhost/phone", "receipt only", "a", "", /*receipt=*/true,
             /*markable=*/false);
  ASSERT_TRUE(WaitForMessages(1));
  SendAsking("alice@localhost/phone", "marker only", "b", "", /*receipt=*/false,
             /*markable=*/true);
  ASSERT_TRUE(WaitForMessages(2));
  SendAsking("alice@localhost/phone", "neither", "c", "", /*receipt=*/false,
             /*markable=*/false);
  ASSERT_TRUE(WaitForMessages(3));
  ASSERT_TRUE(WaitForIdle());
  EXPECT_EQ(Sequence(),
            (std::vector<std::string>{"received", "message", "displayed", "message", "message"}));
  std::vector<xmpp::AcknowledgeMessage> acks = Acknowledgements();
  ASSERT_EQ(acks.size(), 2u);
  EXPECT_EQ(acks[0].id, "a");
  EXPECT_EQ(acks[1].id, "b");
}

TEST_F(ReceiptsTest, NothingIsAcknowledgedThatIsNotStoredForATurn) {
  // A command is answered at once and never stored; a stranger gets nothing at all (a receipt
  // would tell them Herald exists); a message without an id cannot be named in a receipt.
  SendAsking("alice@localhost/phone", "/ping", "cmd-1");
  ASSERT_TRUE(WaitForMessages(1));
  SendAsking("mallory@evil.example/x", "hello?", "evil-1");
  model_->script.push_back({.text = "answered"});
  SendAsking("alice@localhost/phone", "no id here", "");
  ASSERT_TRUE(WaitForMessages(2));
  ASSERT_TRUE(WaitForIdle());
  EXPECT_TRUE(Acknowledgements().empty());
  EXPECT_TRUE(Messages("mallory@evil.example").empty());
}

}  // namespace
}  // namespace herald::agent
