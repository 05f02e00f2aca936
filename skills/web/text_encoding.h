// skills/web/text_encoding.h
//
// Makes bytes from the web fit to hand to the model. A page may be in Latin-1 or carry
// invalid UTF-8, control characters or NUL bytes; the model's context (and the JSON it is
// sent in) needs valid UTF-8 text. These functions decode the charsets the web actually uses
// for text Herald reads (UTF-8, US-ASCII, ISO-8859-1, windows-1252), replace what cannot be
// decoded with U+FFFD. (Cutting text at a character boundary is component/base/utf8.h.)
//
//   std::string text = DecodeToUtf8(body, "iso-8859-1");   // "caf\xe9" -> "café"
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace herald::skills::web {

// Appends the UTF-8 form of `code_point`; surrogates, 0 and values past U+10FFFF become U+FFFD.
void AppendUtf8(std::string& out, uint32_t code_point);

// `bytes` as valid UTF-8: invalid sequences become U+FFFD, CR LF and lone CR become LF, and
// control characters other than tab and LF (C0, DEL, C1) are dropped.
std::string ToCleanUtf8(std::string_view bytes);

// Decodes `bytes` from `charset` (a Content-Type charset or <meta charset>, any case):
// ISO-8859-1, Latin-1, US-ASCII and windows-1252 are decoded as windows-1252 (as browsers
// do); anything else is read as UTF-8. The result is clean as by ToCleanUtf8.
std::string DecodeToUtf8(std::string_view bytes, std::string_view charset);

// The code point windows-1252 gives `byte` (0x80-0x9F differ from Latin-1), or U+FFFD for
// the five bytes it leaves undefined. HTML maps numeric references &#128;-&#159; the same way.
uint32_t Windows1252CodePoint(uint8_t byte);

}  // namespace herald::skills::web
