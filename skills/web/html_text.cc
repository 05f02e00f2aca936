#include "skills/web/html_text.h"

#include <algorithm>
#include <cstdint>
#include <unordered_map>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "component/base/absl_string_view.h"
#include "skills/web/text_encoding.h"

namespace herald::skills::web {
namespace {

// Named character references a page is likely to use; the rest of HTML's 2,231 are rare
// enough in text that showing them as written costs little.
const absl::flat_hash_map<std::string_view, uint32_t>& NamedReferences() {
  static const auto* const kTable = new absl::flat_hash_map<std::string_view, uint32_t>{
      {"amp", '&'},       {"lt", '<'},       {"gt", '>'},        {"quot", '"'},
      {"apos", '\''},     {"nbsp", ' '},     {"ensp", ' '},      {"emsp", ' '},
      {"thinsp", ' '},    {"shy", 0xAD},     {"zwnj", 0x200C},   {"zwj", 0x200D},
      {"iexcl", 0xA1},    {"cent", 0xA2},    {"pound", 0xA3},    {"curren", 0xA4},
      {"yen", 0xA5},      {"brvbar", 0xA6},  {"sect", 0xA7},     {"uml", 0xA8},
      {"copy", 0xA9},     {"ordf", 0xAA},    {"laquo", 0xAB},    {"not", 0xAC},
      {"reg", 0xAE},      {"macr", 0xAF},    {"deg", 0xB0},      {"plusmn", 0xB1},
      {"sup2", 0xB2},     {"sup3", 0xB3},    {"acute", 0xB4},    {"micro", 0xB5},
      {"para", 0xB6},     {"middot", 0xB7},  {"cedil", 0xB8},    {"sup1", 0xB9},
      {"ordm", 0xBA},     {"raquo", 0xBB},   {"frac14", 0xBC},   {"frac12", 0xBD},
      {"frac34", 0xBE},   {"iquest", 0xBF},  {"Agrave", 0xC0},   {"Aacute", 0xC1},
      {"Acirc", 0xC2},    {"Atilde", 0xC3},  {"Auml", 0xC4},     {"Aring", 0xC5},
      {"AElig", 0xC6},    {"Ccedil", 0xC7},  {"Egrave", 0xC8},   {"Eacute", 0xC9},
      {"Ecirc", 0xCA},    {"Euml", 0xCB},    {"Igrave", 0xCC},   {"Iacute", 0xCD},
      {"Icirc", 0xCE},    {"Iuml", 0xCF},    {"ETH", 0xD0},      {"Ntilde", 0xD1},
      {"Ograve", 0xD2},   {"Oacute", 0xD3},  {"Ocirc", 0xD4},    {"Otilde", 0xD5},
      {"Ouml", 0xD6},     {"times", 0xD7},   {"Oslash", 0xD8},   {"Ugrave", 0xD9},
      {"Uacute", 0xDA},   {"Ucirc", 0xDB},   {"Uuml", 0xDC},     {"Yacute", 0xDD},
      {"THORN", 0xDE},    {"szlig", 0xDF},   {"agrave", 0xE0},   {"aacute", 0xE1},
      {"acirc", 0xE2},    {"atilde", 0xE3},  {"auml", 0xE4},     {"aring", 0xE5},
      {"aelig", 0xE6},    {"ccedil", 0xE7},  {"egrave", 0xE8},   {"eacute", 0xE9},
      {"ecirc", 0xEA},    {"euml", 0xEB},    {"igrave", 0xEC},   {"iacute", 0xED},
      {"icirc", 0xEE},    {"iuml", 0xEF},    {"eth", 0xF0},      {"ntilde", 0xF1},
      {"ograve", 0xF2},   {"oacute", 0xF3},  {"ocirc", 0xF4},    {"otilde", 0xF5},
      {"ouml", 0xF6},     {"divide", 0xF7},  {"oslash", 0xF8},   {"ugrave", 0xF9},
      {"uacute", 0xFA},   {"ucirc", 0xFB},   {"uuml", 0xFC},     {"yacute", 0xFD},
      {"thorn", 0xFE},    {"yuml", 0xFF},    {"OElig", 0x152},   {"oelig", 0x153},
      {"Scaron", 0x160},  {"scaron", 0x161}, {"Yuml", 0x178},    {"fnof", 0x192},
      {"circ", 0x2C6},    {"tilde", 0x2DC},  {"Alpha", 0x391},   {"Beta", 0x392},
      {"Gamma", 0x393},   {"Delta", 0x394},  {"Omega", 0x3A9},   {"alpha", 0x3B1},
      {"beta", 0x3B2},    {"gamma", 0x3B3},  {"delta", 0x3B4},   {"epsilon", 0x3B5},
      {"lambda", 0x3BB},  {"mu", 0x3BC},     {"pi", 0x3C0},      {"sigma", 0x3C3},
      {"tau", 0x3C4},     {"phi", 0x3C6},    {"omega", 0x3C9},   {"ndash", 0x2013},
      {"mdash", 0x2014},  {"lsquo", 0x2018}, {"rsquo", 0x2019},  {"sbquo", 0x201A},
      {"ldquo", 0x201C},  {"rdquo", 0x201D}, {"bdquo", 0x201E},  {"dagger", 0x2020},
      {"Dagger", 0x2021}, {"bull", 0x2022},  {"hellip", 0x2026}, {"permil", 0x2030},
      {"prime", 0x2032},  {"Prime", 0x2033}, {"lsaquo", 0x2039}, {"rsaquo", 0x203A},
      {"euro", 0x20AC},   {"trade", 0x2122}, {"larr", 0x2190},   {"uarr", 0x2191},
      {"rarr", 0x2192},   {"darr", 0x2193},  {"harr", 0x2194},   {"rArr", 0x21D2},
      {"hArr", 0x21D4},   {"minus", 0x2212}, {"infin", 0x221E},  {"ne", 0x2260},
      {"le", 0x2264},     {"ge", 0x2265},    {"asymp", 0x2248},  {"equiv", 0x2261},
      {"sum", 0x2211},    {"radic", 0x221A}, {"check", 0x2713},  {"hearts", 0x2665},
  };
  return *kTable;
}

bool IsAsciiAlpha(char c) { return absl::ascii_isalpha(static_cast<unsigned char>(c)); }
bool IsAsciiAlnum(char c) { return absl::ascii_isalnum(static_cast<unsigned char>(c)); }
bool IsHtmlSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'; }

// Decodes character references in `in`, appending to `out`. In an attribute a reference
// without ';' followed by '=' or a letter or digit stays as written (as in "?a=1&copy=2").
void DecodeReferences(std::string_view in, std::string& out, bool in_attribute) {
  size_t i = 0;
  while (i < in.size()) {
    const size_t amp = in.find('&', i);
    if (amp == std::string_view::npos) {
      out.append(in.substr(i));
      return;
    }
    out.append(in.substr(i, amp - i));
    i = amp + 1;
    if (i < in.size() && in[i] == '#') {
      size_t j = i + 1;
      const bool hex = j < in.size() && (in[j] == 'x' || in[j] == 'X');
      if (hex) ++j;
      const size_t digits_start = j;
      uint32_t value = 0;
      bool overflow = false;
      while (j < in.size() && (hex ? absl::ascii_isxdigit(static_cast<unsigned char>(in[j]))
                                   : absl::ascii_isdigit(static_cast<unsigned char>(in[j])))) {
        const char c = in[j];
        const uint32_t digit = absl::ascii_isdigit(static_cast<unsigned char>(c))
                                   ? c - '0'
                                   : absl::ascii_tolower(static_cast<unsigned char>(c)) - 'a' + 10;
        if (value > 0x10FFFF) {
          overflow = true;
        } else {
          value = value * (hex ? 16 : 10) + digit;
        }
        ++j;
      }
      if (j == digits_start) {  // "&#" without digits: not a reference
        out.push_back('&');
        continue;
      }
      if (j < in.size() && in[j] == ';') ++j;
      if (overflow || value > 0x10FFFF) value = 0xFFFD;
      if (value >= 0x80 && value <= 0x9F) value = Windows1252CodePoint(static_cast<uint8_t>(value));
      AppendUtf8(out, value);  // 0 and surrogates become U+FFFD there
      i = j;
      continue;
    }
    size_t j = i;
    while (j < in.size() && j - i < 32 && IsAsciiAlnum(in[j])) ++j;
    const std::string_view name = in.substr(i, j - i);
    const auto& table = NamedReferences();
    const auto found = name.empty() ? table.end() : table.find(name);
    if (found != table.end()) {
      const bool terminated = j < in.size() && in[j] == ';';
      const bool legacy = name == "amp" || name == "lt" || name == "gt" || name == "quot" ||
                          name == "nbsp" || name == "copy" || name == "reg";
      const bool next_blocks = j < in.size() && (in[j] == '=' || IsAsciiAlnum(in[j]));
      if (terminated || (legacy && !(in_attribute && next_blocks))) {
        AppendUtf8(out, found->second);
        i = terminated ? j + 1 : j;
        continue;
      }
    }
    out.push_back('&');
  }
}

std::string Decoded(std::string_view in, bool in_attribute) {
  std::string out;
  out.reserve(in.size());
  DecodeReferences(in, out, in_attribute);
  return out;
}

// Finds "</name" (any case) followed by a space, '/' or '>' at or after `from`; npos if none.
size_t FindEndTag(std::string_view html, std::string_view name, size_t from) {
  while (true) {
    const size_t at = html.find("</", from);
    if (at == std::string_view::npos) return at;
    const size_t after = at + 2 + name.size();
    if (after <= html.size() &&
        absl::EqualsIgnoreCase(AbslView(html.substr(at + 2, name.size())), AbslView(name)) &&
        (after == html.size() || IsHtmlSpace(html[after]) || html[after] == '/' ||
         html[after] == '>')) {
      return at;
    }
    from = at + 2;
  }
}

// Collapses whitespace outside <pre> and keeps track of line and paragraph breaks, so that
// however the page nests its blocks the text has single spaces, single line breaks and at
// most one blank line in a row.
class TextSink {
 public:
  void Space() {
    if (pending_breaks_ == 0) pending_space_ = true;
  }

