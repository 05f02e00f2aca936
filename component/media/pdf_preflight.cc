#include "component/media/pdf_preflight.h"

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>
#include <string>

namespace herald::media {
namespace {

constexpr int64_t kHuge = std::numeric_limits<int64_t>::max();

// PDF's white space (ISO 32000-1, 7.2.2), as poppler's lexer takes it.
bool IsWhite(char c) {
  return c == '\0' || c == '\t' || c == '\n' || c == '\f' || c == '\r' || c == ' ';
}

bool IsDelimiter(char c) {
  switch (c) {
    case '(':
    case ')':
    case '<':
    case '>':
    case '[':
    case ']':
    case '{':
    case '}':
    case '/':
    case '%':
      return true;
    default:
      return false;
  }
}

bool IsRegular(char c) { return !IsWhite(c) && !IsDelimiter(c); }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

int64_t SaturatingAdd(int64_t a, int64_t b) { return a > kHuge - b ? kHuge : a + b; }

// The decimal digits `digits` as a number, kHuge when it does not fit.
int64_t ParseDigits(std::string_view digits) {
  int64_t value = 0;
  for (char c : digits) {
    const int d = c - '0';
    if (value > (kHuge - d) / 10) return kHuge;
    value = value * 10 + d;
  }
  return value;
}

class Scanner {
 public:
  explicit Scanner(std::string_view pdf) : pdf_(pdf) {}

  int64_t Run() {
    while (pos_ < pdf_.size()) {
      const char c = pdf_[pos_];
      if (c == '/') {
        ++pos_;
        const std::string name = ReadName();
        if (name == "Size") {
          SkipWhiteAndComments();
          if (std::optional<int64_t> size = ReadInteger()) Claim(*size);
        } else if (name == "Index") {
          ReadIndexArray();
        }
      } else if (c == 'x' && IsXrefKeywordAt()) {
        pos_ += 4;
        ReadXrefTable();
      } else {
        ++pos_;
      }
    }
    return claim_;
  }

 private:
  void Claim(int64_t objects) { claim_ = std::max(claim_, objects); }

  void SkipWhiteAndComments() {
    while (pos_ < pdf_.size()) {
      if (IsWhite(pdf_[pos_])) {
        ++pos_;
      } else if (pdf_[pos_] == '%') {
        while (pos_ < pdf_.size() && pdf_[pos_] != '\n' && pdf_[pos_] != '\r') ++pos_;
      } else {
        return;
      }
    }
  }

  // A name's characters after its '/', #xx escapes decoded; only the first few are kept,
  // enough to tell "Size" and "Index" from longer names.
  std::string ReadName() {
    std::string name;
    while (pos_ < pdf_.size() && IsRegular(pdf_[pos_])) {
      char c = pdf_[pos_];
      if (c == '#' && pos_ + 2 < pdf_.size() && HexValue(pdf_[pos_ + 1]) >= 0 &&
          HexValue(pdf_[pos_ + 2]) >= 0) {
        c = static_cast<char>(HexValue(pdf_[pos_ + 1]) * 16 + HexValue(pdf_[pos_ + 2]));
        pos_ += 3;
      } else {
        ++pos_;
      }
      if (name.size() < 8) name.push_back(c);
    }
    return name;
  }

  // An integer (sign, digits) at the position, which moves past it; nullopt, and the
  // position unmoved, when there is none.
  std::optional<int64_t> ReadInteger() {
    size_t at = pos_;
    bool negative = false;
    if (at < pdf_.size() && (pdf_[at] == '+' || pdf_[at] == '-')) negative = pdf_[at++] == '-';
    const size_t start = at;
    while (at < pdf_.size() && IsDigit(pdf_[at])) ++at;
    if (at == start) return std::nullopt;
    pos_ = at;
    const int64_t value = ParseDigits(pdf_.substr(start, at - start));
    return negative ? -value : value;
  }

  // "xref" ending a token. Whatever comes before counts: the offset a file gives its xref
  // table may point into the middle of a word ("startxref").
  bool IsXrefKeywordAt() const {
    if (pdf_.substr(pos_, 4) != "xref") return false;
    return pos_ + 4 == pdf_.size() || !IsRegular(pdf_[pos_ + 4]);
  }

  // A cross-reference stream's /Index [first count first count ...].
  void ReadIndexArray() {
    SkipWhiteAndComments();
    if (pos_ >= pdf_.size() || pdf_[pos_] != '[') return;
    ++pos_;
    while (true) {
      SkipWhiteAndComments();
      std::optional<int64_t> first = ReadInteger();
      if (!first) return;
      SkipWhiteAndComments();
      std::optional<int64_t> count = ReadInteger();
      if (!count) return;
      if (*first >= 0 && *count >= 0) Claim(SaturatingAdd(*first, *count));
    }
  }

