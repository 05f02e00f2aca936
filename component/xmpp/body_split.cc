#include "component/xmpp/body_split.h"

#include <algorithm>
#include <cstdint>
#include <string>

#include "component/xmpp/xml_writer.h"

namespace herald::xmpp {
namespace {

// The bytes of the character starting at body[i], as far as its lead byte says (an invalid
// sequence is measured byte by byte: the writer replaces each such byte on its own).
size_t CharacterLength(std::string_view body, size_t i) {
  const auto lead = static_cast<uint8_t>(body[i]);
  size_t length = 1;
  if (lead >= 0xF0) {
    length = 4;
  } else if (lead >= 0xE0) {
    length = 3;
  } else if (lead >= 0xC0) {
    length = 2;
  }
  if (i + length > body.size()) return 1;
  for (size_t k = 1; k < length; ++k) {
    if ((static_cast<uint8_t>(body[i + k]) & 0xC0) != 0x80) return 1;
  }
  return length;
}

}  // namespace

size_t EscapedTextSize(std::string_view text) {
  std::string escaped;
  AppendEscapedText(text, escaped);
  return escaped.size();
}

std::vector<std::string_view> SplitBody(std::string_view body, size_t budget) {
  budget = std::max<size_t>(budget, 16);
  std::vector<std::string_view> pieces;
  std::string scratch;
  size_t start = 0;
  while (start < body.size()) {
    size_t end = start;
    size_t cost = 0;
    size_t last_break = std::string_view::npos;
    while (end < body.size()) {
      const size_t length = CharacterLength(body, end);
      scratch.clear();
      AppendEscapedText(body.substr(end, length), scratch);
      if (cost + scratch.size() > budget) break;
      cost += scratch.size();
      end += length;
      if (body[end - 1] == '\n') last_break = end;
    }
    if (end < body.size() && last_break != std::string_view::npos &&
        last_break - start >= (end - start) / 2) {
      end = last_break;
    }
    pieces.push_back(body.substr(start, end - start));
    start = end;
  }
  return pieces;
}

}  // namespace herald::xmpp