  void Break(int lines) {
    pending_breaks_ = std::max(pending_breaks_, lines);
    pending_space_ = false;
  }

  // Text as it appears in the page outside <pre>: every run of whitespace is one space.
  void Text(std::string_view text) {
    size_t i = 0;
    while (i < text.size()) {
      const size_t space = SpaceLength(text, i);
      if (space > 0) {
        Space();
        i += space;
        continue;
      }
      size_t j = i;
      while (j < text.size() && SpaceLength(text, j) == 0) ++j;
      Word(text.substr(i, j - i));
      i = j;
    }
  }

  // Text inside <pre>: kept as written.
  void Preformatted(std::string_view text) {
    if (text.empty()) return;
    Flush();
    out_.append(text);
    line_has_content_ = text.back() != '\n';
  }

  void Word(std::string_view word) {
    if (word.empty()) return;
    Flush();
    out_.append(word);
    line_has_content_ = true;
    ++words_;
  }

  // A list bullet or heading mark at the start of a line; no space is added after it.
  void Prefix(std::string_view prefix) {
    Flush();
    out_.append(prefix);
    line_has_content_ = false;
  }

  size_t words() const { return words_; }
  bool pending_space() const { return pending_space_; }

  std::string Finish() {
    // Lines end without trailing spaces (a bullet of an empty item leaves one).
    std::string text;
    text.reserve(out_.size());
    size_t start = 0;
    while (start <= out_.size()) {
      size_t end = out_.find('\n', start);
      if (end == std::string::npos) end = out_.size();
      size_t last = end;
      while (last > start && (out_[last - 1] == ' ' || out_[last - 1] == '\t')) --last;
      text.append(out_, start, last - start);
      if (end < out_.size()) text.push_back('\n');
      start = end + 1;
    }
    while (!text.empty() && text.back() == '\n') text.pop_back();
    return text;
  }

