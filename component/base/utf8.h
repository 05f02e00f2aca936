// component/base/utf8.h
//
// Cutting UTF-8 text to a size without cutting a character in two: every place that caps a
// message, a log line, an excerpt or a tool's output backs off to the start of the character
// the cut would split. The text is taken as UTF-8 and not validated; at most three bytes are
// given up.
//
//   std::string note = ...;
//   if (TruncateUtf8(note, 32 * 1024)) note += "\n[… cut]";
//   std::string_view head = text.substr(0, Utf8Boundary(text, 300));
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace herald::base {

// The largest position ≤ `at` where a character of `text` starts (text.size() when `at` is
// at or past the end): text.substr(0, Utf8Boundary(text, n)) is at most n bytes and ends on
// a whole character.
size_t Utf8Boundary(std::string_view text, size_t at);

// Cuts `text` to at most `max_bytes` at a character boundary; whether anything was cut.
bool TruncateUtf8(std::string& text, size_t max_bytes);

// Decodes the UTF-8 sequence at `text[i]` (i < text.size()): its length, or 0 when it is not
// valid — overlong, a surrogate, past U+10FFFF, or cut short (then `*code_point` is unset).
size_t DecodeUtf8At(std::string_view text, size_t i, uint32_t* code_point);

// True when `text` is well-formed UTF-8 (RFC 3629: no overlong forms, surrogates or values
// past U+10FFFF).
bool IsValidUtf8(std::string_view text);

// A control character text for people and models does without: C0 but tab and newline, DEL,
// and C1.
bool IsDroppedControl(uint32_t code_point);

}  // namespace herald::base
