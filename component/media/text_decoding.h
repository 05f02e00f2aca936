// component/media/text_decoding.h
//
// The bytes of a text attachment (or the text poppler read from a PDF page) made fit for the
// model's context, which is sent as JSON and must be valid UTF-8. Text is never refused for
// its encoding:
//   - a UTF-8 byte order mark is dropped; a UTF-16 one (little or big endian, as Windows tools
//     write "Unicode" text, and which libmagic calls text/plain) decodes the rest as UTF-16;
//   - anything else is read as UTF-8, and every byte that does not start a valid sequence
//     becomes U+FFFD. No legacy code page is guessed: a Latin-1 file keeps its ASCII and
//     shows each accented letter as U+FFFD;
//   - CR LF and a lone CR become LF; control characters other than tab and LF (NUL, escape
//     sequences, form feeds, C1 controls) are dropped.
// The result is cut to a budget at a character boundary without decoding what lies beyond.
//
//   DecodedText decoded = DecodeText(bytes, 32 * 1024);
//   // decoded.text is valid UTF-8 of at most 32 KiB; decoded.truncated if text was left out
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace herald::media {

struct DecodedText {
  std::string text;        // valid UTF-8; no control characters but '\t' and '\n'
  bool truncated = false;  // a character that would have been kept did not fit the budget
};

// `bytes` decoded as above, at most `max_bytes` of it.
DecodedText DecodeText(std::string_view bytes, size_t max_bytes);

}  // namespace herald::media
