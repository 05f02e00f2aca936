#include "component/media/text_decoding.h"

#include <cstdint>

#include "component/base/utf8.h"

namespace herald::media {
namespace {

constexpr uint32_t kReplacement = 0xFFFD;

// Builds the decoded text one code point at a time, within the budget.
class Writer {
 public:
  explicit Writer(size_t max_bytes) : max_bytes_(max_bytes) {}

  // Adds `cp` (CR handled by the caller); false once the budget is spent, then nothing more
  // may be added.
  bool Add(uint32_t cp) {
    if (base::IsDroppedControl(cp)) return true;
    if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) cp = kReplacement;
    char bytes[4];
    size_t length;
    if (cp < 0x80) {
      bytes[0] = static_cast<char>(cp);
      length = 1;
    } else if (cp < 0x800) {
      bytes[0] = static_cast<char>(0xC0 | (cp >> 6));
      bytes[1] = static_cast<char>(0x80 | (cp & 0x3F));
      length = 2;
    } else if (cp < 0x10000) {
      bytes[0] = static_cast<char>(0xE0 | (cp >> 12));
      bytes[1] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      bytes[2] = static_cast<char>(0x80 | (cp & 0x3F));
      length = 3;
    } else {
      bytes[0] = static_cast<char>(0xF0 | (cp >> 18));
      bytes[1] = static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      bytes[2] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      bytes[3] = static_cast<char>(0x80 | (cp & 0x3F));
      length = 4;
    }
    if (out_.text.size() + length > max_bytes_) {
      out_.truncated = true;
      return false;
    }
    out_.text.append(bytes, length);
    return true;
  }

  DecodedText Take() && { return std::move(out_); }

 private:
  const size_t max_bytes_;
  DecodedText out_;
};

void DecodeUtf8Into(std::string_view bytes, Writer& writer) {
  size_t i = 0;
  while (i < bytes.size()) {
    if (bytes[i] == '\r') {
      if (!writer.Add('\n')) return;
      i += (i + 1 < bytes.size() && bytes[i + 1] == '\n') ? 2 : 1;
      continue;
    }
    uint32_t cp = kReplacement;
    const size_t length = base::DecodeUtf8At(bytes, i, &cp);
    if (!writer.Add(length == 0 ? kReplacement : cp)) return;
    i += length == 0 ? 1 : length;
  }
}

void DecodeUtf16Into(std::string_view bytes, bool big_endian, Writer& writer) {
  auto unit_at = [&](size_t i) -> uint32_t {
    const uint8_t a = static_cast<uint8_t>(bytes[i]);
    const uint8_t b = static_cast<uint8_t>(bytes[i + 1]);
    return big_endian ? (a << 8 | b) : (b << 8 | a);
  };
  bool after_cr = false;
  size_t i = 0;
  while (i + 1 < bytes.size()) {
    uint32_t cp = unit_at(i);
    i += 2;
    if (cp >= 0xD800 && cp <= 0xDBFF && i + 1 < bytes.size()) {
      const uint32_t low = unit_at(i);
      if (low >= 0xDC00 && low <= 0xDFFF) {
        cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
        i += 2;
      }
    }
    // A lone surrogate is replaced by Add.
    const bool lf_after_cr = after_cr && cp == '\n';
    after_cr = cp == '\r';
    if (lf_after_cr) continue;
    if (!writer.Add(cp == '\r' ? '\n' : cp)) return;
  }
  if (i < bytes.size()) writer.Add(kReplacement);  // an odd byte at the end
}

}  // namespace

DecodedText DecodeText(std::string_view bytes, size_t max_bytes) {
  Writer writer(max_bytes);
  if (bytes.substr(0, 3) == "\xEF\xBB\xBF") {
    DecodeUtf8Into(bytes.substr(3), writer);
  } else if (bytes.substr(0, 2) == "\xFF\xFE") {
    DecodeUtf16Into(bytes.substr(2), /*big_endian=*/false, writer);
  } else if (bytes.substr(0, 2) == "\xFE\xFF") {
    DecodeUtf16Into(bytes.substr(2), /*big_endian=*/true, writer);
  } else {
    DecodeUtf8Into(bytes, writer);
  }
  return std::move(writer).Take();
}

}  // namespace herald::media
