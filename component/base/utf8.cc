#include "component/base/utf8.h"

namespace herald::base {
namespace {

bool IsContinuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

}  // namespace

size_t Utf8Boundary(std::string_view text, size_t at) {
  if (at >= text.size()) return text.size();
  // A character is at most four bytes: its lead byte is at most three back.
  for (int back = 0; back < 3 && at > 0 && IsContinuation(text[at]); ++back) --at;
  return at;
}

bool TruncateUtf8(std::string& text, size_t max_bytes) {
  if (text.size() <= max_bytes) return false;
  text.resize(Utf8Boundary(text, max_bytes));
  return true;
}

}  // namespace herald::base
