// Aligned tables and the value formats people read.
#include "tools/heraldctl/table.h"

#include "gtest/gtest.h"

namespace herald::heraldctl {
namespace {

TEST(TableTest, AlignsColumnsTwoSpacesApartWithNumbersOnTheRight) {
  Table table({{"JID"}, {"TOKENS", Align::kRight}, {"NOTE"}});
  table.AddRow({"alice@example.org", "12,345", "x"});
  table.AddRow({"bob@b", "7", ""});
  EXPECT_EQ(table.Render(),
            "JID                TOKENS  NOTE\n"
            "alice@example.org  12,345  x\n"
            "bob@b                   7\n");
}

TEST(TableTest, MeasuresWidthInCharactersNotBytes) {
  Table table({{"NAME"}, {"N", Align::kRight}});
  table.AddRow({"zoë", "1"});
  table.AddRow({"zoey", "2"});
  EXPECT_EQ(table.Render(),
            "NAME  N\n"
            "zoë   1\n"
            "zoey  2\n");
}

TEST(TableTest, PadsShortRowsAndKeepsEachRowOnOneLine) {
  Table table({{"A"}, {"B"}});
  table.AddRow({"two\nlines"});
  EXPECT_EQ(table.Render(), "A          B\ntwo lines\n");
}

TEST(TableTest, RendersRowsWithoutTitles) {
  Table table({{"name"}, {"value"}});
  table.AddRow({"version", "1.0"});
  table.AddRow({"llm calls", "3"});
  EXPECT_EQ(table.RenderRows(), "version    1.0\nllm calls  3\n");
}

TEST(TableTest, CleanForTerminalDropsEscapeSequencesAndControls) {
  EXPECT_EQ(CleanForTerminal("a\x1b[31mred\x1b[0m\x07", false), "a[31mred[0m");
  EXPECT_EQ(CleanForTerminal("x\xc2\x9b"
                             "2Jy",
                             false),
            "x2Jy")
      << "C1 CSI";
  EXPECT_EQ(CleanForTerminal("line\r\nnext\ttab", true), "line\nnext\ttab");
  EXPECT_EQ(CleanForTerminal("line\nnext", false), "line next");
  EXPECT_EQ(CleanForTerminal("café ✓", false), "café ✓");
}

TEST(TableTest, FormatsCountsWithThousandsSeparators) {
  EXPECT_EQ(FormatCount(0), "0");
  EXPECT_EQ(FormatCount(999), "999");
  EXPECT_EQ(FormatCount(1000), "1,000");
  EXPECT_EQ(FormatCount(1234567), "1,234,567");
  EXPECT_EQ(FormatCount(-1234), "-1,234");
  EXPECT_EQ(FormatCount(-123), "-123");
}

TEST(TableTest, FormatsCostInDollarsToAHundredthOfACent) {
  EXPECT_EQ(FormatCost(0), "$0.0000");
  EXPECT_EQ(FormatCost(0.00123), "$0.0012");
  EXPECT_EQ(FormatCost(0.00005), "$0.0001");
  EXPECT_EQ(FormatCost(1234.5), "$1,234.5000");
  EXPECT_EQ(FormatCost(-2.25), "-$2.2500");
}

TEST(TableTest, FormatsTimesInUtc) {
  google::protobuf::Timestamp time;
  EXPECT_EQ(FormatTime(time), "-");
  time.set_seconds(1735787045);  // 2025-01-02 03:04:05 UTC
  time.set_nanos(999999999);
  EXPECT_EQ(FormatTime(time), "2025-01-02 03:04:05 UTC");
}

TEST(TableTest, FormatsDurationsShortestFirst) {
  google::protobuf::Duration duration;
  EXPECT_EQ(FormatDuration(duration), "0s");
  duration.set_seconds(12);
  EXPECT_EQ(FormatDuration(duration), "12s");
  duration.set_seconds(300);
  EXPECT_EQ(FormatDuration(duration), "5m 0s");
  duration.set_seconds(3 * 86400 + 4 * 3600 + 5 * 60 + 6);
  EXPECT_EQ(FormatDuration(duration), "3d 4h 5m 6s");
}

TEST(TableTest, FormatsMillisecondsToATenthBelowAHundred) {
  EXPECT_EQ(FormatMilliseconds(absl::ZeroDuration()), "0.0 ms");
  EXPECT_EQ(FormatMilliseconds(absl::Microseconds(400)), "0.4 ms");
  EXPECT_EQ(FormatMilliseconds(absl::Microseconds(12340)), "12.3 ms");
  EXPECT_EQ(FormatMilliseconds(absl::Microseconds(99960)), "100 ms") << "rounds, then chooses";
  EXPECT_EQ(FormatMilliseconds(absl::Microseconds(1234400)), "1,234 ms");
  EXPECT_EQ(FormatMilliseconds(absl::Microseconds(-2500)), "-2.5 ms");
  EXPECT_EQ(FormatMilliseconds(absl::Seconds(-2)), "-2,000 ms");
}

TEST(TableTest, CutsTextToAWidthMarkingTheCut) {
  EXPECT_EQ(CutTo("short", 10), "short");
  EXPECT_EQ(CutTo("exactly10!", 10), "exactly10!");
  EXPECT_EQ(CutTo("eleven char", 10), "eleven ch…");
  EXPECT_EQ(CutTo("ééééé", 3), "éé…") << "cut at a character boundary";
}

TEST(TableTest, FormatsTimesRelativeToNow) {
  absl::Time now = absl::FromUnixSeconds(1735787045);
  google::protobuf::Timestamp time;
  EXPECT_EQ(FormatRelative(time, now), "-");
  time.set_seconds(1735787045 + 45);
  EXPECT_EQ(FormatRelative(time, now), "in 45s");
  time.set_seconds(1735787045 + 4 * 60 + 59);
  EXPECT_EQ(FormatRelative(time, now), "in 4m");
  time.set_seconds(1735787045 + 2 * 3600 + 5 * 60 + 7);
  EXPECT_EQ(FormatRelative(time, now), "in 2h 5m");
  time.set_seconds(1735787045 + 3 * 86400 + 4 * 3600 + 5);
  EXPECT_EQ(FormatRelative(time, now), "in 3d 4h");
  time.set_seconds(1735787045);
  EXPECT_EQ(FormatRelative(time, now), "expired");
  time.set_seconds(1735787045 - 60);
  EXPECT_EQ(FormatRelative(time, now), "expired");
}

}  // namespace
}  // namespace herald::heraldctl
