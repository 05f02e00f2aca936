#include "component/storage/conversation_inbox.h"

#include <string>
#include <thread>

#include "absl/time/clock.h"
#include "component/storage/instance_registry.h"
#include "component/storage/room_leases.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/postgres_server.h"

namespace herald::storage {
namespace {

using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

xmpp::ChatMessage Message(std::string from, std::string id, std::string body) {
  return xmpp::ChatMessage{.from = *xmpp::Jid::Parse(from),
                           .to = *xmpp::Jid::Parse("agent.example.org"),
                           .id = std::move(id),
                           .type = "chat",
                           .body = std::move(body)};
}

class ConversationInboxTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::shared_ptr<base::PostgresDatabase>> db = testing::ConnectNewDatabase();
    ASSERT_TRUE(db.ok()) << db.status();
    db_ = *std::move(db);
  }

  std::unique_ptr<ConversationInbox> Open(const std::string& instance,
                                          absl::Duration lease = absl::Seconds(10)) {
    absl::StatusOr<std::unique_ptr<ConversationInbox>> inbox =
        ConversationInbox::Open(db_, instance, lease);
    EXPECT_TRUE(inbox.ok()) << inbox.status();
    return inbox.ok() ? *std::move(inbox) : nullptr;
  }

  std::shared_ptr<base::PostgresDatabase> db_;
};

TEST(InboxMessageTest, KeepsWhatTheAgentReads) {
  xmpp::ChatMessage message = Message("alice@example.org/phone", "m1", "hello \"there\"\n");
  message.thread = "t1";
  message.receipt_requested = true;
  message.markable = true;
  message.reply =
      xmpp::Reply{.id = "h7", .to = *xmpp::Jid::Parse("agent.example.org"), .quote = "> earlier\n"};
  message.attachments.push_back({.url = "https://files.example.org/a.png", .description = "a"});
  message.body_is_attachment_url = true;
  absl::StatusOr<xmpp::ChatMessage> back = DecodeInboxMessage(EncodeInboxMessage(message));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->from.ToString(), "alice@example.org/phone");
  EXPECT_EQ(back->to.ToString(), "agent.example.org");
  EXPECT_EQ(back->id, "m1");
  EXPECT_EQ(back->type, "chat");
  EXPECT_EQ(back->body, "hello \"there\"\n");
  EXPECT_EQ(back->thread, "t1");
  EXPECT_TRUE(back->receipt_requested);
  EXPECT_TRUE(back->markable);
  EXPECT_EQ(back->reply.id, "h7");
  EXPECT_EQ(back->reply.to.ToString(), "agent.example.org");
  EXPECT_EQ(back->reply.quote, "> earlier\n");
  ASSERT_EQ(back->attachments.size(), 1u);
  EXPECT_EQ(back->attachments[0].url, "https://files.example.org/a.png");
  EXPECT_EQ(back->attachments[0].description, "a");
  EXPECT_TRUE(back->body_is_attachment_url);

  EXPECT_EQ(DecodeInboxMessage("not json").status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(DecodeInboxMessage("{\"from\": \"\"}").status().code(), absl::StatusCode::kDataLoss);
}

TEST_F(ConversationInboxTest, TheFirstToAcceptAnswersAndTheOthersLeaveItTheMessages) {
  auto a = Open("a");
  auto b = Open("b");
  absl::StatusOr<Acceptance> first = a->Accept(Message("alice@example.org/phone", "m1", "one"));
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_FALSE(first->duplicate);
  EXPECT_EQ(first->token, 1);

  // b gets alice's next message (the server chose it): b keeps it for a.
  absl::StatusOr<Acceptance> second = b->Accept(Message("alice@example.org/laptop", "m2", "two"));
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_FALSE(second->token.has_value());
  EXPECT_GT(second->id, first->id);

  // A conversation nobody holds is b's.
  absl::StatusOr<Acceptance> bob = b->Accept(Message("bob@example.org/x", "m1", "hi"));
  ASSERT_TRUE(bob.ok());
  EXPECT_EQ(bob->token, 1);

  absl::StatusOr<std::vector<InboxMessage>> owned = a->Owned();
  ASSERT_TRUE(owned.ok()) << owned.status();
  ASSERT_EQ(owned->size(), 2u);
  EXPECT_EQ((*owned)[0].message.body, "one");
  EXPECT_EQ((*owned)[1].message.body, "two");
  EXPECT_EQ((*owned)[1].message.from.ToString(), "alice@example.org/laptop");
  EXPECT_EQ((*owned)[1].conversation, "alice@example.org");
  EXPECT_EQ((*owned)[1].token, 1);
  absl::StatusOr<std::vector<InboxMessage>> bs = b->Owned();
  ASSERT_TRUE(bs.ok());
  EXPECT_THAT(*bs, ElementsAre(Field(&InboxMessage::conversation, "bob@example.org")));

  // Answered messages are not read again, and are marked once.
  EXPECT_EQ(a->MarkAnswered(first->id, "alice@example.org", 1).value_or(false), true);
  EXPECT_EQ(a->MarkAnswered(first->id, "alice@example.org", 1).value_or(true), false);
  owned = a->Owned();
  ASSERT_TRUE(owned.ok());
  EXPECT_THAT(*owned, ElementsAre(Field(&InboxMessage::id, second->id)));
}

