// `heraldctl memory export CONVERSATION DIR` against FakeHerald: the pages of ExportMemory put
// back together as files under DIR (folders 0700, files 0600), the --json summary, a folder
// that holds files refused before any call, and a server that names a file outside DIR or
// sends a file out of order stopped before it writes there.
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "proto/herald/v1/session.pb.h"
#include "tests/tools/heraldctl/fake_herald.h"
#include "tests/tools/heraldctl/run_against.h"

namespace herald::heraldctl {
namespace {

using testing::FakeHerald;
using ::testing::HasSubstr;
using testing::RunAgainst;

constexpr char kToken[] = "memory-export-token";

v1::MemoryFilePart Part(const std::string& path, int64_t offset, const std::string& content,
                        int64_t size) {
  v1::MemoryFilePart part;
  part.set_path(path);
  part.set_offset(offset);
  part.set_content(content);
  part.set_size(size);
  return part;
}

std::string Read(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
}

int Mode(const std::string& path) {
  struct stat info {};
  EXPECT_EQ(::stat(path.c_str(), &info), 0) << path;
  return info.st_mode & 0777;
}

TEST(MemoryExportCommandTest, WritesThePagesAsPrivateFilesUnderTheFolder) {
  FakeHerald herald;
  v1::ExportMemoryResponse first;
  *first.add_parts() = Part("history.md", 0, "### entry\n\nhello\n", 17);
  *first.add_parts() = Part("attachments/a.png", 0, std::string("\x89PNG\0\x01", 6), 12);
  first.set_next_page_token("page-2");
  herald.Answer("ExportMemory", first);
  v1::ExportMemoryResponse second;
  *second.add_parts() = Part("attachments/a.png", 6, std::string("\xff\0tail", 6), 12);
  *second.add_parts() = Part("threads/t/sessions/20261127-083000.md", 0, "old\n", 4);
  herald.Answer("ExportMemory", second);

  const std::string folder = herald.directory() + "/out/alice";
  auto run = RunAgainst(herald, kToken, {"memory", "export", "alice@example.org", folder});
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_EQ(run.out, "exported 3 files (33 bytes) of direct:alice@example.org to " + folder + "\n");
  auto request = herald.Received("ExportMemory", 1).As<v1::ExportMemoryRequest>();
  EXPECT_EQ(request.key().address(), "alice@example.org");
  EXPECT_EQ(request.page_token(), "page-2");

  EXPECT_EQ(Read(folder + "/history.md"), "### entry\n\nhello\n");
  EXPECT_EQ(Read(folder + "/attachments/a.png"), std::string("\x89PNG\0\x01\xff\0tail", 12));
  EXPECT_EQ(Read(folder + "/threads/t/sessions/20261127-083000.md"), "old\n");
  EXPECT_EQ(Mode(folder), 0700);
  EXPECT_EQ(Mode(folder + "/threads/t/sessions"), 0700);
  EXPECT_EQ(Mode(folder + "/attachments/a.png"), 0600);
}

TEST(MemoryExportCommandTest, JsonListsTheFilesWritten) {
  FakeHerald herald;
  v1::ExportMemoryResponse page;
  *page.add_parts() = Part("notes.md", 0, "tea\n", 4);
  herald.Answer("ExportMemory", page);
  const std::string folder = herald.directory() + "/json";
  auto run = RunAgainst(herald, kToken, {"--json", "memory", "export", "bob@example.org", folder});
  ASSERT_EQ(run.code, 0) << run.err;
  nlohmann::json summary = nlohmann::json::parse(run.out);
  ASSERT_EQ(summary["parts"].size(), 1u);
  EXPECT_EQ(summary["parts"][0]["path"], "notes.md");
  EXPECT_EQ(summary["parts"][0]["size"], "4");  // int64 as protobuf's JSON writes it
}

TEST(MemoryExportCommandTest, RefusesAFolderThatHoldsFilesBeforeAnyCall) {
  FakeHerald herald;
  const std::string folder = herald.directory() + "/full";
  std::filesystem::create_directories(folder);
  { std::ofstream(folder + "/mine.txt") << "an operator's file"; }
  auto run = RunAgainst(herald, kToken, {"memory", "export", "alice@example.org", folder});
  EXPECT_EQ(run.code, 2);
  EXPECT_THAT(run.err, HasSubstr("not an empty folder"));
  EXPECT_EQ(herald.CallCount("ExportMemory"), 0u);
  EXPECT_EQ(Read(folder + "/mine.txt"), "an operator's file");
}

TEST(MemoryExportCommandTest, NeverWritesWhereAHostileServerPoints) {
  for (const std::string path :
       {"../escaped.md", "/tmp/absolute.md", "a/../../escaped.md", "a//b.md", "./x.md", ""}) {
    FakeHerald herald;
    v1::ExportMemoryResponse page;
    *page.add_parts() = Part(path, 0, "pwned", 5);
    herald.Answer("ExportMemory", page);
    const std::string folder = herald.directory() + "/inside/out";
    auto run = RunAgainst(herald, kToken, {"memory", "export", "alice@example.org", folder});
    EXPECT_EQ(run.code, 7) << path;
    EXPECT_THAT(run.err, HasSubstr("outside the folder")) << path;
    EXPECT_FALSE(std::filesystem::exists(herald.directory() + "/inside/escaped.md")) << path;
    EXPECT_FALSE(std::filesystem::exists(herald.directory() + "/escaped.md")) << path;
    EXPECT_TRUE(std::filesystem::is_empty(folder)) << path;
  }
  // A file continued before it began, or begun twice, is refused too.
  FakeHerald herald;
  v1::ExportMemoryResponse page;
  *page.add_parts() = Part("history.md", 5, "later", 10);
  herald.Answer("ExportMemory", page);
  auto run = RunAgainst(herald, kToken,
                        {"memory", "export", "alice@example.org", herald.directory() + "/order"});
  EXPECT_EQ(run.code, 7);
  EXPECT_THAT(run.err, HasSubstr("out of order"));
}

}  // namespace
}  // namespace herald::heraldctl
