#include "skills/builtin/memory_save.h"

#include <asio.hpp>
#include <chrono>
#include <optional>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "skills/registry.h"
#include "tests/component/memory/temp_dir.h"

namespace herald::skills {
namespace {

using base::ConversationRef;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

const ConversationRef kAlice{.kind = ConversationRef::Kind::kDirect, .address = "alice@localhost"};
const ConversationRef kBob{.kind = ConversationRef::Kind::kDirect, .address = "bob@localhost"};
const ConversationRef kLobby{.kind = ConversationRef::Kind::kRoom,
                             .address = "lobby@conference.localhost"};

class MemorySaveSkillTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = memory::MemoryStore::Open(dir_.path() + "/memory").value();
    skill_ = std::make_unique<MemorySaveSkill>(io_, workers_, *store_);
  }

  absl::StatusOr<std::string> Save(const ConversationRef& where, const nlohmann::json& arguments,
                                   bool writer = false, std::string author = "alice@localhost") {
    std::optional<absl::StatusOr<std::string>> result;
    auto guard = asio::make_work_guard(io_);
    skill_->Execute(arguments,
                    SkillContext{.conversation_id = "c1",
                                 .conversation = where,
                                 .answering = AnsweredMessage{.author = std::move(author)},
                                 .may_write_shared_memory = writer},
                    [&](absl::StatusOr<std::string> answer) {
                      result = std::move(answer);
                      guard.reset();
                    });
    io_.run_for(std::chrono::seconds(10));
    io_.restart();
    if (!result.has_value()) return absl::DeadlineExceededError("no answer");
    return *result;
  }

  std::vector<std::string> Found(const ConversationRef& who, std::string_view query) {
    std::vector<std::string> found;
    const std::vector<memory::MemoryHit> hits = store_->Search(who, query, 10).value();
    for (const memory::MemoryHit& hit : hits) {
      found.push_back(hit.file);
    }
    return found;
  }

  memory::TempDir dir_;
  asio::io_context io_;
  asio::thread_pool workers_{1};
  std::unique_ptr<memory::MemoryStore> store_;
  std::unique_ptr<MemorySaveSkill> skill_;
};

TEST_F(MemorySaveSkillTest, KeepsANoteInTheConversationByDefault) {
  absl::StatusOr<std::string> answer = Save(kAlice, {{"text", "Alice takes her tea green."}});
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_EQ(*answer, "Noted: this conversation's searches can find it.");
  EXPECT_THAT(Found(kAlice, "tea"), ElementsAre("users/alice%40localhost/notes.md"));
  EXPECT_THAT(Found(kBob, "tea"), IsEmpty());
}

TEST_F(MemorySaveSkillTest, ARoomsNoteIsTheRoomsAlone) {
  absl::StatusOr<std::string> answer =
      Save(kLobby, {{"text", "The release is on Friday."}}, false, "Alice");
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_THAT(*answer, HasSubstr("this group's memory"));
  EXPECT_THAT(Found(kLobby, "release"), ElementsAre("rooms/lobby%40conference.localhost/notes.md"));
  EXPECT_THAT(Found(kAlice, "release"), IsEmpty());
}

TEST_F(MemorySaveSkillTest, OnlyASharedWriterAddsToSharedMemory) {
  absl::StatusOr<std::string> answer =
      Save(kBob, {{"text", "The API moved to api.v2.example.com"}, {"scope", "shared"}});
  EXPECT_TRUE(absl::IsPermissionDenied(answer.status())) << answer.status();
  EXPECT_THAT(Found(kAlice, "api"), IsEmpty());
  answer = Save(kBob, {{"text", "The API moved to api.v2.example.com"}, {"scope", "shared"}},
                /*writer=*/true, "bob@localhost");
  ASSERT_TRUE(answer.ok()) << answer.status();
  for (const ConversationRef& who : {kAlice, kBob, kLobby}) {
    EXPECT_THAT(Found(who, "api"), ElementsAre("shared/herald-notes.md"));
  }
}

TEST_F(MemorySaveSkillTest, DeclaresWhatItTakes) {
  SkillRegistry registry;
  ASSERT_TRUE(registry.Register(std::make_unique<MemorySaveSkill>(io_, workers_, *store_)).ok());
  ASSERT_TRUE(registry.SetEnabled({"memory_save"}).ok());
  EXPECT_TRUE(registry.Check("memory_save", {{"text", "x"}, {"scope", "shared"}}).ok());
  EXPECT_FALSE(registry.Check("memory_save", {{"text", "x"}, {"scope", "everyone"}}).ok());
  EXPECT_FALSE(registry.Check("memory_save", {{"text", ""}}).ok());
  EXPECT_FALSE(registry.Check("memory_save", {{"text", std::string(4001, 'x')}}).ok());
  EXPECT_FALSE(registry.Check("memory_save", {{"text", "x"}, {"who", "bob"}}).ok());
}

}  // namespace
}  // namespace herald::skills
