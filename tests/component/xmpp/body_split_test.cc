#include "component/xmpp/body_split.h"

#include <string>
#include <string_view>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace herald::xmpp {
namespace {

std::string Join(const std::vector<std::string_view>& pieces) {
  std::string out;
  for (std::string_view piece : pieces) out += piece;
  return out;
}

TEST(BodySplitTest, LeavesABodyThatFitsWhole) {
  EXPECT_THAT(SplitBody("hello", 100), ::testing::ElementsAre("hello"));
  EXPECT_TRUE(SplitBody("", 100).empty());
}

TEST(BodySplitTest, MeasuresPiecesAsTheyAreEscapedOnTheWire) {
  const std::string body(100, '&');  // 500 bytes escaped
  std::vector<std::string_view> pieces = SplitBody(body, 50);
  ASSERT_EQ(pieces.size(), 10u);
  for (std::string_view piece : pieces) EXPECT_LE(EscapedTextSize(piece), 50u);
  EXPECT_EQ(Join(pieces), body);
}

TEST(BodySplitTest, CutsAfterALineBreakInTheSecondHalfOfAPiece) {
  const std::string first(20, 'a'), second(20, 'b');
  const std::string body = first + "\n" + second + "\n";
  EXPECT_THAT(SplitBody(body, 30), ::testing::ElementsAre(first + "\n", second + "\n"));
  // A break early in the piece would waste most of it: the piece is cut where it is full.
  const std::string early = "ab\n" + std::string(40, 'c');
  std::vector<std::string_view> pieces = SplitBody(early, 30);
  EXPECT_EQ(pieces[0].size(), 30u);
  EXPECT_EQ(Join(pieces), early);
}

TEST(BodySplitTest, NeverCutsInsideAUtf8Sequence) {
  std::string body;
  for (int i = 0; i < 100; ++i) body += "\xF0\x9F\x91\x8D\xC3\xA9";  // 👍é
  for (size_t budget : {16u, 17u, 18u, 19u, 23u, 101u}) {
    std::vector<std::string_view> pieces = SplitBody(body, budget);
    for (std::string_view piece : pieces) {
      EXPECT_LE(EscapedTextSize(piece), budget);
      const auto first = static_cast<unsigned char>(piece.front());
      EXPECT_NE(first & 0xC0, 0x80) << "a piece starts inside a character";
    }
    EXPECT_EQ(Join(pieces), body);
  }
}

TEST(BodySplitTest, MeasuresInvalidBytesAsTheReplacementTheyBecome) {
  const std::string body(40, '\xFF');  // each becomes U+FFFD: three bytes
  std::vector<std::string_view> pieces = SplitBody(body, 30);
  for (std::string_view piece : pieces) EXPECT_LE(EscapedTextSize(piece), 30u);
  EXPECT_EQ(Join(pieces), body);
}

}  // namespace
}  // namespace herald::xmpp
