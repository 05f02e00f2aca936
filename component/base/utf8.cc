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

size_t DecodeUtf8At(std::string_view text, size_t i, uint32_t* code_point) {
  const uint8_t b0 = static_cast<uint8_t>(text[i]);
  if (b0 < 0x80) {
    *code_point = b0;
    return 1;
  }
  size_t extra;
  uint32_t cp;
  if ((b0 & 0xE0) == 0xC0) {
    extra = 1;
    cp = b0 & 0x1F;
  } else if ((b0 & 0xF0) == 0xE0) {
    extra = 2;
    cp = b0 & 0x0F;
  } else if ((b0 & 0xF8) == 0xF0) {
    extra = 3;
    cp = b0 & 0x07;
  } else {
    return 0;
  }
  if (text.size() - i <= extra) return 0;
  for (size_t k = 1; k <= extra; ++k) {
    const uint8_t b = static_cast<uint8_t>(text[i + k]);
    if ((b & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b & 0x3F);
  }
  static constexpr uint32_t kSmallest[] = {0, 0x80, 0x800, 0x10000};
  if (cp < kSmallest[extra] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  *code_point = cp;
  return extra + 1;
}

bool IsDroppedControl(uint32_t cp) {
  return (cp < 0x20 && cp != '\t' && cp != '\n') || cp == 0x7F || (cp >= 0x80 && cp <= 0x9F);
}

bool IsValidUtf8(std::string_view text) {
  uint32_t code_point = 0;
  for (size_t i = 0; i < text.size();) {
    const size_t length = DecodeUtf8At(text, i, &code_point);
    if (length == 0) return false;
    i += length;
  }
  return true;
}

}  // namespace herald::base
