#include "component/storage/shared_conversations.h"

#include <functional>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "component/base/event_loop.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/postgres_server.h"

namespace herald::storage {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

xmpp::ChatMessage Message(std::string from, std::string id, std::string body) {
  return xmpp::ChatMessage{.from = *xmpp::Jid::Parse(from),
                           .to = *xmpp::Jid::Parse("agent.example.org"),
                           .id = std::move(id),
                           .type = "chat",
                           .body = std::move(body)};
}

// What one instance's agent was handed.
struct Delivered {
  std::string body;
  std::shared_ptr<void> settled;
};

// One instance: its own loop and pool, an inbox on the shared database, and a coordinator
// whose agent records what it is handed.
struct Instance {
  Instance(std::shared_ptr<base::PostgresDatabase> db, const std::string& id,
           absl::Duration poll = absl::Milliseconds(50))
      : loop(/*worker_threads=*/2) {
    absl::StatusOr<std::unique_ptr<ConversationInbox>> opened =
        ConversationInbox::Open(db, id, absl::Seconds(1));
    EXPECT_TRUE(opened.ok()) << opened.status();
    inbox = *std::move(opened);
    shared = std::make_unique<SharedConversations>(
        loop.io(), loop.workers(), *inbox,
        [this](xmpp::ChatMessage&& message, std::shared_ptr<void> settled) {
          delivered.push_back({message.body, std::move(settled)});
        },
        [this](const std::string& conversation) { stopped.push_back(conversation); },
        SharedConversations::Options{.poll = poll, .beat = absl::Milliseconds(200)});
  }
  ~Instance() {
    delivered.clear();  // what is still held is let go (and marked, when alive) first
    if (!dead) Die();
  }
  // Stops as kill -9 would: no more renewals, nothing marked, nothing let go (the loop never
  // runs again; `shared` lets go of its leases only when the test ends).
  void Die() {
    dead = true;
    loop.io().stop();
    loop.JoinWorkers();
  }
  std::vector<std::string> Bodies() const {
    std::vector<std::string> bodies;
    for (const Delivered& d : delivered) bodies.push_back(d.body);
    return bodies;
  }

  base::EventLoop loop;
  std::unique_ptr<ConversationInbox> inbox;
  std::unique_ptr<SharedConversations> shared;
  std::vector<Delivered> delivered;
  std::vector<std::string> stopped;
  bool dead = false;
};

class SharedConversationsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::shared_ptr<base::PostgresDatabase>> db =
        testing::ConnectNewDatabase(/*pool_size=*/4);
    ASSERT_TRUE(db.ok()) << db.status();
    db_ = *std::move(db);
    server_ = *testing::SharedPostgresServer();
    a_ = std::make_unique<Instance>(db_, "a");
    b_ = std::make_unique<Instance>(db_, "b");
  }

  // Runs both loops until `done` holds; false after `timeout`.
  bool RunUntil(const std::function<bool()>& done, absl::Duration timeout = absl::Seconds(10)) {
    const absl::Time deadline = absl::Now() + timeout;
    while (!done()) {
      if (absl::Now() > deadline) return false;
      for (Instance* i : {a_.get(), b_.get()}) {
        if (!i->dead) {
          i->loop.io().restart();
          i->loop.io().run_for(std::chrono::milliseconds(5));
        }
      }
    }
    return true;
  }

  int Unanswered() {
    absl::StatusOr<base::PostgresResult> rows =
        db_->Exec("SELECT count(*) FROM herald_inbox WHERE answered_at IS NULL");
    return rows.ok() ? static_cast<int>(rows->Int64(0, 0)) : -1;
  }

  testing::PostgresServer* server_ = nullptr;
  std::shared_ptr<base::PostgresDatabase> db_;
  std::unique_ptr<Instance> a_;
  std::unique_ptr<Instance> b_;
};

