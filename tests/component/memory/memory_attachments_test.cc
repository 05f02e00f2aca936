// The files people sent, kept beside a conversation's history under names Herald makes.
#include <sys/stat.h>

#include <filesystem>
#include <string>

#include "absl/time/time.h"
#include "component/memory/memory_store.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/component/memory/temp_dir.h"

namespace herald::memory {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::MatchesRegex;

const ConversationRef kAlice{.kind = ConversationRef::Kind::kDirect, .address = "alice@localhost"};
const ConversationRef kBob{.kind = ConversationRef::Kind::kDirect, .address = "bob@localhost"};
const absl::Time kNow = absl::FromUnixSeconds(1795768200);  // 2026-11-27 08:30:00 UTC

class MemoryAttachmentsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto store = MemoryStore::Open(dir_.path() + "/memory");
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = std::move(*store);
  }

  TempDir dir_;
  std::unique_ptr<MemoryStore> store_;
};

TEST_F(MemoryAttachmentsTest, KeepsTheBytesPrivatelyUnderANameHeraldMakes) {
  const std::string bytes("%PDF-1.4\0binary", 15);
  absl::StatusOr<std::string> file = store_->SaveAttachment(kAlice, bytes, "pdf", kNow);
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_THAT(*file, MatchesRegex("attachments/20261127-083000-[0-9a-f]{8}\\.pdf"));
  const std::string path = store_->FolderFor(kAlice) + "/" + *file;
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  absl::StatusOr<std::string> back = store_->ReadAttachment(kAlice, *file);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, bytes);
  // Two files sent in the same second get two names.
  absl::StatusOr<std::string> second = store_->SaveAttachment(kAlice, "x", "pdf", kNow);
  ASSERT_TRUE(second.ok());
  EXPECT_NE(*second, *file);
}

TEST_F(MemoryAttachmentsTest, RefusesExtensionsAndNamesItDidNotMake) {
  for (const char* extension : {"", "PDF", "tar.gz", "../x", "abcdefghi", "p/f"}) {
    EXPECT_FALSE(store_->SaveAttachment(kAlice, "x", extension, kNow).ok()) << extension;
  }
  for (const char* name : {"history.md", "attachments/../history.md", "../../bob/x.pdf",
                           "attachments/20261127-083000-1a2b3c4d.pdf/..",
                           "attachments/20261127-083000-1a2b3c4g.pdf", "attachments/x.pdf"}) {
    absl::StatusOr<std::string> read = store_->ReadAttachment(kAlice, name);
    EXPECT_EQ(read.status().code(), absl::StatusCode::kInvalidArgument) << name;
  }
  EXPECT_EQ(
      store_->ReadAttachment(kAlice, "attachments/20261127-083000-1a2b3c4d.pdf").status().code(),
      absl::StatusCode::kNotFound);
}

TEST_F(MemoryAttachmentsTest, OneUsersAttachmentsAreNotAnothers) {
  absl::StatusOr<std::string> file = store_->SaveAttachment(kAlice, "alice's", "txt", kNow);
  ASSERT_TRUE(file.ok());
  EXPECT_EQ(store_->ReadAttachment(kBob, *file).status().code(), absl::StatusCode::kNotFound);
}

TEST_F(MemoryAttachmentsTest, ForgettingTheSessionOrTheConversationRemovesThem) {
  absl::StatusOr<std::string> file = store_->SaveAttachment(kAlice, "bytes", "png", kNow);
  ASSERT_TRUE(file.ok());
  ASSERT_TRUE(store_->ClearSession(kAlice).ok());
  EXPECT_FALSE(fs::exists(store_->FolderFor(kAlice) + "/attachments"));
  EXPECT_EQ(store_->ReadAttachment(kAlice, *file).status().code(), absl::StatusCode::kNotFound);

  file = store_->SaveAttachment(kAlice, "bytes", "png", kNow);
  ASSERT_TRUE(file.ok());
  ASSERT_TRUE(store_->Forget(kAlice).ok());
  EXPECT_FALSE(fs::exists(store_->FolderFor(kAlice)));
}

}  // namespace
}  // namespace herald::memory
