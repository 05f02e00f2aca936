#include "skills/builtin/memory_recall.h"

#include <asio.hpp>
#include <chrono>
#include <fstream>
#include <optional>
#include <string>
#include <thread>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "skills/registry.h"
#include "tests/component/memory/temp_dir.h"

namespace herald::skills {
namespace {

using base::ConversationRef;
using memory::MemoryEntry;

const ConversationRef kAlice{.kind = ConversationRef::Kind::kDirect, .address = "alice@localhost"};
const ConversationRef kBob{.kind = ConversationRef::Kind::kDirect, .address = "bob@localhost"};

class MemoryRecallSkillTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto store = memory::MemoryStore::Open(dir_.path() + "/memory");
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = std::move(*store);
    skill_ = std::make_unique<MemoryRecallSkill>(io_, workers_, *store_);
  }

  void Remember(const ConversationRef& who, const std::string& text) {
    ASSERT_TRUE(store_
                    ->Append(who, MemoryEntry{.time = absl::FromUnixSeconds(1736847000),
                                              .role = "user",
                                              .author = who.address,
                                              .text = text})
                    .ok());
  }

  // Runs the skill as the agent does: on the I/O loop, answer awaited with a timeout.
  absl::StatusOr<std::string> Recall(const ConversationRef& who, const nlohmann::json& arguments) {
    std::optional<absl::StatusOr<std::string>> result;
    std::thread::id done_thread;
    auto guard = asio::make_work_guard(io_);
    skill_->Execute(arguments, SkillContext{.conversation_id = "c1", .conversation = who},
                    [&](absl::StatusOr<std::string> answer) {
                      result = std::move(answer);
                      done_thread = std::this_thread::get_id();
                      guard.reset();
                    });
    EXPECT_FALSE(result.has_value()) << "searched inside Execute, on the I/O loop";
    io_.run_for(std::chrono::seconds(10));
    io_.restart();
    EXPECT_EQ(done_thread, std::this_thread::get_id()) << "answered off the I/O loop";
    if (!result.has_value()) return absl::DeadlineExceededError("no answer");
    return *result;
  }

  memory::TempDir dir_;
  asio::io_context io_;
  asio::thread_pool workers_{2};
  std::unique_ptr<memory::MemoryStore> store_;
  std::unique_ptr<MemoryRecallSkill> skill_;
};

TEST_F(MemoryRecallSkillTest, FindsWhatTheUserSaidWithItsFile) {
  Remember(kAlice, "My cat is called Biscuit.");
  Remember(kAlice, "I am planning a trip to Lisbon in May.");
  absl::StatusOr<std::string> answer = Recall(kAlice, {{"query", "cat name"}});
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_EQ(*answer,
            "1 memory matches \"cat name\":\n"
            "1. [history.md] alice@localhost (user, 2025-01-14 09:30 UTC): My cat is called "
            "Biscuit.");
}

TEST_F(MemoryRecallSkillTest, TheMessageBeingAnsweredIsNotItsOwnResult) {
  Remember(kAlice, "My cat is called Biscuit.");
  const absl::Time asked_at = absl::FromUnixSeconds(1736847600);
  const std::string question = "What is my cat called?";
  ASSERT_TRUE(store_
                  ->Append(kAlice, MemoryEntry{.time = asked_at,
                                               .role = "user",
                                               .author = "alice@localhost",
                                               .text = question})
                  .ok());
  std::optional<absl::StatusOr<std::string>> result;
  auto guard = asio::make_work_guard(io_);
  skill_->Execute({{"query", "my cat called"}},
                  SkillContext{.conversation_id = "c1",
                               .conversation = kAlice,
                               .answering = AnsweredMessage{.time = asked_at,
                                                            .author = "alice@localhost",
                                                            .text = question}},
                  [&](absl::StatusOr<std::string> answer) {
                    result = std::move(answer);
                    guard.reset();
                  });
  io_.run_for(std::chrono::seconds(10));
  io_.restart();
  ASSERT_TRUE(result.has_value() && result->ok());
  EXPECT_THAT(**result, ::testing::HasSubstr("Biscuit"));
  EXPECT_THAT(**result, ::testing::Not(::testing::HasSubstr(question)));
  // Without the run's message, the question is found too (it is in history.md).
  absl::StatusOr<std::string> plain = Recall(kAlice, {{"query", "my cat called"}});
  ASSERT_TRUE(plain.ok());
  EXPECT_THAT(*plain, ::testing::HasSubstr(question));
}

