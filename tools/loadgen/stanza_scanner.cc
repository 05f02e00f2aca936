#include "tools/loadgen/stanza_scanner.h"

#include <cstring>

namespace herald::loadgen {
namespace {

constexpr size_t kNeedMore = 0;
constexpr size_t kBroken = std::string_view::npos;

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// One past the '>' that ends the tag opening at data[start], skipping quoted attribute values;
// kNeedMore when the tag is not complete yet.
size_t TagEnd(std::string_view data, size_t start) {
  char quote = 0;
  for (size_t i = start + 1; i < data.size(); ++i) {
    const char c = data[i];
    if (quote != 0) {
      if (c == quote) quote = 0;
    } else if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '>') {
      return i + 1;
    }
  }
  return kNeedMore;
}

// Fills the name and the attributes the load generator reads from a complete open tag.
void ReadOpenTag(std::string_view tag, ScannedElement& element) {
  size_t i = 1;
  while (i < tag.size() && !IsSpace(tag[i]) && tag[i] != '/' && tag[i] != '>') ++i;
  element.name = tag.substr(1, i - 1);
  while (i < tag.size()) {
    while (i < tag.size() && IsSpace(tag[i])) ++i;
    if (i >= tag.size() || tag[i] == '/' || tag[i] == '>') return;
    const size_t name_start = i;
    while (i < tag.size() && tag[i] != '=' && !IsSpace(tag[i])) ++i;
    const std::string_view name = tag.substr(name_start, i - name_start);
    while (i < tag.size() && (IsSpace(tag[i]) || tag[i] == '=')) ++i;
    if (i >= tag.size() || (tag[i] != '\'' && tag[i] != '"')) return;
    const char quote = tag[i++];
    const size_t value_start = i;
    while (i < tag.size() && tag[i] != quote) ++i;
    const std::string_view value = tag.substr(value_start, i - value_start);
    ++i;
    if (name == "to") {
      element.to = value;
    } else if (name == "from") {
      element.from = value;
    } else if (name == "type") {
      element.type = value;
    } else if (name == "id") {
      element.id = value;
    }
  }
}

// One past the end of `terminator` found at or after `from`; kNeedMore when it is not there.
size_t PastTerminator(std::string_view data, size_t from, std::string_view terminator) {
  const size_t at = data.find(terminator, from);
  return at == std::string_view::npos ? kNeedMore : at + terminator.size();
}

// The end (one past '>') of the element starting at data[start], kNeedMore or kBroken.
size_t ElementEnd(std::string_view data, size_t start, ScannedElement& element) {
  const size_t open_end = TagEnd(data, start);
  if (open_end == kNeedMore) return kNeedMore;
  ReadOpenTag(data.substr(start, open_end - start), element);
  if (data[open_end - 2] == '/') {
    element.text = {};
    element.xml = data.substr(start, open_end - start);
    return open_end;
  }
  int depth = 1;
  size_t i = open_end;
  bool text_done = false;
  while (true) {
    const void* found = std::memchr(data.data() + i, '<', data.size() - i);
    if (found == nullptr) return kNeedMore;
    const size_t lt = static_cast<const char*>(found) - data.data();
    if (!text_done) {
      element.text = data.substr(open_end, lt - open_end);
      text_done = true;
    }
    if (lt + 1 >= data.size()) return kNeedMore;
    const char next = data[lt + 1];
    size_t end;
    if (next == '/') {
      end = PastTerminator(data, lt, ">");
      if (end != kNeedMore && --depth == 0) {
        element.xml = data.substr(start, end - start);
        return end;
      }
    } else if (next == '!') {
      if (data.size() - lt < 9) return kNeedMore;
      if (data.compare(lt, 9, "<![CDATA[") == 0) {
        end = PastTerminator(data, lt, "]]>");
      } else if (data.compare(lt, 4, "<!--") == 0) {
        end = PastTerminator(data, lt, "-->");
      } else {
        return kBroken;
      }
    } else if (next == '?') {
      end = PastTerminator(data, lt, "?>");
    } else {
      end = TagEnd(data, lt);
      if (end != kNeedMore && data[end - 2] != '/') ++depth;
    }
    if (end == kNeedMore) return kNeedMore;
    i = end;
  }
}

}  // namespace

absl::Status StanzaScanner::Feed(std::string_view bytes, const Callback& on_element) {
  // Scan the caller's bytes in place when nothing is held over; copy only what is left.
  const bool in_place = consumed_ == buffer_.size();
  std::string_view data;
  size_t pos;
  if (in_place) {
    buffer_.clear();
    consumed_ = 0;
    data = bytes;
    pos = 0;
  } else {
    buffer_.append(bytes.data(), bytes.size());
    data = buffer_;
    pos = consumed_;
  }
  absl::Status status = absl::OkStatus();
  while (pos < data.size()) {
    const char c = data[pos];
    if (IsSpace(c)) {
      ++pos;
      continue;
    }
    if (c != '<') {
      status = absl::InvalidArgumentError("text between stanzas");
      break;
    }
    if (pos + 1 >= data.size()) break;
    ScannedElement element;
    size_t end;
    if (data[pos + 1] == '?') {
      end = PastTerminator(data, pos, "?>");
      if (end == kNeedMore) break;
      pos = end;
      continue;
    }
    if (data[pos + 1] == '/') {
      end = PastTerminator(data, pos, ">");
      if (end == kNeedMore) break;
      element.kind = ScannedElement::kStreamClose;
      element.name = data.substr(pos + 2, end - pos - 3);
      element.xml = data.substr(pos, end - pos);
    } else if (!header_seen_) {
      end = TagEnd(data, pos);
      if (end == kNeedMore) break;
      element.kind = ScannedElement::kStreamHeader;
      ReadOpenTag(data.substr(pos, end - pos), element);
      element.xml = data.substr(pos, end - pos);
      header_seen_ = true;
    } else {
      end = ElementEnd(data, pos, element);
      if (end == kNeedMore) break;
      if (end == kBroken) {
        status = absl::InvalidArgumentError("markup the scanner cannot follow");
        break;
      }
      element.kind = ScannedElement::kStanza;
    }
    on_element(element);
    pos = end;
  }
  if (in_place) {
    buffer_.assign(data.substr(pos));
  } else {
    consumed_ = pos;
    if (consumed_ == buffer_.size()) {
      buffer_.clear();
      consumed_ = 0;
    } else if (consumed_ > 64 * 1024) {
      buffer_.erase(0, consumed_);
      consumed_ = 0;
    }
  }
  return status;
}

void StanzaScanner::Reset() {
  buffer_.clear();
  consumed_ = 0;
  header_seen_ = false;
}

}  // namespace herald::loadgen