  // The subsections after an "xref" keyword: "first count" then count entries
  // "offset generation n|f". Stops at the first thing that is neither ("trailer", usually).
  void ReadXrefTable() {
    while (true) {
      SkipWhiteAndComments();
      std::optional<int64_t> first = ReadInteger();
      if (!first) return;
      SkipWhiteAndComments();
      std::optional<int64_t> count = ReadInteger();
      if (!count) return;
      if (*first >= 0 && *count >= 0) Claim(SaturatingAdd(*first, *count));
      for (int64_t entry = 0; entry < *count; ++entry) {
        SkipWhiteAndComments();
        if (!ReadInteger()) return;
        SkipWhiteAndComments();
        if (!ReadInteger()) return;
        SkipWhiteAndComments();
        if (pos_ >= pdf_.size() || (pdf_[pos_] != 'n' && pdf_[pos_] != 'f')) return;
        ++pos_;
      }
    }
  }

  const std::string_view pdf_;
  size_t pos_ = 0;
  int64_t claim_ = 0;
};

// Poppler 22.12's Stream::getLine: up to 255 bytes, ending before "\n", "\r" or "\r\n"
// (consumed), NUL-terminated in `buf`; false at the end of the input, `buf` left as it was.
class LineReader {
 public:
  explicit LineReader(std::string_view pdf) : pdf_(pdf) {}

  bool GetLine(char (&buf)[256]) {
    if (pos_ >= pdf_.size()) return false;
    size_t i = 0;
    for (; i < 255 && pos_ < pdf_.size(); ++i) {
      const char c = pdf_[pos_++];
      if (c == '\n') break;
      if (c == '\r') {
        if (pos_ < pdf_.size() && pdf_[pos_] == '\n') ++pos_;
        break;
      }
      buf[i] = c;
    }
    buf[i] = '\0';
    return true;
  }

 private:
  const std::string_view pdf_;
  size_t pos_ = 0;
};

bool IsDigitC(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }
bool IsSpaceC(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

// The object numbers poppler 22.12 finds when it rebuilds a broken cross-reference table
// (XRef::constructXRef), and sizes its table by: the same 255-byte lines read as C strings,
// the same split at "endobj", the same atoi, and the same "N G obj" recognition, where a
// header may run on over the next line or two (or past a NUL) and the line buffer is reused
// as poppler reuses it. Its quirks are what an attacker aims at, so they are copied, not
// approximated.
int64_t ReconstructionClaim(std::string_view pdf) {
  LineReader lines(pdf);
  char buf[256] = {};
  int64_t claim = 0;
  while (lines.GetLine(buf)) {
    char* p = buf;
    while (*p != '\0' && IsWhite(*p)) ++p;
    bool one_cycle = true;
    char* token;
    while ((token = std::strstr(p, "endobj")) != nullptr || one_cycle) {
      one_cycle = false;
      if (token != nullptr) {
        one_cycle = true;
        token[0] = '\0';
      }
      if (IsDigitC(*p)) {  // ("trailer" lines, and the rest, claim nothing)
        // atoi as glibc has it: strtol, then the conversion to int.
        const int num = static_cast<int>(std::strtol(p, nullptr, 10));
        if (num > 0) {
          ++p;  // past the first digit, as poppler's do-while
          while (IsDigitC(*p)) ++p;
          if (*p == '\0' || IsSpaceC(*p)) {
            if (*p == '\0') {
              lines.GetLine(buf);
              p = buf;
            } else {
              ++p;
            }
            while (*p != '\0' && IsSpaceC(*p)) ++p;
            if (IsDigitC(*p)) {
              ++p;
              while (IsDigitC(*p)) ++p;
              if (*p == '\0' || IsSpaceC(*p)) {
                if (*p == '\0') {
                  lines.GetLine(buf);
                  p = buf;
                } else {
                  ++p;
                }
                while (*p != '\0' && IsSpaceC(*p)) ++p;
                if (std::strncmp(p, "obj", 3) == 0) {
                  if (num >= INT_MAX - 1 - 255) return claim;  // poppler gives up here
                  claim = std::max<int64_t>(claim, int64_t{num} + 1);
                }
              }
            }
          }
        }
      }
      if (token != nullptr) {
        p = token + 6;
        while (*p != '\0' && IsWhite(*p)) ++p;
      }
    }
  }
  return claim;
}

}  // namespace

int64_t ClaimedPdfObjects(std::string_view pdf) {
  return std::max(Scanner(pdf).Run(), ReconstructionClaim(pdf));
}

}  // namespace herald::media
