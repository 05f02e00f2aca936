// Memory shared by several instances through PostgreSQL (MemoryStore::Sharing, shared_memory.h):
// two stores on two roots and one database stand for two instances; what one writes, the other
// reads, byte for byte, whatever the change; an outage loses nothing; rows that name files
// outside their folder write nothing.
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "component/base/postgres_database.h"
#include "component/memory/memory_store.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/component/memory/temp_dir.h"
#include "tests/support/postgres_server.h"

namespace herald::memory {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

const ConversationRef kAlice{.kind = ConversationRef::Kind::kDirect, .address = "alice@localhost"};
const absl::Time kNow = absl::FromUnixSeconds(1795768200);  // 2026-11-27 08:30:00 UTC

MemoryEntry Said(std::string text, int second = 0) {
  return {.time = kNow + absl::Seconds(second),
          .role = "user",
          .author = "alice@localhost",
          .text = std::move(text)};
}

std::vector<std::string> Texts(const std::vector<MemoryEntry>& entries) {
  std::vector<std::string> texts;
  for (const MemoryEntry& entry : entries) texts.push_back(entry.text);
  return texts;
}

// Every file of the conversation's folder on one instance, read straight from its disk.
std::map<std::string, std::string> OnDisk(const MemoryStore& store, const ConversationRef& ref) {
  std::map<std::string, std::string> files;
  const fs::path folder = store.FolderFor({.kind = ref.kind, .address = ref.address});
  if (!fs::exists(folder)) return files;
  for (const auto& entry : fs::recursive_directory_iterator(folder)) {
    const std::string relative = entry.path().lexically_relative(folder).string();
    if (!entry.is_regular_file() || relative.find("/.") != std::string::npos ||
        relative[0] == '.') {
      continue;
    }
    std::ifstream in(entry.path(), std::ios::binary);
    files[relative] = std::string(std::istreambuf_iterator<char>(in), {});
  }
  return files;
}

class SharedMemoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto db = testing::ConnectNewDatabase(/*pool_size=*/2);
    ASSERT_TRUE(db.ok()) << db.status();
    db_ = *db;
    a_ = Open(dir_.path() + "/a");
    b_ = Open(dir_.path() + "/b");
    ASSERT_NE(a_, nullptr);
    ASSERT_NE(b_, nullptr);
  }

  // An instance; by default one that checks the database at every call (recheck 0), as one
  // whose last check is older than the recheck time does.
  std::unique_ptr<MemoryStore> Open(const std::string& root,
                                    absl::Duration recheck = absl::ZeroDuration()) {
    auto store = MemoryStore::Open(root, "", {.postgres = db_, .recheck = recheck});
    EXPECT_TRUE(store.ok()) << store.status();
    return store.ok() ? *std::move(store) : nullptr;
  }

  TempDir dir_;
  std::shared_ptr<base::PostgresDatabase> db_;
  std::unique_ptr<MemoryStore> a_;
  std::unique_ptr<MemoryStore> b_;
};

TEST_F(SharedMemoryTest, WhatOneInstanceWritesTheOtherReads) {
  ASSERT_TRUE(a_->Append(kAlice, Said("hello", 1)).ok());
  ASSERT_TRUE(a_->Append(kAlice, Said("how are you?", 2)).ok());
  auto seen = b_->History(kAlice, 10);
  ASSERT_TRUE(seen.ok()) << seen.status();
  EXPECT_THAT(Texts(*seen), ElementsAre("hello", "how are you?"));

  // The other way, after the first instance has read it: it is not taken as current.
  ASSERT_TRUE(b_->Append(kAlice, Said("fine, and you?", 3)).ok());
  auto back = a_->History(kAlice, 10);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_THAT(Texts(*back), ElementsAre("hello", "how are you?", "fine, and you?"));
  EXPECT_EQ(OnDisk(*a_, kAlice), OnDisk(*b_, kAlice));
  EXPECT_EQ(OnDisk(*a_, kAlice).size(), 1u);
}

