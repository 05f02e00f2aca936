#include "skills/builtin/memory_search.h"

#include <asio.hpp>
#include <chrono>
#include <fstream>
#include <optional>
#include <string>
#include <thread>

#include "absl/strings/match.h"
#include "component/memory/folder_watcher.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "skills/registry.h"
#include "tests/component/memory/temp_dir.h"
#include "tests/fakes/fake_llm_server.h"

namespace herald::skills {
namespace {

using base::ConversationRef;
using memory::MemoryEntry;

const ConversationRef kAlice{.kind = ConversationRef::Kind::kDirect, .address = "alice@localhost"};
const ConversationRef kBob{.kind = ConversationRef::Kind::kDirect, .address = "bob@localhost"};

class MemorySearchSkillTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto store = memory::MemoryStore::Open(dir_.path() + "/memory");
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = std::move(*store);
    search_ = std::make_unique<MemorySearch>(io_, workers_, *store_);
    skill_ = std::make_unique<MemorySearchSkill>(*search_);
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
                      io_.stop();  // other work (a folder watcher) may keep the loop busy
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
  std::unique_ptr<MemorySearch> search_;
  std::unique_ptr<MemorySearchSkill> skill_;
};

TEST_F(MemorySearchSkillTest, FindsWhatTheUserSaidWithItsFile) {
  Remember(kAlice, "My cat is called Biscuit.");
  Remember(kAlice, "I am planning a trip to Lisbon in May.");
  absl::StatusOr<std::string> answer = Recall(kAlice, {{"query", "cat name"}});
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_EQ(*answer,
            "1 memory matches \"cat name\":\n"
            "1. [history.md · 2025-01-14] alice@localhost (user, 2025-01-14 09:30 UTC): My "
            "cat is called Biscuit.");
}

TEST_F(MemorySearchSkillTest, TheMessageBeingAnsweredIsNotItsOwnResult) {
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

TEST_F(MemorySearchSkillTest, NeverShowsAnotherUsersMemory) {
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

TEST_F(MemorySearchSkillTest, IncludesSharedKnowledgeAndArchivedSessions) {
  Remember(kAlice, "We talked about the opening hours before.");
  ASSERT_TRUE(store_->ArchiveSession(kAlice, absl::FromUnixSeconds(1736850000)).ok());
  std::filesystem::create_directories(dir_.path() + "/memory/shared");
  std::ofstream(dir_.path() + "/memory/shared/faq.md") << "# FAQ\n\nOpening hours: 9 to 5.\n";
  absl::StatusOr<std::string> answer = Recall(kAlice, {{"query", "opening hours"}});
  ASSERT_TRUE(answer.ok());
  // A paragraph is dated by its file's modification time.
  EXPECT_THAT(*answer,
              ::testing::ContainsRegex("\\[shared/faq.md · 20[0-9][0-9]-[0-9][0-9]-[0-9][0-9]\\] "
                                       "Opening hours: 9 to 5."));
  EXPECT_TRUE(absl::StrContains(*answer, "[sessions/20250114-102000.md · 2025-01-14] ")) << *answer;
}

TEST_F(MemorySearchSkillTest, ReturnsAtMostTheLimit) {
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

TEST_F(MemorySearchSkillTest, ReportsAFailedSearchWithoutInternalPaths) {
  absl::StatusOr<std::string> answer = Recall(ConversationRef{}, {{"query", "x"}});
  EXPECT_TRUE(absl::IsUnavailable(answer.status()));
  EXPECT_FALSE(absl::StrContains(answer.status().message(), dir_.path()));
}

TEST_F(MemorySearchSkillTest, DeclaresTheLimitsItsSchemaEnforces) {
  SkillRegistry registry;
  asio::thread_pool pool(1);
  ASSERT_TRUE(
      registry.Register(std::make_unique<MemorySearchSkill>(*search_, "memory_recall")).ok());
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

TEST_F(MemorySearchSkillTest, NotesAreSearchedEntryByEntryWithTheirDate) {
  ASSERT_TRUE(store_
                  ->AddNote(kAlice, MemoryEntry{.time = absl::FromUnixSeconds(1736847000),
                                                .role = "note",
                                                .author = "alice@localhost",
                                                .text = "The wifi password is on the fridge."})
                  .ok());
  absl::StatusOr<std::string> answer = Recall(kAlice, {{"query", "wifi password"}});
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_EQ(*answer,
            "1 memory matches \"wifi password\":\n"
            "1. [notes.md \xc2\xb7 2025-01-14] alice@localhost (note, 2025-01-14 09:30 UTC): The "
            "wifi password is on the fridge.");
}

// The vector path: the fake LLM server embeds each text as a bag of its words, with a few
// synonyms folded together ("feline" is "cat"), so a search by meaning finds what shares no
// word with the query.
class HybridMemorySearchTest : public MemorySearchSkillTest,
                               public ::testing::WithParamInterface<fakes::LlmWireFormat> {
 protected:
  void SetUp() override {
    MemorySearchSkillTest::SetUp();
    auto server = fakes::FakeLlmServer::Start(GetParam());
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    auto http = providers::HttpClient::Create(io_);
    ASSERT_TRUE(http.ok());
    http_ = *std::move(http);
    OpenCache();
    const bool ollama = GetParam() == fakes::LlmWireFormat::kOllama;
    embeddings_ = std::make_unique<providers::EmbeddingsClient>(
        *http_, providers::EmbeddingsOptions{.provider = ollama ? "ollama" : "openai",
                                             .model = "fake-embed",
                                             .base_url = server_->base_url(),
                                             .max_retries = 0});
    UseEmbeddings();
  }

  void OpenCache() {
    auto cache = memory::EmbeddingCache::Open(dir_.path() + "/embeddings.db");
    ASSERT_TRUE(cache.ok()) << cache.status();
    cache_ = *std::move(cache);
  }

  void UseEmbeddings() {
    search_->UseEmbeddings(embeddings_.get(), cache_.get(), {.keyword = 0.3, .vector = 0.7});
  }

  void Say(const ConversationRef& where, const std::string& author, const std::string& text) {
    ASSERT_TRUE(store_
                    ->Append(where, MemoryEntry{.time = absl::FromUnixSeconds(1736847000),
                                                .role = "user",
                                                .author = author,
                                                .text = text})
                    .ok());
  }

  // Runs the I/O loop until `condition` holds (or 10 s pass).
  bool RunUntil(const std::function<bool()>& condition) {
    const absl::Time deadline = absl::Now() + absl::Seconds(10);
    while (!condition() && absl::Now() < deadline) {
      io_.run_for(std::chrono::milliseconds(20));
      io_.restart();
    }
    return condition();
  }

  std::unique_ptr<fakes::FakeLlmServer> server_;
  std::unique_ptr<providers::HttpClient> http_;
  std::unique_ptr<memory::EmbeddingCache> cache_;
  std::unique_ptr<providers::EmbeddingsClient> embeddings_;
};

// The results of a recall, without its first line (which repeats the query).
std::string Results(const std::string& answer) {
  const size_t newline = answer.find('\n');
  return newline == std::string::npos ? std::string() : answer.substr(newline + 1);
}

INSTANTIATE_TEST_SUITE_P(BothApis, HybridMemorySearchTest,
                         ::testing::Values(fakes::LlmWireFormat::kOpenAi,
                                           fakes::LlmWireFormat::kOllama),
                         [](const auto& info) {
                           return info.param == fakes::LlmWireFormat::kOllama ? "Ollama" : "OpenAi";
                         });

TEST_P(HybridMemorySearchTest, FindsByMeaningWhatKeywordsMiss) {
  Say(kAlice, "alice@localhost", "My cat is called Biscuit.");
  Say(kAlice, "alice@localhost", "I bought a new bike on Tuesday.");
  absl::StatusOr<std::string> answer = Recall(kAlice, {{"query", "feline"}});
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_THAT(*answer, ::testing::StartsWith("1 memory matches \"feline\":\n1. [history.md"));
  EXPECT_THAT(*answer, ::testing::HasSubstr("Biscuit"));
  EXPECT_THAT(*answer, ::testing::Not(::testing::HasSubstr("bike")));

  // The same search by keywords alone finds nothing.
  MemorySearch keywords(io_, workers_, *store_);
  skill_ = std::make_unique<MemorySearchSkill>(keywords);
  answer = Recall(kAlice, {{"query", "feline"}});
  ASSERT_TRUE(answer.ok());
  EXPECT_EQ(*answer, "No memory matches \"feline\".");
}

TEST_P(HybridMemorySearchTest, KeywordsStillCountBesideMeaning) {
  Say(kAlice, "alice@localhost", "Ticket HX-4471 is about the broken printer.");
  Say(kAlice, "alice@localhost", "The printer on floor two jams.");
  absl::StatusOr<std::string> answer = Recall(kAlice, {{"query", "HX-4471"}});
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_THAT(*answer, ::testing::HasSubstr("1. [history.md \xc2\xb7 2025-01-14] "
                                            "alice@localhost (user, 2025-01-14 09:30 UTC): "
                                            "Ticket HX-4471"));
}

TEST_P(HybridMemorySearchTest, UnchangedTextIsEmbeddedOnceAcrossSearchesAndRestarts) {
  Say(kAlice, "alice@localhost", "My cat is called Biscuit.");
  Say(kAlice, "alice@localhost", "I bought a new bike on Tuesday.");
  ASSERT_TRUE(Recall(kAlice, {{"query", "feline"}}).ok());
  EXPECT_EQ(server_->embedded_texts(), 3u);  // the query and two entries
  ASSERT_TRUE(Recall(kAlice, {{"query", "kitty"}}).ok());
  EXPECT_EQ(server_->embedded_texts(), 4u);  // only the new query
  Say(kAlice, "alice@localhost", "The vet is on Main Street.");
  ASSERT_TRUE(Recall(kAlice, {{"query", "kitty"}}).ok());
  EXPECT_EQ(server_->embedded_texts(), 6u);  // the query and the new entry

  // A restart keeps the vectors: the cache is a file.
  cache_.reset();
  OpenCache();
  search_ = std::make_unique<MemorySearch>(io_, workers_, *store_);
  skill_ = std::make_unique<MemorySearchSkill>(*search_);
  UseEmbeddings();
  absl::StatusOr<std::string> answer = Recall(kAlice, {{"query", "feline"}});
  ASSERT_TRUE(answer.ok());
  EXPECT_THAT(*answer, ::testing::HasSubstr("Biscuit"));
  EXPECT_EQ(server_->embedded_texts(), 7u);
  EXPECT_EQ(*cache_->Size(), 3);  // chunks only: queries are not kept
}

TEST_P(HybridMemorySearchTest, FallsBackToKeywordsWhenTheProviderFails) {
  Say(kAlice, "alice@localhost", "My cat is called Biscuit.");
  server_->FailEmbeddings(503);
  absl::StatusOr<std::string> answer = Recall(kAlice, {{"query", "cat"}});
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_THAT(*answer, ::testing::HasSubstr("Biscuit"));
  answer = Recall(kAlice, {{"query", "feline"}});
  ASSERT_TRUE(answer.ok());
  EXPECT_EQ(*answer, "No memory matches \"feline\".");
  EXPECT_EQ(*cache_->Size(), 0);
}

// The privacy suite (M3): whatever path a result comes by — keywords, vectors, or vectors
// the cache kept from another conversation's search — a search sees only its own
// conversation's memory and the shared folder.
TEST_P(HybridMemorySearchTest, NoSearchSeesAnotherConversationsMemory) {
  const ConversationRef room{.kind = ConversationRef::Kind::kRoom,
                             .address = "lobby@conference.localhost"};
  Say(kAlice, "alice@localhost", "Alice's feline is named Pepper.");
  Say(kBob, "bob@localhost", "Bob's kitten is named Shadow.");
  Say(room, "alice", "The office cat is named Tiger.");
  std::filesystem::create_directories(dir_.path() + "/memory/shared");
  std::ofstream(dir_.path() + "/memory/shared/policy.md") << "A cat may visit on Fridays.\n";

  // Bob searches first, so his chunks' vectors are in the cache when the others search.
  absl::StatusOr<std::string> bob = Recall(kBob, {{"query", "cat"}, {"limit", 10}});
  ASSERT_TRUE(bob.ok());
  *bob = Results(*bob);
  EXPECT_THAT(*bob, ::testing::HasSubstr("Shadow"));
  EXPECT_THAT(*bob, ::testing::HasSubstr("Fridays"));
  EXPECT_THAT(*bob, ::testing::Not(::testing::HasSubstr("Pepper")));
  EXPECT_THAT(*bob, ::testing::Not(::testing::HasSubstr("Tiger")));

  // Alice's 1:1 search: her memory and shared, never Bob's nor the room's (she is in it).
  for (const char* query : {"cat", "feline", "kitten named Shadow", "office cat Tiger"}) {
    absl::StatusOr<std::string> alice = Recall(kAlice, {{"query", query}, {"limit", 10}});
    ASSERT_TRUE(alice.ok());
    *alice = Results(*alice);
    EXPECT_THAT(*alice, ::testing::HasSubstr("Pepper")) << query;
    EXPECT_THAT(*alice, ::testing::Not(::testing::HasSubstr("Shadow"))) << query;
    EXPECT_THAT(*alice, ::testing::Not(::testing::HasSubstr("Tiger"))) << query;
    EXPECT_THAT(*alice, ::testing::Not(::testing::HasSubstr("bob"))) << query;
  }
  // The room's search: the room's memory and shared, never a member's private memory.
  for (const char* query : {"cat", "feline named Pepper", "kitten named Shadow"}) {
    absl::StatusOr<std::string> lobby = Recall(room, {{"query", query}, {"limit", 10}});
    ASSERT_TRUE(lobby.ok());
    *lobby = Results(*lobby);
    EXPECT_THAT(*lobby, ::testing::HasSubstr("Tiger")) << query;
    EXPECT_THAT(*lobby, ::testing::Not(::testing::HasSubstr("Pepper"))) << query;
    EXPECT_THAT(*lobby, ::testing::Not(::testing::HasSubstr("Shadow"))) << query;
  }
}

TEST_P(HybridMemorySearchTest, ReindexingALongFileLooksAtItsEndOnly) {
  std::filesystem::create_directories(dir_.path() + "/memory/shared");
  std::string page;
  for (int i = 0; i < 300; ++i) page += "Paragraph number " + std::to_string(i) + ".\n\n";
  std::ofstream(dir_.path() + "/memory/shared/long.md") << page;
  search_->Reindex({store_->shared_folder() + "/long.md"});
  ASSERT_TRUE(RunUntil([&] { return search_->embedded_chunks() > 0; }));
  EXPECT_EQ(search_->embedded_chunks(), static_cast<int64_t>(MemorySearch::kReindexWindow));
  const std::vector<std::string_view> texts = {"Paragraph number 299.", "Paragraph number 43."};
  auto known = cache_->Lookup("openai:fake-embed", texts);
  if (GetParam() == fakes::LlmWireFormat::kOllama)
    known = cache_->Lookup("ollama:fake-embed", texts);
  ASSERT_TRUE(known.ok());
  EXPECT_TRUE((*known)[0].has_value()) << "the end of the file is embedded";
  EXPECT_FALSE((*known)[1].has_value()) << "its start waits for a search";
}

TEST_P(HybridMemorySearchTest, AnEditByHandIsReindexedAndEmbeddedBeforeAnySearch) {
  std::filesystem::create_directories(dir_.path() + "/memory/shared/handbook");
  auto watcher = memory::FolderWatcher::Start(
      io_, {store_->root(), store_->shared_folder()},
      [this](std::vector<std::string> paths) { search_->Reindex(std::move(paths)); },
      absl::Milliseconds(50));
  ASSERT_TRUE(watcher.ok()) << watcher.status();
  std::ofstream(dir_.path() + "/memory/shared/handbook/pets.md")
      << "# Pets\n\nDogs stay home.\n\nA cat may visit on Fridays.\n";
  ASSERT_TRUE(RunUntil([&] { return server_->embedded_texts() >= 3; }))
      << "embedded " << server_->embedded_texts();
  EXPECT_EQ(server_->embedded_texts(), 3u);  // three paragraphs
  // The search that follows embeds only its query.
  absl::StatusOr<std::string> answer = Recall(kAlice, {{"query", "kitty"}});
  ASSERT_TRUE(answer.ok());
  EXPECT_THAT(*answer, ::testing::HasSubstr("[shared/handbook/pets.md"));
  EXPECT_THAT(*answer, ::testing::HasSubstr("A cat may visit on Fridays."));
  EXPECT_EQ(server_->embedded_texts(), 4u);
  (*watcher).reset();
}

}  // namespace
}  // namespace herald::skills