TEST_F(SharedConversationsTest, EveryMessageOfAConversationReachesTheInstanceThatAnswersIt) {
  a_->shared->Accept(Message("alice@example.org/phone", "m1", "one"));
  ASSERT_TRUE(RunUntil([&] { return a_->delivered.size() == 1; }));
  // The server hands alice's next message to b: a answers it, b does not.
  b_->shared->Accept(Message("alice@example.org/laptop", "m2", "two"));
  b_->shared->Accept(Message("bob@example.org/x", "b1", "bob's"));
  ASSERT_TRUE(RunUntil([&] { return a_->delivered.size() == 2 && b_->delivered.size() == 1; }));
  EXPECT_THAT(a_->Bodies(), ElementsAre("one", "two"));
  EXPECT_THAT(b_->Bodies(), ElementsAre("bob's"));

  // A message is marked answered when the agent lets go of it, and handed out once: polls
  // that follow (many in 300 ms) do not hand it out again.
  EXPECT_EQ(Unanswered(), 3);
  for (Delivered& d : a_->delivered) d.settled.reset();
  b_->delivered[0].settled.reset();
  ASSERT_TRUE(RunUntil([&] { return Unanswered() == 0; }));
  RunUntil([] { return false; }, absl::Milliseconds(300));
  EXPECT_EQ(a_->delivered.size(), 2u);
  EXPECT_EQ(b_->delivered.size(), 1u);
  EXPECT_EQ(a_->shared->held(), 1u);
}

TEST_F(SharedConversationsTest, TheHolderHearsAtOnceWhatAnotherInstanceAccepted) {
  // Polls far apart: only the notification can bring b's message to a in time.
  a_ = std::make_unique<Instance>(db_, "a", absl::Seconds(30));
  b_ = std::make_unique<Instance>(db_, "b", absl::Seconds(30));
  a_->shared->Accept(Message("alice@example.org/phone", "m1", "one"));
  ASSERT_TRUE(RunUntil([&] { return a_->delivered.size() == 1; }));
  // Let a's listener connect (a beat, then the connection).
  RunUntil([] { return false; }, absl::Milliseconds(500));
  const absl::Time sent = absl::Now();
  b_->shared->Accept(Message("alice@example.org/laptop", "m2", "two"));
  ASSERT_TRUE(RunUntil([&] { return a_->delivered.size() == 2; }, absl::Seconds(5)));
  EXPECT_LT(absl::Now() - sent, absl::Seconds(2));
  EXPECT_THAT(a_->Bodies(), ElementsAre("one", "two"));
  EXPECT_TRUE(b_->delivered.empty());
}

TEST_F(SharedConversationsTest, WhenTheAnsweringInstanceDiesAnotherAnswersWhatWasLeft) {
  a_->shared->Accept(Message("alice@example.org/phone", "m1", "answered"));
  a_->shared->Accept(Message("alice@example.org/phone", "m2", "in flight"));
  ASSERT_TRUE(RunUntil([&] { return a_->delivered.size() == 2; }));
  a_->delivered[0].settled.reset();
  ASSERT_TRUE(RunUntil([&] { return Unanswered() == 1; }));

  // a dies in the middle of m2's turn. Its users' next messages reach b, which keeps them for
  // a while a's lease (1 s) runs, then takes the conversation and answers what was left.
  const absl::Time died = absl::Now();
  a_->Die();
  b_->shared->Accept(Message("alice@example.org/phone", "m3", "after"));
  ASSERT_TRUE(RunUntil([&] { return b_->delivered.size() == 2; }));
  const absl::Duration took = absl::Now() - died;
  EXPECT_THAT(b_->Bodies(), ElementsAre("in flight", "after"));
  // The lease time, then at most a beat and a poll.
  EXPECT_GE(took, absl::Milliseconds(800));
  EXPECT_LT(took, absl::Seconds(3));

  // a's handle, let go after its death, marks nothing; b's do.
  a_->delivered[1].settled.reset();
  EXPECT_EQ(Unanswered(), 2);
  for (Delivered& d : b_->delivered) d.settled.reset();
  ASSERT_TRUE(RunUntil([&] { return Unanswered() == 0; }));
  absl::StatusOr<base::PostgresResult> by =
      db_->Exec("SELECT answered_by, answered_token FROM herald_inbox ORDER BY id");
  ASSERT_TRUE(by.ok());
  ASSERT_EQ(by->rows(), 3);
  EXPECT_EQ(by->Text(0, 0), "a");
  EXPECT_EQ(by->Text(1, 0), "b");
  EXPECT_EQ(by->Int64(1, 1), 2);
  EXPECT_EQ(by->Text(2, 0), "b");
  EXPECT_THAT(b_->stopped, IsEmpty());
}