 private:
  // Spaces, tabs, line ends, form feeds and U+00A0 (no-break space, "\xC2\xA0").
  static size_t SpaceLength(std::string_view text, size_t i) {
    if (IsHtmlSpace(text[i])) return 1;
    if (text[i] == '\xC2' && i + 1 < text.size() && text[i + 1] == '\xA0') return 2;
    return 0;
  }

  void Flush() {
    if (out_.empty()) {
      pending_breaks_ = 0;
      pending_space_ = false;
      return;
    }
    if (pending_breaks_ > 0) {
      // A blank line is two line ends, whatever came before.
      const int have = out_.back() == '\n' ? 1 : 0;
      for (int k = have; k < pending_breaks_; ++k) out_.push_back('\n');
      line_has_content_ = false;
    } else if (pending_space_ && line_has_content_) {
      out_.push_back(' ');
    }
    pending_breaks_ = 0;
    pending_space_ = false;
  }

  std::string out_;
  int pending_breaks_ = 0;  // 1: a line break, 2: a blank line
  bool pending_space_ = false;
  bool line_has_content_ = false;
  size_t words_ = 0;
};

struct Tag {
  std::string name;  // lower case
  bool end = false;
  bool self_closing = false;
  std::string href;  // decoded; only the attributes the text needs are kept
  std::string alt;
  std::string start;  // <ol start>
  bool has_href = false;
};

bool IsOneOf(std::string_view name, std::initializer_list<std::string_view> names) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// Elements whose content is text until their end tag; it is dropped.
bool IsRawTextElement(std::string_view name) {
  return IsOneOf(name, {"script", "style", "xmp", "iframe", "noembed", "noframes", "noscript"});
}

// Elements whose content is parsed but not shown.
bool IsHiddenElement(std::string_view name) {
  return IsOneOf(name, {"svg", "math", "template", "video", "audio", "canvas", "object"});
}

bool IsParagraphElement(std::string_view name) {
  return IsOneOf(
      name, {"p", "blockquote", "table", "dl", "figure", "hr", "address", "details", "fieldset",
             "section", "article", "header", "footer", "main", "aside", "nav", "form"});
}

bool IsLineElement(std::string_view name) {
  return IsOneOf(name, {"div", "tr", "dt", "dd", "br", "caption", "figcaption", "summary", "legend",
                        "option", "center", "tbody", "thead", "tfoot"});
}

int HeadingLevel(std::string_view name) {
  if (name.size() == 2 && name[0] == 'h' && name[1] >= '1' && name[1] <= '6') return name[1] - '0';
  return 0;
}

constexpr size_t kMaxListIndent = 8;

class Converter {
 public:
  Converter(std::string_view html, const HtmlTextOptions& options)
      : html_(html), options_(options) {}

