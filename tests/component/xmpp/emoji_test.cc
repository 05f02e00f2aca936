// What counts as a single emoji in a XEP-0444 reaction: UTS #51's emoji and sequences through
// ICU's data, a pictograph without its presentation selector, and nothing else.
#include "component/xmpp/emoji.h"

#include <string>

#include "gtest/gtest.h"

namespace herald::xmpp {
namespace {

TEST(IsSingleEmojiTest, OneEmojiOrEmojiSequenceIs) {
  for (const char* emoji : {
           "\xF0\x9F\x91\x8D",                  // 👍
           "\xF0\x9F\x91\x8E",                  // 👎
           "\xE2\x9D\xA4\xEF\xB8\x8F",          // ❤️ (with U+FE0F)
           "\xE2\x9D\xA4",                      // ❤ (without, as some clients send it)
           "\xF0\x9F\x91\x8D\xF0\x9F\x8F\xBD",  // 👍🏽 (a modifier sequence)
           "\xF0\x9F\x87\xA9\xF0\x9F\x87\xAA",  // 🇩🇪 (a flag)
           "1\xEF\xB8\x8F\xE2\x83\xA3",         // 1️⃣ (a keycap)
           "\xF0\x9F\x91\xA9\xE2\x80\x8D\xF0\x9F\x92\xBB",  // 👩‍💻 (a ZWJ sequence)
           "\xF0\x9F\x8E\x89",                              // 🎉
       }) {
    EXPECT_TRUE(IsSingleEmoji(emoji)) << emoji;
  }
}

TEST(IsSingleEmojiTest, TextSeveralEmojiAndBrokenUtf8AreNot) {
  for (const std::string& text : {
           std::string(""),
           std::string("ok"),
           std::string("1"),  // a digit is "Emoji" but text
           std::string("#"),
           std::string("\xF0\x9F\x91\x8D\xF0\x9F\x91\x8D"),  // 👍👍
           std::string("\xF0\x9F\x91\x8D "),                 // 👍 and a space
           std::string("\xF0\x9F\x87\xA9"),                  // half a flag
           std::string("\xF0\x9F\x91"),                      // cut UTF-8
           std::string("\xC0\xAF"),                          // overlong UTF-8
           std::string("\xED\xA0\xBD\xED\xB1\x8D"),          // 👍 as UTF-8-encoded surrogates
           std::string("\xEF\xB8\x8F"),                      // a lone selector
           std::string(1, '\0'),
           std::string(300, 'x'),
       }) {
    EXPECT_FALSE(IsSingleEmoji(text)) << text;
  }
}

}  // namespace
}  // namespace herald::xmpp
