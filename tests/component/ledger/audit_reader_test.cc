// ReadAuditNewest: the audit log read backwards a page at a time, newest entry first, with
// the byte offset of the oldest entry as the cursor for the next page.
#include "component/ledger/audit_reader.h"

#include <cstdint>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "component/ledger/audit_log.h"
#include "gtest/gtest.h"
#include "tests/component/memory/temp_dir.h"

namespace herald::ledger {
namespace {

using ::herald::memory::TempDir;

AuditEntry Entry(int i) {
  return AuditEntry{.time = absl::FromUnixSeconds(1736847000 + i),
                    .actor = "ops",
                    .action = "/herald.v1.QuotaService/GetUsage",
                    .target = absl::StrCat("user", i, "@example.org"),
                    .outcome = i % 3 ? "OK" : "PERMISSION_DENIED",
                    .detail = i % 2 ? "" : "window=day\nline two"};
}

// The largest entry Herald writes: every field at its cap, each byte escaped to six
// ("\u0001"), about 48 KiB on the line.
AuditEntry BigEntry(int i) {
  AuditEntry entry = Entry(i);
  const std::string field(kMaxAuditFieldBytes - 8, '\x01');
  entry.actor = absl::StrCat("big", i % 10, field);
  entry.action = field;
  entry.target = field;
  entry.outcome = field;
  entry.detail = std::string(kMaxAuditDetailBytes, '\x02');
  return entry;
}

class AuditReaderTest : public ::testing::Test {
 protected:
  std::string Path() const { return dir_.path() + "/audit.log"; }

  // Writes the chained lines of `entries` (seq 1 first) to the log, replacing it, and
  // remembers where each line starts.
  void WriteLog(const std::vector<AuditEntry>& entries) {
    std::string text;
    std::string prev(kGenesisHash);
    offsets_.clear();
    for (size_t i = 0; i < entries.size(); ++i) {
      offsets_.push_back(text.size());
      std::string hash;
      text += EncodeAuditLine(i + 1, CanonicalAuditEntry(entries[i], absl::Now()), prev, &hash);
      prev = hash;
    }
    Write(text, std::ios::trunc);
  }

  void Write(const std::string& bytes, std::ios::openmode mode = std::ios::app) {
    std::ofstream out(Path(), std::ios::binary | mode);
    out << bytes;
  }

  // Every page from the newest on, `limit` at a time: the sequence numbers in the order
  // returned. Fails the test on an error, a page over `limit`, or a short page that is not
  // the last.
  std::vector<uint64_t> Walk(size_t limit) {
    std::vector<uint64_t> seqs;
    std::optional<uint64_t> before;
    for (int pages = 0; pages < 100000; ++pages) {
      absl::StatusOr<AuditPage> page = ReadAuditNewest(Path(), before, limit);
      EXPECT_TRUE(page.ok()) << page.status();
      if (!page.ok()) break;
      EXPECT_LE(page->entries.size(), limit);
      for (const ParsedAuditLine& line : page->entries) seqs.push_back(line.seq);
      if (page->older == 0) break;
      EXPECT_EQ(page->entries.size(), limit) << "a page short of the limit must be the last";
      before = page->older;
    }
    return seqs;
  }

  static std::vector<uint64_t> Descending(uint64_t from) {
    std::vector<uint64_t> seqs;
    for (uint64_t seq = from; seq >= 1; --seq) seqs.push_back(seq);
    return seqs;
  }

