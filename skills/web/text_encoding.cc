#include "skills/web/text_encoding.h"

#include "absl/strings/ascii.h"
#include "component/base/absl_string_view.h"
#include "component/base/utf8.h"

namespace herald::skills::web {
namespace {

constexpr uint32_t kReplacement = 0xFFFD;

// windows-1252 bytes 0x80-0x9F; 0 where the code page leaves the byte undefined.
constexpr uint16_t kWindows1252High[32] = {
    0x20AC, 0,      0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160,
    0x2039, 0x0152, 0,      0x017D, 0,      0,      0x2018, 0x2019, 0x201C, 0x201D, 0x2022,
    0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0,      0x017E, 0x0178};

}  // namespace

uint32_t Windows1252CodePoint(uint8_t byte) {
  if (byte < 0x80 || byte > 0x9F) return byte;
  const uint16_t mapped = kWindows1252High[byte - 0x80];
  return mapped != 0 ? mapped : kReplacement;
}

void AppendUtf8(std::string& out, uint32_t cp) {
  if (cp == 0 || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) cp = kReplacement;
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

std::string ToCleanUtf8(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  size_t i = 0;
  while (i < bytes.size()) {
    if (bytes[i] == '\r') {
      out.push_back('\n');
      i += (i + 1 < bytes.size() && bytes[i + 1] == '\n') ? 2 : 1;
      continue;
    }
    uint32_t cp = 0;
    const size_t length = base::DecodeUtf8At(bytes, i, &cp);
    if (length == 0) {
      AppendUtf8(out, kReplacement);
      ++i;
      continue;
    }
    if (!base::IsDroppedControl(cp)) out.append(bytes.substr(i, length));
    i += length;
  }
  return out;
}

std::string DecodeToUtf8(std::string_view bytes, std::string_view charset) {
  const std::string name = absl::AsciiStrToLower(absl::StripAsciiWhitespace(AbslView(charset)));
  const bool single_byte = name == "iso-8859-1" || name == "iso8859-1" || name == "latin1" ||
                           name == "latin-1" || name == "l1" || name == "us-ascii" ||
                           name == "ascii" || name == "windows-1252" || name == "cp1252" ||
                           name == "x-cp1252";
  if (!single_byte) return ToCleanUtf8(bytes);
  std::string out;
  out.reserve(bytes.size() + bytes.size() / 4);
  for (char c : bytes) {
    const uint8_t b = static_cast<uint8_t>(c);
    if (b >= 0x80 && b <= 0x9F) {
      const uint16_t mapped = kWindows1252High[b - 0x80];
      if (mapped != 0) AppendUtf8(out, mapped);
      continue;
    }
    if (b < 0x80) {
      out.push_back(c);
    } else {
      AppendUtf8(out, b);
    }
  }
  return ToCleanUtf8(out);
}

}  // namespace herald::skills::web