  HtmlText Run() {
    size_t i = 0;
    const size_t n = html_.size();
    while (i < n) {
      const size_t lt = html_.find('<', i);
      if (lt == std::string_view::npos) {
        EmitText(html_.substr(i));
        break;
      }
      EmitText(html_.substr(i, lt - i));
      i = lt;
      const std::string_view rest = html_.substr(i);
      if (absl::StartsWith(AbslView(rest), "<!--")) {
        const size_t end = html_.find("-->", i + 4);
        i = end == std::string_view::npos ? n : end + 3;
        continue;
      }
      if (rest.size() >= 2 && (rest[1] == '!' || rest[1] == '?')) {
        // DOCTYPE, CDATA, processing instructions: a "bogus comment" up to the next '>'.
        const size_t end = html_.find('>', i);
        i = end == std::string_view::npos ? n : end + 1;
        continue;
      }
      if (rest.size() >= 3 && rest[1] == '/' && IsAsciiAlpha(rest[2])) {
        Tag tag;
        i = ParseTag(i + 2, /*end=*/true, &tag);
        OnEndTag(tag);
        continue;
      }
      if (rest.size() >= 2 && rest[1] == '/') {
        // "</>" is dropped; "</ 3" and the like are bogus comments.
        const size_t end = html_.find('>', i);
        i = end == std::string_view::npos ? n : end + 1;
        continue;
      }
      if (rest.size() >= 2 && IsAsciiAlpha(rest[1])) {
        Tag tag;
        i = ParseTag(i + 1, /*end=*/false, &tag);
        i = OnStartTag(tag, i);
        continue;
      }
      EmitText("<");
      ++i;
    }
    CloseLink();
    HtmlText result;
    result.title = ToCleanUtf8(title_);
    result.text = ToCleanUtf8(sink_.Finish());
    result.links = std::move(links_);
    return result;
  }

