// A writer killed with SIGKILL at random moments, over and over, on the same store: after
// every kill the history must read back, and hold exactly a prefix of what was written.
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
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

// How long one append of an entry this large takes (the median of a few) on this machine, right
// now: kill delays are drawn from multiples of it, so the kills land before, inside and after
// appends on a fast machine and on a slow or loaded one alike.
absl::Duration TimeOfOneAppend(const std::string& root, size_t big_bytes) {
  auto store = MemoryStore::Open(root);
  EXPECT_TRUE(store.ok()) << store.status();
  if (!store.ok()) return absl::Milliseconds(1);
  const ConversationRef bob{.kind = ConversationRef::Kind::kDirect, .address = "bob@localhost"};
  std::vector<absl::Duration> times;
  for (int64_t i = 0; i < 5; ++i) {
    const absl::Time start = absl::Now();
    EXPECT_TRUE((*store)->Append(bob, EntryFor(i, big_bytes)).ok());
    times.push_back(absl::Now() - start);
  }
  std::sort(times.begin(), times.end());
  std::error_code ignored;
  std::filesystem::remove_all(root, ignored);
  return std::max(times[times.size() / 2], absl::Microseconds(100));
}

struct KillPlan {
  int iterations = 60;             // kills at least
  int max_iterations = 600;        // kills at most, while a wanted outcome has not been seen
  bool want_torn_tail = false;     // keep killing until one kill tore an append
  double short_delay_appends = 1;  // odd kills come within this many append times
  double long_delay_appends = 4;   // even ones within this many, so whole appends happen
};

struct KillOutcome {
  int kills = 0;
  int torn_tails = 0;  // kills that left a torn tail (landed inside write())
  int archives = 0;
};

// Kills the writer at random moments and checks the history after each kill.
KillOutcome KillWriterRepeatedly(const std::string& root, size_t big_bytes, const KillPlan& plan) {
  const absl::Duration append_time = TimeOfOneAppend(root + "-calibration", big_bytes);
  ::testing::Test::RecordProperty("append_micros",
                                  static_cast<int>(absl::ToInt64Microseconds(append_time)));
  std::mt19937 random(7);
  size_t previous = 0;
  KillOutcome outcome;
  for (int& iteration = outcome.kills; iteration < plan.max_iterations; ++iteration) {
    const bool wanted_seen =
        previous + outcome.archives > 0 && (!plan.want_torn_tail || outcome.torn_tails > 0);
    if (iteration >= plan.iterations && wanted_seen) break;
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
    const double appends = iteration % 2 ? plan.short_delay_appends : plan.long_delay_appends;
    const int64_t max_delay_nanos =
        std::max<int64_t>(1, absl::ToInt64Nanoseconds(append_time * appends));
    const int64_t delay_nanos = static_cast<int64_t>(random() % max_delay_nanos);
    const timespec delay{static_cast<time_t>(delay_nanos / 1'000'000'000),
                         static_cast<long>(delay_nanos % 1'000'000'000)};
    ::nanosleep(&delay, nullptr);
    EXPECT_EQ(::kill(pid, SIGKILL), 0);
    int status = 0;
    EXPECT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFSIGNALED(status)) << "the writer exited by itself with " << status;

    auto store = MemoryStore::Open(root);
    EXPECT_TRUE(store.ok()) << store.status();
    if (!store.ok()) return outcome;
    absl::StatusOr<std::vector<MemoryEntry>> history = (*store)->History(kAlice, SIZE_MAX);
    EXPECT_TRUE(history.ok()) << history.status();
    if (!history.ok()) return outcome;
    EXPECT_GE(history->size(), previous) << "entries were lost";
    for (size_t i = 0; i < history->size(); ++i) {
      if ((*history)[i] != EntryFor(static_cast<int64_t>(i), big_bytes)) {
        ADD_FAILURE() << "entry " << i << " differs after kill " << iteration;
        return outcome;
      }
    }
    previous = history->size();

    const std::string path = (*store)->FolderFor(kAlice) + "/history.md";
    absl::StatusOr<std::optional<FileTail>> tail = ReadFileTail(path, 2);
    if (tail.ok() && tail->has_value() && (*tail)->bytes != "\n\n") ++outcome.torn_tails;

    // Keep the session short so each check stays quick: archive it (torn tail and all) and
    // let the next writer start a new one. The archive is removed, so the test needs little
    // room even on a small /dev/shm.
    std::error_code error;
    if (std::filesystem::file_size(path, error) > kMaxSessionBytes && !error) {
      absl::StatusOr<std::string> archived = (*store)->ArchiveSession(kAlice, absl::Now());
      EXPECT_TRUE(archived.ok() && !archived->empty()) << archived.status();
      if (archived.ok() && !archived->empty()) {
        std::filesystem::remove((*store)->FolderFor(kAlice) + "/sessions/" + *archived, error);
        EXPECT_FALSE(error) << "the archived session " << *archived << " is not where it should be";
      }
      ++outcome.archives;
      previous = 0;
    }
  }
  ::testing::Test::RecordProperty("kills", outcome.kills);
  ::testing::Test::RecordProperty("archives", outcome.archives);
  ::testing::Test::RecordProperty("torn_tails", outcome.torn_tails);
  EXPECT_GT(outcome.archives + previous, 0u) << "the writer never completed an append";
  return outcome;
}

TEST(MemoryStoreCrashTest, HistoryReadsBackAPrefixAfterEveryKill) {
  TempDir dir;
  // Kills land in fsync more often than in write() here; the tmpfs test below aims at write().
  KillWriterRepeatedly(dir.path() + "/memory", 128 << 10, KillPlan{});
}

TEST(MemoryStoreCrashTest, HistoryReadsBackAPrefixAfterKillsInsideWrites) {
  // On tmpfs fsync costs nothing, so most of an append is write() and many kills tear it.
  std::string shm = "/dev/shm/herald-memory-crash-XXXXXX";
  ASSERT_NE(::mkdtemp(shm.data()), nullptr) << "no /dev/shm to run on";
  const KillOutcome outcome =
      KillWriterRepeatedly(shm + "/memory", 2 << 20, KillPlan{.want_torn_tail = true});
  std::error_code ignored;
  std::filesystem::remove_all(shm, ignored);
  EXPECT_GT(outcome.torn_tails, 0)
      << "no kill in " << outcome.kills << " landed inside a write; the test did not test tearing";
}

}  // namespace
}  // namespace herald::memory
