// MemoryStore::ListFiles and ReadFilePart: a conversation's files as `heraldctl memory export`
// copies them, and nothing else.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "absl/time/time.h"
#include "component/memory/memory_store.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/component/memory/temp_dir.h"

namespace herald::memory {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

const ConversationRef kAlice{.kind = ConversationRef::Kind::kDirect, .address = "alice@localhost"};
const ConversationRef kBob{.kind = ConversationRef::Kind::kDirect, .address = "bob@localhost"};
const absl::Time kNow = absl::FromUnixSeconds(1795768200);  // 2026-11-27 08:30:00 UTC

MemoryEntry Said(std::string text) {
  return {.time = kNow, .role = "user", .author = "alice@localhost", .text = std::move(text)};
}

class MemoryExportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto store = MemoryStore::Open(dir_.path() + "/memory");
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = std::move(*store);
  }

  TempDir dir_;
  std::unique_ptr<MemoryStore> store_;
};

TEST_F(MemoryExportTest, ListsEveryFileOfTheConversationAndEveryThread) {
  ASSERT_TRUE(store_->Append(kAlice, Said("hello")).ok());
  ASSERT_TRUE(store_->AddNote(kAlice, Said("likes tea")).ok());
  ASSERT_TRUE(store_->WriteContext(kAlice, "carried over").ok());
  ConversationRef thread = kAlice;
  thread.thread = "t-1";
  ASSERT_TRUE(store_->Append(thread, Said("in a thread")).ok());
  ASSERT_TRUE(store_->ArchiveSession(kAlice, kNow).ok());
  ASSERT_TRUE(store_->Append(kBob, Said("bob's")).ok());

  auto files = store_->ListFiles(thread);  // the whole conversation, whatever thread
  ASSERT_TRUE(files.ok()) << files.status();
  ASSERT_EQ(files->size(), 4u);
  EXPECT_EQ((*files)[0], "context.md");
  EXPECT_EQ((*files)[1], "notes.md");
  EXPECT_THAT((*files)[2], ::testing::StartsWith("sessions/20261127-083000"));
  EXPECT_THAT((*files)[3], ::testing::MatchesRegex("threads/.+/history.md"));
  EXPECT_THAT(
      *store_->ListFiles({.kind = ConversationRef::Kind::kDirect, .address = "nobody@localhost"}),
      IsEmpty());
}

TEST_F(MemoryExportTest, ReadsAFileInPartsAndOnlyFilesItLists) {
  ASSERT_TRUE(store_->Append(kAlice, Said("0123456789")).ok());
  const std::string folder = store_->FolderFor(kAlice);
  std::ifstream in(folder + "/history.md", std::ios::binary);
  const std::string whole((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::string read;
  for (uint64_t offset = 0;;) {
    auto part = store_->ReadFilePart(kAlice, "history.md", offset, 7);
    ASSERT_TRUE(part.ok()) << part.status();
    EXPECT_EQ(part->size, whole.size());
    if (part->content.empty()) break;
    EXPECT_LE(part->content.size(), 7u);
    read += part->content;
    offset += part->content.size();
  }
  EXPECT_EQ(read, whole);

  // Hidden names and symbolic links are not listed, so not read; nor is anything outside.
  { std::ofstream(folder + "/.hidden") << "x"; }
  { std::ofstream(dir_.path() + "/outside.md") << "outside"; }
  ASSERT_EQ(::symlink((dir_.path() + "/outside.md").c_str(), (folder + "/link.md").c_str()), 0);
  EXPECT_THAT(*store_->ListFiles(kAlice), ElementsAre("history.md"));
  for (const char* name : {".hidden", "link.md", "../../outside.md", "/etc/passwd", ""}) {
    EXPECT_EQ(store_->ReadFilePart(kAlice, name, 0, 100).status().code(),
              absl::StatusCode::kNotFound)
        << name;
  }
  EXPECT_EQ(store_->ReadFilePart(kBob, "history.md", 0, 100).status().code(),
            absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace herald::memory