TEST_F(MemoryRecallSkillTest, NeverShowsAnotherUsersMemory) {
  Remember(kAlice, "Alice's password hint is marmalade.");
  Remember(kBob, "Bob's password hint is pineapple.");
  absl::StatusOr<std::string> alice = Recall(kAlice, {{"query", "password hint"}});
  ASSERT_TRUE(alice.ok());
  EXPECT_TRUE(absl::StrContains(*alice, "marmalade")) << *alice;
  EXPECT_FALSE(absl::StrContains(*alice, "pineapple")) << *alice;
  EXPECT_FALSE(absl::StrContains(*alice, "bob")) << *alice;

  absl::StatusOr<std::string> bob = Recall(kBob, {{"query", "marmalade"}});
  ASSERT_TRUE(bob.ok());
  EXPECT_EQ(*bob, "No memory matches \"marmalade\".");
}

TEST_F(MemoryRecallSkillTest, IncludesSharedKnowledgeAndArchivedSessions) {
  Remember(kAlice, "We talked about the opening hours before.");
  ASSERT_TRUE(store_->ArchiveSession(kAlice, absl::FromUnixSeconds(1736850000)).ok());
  std::filesystem::create_directories(dir_.path() + "/memory/shared");
  std::ofstream(dir_.path() + "/memory/shared/faq.md") << "# FAQ\n\nOpening hours: 9 to 5.\n";
  absl::StatusOr<std::string> answer = Recall(kAlice, {{"query", "opening hours"}});
  ASSERT_TRUE(answer.ok());
  EXPECT_TRUE(absl::StrContains(*answer, "[shared/faq.md] Opening hours: 9 to 5.")) << *answer;
  EXPECT_TRUE(absl::StrContains(*answer, "[sessions/20250114-102000.md] ")) << *answer;
}

TEST_F(MemoryRecallSkillTest, ReturnsAtMostTheLimit) {
  for (int i = 0; i < 12; ++i) Remember(kAlice, "apple number " + std::to_string(i));
  absl::StatusOr<std::string> answer = Recall(kAlice, {{"query", "apple"}, {"limit", 3}});
  ASSERT_TRUE(answer.ok());
  EXPECT_TRUE(absl::StartsWith(*answer, "3 memories match \"apple\":")) << *answer;
  EXPECT_TRUE(absl::StrContains(*answer, "\n3. ")) << *answer;
  EXPECT_FALSE(absl::StrContains(*answer, "\n4. ")) << *answer;
  answer = Recall(kAlice, {{"query", "apple"}});
  ASSERT_TRUE(answer.ok());
  EXPECT_TRUE(absl::StartsWith(*answer, "5 memories match")) << *answer;
}

TEST_F(MemoryRecallSkillTest, ReportsAFailedSearchWithoutInternalPaths) {
  absl::StatusOr<std::string> answer = Recall(ConversationRef{}, {{"query", "x"}});
  EXPECT_TRUE(absl::IsUnavailable(answer.status()));
  EXPECT_FALSE(absl::StrContains(answer.status().message(), dir_.path()));
}

TEST_F(MemoryRecallSkillTest, DeclaresTheLimitsItsSchemaEnforces) {
  SkillRegistry registry;
  asio::thread_pool pool(1);
  ASSERT_TRUE(registry.Register(std::make_unique<MemoryRecallSkill>(io_, pool, *store_)).ok());
  ASSERT_TRUE(registry.SetEnabled({"memory_recall"}).ok());
  EXPECT_TRUE(registry.Check("memory_recall", {{"query", "x"}, {"limit", 10}}).ok());
  EXPECT_EQ(registry.Check("memory_recall", {{"limit", 3}}).status().message(),
            "tool 'memory_recall': missing required argument 'query'");
  EXPECT_EQ(registry.Check("memory_recall", {{"query", "x"}, {"limit", 11}}).status().message(),
            "tool 'memory_recall': argument 'limit': must be at most 10, got 11");
  EXPECT_EQ(registry.Check("memory_recall", {{"query", "x"}, {"limit", 0}}).status().message(),
            "tool 'memory_recall': argument 'limit': must be at least 1, got 0");
  EXPECT_EQ(registry.Check("memory_recall", {{"query", ""}}).status().message(),
            "tool 'memory_recall': argument 'query': must have at least 1 character, got 0");
  EXPECT_FALSE(registry.Check("memory_recall", {{"query", "x"}, {"who", "bob"}}).ok());
}

}  // namespace
}  // namespace herald::skills
