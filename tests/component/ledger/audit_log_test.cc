#include "component/ledger/audit_log.h"

#include <sys/stat.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "tests/component/memory/temp_dir.h"

namespace herald::ledger {
namespace {

using ::herald::memory::TempDir;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

// XORs one byte in place (no truncation: the file keeps its size and inode).
void FlipByte(const std::string& path, size_t offset, unsigned char mask) {
  std::fstream file(path, std::ios::binary | std::ios::in | std::ios::out);
  file.seekg(static_cast<std::streamoff>(offset));
  const char byte = static_cast<char>(file.get() ^ mask);
  file.seekp(static_cast<std::streamoff>(offset));
  file.put(byte);
}

// The log's lines, each with its '\n'.
std::vector<std::string> Lines(const std::string& path) {
  std::vector<std::string> lines = absl::StrSplit(ReadFile(path), '\n', absl::SkipEmpty());
  for (std::string& line : lines) line += '\n';
  return lines;
}

AuditEntry Entry(int i) {
  return AuditEntry{.time = absl::FromUnixSeconds(1736847000 + i),
                    .actor = "ops",
                    .action = "/herald.v1.QuotaService/GetUsage",
                    .target = absl::StrCat("user", i, "@example.org"),
                    .outcome = i % 3 ? "OK" : "PERMISSION_DENIED",
                    .detail = i % 2 ? "" : "window=day\nline two"};
}

class AuditLogTest : public ::testing::Test {
 protected:
  std::string Path() const { return dir_.path() + "/data/audit/audit.log"; }
  std::string HeadPath() const { return Path() + ".head"; }

  std::unique_ptr<AuditLog> Open() {
    absl::StatusOr<std::unique_ptr<AuditLog>> log = AuditLog::Open(Path());
    EXPECT_TRUE(log.ok()) << log.status();
    return log.ok() ? *std::move(log) : nullptr;
  }

  // A log of `count` entries, closed.
  void WriteEntries(int count, int first = 1) {
    auto log = Open();
    ASSERT_NE(log, nullptr);
    for (int i = first; i < first + count; ++i) log->Append(Entry(i));
    ASSERT_TRUE(log->Flush().ok());
  }

  AuditVerifyReport Verify() {
    absl::StatusOr<AuditVerifyReport> report = AuditLog::Verify(Path());
    EXPECT_TRUE(report.ok()) << report.status();
    return report.ok() ? *report : AuditVerifyReport{.ok = false};
  }

