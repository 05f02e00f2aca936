#include "component/memory/folder_watcher.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/component/memory/temp_dir.h"

namespace herald::memory {
namespace {

namespace fs = std::filesystem;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::Not;

class FolderWatcherTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = dir_.path() + "/memory";
    fs::create_directories(root_ + "/users/alice");
    auto watcher = FolderWatcher::Start(
        io_, {root_, root_ + "/users", dir_.path() + "/missing"},
        [this](std::vector<std::string> paths) { reports_.push_back(std::move(paths)); },
        absl::Milliseconds(50));
    ASSERT_TRUE(watcher.ok()) << watcher.status();
    watcher_ = *std::move(watcher);
  }

  // Runs the I/O loop until `condition` holds or 10 s pass.
  bool RunUntil(const std::function<bool()>& condition) {
    const absl::Time deadline = absl::Now() + absl::Seconds(10);
    while (!condition() && absl::Now() < deadline) {
      io_.run_for(std::chrono::milliseconds(20));
      io_.restart();
    }
    return condition();
  }

  std::vector<std::string> All() const {
    std::vector<std::string> all;
    for (const auto& report : reports_) all.insert(all.end(), report.begin(), report.end());
    return all;
  }

  TempDir dir_;
  std::string root_;
  asio::io_context io_;
  std::vector<std::vector<std::string>> reports_;
  std::unique_ptr<FolderWatcher> watcher_;
};

TEST_F(FolderWatcherTest, ReportsAFileWrittenOnceHoweverManyWritesItTook) {
  EXPECT_EQ(watcher_->watched_folders(), 3u);  // memory, users, users/alice; no duplicates
  {
    std::ofstream out(root_ + "/users/alice/history.md");
    out << "one";
  }
  std::ofstream(root_ + "/users/alice/history.md", std::ios::app) << "two";
  ASSERT_TRUE(RunUntil([&] { return !reports_.empty(); }));
  EXPECT_THAT(reports_[0], ElementsAre(root_ + "/users/alice/history.md"));
}

TEST_F(FolderWatcherTest, WatchesFoldersCreatedLaterAndTheFilesAlreadyInThem) {
  // A folder moved in with a file inside, and a folder made and then written to.
  fs::create_directories(dir_.path() + "/staging/bob");
  std::ofstream(dir_.path() + "/staging/bob/notes.md") << "hi";
  fs::rename(dir_.path() + "/staging/bob", root_ + "/users/bob");
  ASSERT_TRUE(RunUntil([&] { return !All().empty(); }));
  EXPECT_THAT(All(), Contains(root_ + "/users/bob/notes.md"));
  fs::create_directories(root_ + "/users/bob/sessions");
  ASSERT_TRUE(RunUntil([&] { return watcher_->watched_folders() == 5u; }));
  std::ofstream(root_ + "/users/bob/sessions/1.md") << "x";
  ASSERT_TRUE(RunUntil([&] {
    for (const std::string& path : All()) {
      if (path == root_ + "/users/bob/sessions/1.md") return true;
    }
    return false;
  }));
}

TEST_F(FolderWatcherTest, ReportsRemovalsAndRenamesButNotHiddenNames) {
  std::ofstream(root_ + "/users/alice/context.md") << "x";
  ASSERT_TRUE(RunUntil([&] { return !All().empty(); }));
  reports_.clear();
  std::ofstream(root_ + "/users/alice/.context.md.tmp-1") << "y";
  fs::rename(root_ + "/users/alice/.context.md.tmp-1", root_ + "/users/alice/context.md");
  ASSERT_TRUE(RunUntil([&] { return !All().empty(); }));
  EXPECT_THAT(All(), ElementsAre(root_ + "/users/alice/context.md"));
  reports_.clear();
  fs::remove(root_ + "/users/alice/context.md");
  ASSERT_TRUE(RunUntil([&] { return !All().empty(); }));
  EXPECT_THAT(All(), ElementsAre(root_ + "/users/alice/context.md"));
  EXPECT_THAT(All(), Not(Contains(root_ + "/users/alice/.context.md.tmp-1")));
}

}  // namespace
}  // namespace herald::memory
