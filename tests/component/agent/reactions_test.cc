// Reactions (XEP-0444) through the agent runtime: 👍 or 👎 on an answer is feedback (an event, a
// counter, a note in the chat's memory); a reaction to a message Herald does not know, or from
// a stranger, changes nothing; in a room, Herald marks the message it works on with 👀, takes
// it back once it answered, and marks one it could not answer with ⚠️.
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

constexpr char kThumbsUp[] = "\xF0\x9F\x91\x8D";
constexpr char kThumbsUpDark[] = "\xF0\x9F\x91\x8D\xF0\x9F\x8F\xBF";  // with a skin tone
constexpr char kThumbsDown[] = "\xF0\x9F\x91\x8E";

class ReactionsTest : public AgentFixture {
 protected:
  void React(std::string from, std::string id, std::vector<std::string> reactions) {
    agent_->Handle(xmpp::MessageReactions{.from = J(from),
                                          .to = J("agent.localhost"),
                                          .id = std::move(id),
                                          .reactions = std::move(reactions)});
  }

  std::vector<events::EventPtr> Feedback() const {
    std::vector<events::EventPtr> out;
    for (const events::EventPtr& event : events_) {
      if (event->type == events::EventType::kFeedback) out.push_back(event);
    }
    return out;
  }

  // A room turn for alice's message, which the room gave the id `stanza_id`.
  void RoomTurn(std::string stanza_id) {
    agent_->OnRoomTurn(xmpp::GroupMessage{.room = J("lobby@conference.localhost"),
                                          .nick = "alice",
                                          .id = "alice-" + stanza_id,
                                          .body = "herald: hi",
                                          .stanza_id = std::move(stanza_id)},
                       J("agent.localhost"));
  }

  std::vector<xmpp::SendReactions> Marks() const { return ActionsOf<xmpp::SendReactions>(); }

  std::vector<memory::MemoryEntry> Notes(const std::string& jid) {
    const std::vector<memory::MemoryEntry> history =
        store_->History({.kind = base::ConversationRef::Kind::kDirect, .address = jid}, 100)
            .value();
    std::vector<memory::MemoryEntry> notes;
    for (const memory::MemoryEntry& entry : history) {
      if (entry.role == "note") notes.push_back(entry);
    }
    return notes;
  }
};

TEST_F(ReactionsTest, AThumbsUpOnAnAnswerIsRecordedAsFeedback) {
  model_->script.push_back({.text = "Paris is the capital of France."});
  Send("alice@localhost/phone", "capital of France?");
  ASSERT_TRUE(WaitForIdle());
  const std::vector<xmpp::SendMessage> sent = Messages("alice@localhost");
  ASSERT_EQ(sent.size(), 1u);
  ASSERT_TRUE(sent[0].id.starts_with("herald-")) << sent[0].id;

  React("alice@localhost/laptop", sent[0].id, {kThumbsUpDark});
  ASSERT_EQ(Feedback().size(), 1u);
  const events::Event& event = *Feedback()[0];
  EXPECT_EQ(event.conversation, "direct:alice@localhost");
  EXPECT_EQ(event.jid, "alice@localhost");
  EXPECT_NE(std::find(event.attributes.begin(), event.attributes.end(),
                      std::pair<std::string, std::string>("verdict", "positive")),
            event.attributes.end());
  EXPECT_EQ(services_->counters.feedback_positive, 1);
  EXPECT_EQ(services_->counters.feedback_negative, 0);
  ASSERT_TRUE(RunUntil([&] { return !Notes("alice@localhost").empty(); }));
  const std::vector<memory::MemoryEntry> notes = Notes("alice@localhost");
  EXPECT_EQ(notes[0].author, "alice@localhost");
  EXPECT_EQ(notes[0].text,
            absl::StrCat("reacted ", kThumbsUpDark, " to: Paris is the capital of France."));

  React("alice@localhost/phone", sent[0].id, {kThumbsDown});
  EXPECT_EQ(services_->counters.feedback_negative, 1);
  EXPECT_TRUE(Messages("alice@localhost").size() == 1u);  // feedback is not answered
}

TEST_F(ReactionsTest, AReactionToAnUnknownMessageOrFromAStrangerChangesNothing) {
  Send("alice@localhost/phone", "hi");
  ASSERT_TRUE(WaitForIdle());
  const std::string answer_id = Messages("alice@localhost").at(0).id;
  React("alice@localhost/phone", "someone-elses-message", {kThumbsUp});
  React("mallory@evil.example/x", answer_id, {kThumbsUp});
  React("bob@localhost/x", answer_id, {kThumbsUp});  // allowed, but not his chat
  EXPECT_TRUE(Feedback().empty());
  EXPECT_EQ(services_->counters.feedback_positive, 0);
}

TEST_F(ReactionsTest, ARoomMessageIsMarkedWhileHeraldWorksAndUnmarkedOnceAnswered) {
  model_->script.push_back({.text = "hello room"});
  RoomTurn("room-id-7");
  ASSERT_TRUE(WaitForIdle());
  const std::vector<xmpp::SendReactions> marks = Marks();
  ASSERT_EQ(marks.size(), 2u);
  EXPECT_EQ(marks[0].to, J("lobby@conference.localhost"));
  EXPECT_EQ(marks[0].id, "room-id-7");  // the room's own id for the message
  EXPECT_EQ(marks[0].type, "groupchat");
  EXPECT_EQ(marks[0].reactions, std::vector<std::string>{"\xF0\x9F\x91\x80"});
  EXPECT_TRUE(marks[1].reactions.empty());

  options_.room_reactions = false;
  actions_.clear();
  model_->script.push_back({.error = absl::UnavailableError("down")});
  RoomTurn("room-id-8");
  ASSERT_TRUE(WaitForIdle());
  EXPECT_TRUE(Marks().empty());
}

TEST_F(ReactionsTest, CancellingARoomTurnTakesItsMarkBack) {
  model_->script.push_back({.text = "too late", .delay = absl::Seconds(30)});
  RoomTurn("room-id-9");
  ASSERT_TRUE(RunUntil([&] { return Marks().size() == 1; }));
  Conversation* room = agent_->FindConversation(
      {.kind = base::ConversationRef::Kind::kRoom, .address = "lobby@conference.localhost"});
  ASSERT_NE(room, nullptr);
  EXPECT_TRUE(room->Cancel());
  const std::vector<xmpp::SendReactions> marks = Marks();
  ASSERT_EQ(marks.size(), 2u);
  EXPECT_EQ(marks[1].id, "room-id-9");
  EXPECT_TRUE(marks[1].reactions.empty());
  room->Cancel();
  EXPECT_EQ(Marks().size(), 2u);  // taken back once
}

TEST_F(ReactionsTest, ARoomMessageHeraldCouldNotAnswerIsMarkedSo) {
  model_->script.push_back({.error = absl::UnavailableError("down")});
  RoomTurn("room-id-7");
  ASSERT_TRUE(WaitForIdle());
  const std::vector<xmpp::SendReactions> marks = Marks();
  ASSERT_EQ(marks.size(), 2u);
  EXPECT_EQ(marks[1].reactions, std::vector<std::string>{"\xE2\x9A\xA0\xEF\xB8\x8F"});
}

}  // namespace
}  // namespace herald::agent
