#include "component/base/file_diagnostics.h"

#include <algorithm>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace herald::base {
namespace {

constexpr size_t kMaxQuotedBytes = 64;

std::string Quote(std::string_view text, char quote) {
  bool cut = text.size() > kMaxQuotedBytes;
  if (cut) text = text.substr(0, kMaxQuotedBytes);
  // CHexEscape escapes quotes, backslashes, control bytes and bytes >= 0x80, so the result is
  // printable ASCII whatever the file held.
  return absl::StrCat(std::string(1, quote), absl::CHexEscape(AbslView(text)), cut ? "..." : "",
                      std::string(1, quote));
}

}  // namespace

void FileDiagnostics::Add(int64_t line, int64_t column, std::string message) {
  entries_.push_back(Entry{line, column, std::move(message)});
}

std::vector<std::string> FileDiagnostics::Messages() const {
  std::vector<Entry> sorted = entries_;
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const Entry& a, const Entry& b) { return a.line < b.line; });
  std::vector<std::string> lines;
  for (size_t i = 0; i < sorted.size() && i < kMaxReported; ++i) {
    const Entry& entry = sorted[i];
    std::string where = source_name_;
    if (entry.line > 0) absl::StrAppend(&where, ":", entry.line);
    if (entry.line > 0 && entry.column > 0) absl::StrAppend(&where, ":", entry.column);
    lines.push_back(absl::StrCat(where, ": ", entry.message));
  }
  if (sorted.size() > kMaxReported) {
    lines.push_back(absl::StrCat("... and ", sorted.size() - kMaxReported, " more problems"));
  }
  return lines;
}

absl::Status FileDiagnostics::ToStatus() const {
  if (entries_.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrJoin(Messages(), "\n"));
}

std::string QuoteValue(std::string_view text) { return Quote(text, '"'); }

std::string QuoteKey(std::string_view text) { return Quote(text, '\''); }

std::string OneLine(std::string_view text) {
  std::string out;
  for (char c : text) {
    unsigned char byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f) {
      absl::StrAppend(&out, absl::CHexEscape(absl::string_view(&c, 1)));
    } else {
      out.push_back(c);
    }
  }
  return out;
}

}  // namespace herald::base