TEST_F(SharedMemoryTest, EveryKindOfChangeReachesTheOtherInstance) {
  ConversationRef thread = kAlice;
  thread.thread = "t-1";
  ASSERT_TRUE(a_->Append(kAlice, Said("first")).ok());
  ASSERT_TRUE(a_->AddNote(kAlice, Said("likes tea")).ok());
  ASSERT_TRUE(a_->WriteContext(kAlice, "carried over").ok());
  ASSERT_TRUE(a_->SetChosenIdentity(kAlice, "pirate").ok());
  ASSERT_TRUE(a_->Append(thread, Said("in a thread")).ok());
  auto archived = a_->ArchiveSession(kAlice, kNow);
  ASSERT_TRUE(archived.ok()) << archived.status();
  ASSERT_TRUE(a_->Append(kAlice, Said("after the archive")).ok());
  auto attachment = a_->SaveAttachment(thread, "%PDF-1.4 bytes", "pdf", kNow);
  ASSERT_TRUE(attachment.ok()) << attachment.status();

  auto files = b_->ListFiles(kAlice);
  ASSERT_TRUE(files.ok()) << files.status();
  EXPECT_EQ(files->size(), 7u);
  EXPECT_EQ(OnDisk(*b_, kAlice), OnDisk(*a_, kAlice));
  EXPECT_EQ(*b_->ChosenIdentity(kAlice), "pirate");
  EXPECT_EQ(*b_->ReadAttachment(thread, *attachment), "%PDF-1.4 bytes");
  auto sessions = b_->ListSessions(kAlice);
  ASSERT_TRUE(sessions.ok());
  EXPECT_THAT(*sessions, ElementsAre(*archived));

  // Changes that remove files.
  ASSERT_TRUE(b_->ClearSession(thread).ok());
  ASSERT_TRUE(b_->SetChosenIdentity(kAlice, "").ok());
  ASSERT_TRUE(a_->ListFiles(kAlice).ok());
  EXPECT_EQ(OnDisk(*a_, kAlice), OnDisk(*b_, kAlice));
  EXPECT_FALSE(OnDisk(*a_, kAlice).contains("chosen-identity.txt"));
  EXPECT_TRUE(absl::IsNotFound(a_->ReadAttachment(thread, *attachment).status()));

  ASSERT_TRUE(a_->Forget(kAlice).ok());
  EXPECT_THAT(*b_->History(kAlice, 10), IsEmpty());
  EXPECT_THAT(OnDisk(*b_, kAlice), IsEmpty());
  EXPECT_FALSE(fs::exists(b_->FolderFor(kAlice)));
}

TEST_F(SharedMemoryTest, MemoryFromBeforeTheDatabaseIsWrittenAtItsFirstUse) {
  {
    auto alone = MemoryStore::Open(dir_.path() + "/old");  // one host, no database
    ASSERT_TRUE(alone.ok());
    ASSERT_TRUE((*alone)->Append(kAlice, Said("remembered from before")).ok());
    ASSERT_TRUE((*alone)->AddNote(kAlice, Said("a note from before")).ok());
  }
  std::unique_ptr<MemoryStore> old = Open(dir_.path() + "/old");
  EXPECT_THAT(*b_->History(kAlice, 10), IsEmpty());  // nobody has used it yet
  EXPECT_THAT(Texts(*old->History(kAlice, 10)), ElementsAre("remembered from before"));
  EXPECT_THAT(Texts(*b_->History(kAlice, 10)), ElementsAre("remembered from before"));
  EXPECT_EQ(OnDisk(*b_, kAlice), OnDisk(*old, kAlice));
}

TEST_F(SharedMemoryTest, ChangesMadeWhileTheDatabaseIsAwayAreWrittenWhenItIsBack) {
  ASSERT_TRUE(a_->Append(kAlice, Said("before", 1)).ok());
  ASSERT_THAT(Texts(*b_->History(kAlice, 10)), ElementsAre("before"));
  auto server = testing::SharedPostgresServer();
  ASSERT_TRUE(server.ok()) << server.status();
  ASSERT_TRUE((*server)->Stop().ok());
  // Memory goes on working here, and the change is kept for the database even across a
  // restart of the instance.
  ASSERT_TRUE(a_->Append(kAlice, Said("during the outage", 2)).ok());
  EXPECT_THAT(Texts(*a_->History(kAlice, 10)), ElementsAre("before", "during the outage"));
  a_.reset();
  ASSERT_TRUE((*server)->Start().ok());
  a_ = Open(dir_.path() + "/a");
  ASSERT_TRUE(a_->Append(kAlice, Said("after", 3)).ok());

  EXPECT_THAT(Texts(*b_->History(kAlice, 10)), ElementsAre("before", "during the outage", "after"));
  EXPECT_EQ(OnDisk(*a_, kAlice), OnDisk(*b_, kAlice));
}

