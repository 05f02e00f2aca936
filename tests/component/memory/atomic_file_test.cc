#include "component/memory/atomic_file.h"

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/component/memory/temp_dir.h"

namespace herald::memory {
namespace {

std::string Read(const std::string& path) {
  absl::StatusOr<std::optional<std::string>> text = ReadFileIfExists(path);
  EXPECT_TRUE(text.ok()) << text.status();
  return text.ok() ? text->value_or("<missing>") : "<error>";
}

std::vector<std::string> Names(const std::string& folder) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(folder)) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

TEST(AtomicFileTest, AppendCreatesFoldersAndFileAndAddsToTheEnd) {
  TempDir dir;
  const std::string path = dir.path() + "/a/b/file.md";
  auto none = [](std::string_view) { return std::string(); };
  ASSERT_TRUE(AppendDurably(path, "one\n", none).ok());
  ASSERT_TRUE(AppendDurably(path, "two\n", none).ok());
  EXPECT_EQ(Read(path), "one\ntwo\n");
  struct stat st;
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600);
}

TEST(AtomicFileTest, AppendShowsTheRepairTheLastBytesAndWritesItFirst) {
  TempDir dir;
  const std::string path = dir.path() + "/file.md";
  std::vector<std::string> seen;
  auto repair = [&](std::string_view last) {
    seen.emplace_back(last);
    return std::string(last == "ab" ? "|" : "");
  };
  ASSERT_TRUE(AppendDurably(path, "a", repair).ok());
  ASSERT_TRUE(AppendDurably(path, "b", repair).ok());
  ASSERT_TRUE(AppendDurably(path, "c", repair).ok());
  EXPECT_EQ(seen, (std::vector<std::string>{"", "a", "ab"}));
  EXPECT_EQ(Read(path), "ab|c");
}

TEST(AtomicFileTest, ReplacesAFileWholeAndLeavesNoTemporaryFile) {
  TempDir dir;
  const std::string path = dir.path() + "/sub/context.md";
  ASSERT_TRUE(WriteFileAtomically(path, "old").ok());
  ASSERT_TRUE(WriteFileAtomically(path, "new contents").ok());
  EXPECT_EQ(Read(path), "new contents");
  EXPECT_EQ(Names(dir.path() + "/sub"), std::vector<std::string>{"context.md"});
}

TEST(AtomicFileTest, ReportsAMissingFileAsAbsent) {
  TempDir dir;
  absl::StatusOr<std::optional<std::string>> text = ReadFileIfExists(dir.path() + "/none");
  ASSERT_TRUE(text.ok());
  EXPECT_FALSE(text->has_value());
  absl::StatusOr<std::optional<FileTail>> tail = ReadFileTail(dir.path() + "/none", 10);
  ASSERT_TRUE(tail.ok());
  EXPECT_FALSE(tail->has_value());
}

TEST(AtomicFileTest, RefusesAFifoInsteadOfWaitingForAWriter) {
  TempDir dir;
  const std::string fifo = dir.path() + "/history.md";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // Without O_NONBLOCK these opens would block until some process opened the FIFO to write.
  EXPECT_TRUE(absl::IsFailedPrecondition(ReadFileIfExists(fifo).status()));
  EXPECT_TRUE(absl::IsFailedPrecondition(ReadFileTail(fifo, 10).status()));
}

TEST(AtomicFileTest, RefusesToReadAFileOverTheLimit) {
  TempDir dir;
  ASSERT_TRUE(WriteFileAtomically(dir.path() + "/big", std::string(100, 'x')).ok());
  EXPECT_TRUE(absl::IsResourceExhausted(ReadFileIfExists(dir.path() + "/big", 99).status()));
  EXPECT_TRUE(ReadFileIfExists(dir.path() + "/big", 100).ok());
}

TEST(AtomicFileTest, ReadsTheEndOfAFile) {
  TempDir dir;
  ASSERT_TRUE(WriteFileAtomically(dir.path() + "/f", "0123456789").ok());
  absl::StatusOr<std::optional<FileTail>> tail = ReadFileTail(dir.path() + "/f", 4);
  ASSERT_TRUE(tail.ok() && tail->has_value());
  EXPECT_EQ((*tail)->bytes, "6789");
  EXPECT_FALSE((*tail)->whole_file);
  tail = ReadFileTail(dir.path() + "/f", 10);
  ASSERT_TRUE(tail.ok() && tail->has_value());
  EXPECT_EQ((*tail)->bytes, "0123456789");
  EXPECT_TRUE((*tail)->whole_file);
}

TEST(AtomicFileTest, RenameNeverOverwrites) {
  TempDir dir;
  ASSERT_TRUE(WriteFileAtomically(dir.path() + "/from", "from").ok());
  ASSERT_TRUE(WriteFileAtomically(dir.path() + "/to", "to").ok());
  EXPECT_TRUE(absl::IsAlreadyExists(RenameNoReplace(dir.path() + "/from", dir.path() + "/to")));
  EXPECT_EQ(Read(dir.path() + "/from"), "from");
  EXPECT_EQ(Read(dir.path() + "/to"), "to");
  ASSERT_TRUE(RenameNoReplace(dir.path() + "/from", dir.path() + "/other").ok());
  EXPECT_EQ(Read(dir.path() + "/other"), "from");
}

TEST(AtomicFileTest, RefusesToCreateAFolderWhereAFileIs) {
  TempDir dir;
  ASSERT_TRUE(WriteFileAtomically(dir.path() + "/file", "x").ok());
  EXPECT_FALSE(CreateDirectories(dir.path() + "/file/sub").ok());
  EXPECT_FALSE(AppendDurably(dir.path() + "/file/sub/h.md", "x", [](std::string_view) {
                 return std::string();
               }).ok());
}

}  // namespace
}  // namespace herald::memory
