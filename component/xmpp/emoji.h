// component/xmpp/emoji.h
//
// What XEP-0444 allows in a reaction: "a single emoji" as Unicode's UTS #51 defines it. A
// reaction that is anything else (words, several emoji, a stray character) is not a reaction
// Herald records, counts or lets into a conversation's memory. ICU's emoji data decides
// (libicu, Debian's): a whole RGI emoji (basic, keycap, flag, modifier, tag or ZWJ sequence),
// or one pictographic code point with or without a presentation selector, as some clients send
// ❤ without U+FE0F.
//
//   IsSingleEmoji("👍")        // true
//   IsSingleEmoji("👍🏽")       // true (a modifier sequence)
//   IsSingleEmoji("ok")        // false
//   IsSingleEmoji("👍👍")       // false: two
#pragma once

#include <string_view>

namespace herald::xmpp {

// `text` is UTF-8; invalid UTF-8 is not an emoji.
bool IsSingleEmoji(std::string_view text);

}  // namespace herald::xmpp
