// A writer killed with SIGKILL at random moments, over and over, on the same store: after
// every kill the history must read back, and hold exactly a prefix of what was written.
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "component/memory/atomic_file.h"
#include "component/memory/memory_store.h"
#include "gtest/gtest.h"
#include "tests/component/memory/temp_dir.h"

namespace herald::memory {
namespace {

const ConversationRef kAlice{.kind = ConversationRef::Kind::kDirect, .address = "alice@localhost"};

// Entry i is a function of i alone, so a reader knows what each position must hold. Some are
// large so that a kill often lands inside write(); all contain the format's own markers.
MemoryEntry EntryFor(int64_t i, size_t big_bytes) {
  std::string text =
      absl::StrCat("### entry ", i, "\n```\n> not a quote\n---\n\r\n\xC3\xA9t\xC3\xA9");
  if (i % 2 == 0) text += std::string(big_bytes, static_cast<char>('a' + i % 26));
  return MemoryEntry{.time = absl::FromUnixSeconds(1736847000 + i),
                     .role = i % 2 ? "assistant" : "user",
                     .author = i % 2 ? "Herald" : "alice@localhost",
                     .text = std::move(text)};
}

// Appends per writer at most, then it waits to be killed: the file (and the time each check
// takes) stays bounded however fast the machine is.
constexpr int kAppendsPerWriter = 3;
// A session larger than this is archived between kills.
constexpr uintmax_t kMaxSessionBytes = 8 << 20;

// The child: continue the sequence where the file leaves it, until killed.
[[noreturn]] void Writer(const std::string& root, size_t big_bytes, int ready_fd) {
  auto store = MemoryStore::Open(root);
  if (!store.ok()) _exit(2);
  auto history = (*store)->History(kAlice, SIZE_MAX);
  if (!history.ok()) _exit(3);
  const auto first = static_cast<int64_t>(history->size());
  for (int64_t i = first; i < first + kAppendsPerWriter; ++i) {
    const MemoryEntry entry = EntryFor(i, big_bytes);
    const char writing = 'w';  // the parent times its kill from the first of these
    if (::write(ready_fd, &writing, 1) != 1) _exit(4);
    if (!(*store)->Append(kAlice, entry).ok()) _exit(5);
  }
  for (;;) ::pause();
}

// Kills the writer `iterations` times at random moments and checks the history after each;
// returns how many kills left a torn tail (landed inside write()).
// Odd iterations wait at most `short_delay_micros` before the kill, even ones at most
// `long_delay_micros`, so that some kills come after whole appends and the history grows.
int KillWriterRepeatedly(const std::string& root, int iterations, size_t big_bytes,
                         long short_delay_micros, long long_delay_micros) {
  std::mt19937 random(7);
  size_t previous = 0;
  int torn_tails = 0;
  int archives = 0;
  for (int iteration = 0; iteration < iterations; ++iteration) {
    int fds[2];
    EXPECT_EQ(::pipe(fds), 0);
    const pid_t pid = ::fork();
    EXPECT_GE(pid, 0);
    if (pid == 0) {
      ::close(fds[0]);
      Writer(root, big_bytes, fds[1]);
    }
    ::close(fds[1]);
    char ready = 0;
    EXPECT_EQ(::read(fds[0], &ready, 1), 1) << "the writer did not start";
    ::close(fds[0]);
    // Fault injection, not synchronisation: kill at a random point of the appending.
    const long max_delay = iteration % 2 ? short_delay_micros : long_delay_micros;
    const timespec delay{0, static_cast<long>(random() % max_delay) * 1000};
    ::nanosleep(&delay, nullptr);
    EXPECT_EQ(::kill(pid, SIGKILL), 0);
    int status = 0;
    EXPECT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFSIGNALED(status)) << "the writer exited by itself with " << status;

    auto store = MemoryStore::Open(root);
    EXPECT_TRUE(store.ok()) << store.status();
    if (!store.ok()) return torn_tails;
    absl::StatusOr<std::vector<MemoryEntry>> history = (*store)->History(kAlice, SIZE_MAX);
    EXPECT_TRUE(history.ok()) << history.status();
    if (!history.ok()) return torn_tails;
    EXPECT_GE(history->size(), previous) << "entries were lost";
    for (size_t i = 0; i < history->size(); ++i) {
      if ((*history)[i] != EntryFor(static_cast<int64_t>(i), big_bytes)) {
        ADD_FAILURE() << "entry " << i << " differs after kill " << iteration;
        return torn_tails;
      }
    }
    previous = history->size();

    const std::string path = (*store)->FolderFor(kAlice) + "/history.md";
    absl::StatusOr<std::optional<FileTail>> tail = ReadFileTail(path, 2);
    if (tail.ok() && tail->has_value() && (*tail)->bytes != "\n\n") ++torn_tails;

    // Keep the session short so each check stays quick: archive it (torn tail and all) and
    // let the next writer start a new one.
    std::error_code error;
    if (std::filesystem::file_size(path, error) > kMaxSessionBytes && !error) {
      absl::StatusOr<std::string> archived = (*store)->ArchiveSession(kAlice, absl::Now());
      EXPECT_TRUE(archived.ok() && !archived->empty()) << archived.status();
      ++archives;
      previous = 0;
    }
  }
  ::testing::Test::RecordProperty("archives", archives);
  EXPECT_GT(archives + previous, 0u) << "the writer never completed an append";
  return torn_tails;
}

TEST(MemoryStoreCrashTest, HistoryReadsBackAPrefixAfterEveryKill) {
  TempDir dir;
  // Kills land in fsync more often than in write() here; the tmpfs test below aims at write().
  const int torn_tails = KillWriterRepeatedly(dir.path() + "/memory", 60, 128 << 10, 12000, 12000);
  RecordProperty("torn_tails", torn_tails);
}

TEST(MemoryStoreCrashTest, HistoryReadsBackAPrefixAfterKillsInsideWrites) {
  // On tmpfs fsync costs nothing, so most of an append is write() and many kills tear it.
  std::string shm = "/dev/shm/herald-memory-crash-XXXXXX";
  ASSERT_NE(::mkdtemp(shm.data()), nullptr) << "no /dev/shm to run on";
  const int torn_tails = KillWriterRepeatedly(shm + "/memory", 60, 2 << 20, 1500, 5000);
  std::error_code ignored;
  std::filesystem::remove_all(shm, ignored);
  RecordProperty("torn_tails", torn_tails);
  EXPECT_GT(torn_tails, 0) << "no kill landed inside a write; the test did not test tearing";
}

}  // namespace
}  // namespace herald::memory
