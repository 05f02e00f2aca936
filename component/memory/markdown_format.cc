#include "component/memory/markdown_format.h"

#include <algorithm>
#include <cstdint>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "component/base/absl_string_view.h"
#include "component/base/hex.h"

namespace herald::memory {
namespace {

constexpr std::string_view kHeaderPrefix = "### ";
constexpr std::string_view kSeparator = " \xC2\xB7 ";  // " · "
constexpr char kTimeFormat[] = "%Y-%m-%dT%H:%M:%E*SZ";
constexpr std::string_view kRepairComment =
    "<!-- herald: text above this line that does not end with a blank line is not an entry "
    "and is ignored -->";
void AppendEscaped(std::string& out, unsigned char c) {
  out.push_back('%');
  base::AppendHexByte(c, base::HexCase::kUpper, out);
}

bool IsControl(unsigned char c) { return c < 0x20 || c == 0x7F; }

// Roles are single tokens: no spaces, so the separator never appears inside one.
std::string EscapeRole(std::string_view role) {
  std::string out;
  for (char ch : role) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '%' || c == ' ' || IsControl(c)) {
      AppendEscaped(out, c);
    } else {
      out.push_back(ch);
    }
  }
  return out;
}

// The author is the last field, so it may hold the separator; leading and trailing spaces are
// escaped because editors trim them.
std::string EscapeAuthor(std::string_view author) {
  const size_t first = author.find_first_not_of(' ');
  const size_t last = author.find_last_not_of(' ');
  std::string out;
  for (size_t i = 0; i < author.size(); ++i) {
    const auto c = static_cast<unsigned char>(author[i]);
    const bool edge_space = c == ' ' && (first == std::string_view::npos || i < first || i > last);
    if (c == '%' || IsControl(c) || edge_space) {
      AppendEscaped(out, c);
    } else {
      out.push_back(author[i]);
    }
  }
  return out;
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// A '%' without two hex digits after it is kept as is: hand edits stay readable.
std::string Unescape(std::string_view field) {
  std::string out;
  out.reserve(field.size());
  for (size_t i = 0; i < field.size(); ++i) {
    if (field[i] == '%' && i + 2 < field.size()) {
      const int high = HexValue(field[i + 1]);
      const int low = HexValue(field[i + 2]);
      if (high >= 0 && low >= 0) {
        out.push_back(static_cast<char>(high * 16 + low));
        i += 2;
        continue;
      }
    }
    out.push_back(field[i]);
  }
  return out;
}

std::optional<MemoryEntry> ParseHeader(std::string_view line) {
  if (line.substr(0, kHeaderPrefix.size()) != kHeaderPrefix) return std::nullopt;
  line.remove_prefix(kHeaderPrefix.size());
  const size_t time_end = line.find(kSeparator);
  if (time_end == std::string_view::npos) return std::nullopt;
  MemoryEntry entry;
  std::string error;
  if (!absl::ParseTime(kTimeFormat, AbslView(line.substr(0, time_end)), absl::UTCTimeZone(),
                       &entry.time, &error)) {
    return std::nullopt;
  }
  std::string_view rest = line.substr(time_end + kSeparator.size());
  size_t role_end = rest.find(kSeparator);
  std::string_view author;
  if (role_end != std::string_view::npos) {
    author = rest.substr(role_end + kSeparator.size());
  } else {
    // An empty author leaves " ·" at the end of the line once an editor trims the space.
    constexpr std::string_view kTrimmedSeparator = " \xC2\xB7";
    if (rest.size() < kTrimmedSeparator.size() ||
        rest.substr(rest.size() - kTrimmedSeparator.size()) != kTrimmedSeparator) {
      return std::nullopt;
    }
    role_end = rest.size() - kTrimmedSeparator.size();
  }
  entry.role = Unescape(rest.substr(0, role_end));
  entry.author = Unescape(author);
  return entry;
}

}  // namespace