TEST_F(ConversationInboxTest, AResentStanzaIsAcceptedOnce) {
  auto a = Open("a");
  ASSERT_TRUE(a->Accept(Message("alice@example.org/phone", "m1", "one")).ok());
  absl::StatusOr<Acceptance> again = a->Accept(Message("alice@example.org/phone", "m1", "one"));
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->duplicate);
  // The same id for another message (a client that counts from 1 after each restart) is a new
  // message.
  absl::StatusOr<Acceptance> reused = a->Accept(Message("alice@example.org/phone", "m1", "two"));
  ASSERT_TRUE(reused.ok());
  EXPECT_FALSE(reused->duplicate);
  // An id and a body far longer than an index entry are stored and told apart all the same.
  std::string long_id;  // incompressible, as PostgreSQL would otherwise shrink it to fit
  for (uint32_t x = 1; long_id.size() < 5000;) {
    x = x * 1103515245u + 12345u;
    long_id += static_cast<char>('a' + (x >> 16) % 26);
  }
  const std::string long_body(100000, 'b');
  absl::StatusOr<Acceptance> big =
      a->Accept(Message("alice@example.org/phone", long_id, long_body));
  ASSERT_TRUE(big.ok()) << big.status();
  EXPECT_FALSE(big->duplicate);
  big = a->Accept(Message("alice@example.org/phone", long_id, long_body));
  ASSERT_TRUE(big.ok()) << big.status();
  EXPECT_TRUE(big->duplicate);
  // Without an id there is nothing to tell them apart by: both are kept.
  ASSERT_TRUE(a->Accept(Message("alice@example.org/phone", "", "x")).ok());
  absl::StatusOr<Acceptance> no_id = a->Accept(Message("alice@example.org/phone", "", "x"));
  ASSERT_TRUE(no_id.ok());
  EXPECT_FALSE(no_id->duplicate);
  EXPECT_EQ(a->Owned()->size(), 5u);
}

TEST_F(ConversationInboxTest, WhenAnInstanceStopsRenewingAnotherTakesOverWhatItLeftUnanswered) {
  auto a = Open("a", absl::Seconds(1));
  auto b = Open("b", absl::Seconds(1));
  absl::StatusOr<Acceptance> accepted = a->Accept(Message("alice@example.org/p", "m1", "one"));
  ASSERT_TRUE(accepted.ok());
  ASSERT_TRUE(a->Accept(Message("carol@example.org/p", "c1", "done")).ok());
  ASSERT_EQ(a->MarkAnswered(a->Owned()->at(1).id, "carol@example.org", 1).value_or(false), true);

  // While a's lease runs, b takes nothing.
  EXPECT_EQ(b->TakeOver().value_or(-1), 0);
  absl::StatusOr<absl::flat_hash_map<std::string, int64_t>> held = a->Renew();
  ASSERT_TRUE(held.ok());
  EXPECT_THAT(*held,
              UnorderedElementsAre(std::pair<const std::string, int64_t>("alice@example.org", 1),
                                   std::pair<const std::string, int64_t>("carol@example.org", 1)));

  // a stops renewing (it died). Once its lease ran out, b takes the conversation that still
  // waits for an answer, and only that one.
  absl::SleepFor(absl::Milliseconds(1200));
  EXPECT_EQ(b->TakeOver().value_or(-1), 1);
  absl::StatusOr<std::vector<InboxMessage>> owned = b->Owned();
  ASSERT_TRUE(owned.ok());
  ASSERT_THAT(*owned, ElementsAre(Field(&InboxMessage::id, accepted->id)));
  EXPECT_EQ((*owned)[0].token, 2);
  EXPECT_THAT(*a->Owned(), IsEmpty());

  // a's late answer marks nothing: its token is no longer the lease's.
  EXPECT_EQ(a->MarkAnswered(accepted->id, "alice@example.org", 1).value_or(true), false);
  held = a->Renew();
  ASSERT_TRUE(held.ok());
  EXPECT_FALSE(held->contains("alice@example.org"));
  EXPECT_EQ(b->MarkAnswered(accepted->id, "alice@example.org", 2).value_or(false), true);

  // A message a accepts now is b's to answer.
  absl::StatusOr<Acceptance> later = a->Accept(Message("alice@example.org/p", "m2", "two"));
  ASSERT_TRUE(later.ok());
  EXPECT_FALSE(later->token.has_value());
  EXPECT_THAT(*b->Owned(), ElementsAre(Field(&InboxMessage::id, later->id)));
}