 private:
  // Parses a tag's name and attributes from `i` (just past "<" or "</"); returns the offset
  // past its '>' (or the end of the input).
  size_t ParseTag(size_t i, bool end, Tag* tag) {
    const size_t n = html_.size();
    tag->end = end;
    const size_t name_start = i;
    while (i < n && !IsHtmlSpace(html_[i]) && html_[i] != '/' && html_[i] != '>') ++i;
    tag->name = absl::AsciiStrToLower(AbslView(html_.substr(name_start, i - name_start)));
    while (i < n) {
      while (i < n && (IsHtmlSpace(html_[i]) || html_[i] == '/')) {
        tag->self_closing = html_[i] == '/';
        ++i;
      }
      if (i >= n) break;
      if (html_[i] == '>') return i + 1;
      tag->self_closing = false;
      const size_t attr_start = i;
      // The first character may be '=' (it is then part of the name).
      ++i;
      while (i < n && !IsHtmlSpace(html_[i]) && html_[i] != '/' && html_[i] != '>' &&
             html_[i] != '=') {
        ++i;
      }
      const std::string attr =
          absl::AsciiStrToLower(AbslView(html_.substr(attr_start, i - attr_start)));
      size_t k = i;
      while (k < n && IsHtmlSpace(html_[k])) ++k;
      std::string_view value;
      if (k < n && html_[k] == '=') {
        ++k;
        while (k < n && IsHtmlSpace(html_[k])) ++k;
        if (k < n && (html_[k] == '"' || html_[k] == '\'')) {
          const size_t close = html_.find(html_[k], k + 1);
          const size_t value_end = close == std::string_view::npos ? n : close;
          value = html_.substr(k + 1, value_end - k - 1);
          k = close == std::string_view::npos ? n : close + 1;
        } else {
          const size_t value_start = k;
          while (k < n && !IsHtmlSpace(html_[k]) && html_[k] != '>') ++k;
          value = html_.substr(value_start, k - value_start);
        }
        i = k;
      }
      if (end) continue;
      if (attr == "href" && !tag->has_href) {
        tag->has_href = true;
        tag->href = std::string(absl::StripAsciiWhitespace(AbslView(Decoded(value, true))));
      } else if (attr == "alt" && tag->alt.empty()) {
        tag->alt = Decoded(value, true);
      } else if (attr == "start" && tag->start.empty()) {
        tag->start = std::string(value.substr(0, 10));
      }
    }
    return n;
  }

