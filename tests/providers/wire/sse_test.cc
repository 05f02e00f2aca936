#include "providers/wire/sse.h"

#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace herald::providers {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

struct Seen {
  std::string type;
  std::string data;
  std::string id;
  friend bool operator==(const Seen&, const Seen&) = default;
};

std::ostream& operator<<(std::ostream& os, const Seen& seen) {
  return os << "{" << seen.type << ", '" << seen.data << "', " << seen.id << "}";
}

// Feeds `chunks` in turn, then finishes; returns what was dispatched.
std::vector<Seen> Parse(const std::vector<std::string>& chunks, absl::Status* status = nullptr) {
  SseParser parser;
  std::vector<Seen> seen;
  auto on_event = [&](const SseEvent& event) {
    seen.push_back({event.type, event.data, event.id});
    return absl::OkStatus();
  };
  absl::Status s;
  for (const std::string& chunk : chunks) {
    s = parser.Feed(chunk, on_event);
    if (!s.ok()) break;
  }
  if (s.ok()) s = parser.Finish(on_event);
  if (status != nullptr) *status = s;
  return seen;
}

constexpr char kAnthropicStream[] =
    "event: message_start\n"
    "data: {\"type\":\"message_start\"}\n"
    "\n"
    ": keepalive comment\n"
    "event: ping\n"
    "data: {\"type\": \"ping\"}\n"
    "\n"
    "event: content_block_delta\n"
    "data: {\"type\":\"content_block_delta\",\"delta\":{\"text\":\"Hi \\u00e9\"}}\n"
    "\n"
    "event: message_stop\n"
    "data: {\"type\":\"message_stop\"}\n"
    "\n";

TEST(SseParserTest, DispatchesEachEventWithItsTypeAndData) {
  EXPECT_THAT(Parse({"event: greeting\ndata: hello\n\n", "data: plain\n\n"}),
              ElementsAre(Seen{"greeting", "hello", ""}, Seen{"message", "plain", ""}));
}

TEST(SseParserTest, JoinsSeveralDataLinesWithNewlines) {
  EXPECT_THAT(Parse({"data: first\ndata: second\ndata:\n\n"}),
              ElementsAre(Seen{"message", "first\nsecond\n", ""}));
}

TEST(SseParserTest, AcceptsCrLfAndLoneCrLineEndings) {
  EXPECT_THAT(Parse({"event: a\r\ndata: 1\r\n\r\nevent: b\rdata: 2\r\r"}),
              ElementsAre(Seen{"a", "1", ""}, Seen{"b", "2", ""}));
}

TEST(SseParserTest, ACrLfSplitAcrossChunksIsOneLineEnd) {
  // Were the LF read as a second line end, it would be a blank line that splits the event.
  EXPECT_THAT(Parse({"data: a\r", "\ndata: b\r", "\n\r", "\n"}),
              ElementsAre(Seen{"message", "a\nb", ""}));
}

TEST(SseParserTest, IgnoresCommentsRetryAndUnknownFields) {
  EXPECT_THAT(Parse({": comment\nretry: 10\nfoo: bar\ndata: x\n: another\n\n"}),
              ElementsAre(Seen{"message", "x", ""}));
}

TEST(SseParserTest, RemovesOnlyOneSpaceAfterTheColon) {
  EXPECT_THAT(Parse({"data:no-space\n\ndata:  two-spaces\n\n"}),
              ElementsAre(Seen{"message", "no-space", ""}, Seen{"message", " two-spaces", ""}));
}

TEST(SseParserTest, DispatchesNothingForAnEventWithoutData) {
  EXPECT_THAT(Parse({"event: lonely\n\ndata: next\n\n"}), ElementsAre(Seen{"message", "next", ""}));
}

TEST(SseParserTest, KeepsTheLastIdForLaterEvents) {
  EXPECT_THAT(Parse({"id: 7\ndata: a\n\ndata: b\n\n"}),
              ElementsAre(Seen{"message", "a", "7"}, Seen{"message", "b", "7"}));
}

TEST(SseParserTest, StripsALeadingByteOrderMark) {
  EXPECT_THAT(Parse({"\xEF\xBB",
                     "\xBF"
                     "data: x\n\n"}),
              ElementsAre(Seen{"message", "x", ""}));
}

