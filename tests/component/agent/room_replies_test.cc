// In a room Herald's answers say which message they answer (XEP-0461): the id the room gave it
// (XEP-0359), or the sender's own id when the room gave none, and its author's occupant JID.
#include <string>
#include <vector>

#include "component/agent/agent.h"
#include "gtest/gtest.h"
#include "tests/component/agent/agent_fixture.h"

namespace herald::agent {
namespace {

using testing::AgentFixture;
using testing::J;

class RoomRepliesTest : public AgentFixture {
 protected:
  void SayInRoom(std::string nick, std::string body, std::string id, std::string stanza_id) {
    agent_->OnRoomTurn(xmpp::GroupMessage{.room = J("lobby@conference.localhost"),
                                          .nick = std::move(nick),
                                          .id = std::move(id),
                                          .body = std::move(body),
                                          .stanza_id = std::move(stanza_id)},
                       J("agent.localhost"));
  }
};

TEST_F(RoomRepliesTest, AnAnswerRefersToTheRoomsIdForTheMessage) {
  model_->script.push_back({.text = "Hello Alice!"});
  SayInRoom("Alice", "herald: hi", "alice-1", "room-7");
  ASSERT_TRUE(WaitForMessages(1));
  const xmpp::SendMessage answer = Messages()[0];
  EXPECT_EQ(answer.type, "groupchat");
  EXPECT_EQ(answer.body, "Hello Alice!");
  EXPECT_EQ(answer.reply_id, "room-7");
  EXPECT_EQ(answer.reply_to, J("lobby@conference.localhost/Alice"));
  ASSERT_TRUE(WaitForIdle());
}

TEST_F(RoomRepliesTest, WithoutARoomIdTheSendersIdIsUsedAndWithoutEitherNothing) {
  model_->script.push_back({.text = "one"});
  model_->script.push_back({.text = "two"});
  SayInRoom("Bob", "herald: first", "bob-1", "");
  ASSERT_TRUE(WaitForMessages(1));
  SayInRoom("Bob", "herald: second", "", "");
  ASSERT_TRUE(WaitForMessages(2));
  ASSERT_TRUE(WaitForIdle());
  EXPECT_EQ(Messages()[0].reply_id, "bob-1");
  EXPECT_EQ(Messages()[1].reply_id, "");
  EXPECT_TRUE(Messages()[1].reply_to.empty());
}

TEST_F(RoomRepliesTest, ChatAnswersCarryNoReplyReference) {
  model_->script.push_back({.text = "Hello"});
  Send("alice@localhost/phone", "hi");
  ASSERT_TRUE(WaitForMessages(1));
  ASSERT_TRUE(WaitForIdle());
  EXPECT_EQ(Messages()[0].reply_id, "");
}

}  // namespace
}  // namespace herald::agent