  TempDir dir_;
};

TEST_F(AuditLogTest, AnIntactLogVerifies) {
  WriteEntries(0);
  AuditVerifyReport empty = Verify();
  EXPECT_TRUE(empty.ok) << empty.problem;
  EXPECT_EQ(empty.entries, 0u);

  WriteEntries(7);
  AuditVerifyReport report = Verify();
  EXPECT_TRUE(report.ok) << report.problem;
  EXPECT_EQ(report.entries, 7u);
  EXPECT_EQ(report.first_bad_entry, 0u);
  EXPECT_EQ(report.problem, "");
  // One entry per line, even with a newline in a detail.
  EXPECT_EQ(Lines(Path()).size(), 7u);
}

TEST_F(AuditLogTest, VerifyOfNoLogIsNotFound) {
  EXPECT_EQ(AuditLog::Verify(Path()).status().code(), absl::StatusCode::kNotFound);
}

TEST_F(AuditLogTest, ChangingAnyByteOfTheLogIsFoundInTheEntryHoldingIt) {
  WriteEntries(5);
  const std::string original = ReadFile(Path());
  const std::vector<std::string> lines = Lines(Path());
  std::vector<size_t> line_of(original.size());
  for (size_t offset = 0, line = 0; line < lines.size(); offset += lines[line].size(), ++line) {
    for (size_t i = 0; i < lines[line].size(); ++i) line_of[offset + i] = line + 1;
  }
  for (size_t offset = 0; offset < original.size(); ++offset) {
    for (const unsigned char mask : {0x01, 0x20, 0x80}) {
      FlipByte(Path(), offset, mask);
      AuditVerifyReport report = Verify();
      EXPECT_FALSE(report.ok) << "byte " << offset << " ^ " << int{mask};
      EXPECT_EQ(report.first_bad_entry, line_of[offset])
          << "byte " << offset << " ^ " << int{mask} << ": " << report.problem;
      FlipByte(Path(), offset, mask);
    }
  }
  ASSERT_EQ(ReadFile(Path()), original);
  EXPECT_TRUE(Verify().ok);
}

TEST_F(AuditLogTest, ChangingAnyByteOfTheHeadIsFound) {
  WriteEntries(3);
  const std::string original = ReadFile(HeadPath());
  for (size_t offset = 0; offset < original.size(); ++offset) {
    for (const unsigned char mask : {0x01, 0x02, 0x10}) {
      FlipByte(HeadPath(), offset, mask);
      EXPECT_FALSE(Verify().ok) << "head byte " << offset << " ^ " << int{mask};
      FlipByte(HeadPath(), offset, mask);
    }
  }
  ASSERT_EQ(ReadFile(HeadPath()), original);
  EXPECT_TRUE(Verify().ok);
}

TEST_F(AuditLogTest, ARemovedEntryIsFound) {
  WriteEntries(5);
  std::vector<std::string> lines = Lines(Path());
  lines.erase(lines.begin() + 2);
  WriteFile(Path(), absl::StrJoin(lines, ""));
  AuditVerifyReport report = Verify();
  EXPECT_FALSE(report.ok);
  EXPECT_EQ(report.first_bad_entry, 3u);
  EXPECT_EQ(report.entries, 2u);
  EXPECT_TRUE(absl::StrContains(report.problem, "sequence number 4")) << report.problem;
}

TEST_F(AuditLogTest, SwappedEntriesAreFound) {
  WriteEntries(5);
  std::vector<std::string> lines = Lines(Path());
  std::swap(lines[1], lines[3]);
  WriteFile(Path(), absl::StrJoin(lines, ""));
  AuditVerifyReport report = Verify();
  EXPECT_FALSE(report.ok);
  EXPECT_EQ(report.first_bad_entry, 2u);
}

TEST_F(AuditLogTest, AnInsertedEntryIsFound) {
  WriteEntries(4);
  std::vector<std::string> lines = Lines(Path());
  lines.insert(lines.begin() + 2, lines[1]);
  WriteFile(Path(), absl::StrJoin(lines, ""));
  AuditVerifyReport report = Verify();
  EXPECT_FALSE(report.ok);
  EXPECT_EQ(report.first_bad_entry, 3u);
}

TEST_F(AuditLogTest, AnEntryRewrittenWithAValidHashBreaksTheChainAfterIt) {
  WriteEntries(4);
  std::vector<std::string> lines = Lines(Path());
  absl::StatusOr<ParsedAuditLine> second =
      ParseAuditLine(std::string_view(lines[1]).substr(0, lines[1].size() - 1));
  ASSERT_TRUE(second.ok());
  AuditEntry forged = second->entry;
  forged.outcome = "OK";
  forged.actor = "someone-else";
  std::string hash;
  lines[1] = EncodeAuditLine(2, forged, second->prev, &hash);
  WriteFile(Path(), absl::StrJoin(lines, ""));
  AuditVerifyReport report = Verify();
  EXPECT_FALSE(report.ok);
  EXPECT_EQ(report.first_bad_entry, 3u);
  EXPECT_TRUE(absl::StrContains(report.problem, "does not chain")) << report.problem;
}

TEST_F(AuditLogTest, CuttingOffTheLastEntriesIsFound) {
  WriteEntries(5);
  std::vector<std::string> lines = Lines(Path());
  lines.resize(3);
  WriteFile(Path(), absl::StrJoin(lines, ""));
  AuditVerifyReport report = Verify();
  EXPECT_FALSE(report.ok);
  EXPECT_EQ(report.entries, 3u);
  EXPECT_EQ(report.first_bad_entry, 4u);
  EXPECT_TRUE(absl::StrContains(report.problem, "cut off")) << report.problem;

  // Also in the middle of a line, and down to nothing.
  const std::string whole = absl::StrJoin(Lines(Path()), "");
  WriteFile(Path(), whole.substr(0, whole.size() - 10));
  EXPECT_FALSE(Verify().ok);
  WriteFile(Path(), "");
  report = Verify();
  EXPECT_FALSE(report.ok);
  EXPECT_EQ(report.first_bad_entry, 1u);
  ASSERT_EQ(::unlink(Path().c_str()), 0);
  EXPECT_FALSE(Verify().ok);
}

TEST_F(AuditLogTest, AnEditedOrMissingHeadIsFound) {
  WriteEntries(2);
  const std::string two_entries_head = ReadFile(HeadPath());
  WriteEntries(3, 3);
  ASSERT_TRUE(Verify().ok);
  const std::string head = ReadFile(HeadPath());

  // Moved back to an earlier, consistent point: the last entries are no longer anchored.
  WriteFile(HeadPath(), two_entries_head);
  AuditVerifyReport report = Verify();
  EXPECT_FALSE(report.ok);
  EXPECT_EQ(report.first_bad_entry, 3u);
  EXPECT_EQ(report.entries_after_head, 3u);

  // Another count with the right hash, or the right count with another hash.
  WriteFile(HeadPath(), absl::StrReplaceAll(head, {{"entries=5", "entries=4"}}));
  EXPECT_FALSE(Verify().ok);
  WriteFile(HeadPath(), absl::StrReplaceAll(head, {{"entries=5", "entries=6"}}));
  EXPECT_FALSE(Verify().ok);
  const AuditHead other{
      .entries = 5, .bytes = ReadFile(Path()).size(), .last_hash = std::string(64, 'e')};
  WriteFile(HeadPath(), EncodeAuditHead(other));
  report = Verify();
  EXPECT_FALSE(report.ok);
  EXPECT_EQ(report.first_bad_entry, 0u);

  ASSERT_EQ(::unlink(HeadPath().c_str()), 0);
  report = Verify();
  EXPECT_FALSE(report.ok);
  EXPECT_TRUE(absl::StrContains(report.problem, "missing")) << report.problem;
}

TEST_F(AuditLogTest, ReopeningContinuesTheChain) {
  WriteEntries(3);
  WriteEntries(2, 4);
  AuditVerifyReport report = Verify();
  EXPECT_TRUE(report.ok) << report.problem;
  EXPECT_EQ(report.entries, 5u);
  std::vector<std::string> lines = Lines(Path());
  ASSERT_EQ(lines.size(), 5u);
  for (size_t i = 0; i < lines.size(); ++i) {
    absl::StatusOr<ParsedAuditLine> line =
        ParseAuditLine(std::string_view(lines[i]).substr(0, lines[i].size() - 1));
    ASSERT_TRUE(line.ok());
    EXPECT_EQ(line->seq, i + 1);
    EXPECT_EQ(line->entry.target, absl::StrCat("user", i + 1, "@example.org"));
  }
}

TEST_F(AuditLogTest, OpenRefusesToContinueADamagedLog) {
  WriteEntries(4);
  const std::string log = ReadFile(Path());
  const std::string head = ReadFile(HeadPath());

  std::vector<std::string> lines = Lines(Path());
  lines.pop_back();
  WriteFile(Path(), absl::StrJoin(lines, ""));
  EXPECT_EQ(AuditLog::Open(Path()).status().code(), absl::StatusCode::kDataLoss);

  std::string changed = log;
  changed[changed.size() - 80] ^= 1;  // in the last entry's hash
  WriteFile(Path(), changed);
  EXPECT_EQ(AuditLog::Open(Path()).status().code(), absl::StatusCode::kDataLoss);

  WriteFile(Path(), log + "not an entry\n");
  EXPECT_EQ(AuditLog::Open(Path()).status().code(), absl::StatusCode::kDataLoss);

  WriteFile(Path(), log);
  ASSERT_EQ(::unlink(HeadPath().c_str()), 0);
  absl::StatusOr<std::unique_ptr<AuditLog>> missing_head = AuditLog::Open(Path());
  EXPECT_EQ(missing_head.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_TRUE(absl::StrContains(missing_head.status().message(), "verify"))
      << missing_head.status();

  WriteFile(HeadPath(), head);
  EXPECT_TRUE(AuditLog::Open(Path()).ok());
  EXPECT_TRUE(Verify().ok);
}

TEST_F(AuditLogTest, AnEntryACrashCutShortIsRemovedAtOpenAndThatIsRecorded) {
  WriteEntries(3);
  std::vector<std::string> lines = Lines(Path());
  {
    std::ofstream out(Path(), std::ios::binary | std::ios::app);
    out << lines[0].substr(0, 40);  // half an entry, no newline
  }
  AuditVerifyReport before = Verify();
  EXPECT_FALSE(before.ok);
  EXPECT_EQ(before.first_bad_entry, 4u);

  auto log = Open();
  ASSERT_NE(log, nullptr);
  absl::StatusOr<AuditVerifyReport> after = log->Verify();
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_TRUE(after->ok) << after->problem;
  EXPECT_EQ(after->entries, 4u);
  const std::string last = Lines(Path()).back();
  EXPECT_TRUE(absl::StrContains(last, "\"actor\":\"herald\",\"action\":\"audit.recovered\""))
      << last;
  EXPECT_TRUE(absl::StrContains(last, "removed 40 bytes after entry 3")) << last;
}

TEST_F(AuditLogTest, EntriesWrittenBeforeTheHeadWasReplacedAreRecordedAtOpen) {
  WriteEntries(2);
  const std::string early_head = ReadFile(HeadPath());
  WriteEntries(2, 3);
  // As if the process had died between writing the batch and replacing the head.
  WriteFile(HeadPath(), early_head);
  EXPECT_FALSE(Verify().ok);

  auto log = Open();
  ASSERT_NE(log, nullptr);
  log->Append(Entry(5));
  absl::StatusOr<AuditVerifyReport> report = log->Verify();
  ASSERT_TRUE(report.ok());
  EXPECT_TRUE(report->ok) << report->problem;
  EXPECT_EQ(report->entries, 6u);
  std::vector<std::string> lines = Lines(Path());
  EXPECT_TRUE(absl::StrContains(lines[4], "recorded entries 3 to 4 in the head")) << lines[4];
  EXPECT_TRUE(absl::StrContains(lines[5], "user5@example.org"));
}

TEST_F(AuditLogTest, ASecondWriterIsRefused) {
  auto log = Open();
  ASSERT_NE(log, nullptr);
  EXPECT_EQ(AuditLog::Open(Path()).status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST_F(AuditLogTest, AppendsFromSeveralThreadsFormOneChain) {
  auto log = Open();
  ASSERT_NE(log, nullptr);
  constexpr int kThreads = 6;
  constexpr int kPerThread = 400;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        log->Append(Entry(t * kPerThread + i));
        if (i % 100 == 0) {
          EXPECT_TRUE(log->Flush().ok());
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  absl::StatusOr<AuditVerifyReport> report = log->Verify();
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->ok) << report->problem;
  EXPECT_EQ(report->entries, uint64_t{kThreads * kPerThread});
  // Every entry is there once.
  std::set<std::string> targets;
  for (const std::string& line : Lines(Path())) {
    absl::StatusOr<ParsedAuditLine> parsed =
        ParseAuditLine(std::string_view(line).substr(0, line.size() - 1));
    ASSERT_TRUE(parsed.ok());
    targets.insert(parsed->entry.target);
  }
  EXPECT_EQ(targets.size(), size_t{kThreads * kPerThread});
}

TEST_F(AuditLogTest, VerifyOfTheOpenLogSeesWhatWasJustAppended) {
  auto log = Open();
  ASSERT_NE(log, nullptr);
  log->Append({.actor = "chat:admin@example.org", .action = "/usage", .outcome = "OK"});
  absl::StatusOr<AuditVerifyReport> report = log->Verify();
  ASSERT_TRUE(report.ok());
  EXPECT_TRUE(report->ok);
  EXPECT_EQ(report->entries, 1u);
  // No time given: the time of Append.
  const std::string line = Lines(Path())[0];
  EXPECT_FALSE(absl::StrContains(line, "1970-")) << line;
}

TEST_F(AuditLogTest, VerifyOfTheRunningLogFindsAByteChangedUnderIt) {
  auto log = Open();
  ASSERT_NE(log, nullptr);
  for (int i = 1; i <= 20; ++i) log->Append(Entry(i));
  ASSERT_TRUE(log->Flush().ok());
  const size_t size = ReadFile(Path()).size();
  for (const size_t offset : {size_t{0}, size / 3, size / 2, size - 70, size - 1}) {
    FlipByte(Path(), offset, 0x04);
    absl::StatusOr<AuditVerifyReport> report = log->Verify();
    ASSERT_TRUE(report.ok()) << report.status();
    EXPECT_FALSE(report->ok) << "byte " << offset;
    FlipByte(Path(), offset, 0x04);
  }
  // The log goes on.
  log->Append(Entry(21));
  absl::StatusOr<AuditVerifyReport> report = log->Verify();
  ASSERT_TRUE(report.ok());
  EXPECT_TRUE(report->ok) << report->problem;
  EXPECT_EQ(report->entries, 21u);
}

TEST_F(AuditLogTest, ARunningLogVerifiesWhileOthersAppend) {
  auto log = Open();
  ASSERT_NE(log, nullptr);
  std::atomic<bool> done = false;
  // Appends as a busy Herald would (bursts, then a pause), up to a bound: a thread spinning on
  // Append starves the writer of the log's mutex on a loaded machine, and each Verify reads
  // the whole log, so an unbounded appender made this test's run time unbounded.
  std::thread appender([&] {
    for (int i = 1; !done && i <= 20'000; ++i) {
      log->Append(Entry(i));
      if (i % 8 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });
  for (int round = 0; round < 20; ++round) {
    absl::StatusOr<AuditVerifyReport> report = log->Verify();
    ASSERT_TRUE(report.ok()) << report.status();
    EXPECT_TRUE(report->ok) << report->problem;
  }
  done = true;
  appender.join();
}

TEST_F(AuditLogTest, EntriesStillQueuedAreWrittenWhenTheLogCloses) {
  {
    auto log = Open();
    ASSERT_NE(log, nullptr);
    for (int i = 1; i <= 50; ++i) log->Append(Entry(i));
  }
  AuditVerifyReport report = Verify();
  EXPECT_TRUE(report.ok) << report.problem;
  EXPECT_EQ(report.entries, 50u);
}

TEST_F(AuditLogTest, TheLogAndItsHeadArePrivate) {
  WriteEntries(1);
  struct stat info;
  ASSERT_EQ(::stat(Path().c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600);
  ASSERT_EQ(::stat(HeadPath().c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600);
  ASSERT_EQ(::stat((dir_.path() + "/data/audit").c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0700);
}

}  // namespace
}  // namespace herald::ledger