TEST(SseParserTest, ReadsTheSameEventsWhateverTheChunking) {
  const std::string stream = kAnthropicStream;
  const std::vector<Seen> whole = Parse({stream});
  ASSERT_EQ(whole.size(), 4u);
  EXPECT_EQ(whole[2].data,
            "{\"type\":\"content_block_delta\",\"delta\":{\"text\":\"Hi \\u00e9\"}}");

  std::vector<std::string> bytes;
  for (char c : stream) bytes.emplace_back(1, c);
  EXPECT_EQ(Parse(bytes), whole);

  std::mt19937 rng(42);
  for (int round = 0; round < 200; ++round) {
    std::vector<std::string> chunks;
    size_t pos = 0;
    while (pos < stream.size()) {
      const size_t n = std::uniform_int_distribution<size_t>(1, 17)(rng);
      chunks.push_back(stream.substr(pos, n));
      pos += n;
    }
    ASSERT_EQ(Parse(chunks), whole) << "round " << round;
  }
}

TEST(SseParserTest, FinishDispatchesALastEventThatLacksItsBlankLine) {
  EXPECT_THAT(Parse({"data: done\n"}), ElementsAre(Seen{"message", "done", ""}));
}

TEST(SseParserTest, FinishDropsAnEventCutOffInsideALine) {
  SseParser parser;
  int events = 0;
  auto on_event = [&](const SseEvent&) {
    ++events;
    return absl::OkStatus();
  };
  ASSERT_TRUE(parser.Feed("data: {\"type\":\"mess", on_event).ok());
  EXPECT_TRUE(parser.HasPartialEvent());
  EXPECT_TRUE(parser.Finish(on_event).ok());
  EXPECT_EQ(events, 0);
}

TEST(SseParserTest, RefusesALineOverTheCapAndStaysFailed) {
  SseParser parser(SseParser::Limits{.max_line_bytes = 16, .max_event_bytes = 64});
  auto on_event = [](const SseEvent&) { return absl::OkStatus(); };
  absl::Status status = parser.Feed("data: 0123456789", on_event);
  ASSERT_TRUE(status.ok());
  status = parser.Feed("abcdef", on_event);  // the line grows past 16 bytes across chunks
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(status.message(), HasSubstr("line longer than 16 bytes"));
  EXPECT_EQ(parser.Feed("\n\n", on_event).code(), absl::StatusCode::kDataLoss);
}

TEST(SseParserTest, RefusesAnEventOverTheCap) {
  SseParser parser(SseParser::Limits{.max_line_bytes = 16, .max_event_bytes = 20});
  auto on_event = [](const SseEvent&) { return absl::OkStatus(); };
  absl::Status status = parser.Feed("data: 0123456789\ndata: 0123456789\n", on_event);
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(status.message(), HasSubstr("event longer than 20 bytes"));
}

TEST(SseParserTest, AnErrorFromTheHandlerStopsTheParser) {
  SseParser parser;
  int calls = 0;
  auto on_event = [&](const SseEvent&) {
    ++calls;
    return absl::InvalidArgumentError("no thanks");
  };
  EXPECT_EQ(parser.Feed("data: a\n\ndata: b\n\n", on_event).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(parser.Feed("data: c\n\n", on_event).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(calls, 1);
}

std::vector<std::string> SplitLines(LineSplitter& splitter, const std::vector<std::string>& in) {
  std::vector<std::string> lines;
  for (const std::string& chunk : in) {
    absl::Status s = splitter.Feed(chunk, [&](std::string_view line) {
      lines.emplace_back(line);
      return absl::OkStatus();
    });
    EXPECT_TRUE(s.ok()) << s;
  }
  return lines;
}

TEST(LineSplitterTest, SplitsNdjsonOnLfAndDropsTheCrOfCrLf) {
  LineSplitter splitter(1024, /*cr_ends_line=*/false);
  EXPECT_THAT(SplitLines(splitter, {"{\"a\":1}\r\n{\"b\"", ":2}\n{\"c\":\r3}\n"}),
              ElementsAre("{\"a\":1}", "{\"b\":2}", "{\"c\":\r3}"));
  EXPECT_FALSE(splitter.HasPartialLine());
}

TEST(LineSplitterTest, HoldsAnUnterminatedTail) {
  LineSplitter splitter(1024, /*cr_ends_line=*/false);
  EXPECT_THAT(SplitLines(splitter, {"one\ntw"}), ElementsAre("one"));
  EXPECT_TRUE(splitter.HasPartialLine());
  EXPECT_THAT(SplitLines(splitter, {"o\n"}), ElementsAre("two"));
}

}  // namespace
}  // namespace herald::providers
