// Cutting UTF-8 at a character boundary: never inside a character, never more than needed.
#include "component/base/utf8.h"

#include <string>

#include "gtest/gtest.h"

namespace herald::base {
namespace {

TEST(Utf8Test, TruncatesWithoutSplittingACharacter) {
  std::string text = "ab€";  // '€' is 3 bytes
  EXPECT_TRUE(TruncateUtf8(text, 4));
  EXPECT_EQ(text, "ab");
  text = "ab€";
  EXPECT_FALSE(TruncateUtf8(text, 5));
  EXPECT_EQ(text, "ab€");
  text = "ab€";
  EXPECT_TRUE(TruncateUtf8(text, 2));
  EXPECT_EQ(text, "ab");
}

TEST(Utf8Test, TheBoundaryIsTheStartOfTheCharacterACutWouldSplit) {
  const std::string text =
      "a\xF0\x9F\x91\x8D"
      "b";  // a 👍 b
  EXPECT_EQ(Utf8Boundary(text, 0), 0u);
  EXPECT_EQ(Utf8Boundary(text, 1), 1u);
  for (size_t at : {2u, 3u, 4u}) EXPECT_EQ(Utf8Boundary(text, at), 1u) << at;
  EXPECT_EQ(Utf8Boundary(text, 5), 5u);
  EXPECT_EQ(Utf8Boundary(text, 6), 6u);
  EXPECT_EQ(Utf8Boundary(text, 100), 6u);
}

TEST(Utf8Test, BrokenInputCostsAtMostThreeBytes) {
  const std::string continuation(10, '\x80');
  EXPECT_EQ(Utf8Boundary(continuation, 8), 5u);
  EXPECT_EQ(Utf8Boundary(continuation, 2), 0u);
}

TEST(IsValidUtf8Test, TellsWellFormedUtf8FromTheRest) {
  EXPECT_TRUE(IsValidUtf8(""));
  EXPECT_TRUE(IsValidUtf8("Grüße 👍"));
  EXPECT_FALSE(IsValidUtf8("caf\xE9"));
  EXPECT_FALSE(IsValidUtf8("\xC0\xAF"));
  EXPECT_FALSE(IsValidUtf8("\xED\xA0\x80"));
}

}  // namespace
}  // namespace herald::base
