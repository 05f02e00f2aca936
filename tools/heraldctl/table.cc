#include "tools/heraldctl/table.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"

namespace herald::heraldctl {

Table::Table(std::vector<Column> columns) : columns_(std::move(columns)) {}

void Table::AddRow(std::vector<std::string> cells) {
  cells.resize(columns_.size());
  for (std::string& cell : cells) cell = CleanForTerminal(cell, /*keep_line_breaks=*/false);
  rows_.push_back(std::move(cells));
}

std::string Table::Render() const { return RenderLines(/*with_titles=*/true); }

std::string Table::RenderRows() const { return RenderLines(/*with_titles=*/false); }

std::string Table::RenderLines(bool with_titles) const {
  std::vector<size_t> widths(columns_.size());
  for (size_t c = 0; c < columns_.size() && with_titles; ++c) {
    widths[c] = DisplayWidth(columns_[c].title);
  }
  for (const std::vector<std::string>& row : rows_) {
    for (size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], DisplayWidth(row[c]));
  }
  std::string text;
  auto render_row = [&](const std::vector<std::string>& cells) {
    std::string line;
    for (size_t c = 0; c < cells.size(); ++c) {
      size_t padding = widths[c] - DisplayWidth(cells[c]);
      if (c > 0) line += "  ";
      if (columns_[c].align == Align::kRight) line.append(padding, ' ');
      line += cells[c];
      if (columns_[c].align == Align::kLeft) line.append(padding, ' ');
    }
    line.erase(line.find_last_not_of(' ') + 1);
    text += line;
    text += '\n';
  };
  std::vector<std::string> titles;
  for (const Column& column : columns_) titles.push_back(column.title);
  if (with_titles) render_row(titles);
  for (const std::vector<std::string>& row : rows_) render_row(row);
  return text;
}

std::string CleanForTerminal(std::string_view text, bool keep_line_breaks) {
  std::string clean;
  clean.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    unsigned char byte = static_cast<unsigned char>(text[i]);
    if (byte == '\n' || byte == '\t') {
      clean += keep_line_breaks ? static_cast<char>(byte) : ' ';
      continue;
    }
    if (byte == '\r') {
      if (!keep_line_breaks) clean += ' ';
      continue;
    }
    if (byte < 0x20 || byte == 0x7f) continue;
    // C1 controls are U+0080..U+009F, encoded as C2 80..C2 9F.
    if (byte == 0xc2 && i + 1 < text.size()) {
      unsigned char next = static_cast<unsigned char>(text[i + 1]);
      if (next >= 0x80 && next <= 0x9f) {
        ++i;
        continue;
      }
    }
    clean += static_cast<char>(byte);
  }
  return clean;
}

size_t DisplayWidth(std::string_view text) {
  size_t width = 0;
  for (char c : text) {
    if ((static_cast<unsigned char>(c) & 0xc0) != 0x80) ++width;
  }
  return width;
}

std::string CutTo(const std::string& text, size_t max_characters) {
  if (DisplayWidth(text) <= max_characters) return text;
  if (max_characters == 0) return "";
  // Keeps max_characters - 1 characters: `end` stops at the start of the next one.
  size_t characters = 0;
  size_t end = 0;
  for (; end < text.size(); ++end) {
    const bool starts_character = (static_cast<unsigned char>(text[end]) & 0xc0) != 0x80;
    if (!starts_character) continue;
    if (characters == max_characters - 1) break;
    ++characters;
  }
  return text.substr(0, end) + "…";
}

std::string FormatCount(int64_t value) {
  std::string digits = std::to_string(value);
  size_t first_digit = value < 0 ? 1 : 0;
  for (int position = static_cast<int>(digits.size()) - 3; position > static_cast<int>(first_digit);
       position -= 3) {
    digits.insert(static_cast<size_t>(position), ",");
  }
  return digits;
}

std::string FormatCost(double dollars) {
  if (!std::isfinite(dollars)) return "?";
  bool negative = dollars < 0;
  double rounded = std::round(std::fabs(dollars) * 10000);
  int64_t whole = static_cast<int64_t>(rounded / 10000);
  int64_t fraction = static_cast<int64_t>(rounded - static_cast<double>(whole) * 10000);
  char decimals[8];
  std::snprintf(decimals, sizeof(decimals), "%04lld", static_cast<long long>(fraction));
  return absl::StrCat(negative ? "-$" : "$", FormatCount(whole), ".", decimals);
}

std::string FormatTime(const google::protobuf::Timestamp& time) {
  if (time.seconds() == 0 && time.nanos() == 0) return "-";
  absl::Time moment = absl::FromUnixSeconds(time.seconds());
  return absl::FormatTime("%Y-%m-%d %H:%M:%S UTC", moment, absl::UTCTimeZone());
}

std::string FormatDuration(const google::protobuf::Duration& duration) {
  int64_t seconds = duration.seconds();
  if (seconds <= 0) return "0s";
  int64_t days = seconds / 86400;
  int64_t hours = seconds % 86400 / 3600;
  int64_t minutes = seconds % 3600 / 60;
  int64_t rest = seconds % 60;
  if (days > 0) return absl::StrCat(days, "d ", hours, "h ", minutes, "m ", rest, "s");
  if (hours > 0) return absl::StrCat(hours, "h ", minutes, "m ", rest, "s");
  if (minutes > 0) return absl::StrCat(minutes, "m ", rest, "s");
  return absl::StrCat(rest, "s");
}

std::string FormatMilliseconds(absl::Duration duration) {
  const int64_t tenths = std::llround(absl::ToDoubleMilliseconds(duration) * 10);
  if (tenths > -1000 && tenths < 1000) {
    return absl::StrCat(tenths < 0 ? "-" : "", std::llabs(tenths) / 10, ".",
                        std::llabs(tenths) % 10, " ms");
  }
  return absl::StrCat(FormatCount(std::llround(absl::ToDoubleMilliseconds(duration))), " ms");
}

std::string FormatRelative(const google::protobuf::Timestamp& time, absl::Time now) {
  if (time.seconds() == 0 && time.nanos() == 0) return "-";
  absl::Time then = absl::FromUnixSeconds(time.seconds()) + absl::Nanoseconds(time.nanos());
  if (then <= now) return "expired";
  int64_t seconds = absl::ToInt64Seconds(then - now);
  int64_t days = seconds / 86400;
  int64_t hours = seconds % 86400 / 3600;
  int64_t minutes = seconds % 3600 / 60;
  if (days > 0) return absl::StrCat("in ", days, "d ", hours, "h");
  if (hours > 0) return absl::StrCat("in ", hours, "h ", minutes, "m");
  if (minutes > 0) return absl::StrCat("in ", minutes, "m");
  return absl::StrCat("in ", seconds, "s");
}

}  // namespace herald::heraldctl