TEST_F(SharedConversationsTest, AnInstanceThatStopsCleanlyLeavesItsConversationsAtOnce) {
  a_->shared->Accept(Message("alice@example.org/phone", "m1", "cut short"));
  ASSERT_TRUE(RunUntil([&] { return a_->delivered.size() == 1; }));
  // a stops (SIGTERM) in the middle of the turn: b answers the message at its next beat, well
  // before a's lease (1 s) would have run out.
  const absl::Time stopped = absl::Now();
  a_->Die();
  a_->shared.reset();
  ASSERT_TRUE(RunUntil([&] { return b_->delivered.size() == 1; }));
  EXPECT_LT(absl::Now() - stopped, absl::Milliseconds(800));
  EXPECT_THAT(b_->Bodies(), ElementsAre("cut short"));
}

TEST_F(SharedConversationsTest, AnOutageLongerThanTheLeaseStopsTurnsButKeepsAnswersAnswered) {
  b_->Die();  // alone: nobody takes a's conversations while the database is away
  a_->shared->Accept(Message("alice@example.org/phone", "m1", "answered in the outage"));
  a_->shared->Accept(Message("alice@example.org/phone", "m2", "running in the outage"));
  ASSERT_TRUE(RunUntil([&] { return a_->delivered.size() == 2; }));

  // The database goes away; m1's answer goes out meanwhile, its mark cannot be written. Once
  // a has not renewed for most of the lease (1 s), it stops the turn that still runs (m2).
  ASSERT_TRUE(server_->Stop().ok());
  a_->delivered[0].settled.reset();
  ASSERT_TRUE(RunUntil([&] { return !a_->stopped.empty(); }));
  EXPECT_THAT(a_->stopped, ElementsAre("alice@example.org"));
  a_->delivered[1].settled.reset();  // the stopped turn ends

  // Back: a renews the lease nobody took, marks m1 (answered, under its token) and hands out
  // m2 again, which was never answered. m1 is not handed out again.
  ASSERT_TRUE(server_->Start().ok());
  ASSERT_TRUE(RunUntil([&] { return a_->delivered.size() == 3; }));
  EXPECT_EQ(a_->delivered[2].body, "running in the outage");
  a_->delivered[2].settled.reset();
  ASSERT_TRUE(RunUntil([&] { return Unanswered() == 0; }));
  RunUntil([] { return false; }, absl::Milliseconds(300));
  EXPECT_EQ(a_->delivered.size(), 3u);
}

TEST_F(SharedConversationsTest, AnInstanceWhoseLeaseWasTakenStopsTheConversation) {
  a_->shared->Accept(Message("alice@example.org/phone", "m1", "one"));
  ASSERT_TRUE(RunUntil([&] { return a_->delivered.size() == 1; }));
  // a is alive but its lease is taken from it (as after a long pause): at its next beat it
  // stops the conversation, and its late answer is not marked.
  ASSERT_TRUE(db_->Exec("UPDATE herald_leases SET owner = 'b', token = token + 1").ok());
  ASSERT_TRUE(RunUntil([&] { return !a_->stopped.empty(); }));
  EXPECT_THAT(a_->stopped, ElementsAre("alice@example.org"));
  a_->delivered[0].settled.reset();
  RunUntil([] { return false; }, absl::Milliseconds(300));
  EXPECT_EQ(Unanswered(), 1);
  ASSERT_TRUE(RunUntil([&] { return b_->delivered.size() == 1; }));
  EXPECT_THAT(b_->Bodies(), ElementsAre("one"));
}

}  // namespace
}  // namespace herald::storage