TEST_F(ConversationInboxTest, AnAnswerUnderAnOlderTokenOfTheSameInstanceMarksNothing) {
  // a's lease ran out (a long pause) and a took the conversation again: what it began under
  // the old token may have been answered meanwhile by another, so it is not marked.
  auto a = Open("a", absl::Milliseconds(500));
  absl::StatusOr<Acceptance> accepted = a->Accept(Message("alice@example.org/p", "m1", "one"));
  ASSERT_TRUE(accepted.ok());
  absl::SleepFor(absl::Milliseconds(700));
  EXPECT_EQ(a->TakeOver().value_or(-1), 1);
  EXPECT_EQ(a->MarkAnswered(accepted->id, "alice@example.org", 1).value_or(true), false);
  EXPECT_EQ(a->MarkAnswered(accepted->id, "alice@example.org", 2).value_or(false), true);
}

TEST_F(ConversationInboxTest, TheRegistryCountsTheConversationsAndRoomsEachInstanceHolds) {
  absl::StatusOr<std::unique_ptr<InstanceRegistry>> registry =
      InstanceRegistry::Join(db_, "host-a", 100);
  ASSERT_TRUE(registry.ok()) << registry.status();
  auto a = Open((*registry)->id());
  auto b = Open("b");
  absl::StatusOr<std::unique_ptr<RoomLeases>> rooms = RoomLeases::Open(db_, (*registry)->id());
  ASSERT_TRUE(rooms.ok()) << rooms.status();
  ASSERT_TRUE(a->Accept(Message("alice@example.org/p", "m1", "one")).ok());
  ASSERT_TRUE(a->Accept(Message("bob@example.org/p", "m1", "one")).ok());
  ASSERT_TRUE(b->Accept(Message("carol@example.org/p", "m1", "one")).ok());
  ASSERT_TRUE((*rooms)->Claim({"lobby@conference.example.org"}).ok());
  ASSERT_TRUE((*registry)->Beat().ok());
  EXPECT_EQ((*registry)->Known().at(0).conversations, 0);  // not counted until asked
  EXPECT_EQ((*registry)->Known().at(0).rooms, 0);
  (*registry)->CountLeases();
  ASSERT_TRUE((*registry)->Beat().ok());
  EXPECT_EQ((*registry)->Known().at(0).conversations, 2);
  EXPECT_EQ((*registry)->Known().at(0).rooms, 1);
  ASSERT_TRUE(a->Release().ok());
  ASSERT_TRUE((*rooms)->Release().ok());
  ASSERT_TRUE((*registry)->Beat().ok());
  EXPECT_EQ((*registry)->Known().at(0).conversations, 0);
  EXPECT_EQ((*registry)->Known().at(0).rooms, 0);
}

TEST_F(ConversationInboxTest, TwoInstancesTakingOverAtOnceSplitTheConversations) {
  auto dead = Open("dead", absl::Milliseconds(500));
  for (int i = 0; i < 40; ++i) {
    ASSERT_TRUE(
        dead->Accept(Message(absl::StrCat("user", i, "@example.org/r"), "m", "hello")).ok());
  }
  absl::SleepFor(absl::Milliseconds(700));
  auto b = Open("b");
  auto c = Open("c");
  int by_b = 0;
  int by_c = 0;
  std::thread tb([&] { by_b = b->TakeOver().value_or(-1); });
  std::thread tc([&] { by_c = c->TakeOver().value_or(-1); });
  tb.join();
  tc.join();
  EXPECT_EQ(by_b + by_c, 40);
  EXPECT_EQ(b->Owned()->size() + c->Owned()->size(), 40u);
  absl::StatusOr<std::vector<ConversationInbox::Lease>> leases = b->Leases();
  ASSERT_TRUE(leases.ok());
  ASSERT_EQ(leases->size(), 40u);
  for (const ConversationInbox::Lease& lease : *leases) {
    EXPECT_TRUE(lease.owner == "b" || lease.owner == "c") << lease.owner;
    EXPECT_EQ(lease.token, 2);
  }
}

}  // namespace
}  // namespace herald::storage
