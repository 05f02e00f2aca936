#include "component/ledger/audit_format.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/time/civil_time.h"
#include "gtest/gtest.h"

namespace herald::ledger {
namespace {

const absl::Time kTime =
    absl::FromCivil(absl::CivilSecond(2025, 1, 14, 9, 30, 0), absl::UTCTimeZone()) +
    absl::Microseconds(123456);

AuditEntry Entry() {
  return AuditEntry{.time = kTime,
                    .actor = "ops",
                    .action = "/herald.v1.SessionService/ListSessions",
                    .target = "alice@example.org",
                    .outcome = "OK",
                    .detail = "page_size=10"};
}

std::string LineOf(const AuditEntry& entry, uint64_t seq = 1,
                   std::string_view prev = kGenesisHash) {
  std::string hash;
  std::string line = EncodeAuditLine(seq, entry, prev, &hash);
  line.pop_back();  // the '\n'
  return line;
}

TEST(AuditFormatTest, WritesOneJsonObjectPerLine) {
  std::string hash;
  const std::string line = EncodeAuditLine(1, Entry(), kGenesisHash, &hash);
  EXPECT_EQ(line,
            absl::StrCat(R"({"seq":1,"time":"2025-01-14T09:30:00.123456Z","actor":"ops",)",
                         R"("action":"/herald.v1.SessionService/ListSessions",)",
                         R"("target":"alice@example.org","outcome":"OK","detail":"page_size=10",)",
                         R"("prev":")", kGenesisHash, R"(","hash":")", hash, "\"}\n"));
  // The hash covers everything before ,"hash":
  EXPECT_EQ(hash, Sha256Hex(line.substr(0, line.find(",\"hash\":"))));
}

TEST(AuditFormatTest, TheFormatIsPinnedByAKnownHash) {
  // docs/ledger.md shows this line and how to check its hash with sha256sum.
  AuditEntry entry = Entry();
  entry.target = "";
  entry.detail = "";
  std::string hash;
  EncodeAuditLine(1, entry, kGenesisHash, &hash);
  EXPECT_EQ(hash, "f462e35b7248b5ed0a234c5f12f6d9aa699ad86cfdaf4a55939eb33776b7083c");
}

TEST(AuditFormatTest, ReadsBackWhatItWrote) {
  std::string hash;
  const std::string line = EncodeAuditLine(42, Entry(), std::string(64, 'a'), &hash);
  absl::StatusOr<ParsedAuditLine> parsed = ParseAuditLine(line.substr(0, line.size() - 1));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->seq, 42u);
  EXPECT_EQ(parsed->entry, Entry());
  EXPECT_EQ(parsed->prev, std::string(64, 'a'));
  EXPECT_EQ(parsed->hash, hash);
  EXPECT_EQ(parsed->actual_hash, hash);
}

TEST(AuditFormatTest, EscapesControlCharactersSoAnEntryStaysOnOneLine) {
  AuditEntry entry = Entry();
  entry.detail = "line one\nline two\r\t\x01\x1f\x7f \"quoted\" back\\slash";
  entry.target = "caf\xC3\xA9 \xE2\x9C\x93";  // UTF-8 stays as it is
  std::string hash;
  const std::string line = EncodeAuditLine(1, entry, kGenesisHash, &hash);
  EXPECT_EQ(line.find('\n'), line.size() - 1);
  EXPECT_EQ(line.find('\r'), std::string::npos);
  EXPECT_NE(line.find(R"(line one\nline two\r\t\u0001\u001f\u007f \"quoted\" back\\slash)"),
            std::string::npos);
  absl::StatusOr<ParsedAuditLine> parsed = ParseAuditLine(line.substr(0, line.size() - 1));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->entry, entry);
}

TEST(AuditFormatTest, TheHashDependsOnEveryFieldAndThePreviousHash) {
  std::string base;
  EncodeAuditLine(1, Entry(), kGenesisHash, &base);
  auto hash_of = [](uint64_t seq, const AuditEntry& entry, std::string_view prev) {
    std::string hash;
    EncodeAuditLine(seq, entry, prev, &hash);
    return hash;
  };
  EXPECT_NE(hash_of(2, Entry(), kGenesisHash), base);
  EXPECT_NE(hash_of(1, Entry(), std::string(64, '1')), base);
  AuditEntry changed = Entry();
  changed.time += absl::Microseconds(1);
  EXPECT_NE(hash_of(1, changed, kGenesisHash), base);
  for (std::string AuditEntry::*field :
       {&AuditEntry::actor, &AuditEntry::action, &AuditEntry::target, &AuditEntry::outcome,
        &AuditEntry::detail}) {
    changed = Entry();
    changed.*field += "x";
    EXPECT_NE(hash_of(1, changed, kGenesisHash), base);
  }
  // Fields cannot trade bytes: "ab" + "c" differs from "a" + "bc".
  AuditEntry left = Entry(), right = Entry();
  left.actor = "ab", left.action = "c";
  right.actor = "a", right.action = "bc";
  EXPECT_NE(hash_of(1, left, kGenesisHash), hash_of(1, right, kGenesisHash));
}