  TempDir dir_;
  std::vector<uint64_t> offsets_;  // of each line WriteLog wrote
};

TEST_F(AuditReaderTest, AnEmptyLogIsOneEmptyPage) {
  WriteLog({});
  absl::StatusOr<AuditPage> page = ReadAuditNewest(Path(), std::nullopt, 100);
  ASSERT_TRUE(page.ok()) << page.status();
  EXPECT_TRUE(page->entries.empty());
  EXPECT_EQ(page->older, 0u);
}

TEST_F(AuditReaderTest, AMissingLogIsNotFound) {
  EXPECT_EQ(ReadAuditNewest(Path(), std::nullopt, 100).status().code(),
            absl::StatusCode::kNotFound);
}

TEST_F(AuditReaderTest, FewerEntriesThanAPageComeNewestFirstWithEveryField) {
  WriteLog({Entry(1), Entry(2), Entry(3)});
  absl::StatusOr<AuditPage> page = ReadAuditNewest(Path(), std::nullopt, 100);
  ASSERT_TRUE(page.ok()) << page.status();
  ASSERT_EQ(page->entries.size(), 3u);
  EXPECT_EQ(page->older, 0u);
  for (int i = 0; i < 3; ++i) {
    const ParsedAuditLine& line = page->entries[i];
    EXPECT_EQ(line.seq, static_cast<uint64_t>(3 - i));
    EXPECT_EQ(line.entry, CanonicalAuditEntry(Entry(3 - i), absl::Now()));
    EXPECT_EQ(line.hash, line.actual_hash);
  }
  EXPECT_EQ(page->entries[2].prev, kGenesisHash);
  EXPECT_EQ(page->entries[0].prev, page->entries[1].hash);
}

TEST_F(AuditReaderTest, APageThatEndsAtTheFirstEntryHasNoCursor) {
  WriteLog({Entry(1), Entry(2), Entry(3), Entry(4)});
  absl::StatusOr<AuditPage> page = ReadAuditNewest(Path(), std::nullopt, 4);
  ASSERT_TRUE(page.ok()) << page.status();
  EXPECT_EQ(page->entries.size(), 4u);
  EXPECT_EQ(page->older, 0u);
}

TEST_F(AuditReaderTest, TheCursorIsWhereTheOldestEntryOfThePageStarts) {
  WriteLog({Entry(1), Entry(2), Entry(3), Entry(4), Entry(5)});
  absl::StatusOr<AuditPage> first = ReadAuditNewest(Path(), std::nullopt, 4);
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_EQ(first->entries.size(), 4u);
  EXPECT_EQ(first->entries.back().seq, 2u);
  EXPECT_EQ(first->older, offsets_[1]);

  absl::StatusOr<AuditPage> second = ReadAuditNewest(Path(), first->older, 4);
  ASSERT_TRUE(second.ok()) << second.status();
  ASSERT_EQ(second->entries.size(), 1u);
  EXPECT_EQ(second->entries[0].seq, 1u);
  EXPECT_EQ(second->older, 0u);
}

TEST_F(AuditReaderTest, PagesWalkFromTheNewestToTheFirstEntryOfALiveLog) {
  {
    absl::StatusOr<std::unique_ptr<AuditLog>> log = AuditLog::Open(Path());
    ASSERT_TRUE(log.ok()) << log.status();
    for (int i = 1; i <= 250; ++i) (*log)->Append(Entry(i));
    ASSERT_TRUE((*log)->Flush().ok());
  }
  for (size_t limit : {1u, 7u, 100u, 250u, 1000u}) {
    EXPECT_EQ(Walk(limit), Descending(250)) << "limit " << limit;
  }
}

TEST_F(AuditReaderTest, ALastLineWithoutItsNewlineIsAWriteInProgressAndLeftOut) {
  WriteLog({Entry(1), Entry(2), Entry(3)});
  std::string hash;
  const std::string next = EncodeAuditLine(4, CanonicalAuditEntry(Entry(4), absl::Now()),
                                           std::string(kGenesisHash), &hash);
  Write(next.substr(0, next.size() / 2));
  EXPECT_EQ(Walk(2), Descending(3));

  // Only a write in progress: nothing to show yet.
  WriteLog({});
  Write(next.substr(0, next.size() - 1));
  absl::StatusOr<AuditPage> page = ReadAuditNewest(Path(), std::nullopt, 10);
  ASSERT_TRUE(page.ok()) << page.status();
  EXPECT_TRUE(page->entries.empty());
  EXPECT_EQ(page->older, 0u);
}

TEST_F(AuditReaderTest, RefusesACursorPastTheEndOrInsideALine) {
  WriteLog({Entry(1), Entry(2), Entry(3)});
  std::ifstream in(Path(), std::ios::binary | std::ios::ate);
  const uint64_t size = static_cast<uint64_t>(in.tellg());

  for (uint64_t bad : {size + 1, offsets_[1] + 1, offsets_[2] - 1, uint64_t{1}}) {
    absl::StatusOr<AuditPage> page = ReadAuditNewest(Path(), bad, 10);
    EXPECT_EQ(page.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_TRUE(absl::StrContains(page.status().message(), absl::StrCat(bad))) << page.status();
  }

  // The end, the start of a line, and 0 are cursors.
  absl::StatusOr<AuditPage> page = ReadAuditNewest(Path(), size, 10);
  ASSERT_TRUE(page.ok()) << page.status();
  EXPECT_EQ(page->entries.size(), 3u);
  page = ReadAuditNewest(Path(), offsets_[2], 10);
  ASSERT_TRUE(page.ok()) << page.status();
  ASSERT_EQ(page->entries.size(), 2u);
  EXPECT_EQ(page->entries[0].seq, 2u);
  page = ReadAuditNewest(Path(), 0, 10);
  ASSERT_TRUE(page.ok()) << page.status();
  EXPECT_TRUE(page->entries.empty());
  EXPECT_EQ(page->older, 0u);

  EXPECT_EQ(ReadAuditNewest(Path(), std::nullopt, 0).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(AuditReaderTest, EntriesOfTheLargestSizeAreReadAcrossBlockBoundaries) {
  // Big and small entries mixed, so that the 64 KiB blocks end at many places within lines.
  std::vector<AuditEntry> entries;
  for (int i = 1; i <= 40; ++i) entries.push_back(i % 3 == 0 ? Entry(i) : BigEntry(i));
  WriteLog(entries);
  const uint64_t big_line = offsets_[1] - offsets_[0];
  EXPECT_GT(big_line, kMaxAuditLineBytes * 2 / 3) << "BigEntry is not big";
  EXPECT_LE(big_line, kMaxAuditLineBytes + 1);

  for (size_t limit : {1u, 2u, 5u, 40u}) EXPECT_EQ(Walk(limit), Descending(40)) << limit;
  absl::StatusOr<AuditPage> page = ReadAuditNewest(Path(), std::nullopt, 40);
  ASSERT_TRUE(page.ok()) << page.status();
  for (const ParsedAuditLine& line : page->entries) {
    EXPECT_EQ(line.entry, CanonicalAuditEntry(entries[line.seq - 1], absl::Now())) << line.seq;
  }
}

TEST_F(AuditReaderTest, ALineThatIsNotAnEntryIsDataLossNamingItsOffset) {
  WriteLog({Entry(1), Entry(2), Entry(3)});
  // Entry 2 replaced by something else of another length.
  std::ifstream in(Path(), std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  text.replace(offsets_[1], offsets_[2] - offsets_[1], "{\"seq\":2,\"changed\":true}\n");
  Write(text, std::ios::trunc);

  absl::StatusOr<AuditPage> page = ReadAuditNewest(Path(), std::nullopt, 1);
  ASSERT_TRUE(page.ok()) << page.status();  // entry 3 is before the damage
  EXPECT_EQ(page->entries[0].seq, 3u);
  page = ReadAuditNewest(Path(), page->older, 1);
  EXPECT_EQ(page.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_TRUE(absl::StrContains(page.status().message(), absl::StrCat("byte ", offsets_[1])))
      << page.status();
}

TEST_F(AuditReaderTest, ALineLongerThanAnyEntryIsDataLoss) {
  WriteLog({Entry(1)});
  Write(std::string(kMaxAuditLineBytes + 10, 'x') + "\n");
  absl::StatusOr<AuditPage> page = ReadAuditNewest(Path(), std::nullopt, 10);
  EXPECT_EQ(page.status().code(), absl::StatusCode::kDataLoss) << page.status();

  // Without its newline it is no write in progress either.
  WriteLog({Entry(1)});
  Write(std::string(kMaxAuditLineBytes + 10, 'x'));
  page = ReadAuditNewest(Path(), std::nullopt, 10);
  EXPECT_EQ(page.status().code(), absl::StatusCode::kDataLoss) << page.status();
}

}  // namespace
}  // namespace herald::ledger