  // Returns the offset to continue from (past the content of a raw text element).
  size_t OnStartTag(const Tag& tag, size_t i) {
    const std::string& name = tag.name;
    if (IsRawTextElement(name)) {
      const size_t end = FindEndTag(html_, name, i);
      if (end == std::string_view::npos) return html_.size();
      return SkipEndTag(end);
    }
    if (name == "title" || name == "textarea") {
      const size_t end = FindEndTag(html_, name, i);
      const std::string_view content =
          html_.substr(i, (end == std::string_view::npos ? html_.size() : end) - i);
      if (hidden_depth_ == 0) {
        if (name == "title") {
          if (!title_seen_) {
            title_seen_ = true;
            TextSink title;
            title.Text(Decoded(content, false));
            title_ = title.Finish();
          }
        } else {
          sink_.Break(1);
          EmitText(content);
          sink_.Break(1);
        }
      }
      return end == std::string_view::npos ? html_.size() : SkipEndTag(end);
    }
    if (name == "plaintext") {
      if (hidden_depth_ == 0) sink_.Preformatted(html_.substr(i));
      return html_.size();
    }
    if (hidden_depth_ > 0) {
      if (name == hidden_name_ && !tag.self_closing) ++hidden_depth_;
      return i;
    }
    if (IsHiddenElement(name)) {
      if (!tag.self_closing) {
        hidden_name_ = name;
        hidden_depth_ = 1;
      }
      return i;
    }

    if (const int level = HeadingLevel(name); level > 0) {
      sink_.Break(2);
      sink_.Prefix(absl::StrCat(std::string(level, '#'), " "));
      return i;
    }
    if (name == "ul" || name == "ol") {
      sink_.Break(lists_.empty() ? 2 : 1);
      int first = 1;
      if (name == "ol" && !tag.start.empty()) {
        int parsed = 0;
        bool digits = true;
        for (char c : tag.start) {
          if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) digits = false;
        }
        if (digits) {
          for (char c : tag.start) parsed = parsed * 10 + (c - '0');
          first = parsed;
        }
      }
      lists_.push_back(List{.ordered = name == "ol", .next = first});
      return i;
    }
    if (name == "li") {
      sink_.Break(1);
      const size_t depth = lists_.empty() ? 1 : lists_.size();
      std::string prefix(2 * (std::min(depth, kMaxListIndent) - 1), ' ');
      if (!lists_.empty() && lists_.back().ordered) {
        absl::StrAppend(&prefix, lists_.back().next++, ". ");
      } else {
        prefix += "- ";
      }
      sink_.Prefix(prefix);
      return i;
    }
    if (name == "pre") {
      sink_.Break(2);
      ++pre_depth_;
      // A line end right after <pre> is not part of the content.
      if (i < html_.size() && html_[i] == '\n') return i + 1;
      if (i + 1 < html_.size() && html_[i] == '\r' && html_[i + 1] == '\n') return i + 2;
      return i;
    }
    if (name == "td" || name == "th") {
      if (cells_in_row_ > 0) sink_.Text(" | ");
      ++cells_in_row_;
      return i;
    }
    if (name == "tr") cells_in_row_ = 0;
    if (name == "a") {
      CloseLink();
      if (tag.has_href) {
        link_open_ = true;
        link_href_ = tag.href;
        link_words_ = sink_.words();
      }
      return i;
    }
    if (name == "img") {
      const std::string alt(absl::StripAsciiWhitespace(AbslView(tag.alt)));
      if (!alt.empty()) {
        sink_.Space();
        sink_.Word("[image:");
        sink_.Space();
        sink_.Text(alt);
        sink_.Word("]");
        sink_.Space();
      }
      return i;
    }
    if (IsParagraphElement(name)) {
      sink_.Break(2);
    } else if (IsLineElement(name)) {
      sink_.Break(1);
    }
    return i;
  }

  void OnEndTag(const Tag& tag) {
    const std::string& name = tag.name;
    if (hidden_depth_ > 0) {
      if (name == hidden_name_) --hidden_depth_;
      return;
    }
    if (HeadingLevel(name) > 0 || IsParagraphElement(name)) {
      sink_.Break(2);
    } else if (IsLineElement(name) || name == "li") {
      sink_.Break(1);
    } else if (name == "ul" || name == "ol") {
      if (!lists_.empty()) lists_.pop_back();
      sink_.Break(lists_.empty() ? 2 : 1);
    } else if (name == "pre") {
      if (pre_depth_ > 0) --pre_depth_;
      sink_.Break(2);
    } else if (name == "a") {
      CloseLink();
    }
  }

