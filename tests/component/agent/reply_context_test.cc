// A message that replies (XEP-0461) to one of Herald's recent messages brings that message to
// the model whole, quoted before what the person wrote, in a chat and in a room (where the
// reply names the id the room gave Herald's message). A reply to a message Herald does not
// know keeps the quote the sender's client put first; either way the quote is only context.
#include <string>
#include <vector>

#include "component/agent/agent.h"
#include "gtest/gtest.h"
#include "tests/component/agent/agent_fixture.h"

namespace herald::agent {
namespace {

using providers::LlmMessage;
using providers::LlmRequest;
using testing::AgentFixture;
using testing::J;

class ReplyContextTest : public AgentFixture {
 protected:
  void Reply(std::string body, xmpp::Reply reply) {
    agent_->Handle(xmpp::ChatMessage{.from = J("alice@localhost/phone"),
                                     .to = J("agent.localhost"),
                                     .id = "m2",
                                     .type = "chat",
                                     .body = std::move(body),
                                     .reply = std::move(reply)});
  }
  // The text of the last user message the model was given.
  std::string LastUserText() const {
    const LlmRequest& request = model_->requests.back();
    for (auto it = request.messages.rbegin(); it != request.messages.rend(); ++it) {
      if (it->role == LlmMessage::Role::kUser) return it->text;
    }
    return "";
  }
};

TEST_F(ReplyContextTest, AReplyToHeraldsAnswerBringsTheWholeAnswerIn) {
  model_->script.push_back({.text = "Three options:\nA, cheap.\nB, fast."});
  Send("alice@localhost/phone", "which options?");
  ASSERT_TRUE(WaitForIdle());
  const std::string answer_id = Messages("alice@localhost").at(0).id;
  ASSERT_FALSE(answer_id.empty());

  // The client's fallback quoted only the first line; Herald quotes what it said, whole.
  model_->script.push_back({.text = "B costs more."});
  Reply("why not B?", {.id = answer_id, .to = J("agent.localhost"), .quote = "> Three…\n"});
  ASSERT_TRUE(WaitForIdle());
  EXPECT_EQ(LastUserText(), "> Three options:\n> A, cheap.\n> B, fast.\nwhy not B?");
}

TEST_F(ReplyContextTest, AReplyToAMessageHeraldDoesNotKnowKeepsTheSendersQuote) {
  model_->script.push_back({.text = "ok"});
  Reply("and this?", {.id = "long-gone", .to = J("agent.localhost"), .quote = "> old text\n"});
  ASSERT_TRUE(WaitForIdle());
  EXPECT_EQ(LastUserText(), "> old text\nand this?");
}

TEST_F(ReplyContextTest, AQuoteIsCutAtACharacterBoundary) {
  const std::string long_answer = std::string(kMaxQuotedBytes - 1, 'a') + "\xC3\xA9 tail";
  const std::string quoted = QuoteReplied(long_answer, "why?");
  EXPECT_EQ(quoted, "> " + std::string(kMaxQuotedBytes - 1, 'a') + "\n> …\nwhy?");
}

TEST_F(ReplyContextTest, InARoomAReplyNamesHeraldsMessageByTheIdTheRoomGaveIt) {
  model_->script.push_back({.text = "The meeting is at noon."});
  agent_->OnRoomTurn(xmpp::GroupMessage{.room = J("lobby@conference.localhost"),
                                        .nick = "alice",
                                        .id = "a1",
                                        .body = "herald: when is the meeting?",
                                        .stanza_id = "room-1"},
                     J("agent.localhost"));
  ASSERT_TRUE(WaitForIdle());
  const std::string answer_id = Messages("lobby@conference.localhost").at(0).id;
  // The room relays Herald's answer back with the id it gave it; bob's copy of the id later
  // does not take it over.
  agent_->Handle(xmpp::GroupMessage{.room = J("lobby@conference.localhost"),
                                    .nick = "herald",
                                    .id = answer_id,
                                    .body = "The meeting is at noon.",
                                    .stanza_id = "room-2"});
  agent_->Handle(xmpp::GroupMessage{.room = J("lobby@conference.localhost"),
                                    .nick = "bob",
                                    .id = answer_id,
                                    .body = "spoof",
                                    .stanza_id = "room-3"});

  model_->script.push_back({.text = "Noon, in room 4."});
  agent_->OnRoomTurn(xmpp::GroupMessage{.room = J("lobby@conference.localhost"),
                                        .nick = "alice",
                                        .id = "a2",
                                        .body = "where?",
                                        .stanza_id = "room-4",
                                        .reply = {.id = "room-2",
                                                  .to = J("lobby@conference.localhost/herald"),
                                                  .quote = "> The meeting…\n"}},
                     J("agent.localhost"));
  ASSERT_TRUE(WaitForIdle());
  // In a room each line the model reads starts with its author's nick.
  EXPECT_EQ(LastUserText(), "alice: > The meeting is at noon.\nwhere?");

  model_->script.push_back({.text = "?"});
  agent_->OnRoomTurn(xmpp::GroupMessage{.room = J("lobby@conference.localhost"),
                                        .nick = "alice",
                                        .id = "a3",
                                        .body = "and?",
                                        .stanza_id = "room-5",
                                        .reply = {.id = "room-3", .quote = "> spoof\n"}},
                     J("agent.localhost"));
  ASSERT_TRUE(WaitForIdle());
  EXPECT_EQ(LastUserText(), "alice: > spoof\nand?");
}

}  // namespace
}  // namespace herald::agent
