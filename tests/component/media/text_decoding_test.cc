// Text attachments decoded for the model: always valid UTF-8, never refused for the encoding,
// cut to the budget without splitting a character.
#include "component/media/text_decoding.h"

#include <string>

#include "gtest/gtest.h"

namespace herald::media {
namespace {

constexpr size_t kPlenty = 1 << 20;

std::string Decode(const std::string& bytes) { return DecodeText(bytes, kPlenty).text; }

TEST(DecodeTextTest, KeepsValidUtf8) { EXPECT_EQ(Decode("Grüße ✓ 👍\tend\n"), "Grüße ✓ 👍\tend\n"); }

TEST(DecodeTextTest, ReplacesEachInvalidByteWithTheReplacementCharacter) {
  EXPECT_EQ(Decode("caf\xE9 ok"), "caf\uFFFD ok");                    // Latin-1 é
  EXPECT_EQ(Decode("\xC0\xAF"), "\uFFFD\uFFFD");                      // an overlong '/'
  EXPECT_EQ(Decode("\xED\xA0\x80"), "\uFFFD\uFFFD\uFFFD");            // a UTF-16 surrogate
  EXPECT_EQ(Decode("ab\xE2\x82"), "ab\uFFFD\uFFFD");                  // a character cut short
  EXPECT_EQ(Decode("\xF4\x90\x80\x80"), "\uFFFD\uFFFD\uFFFD\uFFFD");  // past U+10FFFF
}

TEST(DecodeTextTest, NormalisesLineEndsAndDropsControlCharacters) {
  EXPECT_EQ(Decode("a\r\nb\rc\n"), "a\nb\nc\n");
  EXPECT_EQ(Decode(std::string("a\0b\x1B[0m\x7F\f\xC2\x85z", 12)), "ab[0mz");
}

TEST(DecodeTextTest, DropsAUtf8ByteOrderMark) { EXPECT_EQ(Decode("\xEF\xBB\xBFhello"), "hello"); }

TEST(DecodeTextTest, DecodesUtf16WithAByteOrderMark) {
  // "hé👍\r\n" in UTF-16, little and big endian.
  EXPECT_EQ(Decode(std::string("\xFF\xFEh\0\xE9\0\x3D\xD8\x4D\xDC\r\0\n\0", 14)), "hé👍\n");
  EXPECT_EQ(Decode(std::string("\xFE\xFF\0h\0\xE9\xD8\x3D\xDC\x4D\0\r\0\n", 14)), "hé👍\n");
}

TEST(DecodeTextTest, ReplacesBrokenUtf16) {
  EXPECT_EQ(Decode(std::string("\xFF\xFE\x3D\xD8h\0", 6)), "\uFFFDh");  // a lone high surrogate
  EXPECT_EQ(Decode(std::string("\xFF\xFEh\0i", 5)), "h\uFFFD");         // an odd byte at the end
}

TEST(DecodeTextTest, CutsAtACharacterBoundaryWithinTheBudget) {
  DecodedText decoded = DecodeText("ab👍cd", 5);  // 👍 is 4 bytes
  EXPECT_EQ(decoded.text, "ab");
  EXPECT_TRUE(decoded.truncated);

  decoded = DecodeText("ab👍", 6);
  EXPECT_EQ(decoded.text, "ab👍");
  EXPECT_FALSE(decoded.truncated);

  decoded = DecodeText("abc", 0);
  EXPECT_EQ(decoded.text, "");
  EXPECT_TRUE(decoded.truncated);
}

TEST(DecodeTextTest, WhatIsDroppedDoesNotCountAsCut) {
  DecodedText decoded = DecodeText(std::string("ab\0\0\0", 5), 2);
  EXPECT_EQ(decoded.text, "ab");
  EXPECT_FALSE(decoded.truncated);
}

}  // namespace
}  // namespace herald::media
