// component/xmpp/body_split.h
//
// Cuts a message body that would make its stanza larger than the server accepts into pieces
// that each fit: measured as the writer escapes them (an '&' costs five bytes on the wire),
// cut after a line break where one falls in the second half of a piece, and never inside a
// UTF-8 sequence. A server that receives an oversized stanza closes the stream; splitting
// before sending keeps one long answer (a /history of large messages) from taking Herald
// offline.
//
//   for (std::string_view piece : SplitBody(body, 60 * 1024)) Send(MessageWith(piece));
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

namespace herald::xmpp {

// Pieces of `body`, in order, whose escaped sizes are at most `budget` bytes each (a budget
// under 16 is taken as 16, so that every character fits). Concatenated, they are `body`.
std::vector<std::string_view> SplitBody(std::string_view body, size_t budget);

// The size of `text` once escaped as character data (AppendEscapedText).
size_t EscapedTextSize(std::string_view text);

}  // namespace herald::xmpp