std::string FormatEntry(const MemoryEntry& entry) {
  std::string out = absl::StrCat(AbslView(kHeaderPrefix),
                                 absl::FormatTime(kTimeFormat, entry.time, absl::UTCTimeZone()),
                                 AbslView(kSeparator), EscapeRole(entry.role), AbslView(kSeparator),
                                 EscapeAuthor(entry.author), "\n");
  // The empty text has no lines; any other text has at least one, so "" and "\n" differ.
  if (!entry.text.empty()) {
    for (absl::string_view line : absl::StrSplit(AbslView(entry.text), '\n')) {
      if (line.empty()) {
        out += ">\n";
      } else {
        absl::StrAppend(&out, "> ", line, "\n");
      }
    }
  }
  out += "\n";
  return out;
}

namespace {

// Where a closed entry lies in the text: its header line and its quoted lines. Finding them
// is a cheap scan; parsing the header (the time above all) is left to the entries wanted.
struct EntrySpan {
  std::string_view header;
  std::string_view body;  // the quoted lines, each with its '\n'
};

std::vector<EntrySpan> ScanEntries(std::string_view text, bool at_file_start) {
  std::vector<EntrySpan> spans;
  if (!at_file_start) {
    const size_t newline = text.find('\n');
    text = newline == std::string_view::npos ? std::string_view() : text.substr(newline + 1);
  }
  bool open = false;  // inside an entry whose header line started with "### "
  EntrySpan current;
  const char* body_start = nullptr;
  while (!text.empty()) {
    const size_t newline = text.find('\n');
    if (newline == std::string_view::npos) break;  // a last line without '\n' is unfinished
    const std::string_view line = text.substr(0, newline);
    const char* next = text.data() + newline + 1;
    text.remove_prefix(newline + 1);
    if (line.empty()) {
      if (open) {
        current.body = std::string_view(body_start, static_cast<size_t>(line.data() - body_start));
        spans.push_back(current);
      }
      open = false;
    } else if (line[0] != '>') {
      // A header starts an entry and drops an unfinished one; any other line (a title, the
      // repair comment, a hand-written note) drops an unfinished entry too. A "### " line
      // that is no valid header is dropped when parsed, which comes to the same.
      open = line.substr(0, kHeaderPrefix.size()) == kHeaderPrefix;
      current.header = line;
      body_start = next;
    }
    // Quoted lines belong to the open entry, or to one that began before `text`.
  }
  return spans;
}

std::optional<MemoryEntry> ParseSpan(const EntrySpan& span) {
  std::optional<MemoryEntry> entry = ParseHeader(span.header);
  if (!entry.has_value()) return std::nullopt;
  std::string_view body = span.body;
  bool first = true;
  while (!body.empty()) {
    const size_t newline = body.find('\n');
    std::string_view content = body.substr(1, newline - 1);
    body.remove_prefix(newline + 1);
    if (!content.empty() && content[0] == ' ') content.remove_prefix(1);
    if (!first) entry->text.push_back('\n');
    entry->text.append(content.data(), content.size());
    first = false;
  }
  return entry;
}

}  // namespace

std::vector<MemoryEntry> ParseEntries(std::string_view text, bool at_file_start) {
  return ParseLastEntries(text, at_file_start, SIZE_MAX);
}

std::vector<MemoryEntry> ParseLastEntries(std::string_view text, bool at_file_start,
                                          size_t max_entries) {
  const std::vector<EntrySpan> spans = ScanEntries(text, at_file_start);
  std::vector<MemoryEntry> entries;
  for (auto it = spans.rbegin(); it != spans.rend() && entries.size() < max_entries; ++it) {
    std::optional<MemoryEntry> entry = ParseSpan(*it);
    if (entry.has_value()) entries.push_back(std::move(*entry));
  }
  std::reverse(entries.begin(), entries.end());
  return entries;
}

bool EndsOnEntryBoundary(std::string_view last_two_bytes) {
  return last_two_bytes.empty() || last_two_bytes == "\n\n";
}

std::string TailRepair(std::string_view last_two_bytes) {
  if (EndsOnEntryBoundary(last_two_bytes)) return "";
  const bool ends_line = !last_two_bytes.empty() && last_two_bytes.back() == '\n';
  return absl::StrCat(ends_line ? "" : "\n", AbslView(kRepairComment), "\n\n");
}

}  // namespace herald::memory