  // The offset past the end tag starting at `at` ("</name ...>").
  size_t SkipEndTag(size_t at) const {
    const size_t close = html_.find('>', at);
    return close == std::string_view::npos ? html_.size() : close + 1;
  }

  void EmitText(std::string_view raw) {
    if (raw.empty() || hidden_depth_ > 0) return;
    const std::string text = Decoded(raw, false);
    if (pre_depth_ > 0) {
      sink_.Preformatted(text);
    } else {
      sink_.Text(text);
    }
  }

  void CloseLink() {
    if (!link_open_) return;
    link_open_ = false;
    // A link with no text (an icon) gets no marker: there is nothing for it to follow.
    if (sink_.words() == link_words_) return;
    size_t number;
    if (auto seen = href_numbers_.find(link_href_); seen != href_numbers_.end()) {
      number = seen->second;
    } else {
      // Once the list is full a new href gets no marker, so it is not worth resolving.
      if (links_.size() >= options_.max_links) return;
      std::optional<std::string> url = Resolve(link_href_);
      if (!url.has_value() || url->empty()) return;
      auto known = link_numbers_.find(*url);
      if (known != link_numbers_.end()) {
        number = known->second;
      } else {
        links_.push_back(*url);
        number = links_.size();
        link_numbers_.emplace(*url, number);
      }
      href_numbers_.emplace(link_href_, number);
    }
    // The marker goes right after the link's text; a space that followed the text still
    // follows the marker.
    const bool space_after = sink_.pending_space();
    sink_.Space();
    sink_.Word(absl::StrCat("[", number, "]"));
    if (space_after) sink_.Space();
  }

  std::optional<std::string> Resolve(const std::string& href) const {
    if (href.empty() || href[0] == '#') return std::nullopt;
    if (options_.resolve_link) return options_.resolve_link(href);
    if (absl::StartsWithIgnoreCase(AbslView(href), "http://") ||
        absl::StartsWithIgnoreCase(AbslView(href), "https://")) {
      return ToCleanUtf8(href);
    }
    return std::nullopt;
  }

  struct List {
    bool ordered = false;
    int next = 1;
  };

  std::string_view html_;
  const HtmlTextOptions& options_;
  TextSink sink_;
  std::string title_;
  bool title_seen_ = false;
  std::vector<List> lists_;
  int pre_depth_ = 0;
  int cells_in_row_ = 0;
  std::string hidden_name_;
  int hidden_depth_ = 0;
  bool link_open_ = false;
  std::string link_href_;
  size_t link_words_ = 0;
  std::vector<std::string> links_;
  std::unordered_map<std::string, size_t> link_numbers_;  // by URL
  std::unordered_map<std::string, size_t> href_numbers_;  // by href as written
};

}  // namespace

HtmlText HtmlToText(std::string_view html, const HtmlTextOptions& options) {
  return Converter(html, options).Run();
}

std::string SniffHtmlCharset(std::string_view html) {
  const std::string head = absl::AsciiStrToLower(AbslView(html.substr(0, 2048)));
  size_t at = 0;
  while ((at = head.find("<meta", at)) != std::string::npos) {
    const size_t close = head.find('>', at);
    const std::string_view tag = std::string_view(head).substr(
        at, close == std::string::npos ? std::string::npos : close - at);
    at += 5;
    const size_t key = tag.find("charset");
    if (key == std::string_view::npos) continue;
    size_t i = key + 7;
    while (i < tag.size() && IsHtmlSpace(tag[i])) ++i;
    if (i >= tag.size() || tag[i] != '=') continue;
    ++i;
    while (i < tag.size() && (IsHtmlSpace(tag[i]) || tag[i] == '"' || tag[i] == '\'')) ++i;
    const size_t start = i;
    while (i < tag.size() && (IsAsciiAlnum(tag[i]) || tag[i] == '-' || tag[i] == '_' ||
                              tag[i] == ':' || tag[i] == '.')) {
      ++i;
    }
    if (i > start) return std::string(tag.substr(start, i - start));
  }
  return "";
}

}  // namespace herald::skills::web