TEST(AuditFormatTest, StoresValidUtf8FieldsOfBoundedLength) {
  AuditEntry entry = Entry();
  entry.actor = "bad \xFF\xFE utf8 \xC3";
  entry.detail = std::string(10000, 'd');
  entry.time = kTime + absl::Nanoseconds(789);
  AuditEntry stored = CanonicalAuditEntry(entry, absl::Now());
  EXPECT_EQ(stored.actor, "bad \xEF\xBF\xBD\xEF\xBF\xBD utf8 \xEF\xBF\xBD");
  EXPECT_LE(stored.detail.size(), kMaxAuditDetailBytes);
  EXPECT_EQ(stored.detail.substr(stored.detail.size() - 3), "\xE2\x80\xA6");
  EXPECT_EQ(stored.time, kTime);
  // A cut never splits a character.
  entry.detail = std::string(kMaxAuditDetailBytes - 4, 'x') + "\xE2\x9C\x93\xE2\x9C\x93";
  stored = CanonicalAuditEntry(entry, absl::Now());
  EXPECT_EQ(stored.detail, std::string(kMaxAuditDetailBytes - 4, 'x') + "\xE2\x80\xA6");
  // An infinite time becomes `now`.
  entry.time = absl::InfiniteFuture();
  EXPECT_EQ(CanonicalAuditEntry(entry, kTime).time, kTime);
  // What is canonical stays as it is.
  EXPECT_EQ(CanonicalAuditEntry(Entry(), absl::Now()), Entry());
}

TEST(AuditFormatTest, RefusesLinesNotInTheCanonicalForm) {
  const std::string line = LineOf(Entry());
  ASSERT_TRUE(ParseAuditLine(line).ok());
  const std::vector<std::string> variants = {
      "",
      "{}",
      line + " ",
      " " + line,
      absl::StrReplaceAll(line, {{"\"seq\":1", "\"seq\":01"}}),
      absl::StrReplaceAll(line, {{"\"seq\":1", "\"seq\": 1"}}),
      absl::StrReplaceAll(line, {{"\"seq\":1", "\"seq\":0"}}),
      absl::StrReplaceAll(line, {{"\"ops\"", "\"\\u006fps\""}}),
      absl::StrReplaceAll(line, {{"\"ops\"", "\"o\\/ps\""}}),
      absl::StrReplaceAll(line, {{".123456Z", ".123456789Z"}}),
      absl::StrReplaceAll(line, {{".123456Z", "Z"}}),
      absl::StrReplaceAll(line, {{"T09:30", "t09:30"}}),
      absl::StrReplaceAll(line, {{"\"actor\":\"ops\",\"action\"", "\"action\""}}),
      absl::StrReplaceAll(line, {{",\"detail\"", ",\"extra\":\"\",\"detail\""}}),
      absl::StrReplaceAll(line, {{"0000000000", "000000000A"}}),
      line.substr(0, line.size() - 1),
  };
  for (const std::string& variant : variants) {
    EXPECT_EQ(ParseAuditLine(variant).status().code(), absl::StatusCode::kInvalidArgument)
        << variant;
  }
  // An over-long field is not what Herald writes.
  AuditEntry long_actor = Entry();
  long_actor.actor = std::string(kMaxAuditFieldBytes + 1, 'a');
  EXPECT_FALSE(ParseAuditLine(LineOf(long_actor)).ok());
}

TEST(AuditFormatTest, AChangedLineParsesButItsHashNoLongerMatches) {
  const std::string line = absl::StrReplaceAll(LineOf(Entry()), {{"\"ops\"", "\"eve\""}});
  absl::StatusOr<ParsedAuditLine> parsed = ParseAuditLine(line);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_NE(parsed->actual_hash, parsed->hash);
}

TEST(AuditFormatTest, HeadRoundTripsInOneFormOnly) {
  const AuditHead head{.entries = 12, .bytes = 3456, .last_hash = std::string(64, 'b')};
  const std::string text = EncodeAuditHead(head);
  EXPECT_EQ(
      text,
      absl::StrCat("herald-audit-head v1 entries=12 bytes=3456 last=", std::string(64, 'b'), "\n"));
  absl::StatusOr<AuditHead> back = ParseAuditHead(text);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, head);
  for (const std::string& variant :
       {absl::StrReplaceAll(text, {{"=12", "=012"}}), absl::StrReplaceAll(text, {{"=12", "=+12"}}),
        absl::StrReplaceAll(text, {{"v1", "v2"}}),
        absl::StrReplaceAll(text, {{" bytes", "  bytes"}}), text.substr(0, text.size() - 1),
        text + "\n", absl::StrReplaceAll(text, {{"bbbb", "BBBB"}}), std::string("")}) {
    EXPECT_FALSE(ParseAuditHead(variant).ok()) << variant;
  }
}

TEST(AuditFormatTest, Sha256HexIsTheStandardDigest) {
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

}  // namespace
}  // namespace herald::ledger