TEST_F(SharedMemoryTest, AnotherInstancesChangesWinOverAnUnsharedCopyWhichIsKeptAside) {
  ASSERT_TRUE(a_->Append(kAlice, Said("shared", 1)).ok());
  ASSERT_TRUE(b_->Append(kAlice, Said("answered by the other instance", 2)).ok());
  // The first instance wrote on while it could not reach the database, on version 1: the
  // database is at 2 since.
  a_.reset();
  const std::string folder = dir_.path() + "/a/users/alice%40localhost";
  {
    std::ofstream(folder + "/history.md", std::ios::app) << "\n## stale\n";
    std::ofstream(folder + "/.unshared") << "1";
  }
  a_ = Open(dir_.path() + "/a");
  EXPECT_THAT(Texts(*a_->History(kAlice, 10)),
              ElementsAre("shared", "answered by the other instance"));
  EXPECT_EQ(OnDisk(*a_, kAlice), OnDisk(*b_, kAlice));
  int aside = 0;
  for (const auto& entry : fs::directory_iterator(dir_.path() + "/a/users")) {
    if (entry.path().filename().string().starts_with(".superseded-alice%40localhost-")) {
      ++aside;
      std::ifstream in(entry.path() / "history.md");
      EXPECT_THAT(std::string(std::istreambuf_iterator<char>(in), {}),
                  ::testing::HasSubstr("## stale"));
    }
  }
  EXPECT_EQ(aside, 1);
  auto listed = a_->ListConversations();
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ(listed->size(), 1u);
}

TEST_F(SharedMemoryTest, RowsNamingFilesOutsideTheFolderWriteNothing) {
  ASSERT_TRUE(a_->Append(kAlice, Said("hello")).ok());
  for (const char* path : {"../../../escaped.md", "/etc/escaped.md", "notes/../../x.md", ".hidden",
                           "threads//history.md"}) {
    auto put = db_->Exec("INSERT INTO memory_files (folder, path, content) VALUES ($1, $2, 'x')",
                         base::SqlParams().Text("users/alice%40localhost").Text(path));
    ASSERT_TRUE(put.ok()) << put.status();
  }
  ASSERT_TRUE(db_->Exec("UPDATE memory_folders SET version = version + 1").ok());

  EXPECT_THAT(Texts(*b_->History(kAlice, 10)), ElementsAre("hello"));
  EXPECT_THAT(*b_->ListFiles(kAlice), ElementsAre("history.md"));
  EXPECT_FALSE(fs::exists(dir_.path() + "/escaped.md"));
  EXPECT_FALSE(fs::exists(dir_.path() + "/b/x.md"));
  EXPECT_FALSE(fs::exists(dir_.path() + "/b/users/alice%40localhost/.hidden"));
}

TEST_F(SharedMemoryTest, AFolderCheckedRecentlyIsNotAskedForAgain) {
  std::unique_ptr<MemoryStore> lazy = Open(dir_.path() + "/lazy", absl::Hours(1));
  ASSERT_NE(lazy, nullptr);
  ASSERT_TRUE(a_->Append(kAlice, Said("one", 1)).ok());
  EXPECT_THAT(Texts(*lazy->History(kAlice, 10)), ElementsAre("one"));
  ASSERT_TRUE(a_->Append(kAlice, Said("two", 2)).ok());
  // Within the recheck time the copy is taken as current (the lease time keeps an instance
  // that takes a conversation over from being within it).
  EXPECT_THAT(Texts(*lazy->History(kAlice, 10)), ElementsAre("one"));
}

TEST_F(SharedMemoryTest, AWriteThatFindsAnotherInstancesChangeTakesTheDatabasesCopyNext) {
  std::unique_ptr<MemoryStore> lazy = Open(dir_.path() + "/lazy", absl::Hours(1));
  ASSERT_NE(lazy, nullptr);
  ASSERT_TRUE(a_->Append(kAlice, Said("one", 1)).ok());
  EXPECT_THAT(Texts(*lazy->History(kAlice, 10)), ElementsAre("one"));
  ASSERT_TRUE(a_->Append(kAlice, Said("two", 2)).ok());
  // Its own write shows that the folder moved on without it: it looks again at once, and
  // the database's copy holds both.
  ASSERT_TRUE(lazy->Append(kAlice, Said("three", 3)).ok());
  EXPECT_THAT(Texts(*lazy->History(kAlice, 10)), ElementsAre("one", "two", "three"));
  EXPECT_THAT(Texts(*a_->History(kAlice, 10)), ElementsAre("one", "two", "three"));
  EXPECT_EQ(OnDisk(*lazy, kAlice), OnDisk(*a_, kAlice));
}

}  // namespace
}  // namespace herald::memory
