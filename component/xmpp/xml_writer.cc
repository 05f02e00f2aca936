#include "component/xmpp/xml_writer.h"

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace herald::xmpp {
namespace {

constexpr std::string_view kXmlNamespace = "http://www.w3.org/XML/1998/namespace";
constexpr std::string_view kReplacementCharacter = "\xEF\xBF\xBD";  // U+FFFD

// For each byte, whether the escaping loop must look at it; every other byte is copied as
// part of a run. Bytes >= 0x80 are looked at so that invalid UTF-8 never reaches the wire.
using ByteTable = std::array<bool, 256>;

constexpr ByteTable MakeTable(bool attribute) {
  ByteTable table{};
  for (int c = 0; c < 0x20; ++c) table[c] = true;
  if (!attribute) table['\t'] = table['\n'] = false;
  for (int c = 0x80; c < 0x100; ++c) table[c] = true;
  table['&'] = table['<'] = table['>'] = true;
  if (attribute) table['"'] = table['\''] = true;
  return table;
}

constexpr ByteTable kTextTable = MakeTable(false);
constexpr ByteTable kAttributeTable = MakeTable(true);

// The length of the well-formed UTF-8 sequence at s[i] (Unicode table 3-7: no overlongs, no
// surrogates, nothing above U+10FFFF), or 0 when it is not one.
size_t Utf8SequenceLength(std::string_view s, size_t i) {
  auto byte = [&](size_t k) -> uint8_t { return static_cast<uint8_t>(s[i + k]); };
  auto cont = [&](size_t k, uint8_t lo = 0x80, uint8_t hi = 0xBF) {
    return i + k < s.size() && byte(k) >= lo && byte(k) <= hi;
  };
  const uint8_t lead = byte(0);
  if (lead >= 0xC2 && lead <= 0xDF) return cont(1) ? 2 : 0;
  if (lead == 0xE0) return cont(1, 0xA0) && cont(2) ? 3 : 0;
  if (lead == 0xED) return cont(1, 0x80, 0x9F) && cont(2) ? 3 : 0;
  if (lead >= 0xE1 && lead <= 0xEF) return cont(1) && cont(2) ? 3 : 0;
  if (lead == 0xF0) return cont(1, 0x90) && cont(2) && cont(3) ? 4 : 0;
  if (lead >= 0xF1 && lead <= 0xF3) return cont(1) && cont(2) && cont(3) ? 4 : 0;
  if (lead == 0xF4) return cont(1, 0x80, 0x8F) && cont(2) && cont(3) ? 4 : 0;
  return 0;
}

// Copies runs of ordinary bytes in one append; only markup characters, control characters and
// non-ASCII sequences break out of the fast loop.
void AppendEscaped(std::string_view s, const ByteTable& table, std::string& out) {
  const size_t n = s.size();
  size_t run_start = 0;
  size_t i = 0;
  auto flush = [&](size_t end) { out.append(s.data() + run_start, end - run_start); };
  while (i < n) {
    const uint8_t c = static_cast<uint8_t>(s[i]);
    if (!table[c]) {
      ++i;
      continue;
    }
    if (c >= 0x80) {
      const size_t length = Utf8SequenceLength(s, i);
      if (length == 3 && c == 0xEF && static_cast<uint8_t>(s[i + 1]) == 0xBF &&
          static_cast<uint8_t>(s[i + 2]) >= 0xBE) {
        // U+FFFE and U+FFFF are not XML characters: dropped like control characters.
        flush(i);
        i += 3;
        run_start = i;
      } else if (length != 0) {
        i += length;  // stays part of the run
      } else {
        flush(i);
        out.append(kReplacementCharacter);
        ++i;
        run_start = i;
      }
      continue;
    }
    flush(i);
    switch (c) {
      case '&':
        out.append("&amp;");
        break;
      case '<':
        out.append("&lt;");
        break;
      case '>':
        out.append("&gt;");
        break;
      case '"':
        out.append("&quot;");
        break;
      case '\'':
        out.append("&apos;");
        break;
      // A parser folds a literal CR (text and attributes) and TAB/LF (attributes) into other
      // characters; references survive.
      case '\t':
        out.append("&#9;");
        break;
      case '\n':
        out.append("&#10;");
        break;
      case '\r':
        out.append("&#13;");
        break;
      default:
        break;  // a control character XML 1.0 forbids: dropped
    }
    ++i;
    run_start = i;
  }
  flush(n);
}

// Prefixes for attributes in namespaces other than xml: declared on the element that uses them.
struct PrefixBinding {
  std::string_view uri;
  int index;
};

void AppendElement(const XmlElement& element, std::string_view scope_xmlns, std::string& out) {
  out.push_back('<');
  out.append(element.name());
  std::string_view xmlns = element.xmlns().empty() ? scope_xmlns : element.xmlns();
  if (xmlns != scope_xmlns) {
    out.append(" xmlns='");
    AppendEscapedAttribute(xmlns, out);
    out.push_back('\'');
  }
  PrefixBinding bindings[8];
  int binding_count = 0;
  int next_prefix = 0;
  for (const XmlAttribute& attribute : element.attributes()) {
    // "{uri}local": a URI may contain '}', a local name may not.
    std::string_view name = attribute.name;
    out.push_back(' ');
    size_t close = name.empty() || name[0] != '{' ? std::string_view::npos : name.rfind('}');
    if (close == std::string_view::npos) {
      out.append(name);
    } else {
      std::string_view uri = name.substr(1, close - 1);
      std::string_view local = name.substr(close + 1);
      if (uri.empty()) {
        out.append(local);
      } else if (uri == kXmlNamespace) {
        out.append("xml:").append(local);
      } else {
        int index = -1;
        for (int b = 0; b < binding_count; ++b) {
          if (bindings[b].uri == uri) index = bindings[b].index;
        }
        if (index < 0) {
          index = next_prefix++;
          if (binding_count < 8) bindings[binding_count++] = {uri, index};
          out.append("xmlns:h").append(std::to_string(index)).append("='");
          AppendEscapedAttribute(uri, out);
          out.append("' ");
        }
        out.append("h").append(std::to_string(index)).push_back(':');
        out.append(local);
      }
    }
    out.append("='");
    AppendEscapedAttribute(attribute.value, out);
    out.push_back('\'');
  }
  if (element.children().empty()) {
    out.append("/>");
    return;
  }
  out.push_back('>');
  for (const XmlNode& child : element.children()) {
    if (child.element != nullptr) {
      AppendElement(*child.element, xmlns, out);
    } else {
      AppendEscapedText(child.text, out);
    }
  }
  out.append("</");
  out.append(element.name());
  out.push_back('>');
}

}  // namespace

void AppendXml(const XmlElement& element, std::string_view scope_xmlns, std::string& out) {
  AppendElement(element, scope_xmlns, out);
}

std::string ToXml(const XmlElement& element) {
  std::string out;
  AppendElement(element, "", out);
  return out;
}

void AppendEscapedText(std::string_view text, std::string& out) {
  AppendEscaped(text, kTextTable, out);
}

void AppendEscapedAttribute(std::string_view value, std::string& out) {
  AppendEscaped(value, kAttributeTable, out);
}

}  // namespace herald::xmpp
