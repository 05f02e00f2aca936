#include "skills/web/text_encoding.h"

#include <string>

#include "component/base/utf8.h"
#include "gtest/gtest.h"

namespace herald::skills::web {
namespace {

TEST(TextEncodingTest, DecodesLatin1ToUtf8) {
  EXPECT_EQ(DecodeToUtf8("caf\xe9 cr\xe8me", "ISO-8859-1"), "café crème");
  EXPECT_EQ(DecodeToUtf8("\xa0\xff", "latin1"), "\u00a0\u00ff");
}

TEST(TextEncodingTest, MapsWindows1252PunctuationAsBrowsersDo) {
  EXPECT_EQ(DecodeToUtf8("\x93quoted\x94 \x96 \x80", "windows-1252"), "“quoted” – €");
  // Latin-1 labels mean windows-1252 on the web, too.
  EXPECT_EQ(DecodeToUtf8("it\x92s", "iso-8859-1"), "it’s");
}

TEST(TextEncodingTest, ReadsUtf8AndUnknownCharsetsAsUtf8) {
  EXPECT_EQ(DecodeToUtf8("café", "utf-8"), "café");
  EXPECT_EQ(DecodeToUtf8("café", ""), "café");
  EXPECT_EQ(DecodeToUtf8("café", "shift_jis"), "café");
}

TEST(TextEncodingTest, ReplacesInvalidUtf8WithTheReplacementCharacter) {
  EXPECT_EQ(ToCleanUtf8("a\xff"
                        "b"),
            "a\ufffd"
            "b");
  EXPECT_EQ(ToCleanUtf8("\xc0\xaf"), "\ufffd\ufffd");            // an overlong '/'
  EXPECT_EQ(ToCleanUtf8("\xed\xa0\x80"), "\ufffd\ufffd\ufffd");  // a surrogate
  EXPECT_EQ(ToCleanUtf8("\xe2\x82"), "\ufffd\ufffd");            // cut short
  EXPECT_TRUE(base::IsValidUtf8(ToCleanUtf8("\xf5\x80\x80\x80 \xf4\x90\x80\x80")));
}

TEST(TextEncodingTest, DropsControlCharactersButKeepsTabsAndLineEnds) {
  EXPECT_EQ(ToCleanUtf8(std::string("a\0b\x01\x7f\tc\nd", 9)), "ab\tc\nd");
  EXPECT_EQ(ToCleanUtf8("x\xc2\x85y"), "xy");  // C1 NEL
}

TEST(TextEncodingTest, TurnsCarriageReturnsIntoLineFeeds) {
  EXPECT_EQ(ToCleanUtf8("a\r\nb\rc"), "a\nb\nc");
}

TEST(TextEncodingTest, WritesReplacementForCodePointsThatCannotBeEncoded) {
  std::string out;
  AppendUtf8(out, 0);
  AppendUtf8(out, 0xD800);
  AppendUtf8(out, 0x110000);
  AppendUtf8(out, 0x1F600);
  EXPECT_EQ(out, "\ufffd\ufffd\ufffd\U0001F600");
}

}  // namespace
}  // namespace herald::skills::web
