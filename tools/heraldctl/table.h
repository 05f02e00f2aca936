// tools/heraldctl/table.h
//
// What heraldctl's human output is made of: aligned text tables and the value formats people
// read at a glance — counts with thousands separators, dollars, UTC times, short durations.
// Everything that came from the server passes through CleanForTerminal first, so a JID or a
// skill description cannot move the cursor or recolour the terminal.
//
//   Table table({{"JID"}, {"TOKENS", Align::kRight}});
//   table.AddRow({"alice@example.org", FormatCount(12345)});
//   std::cout << table.Render();   // "JID                TOKENS\nalice@example.org  12,345\n"
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/time/time.h"
#include "google/protobuf/duration.pb.h"
#include "google/protobuf/timestamp.pb.h"

namespace herald::heraldctl {

enum class Align { kLeft, kRight };

struct Column {
  std::string title;
  Align align = Align::kLeft;
};

class Table {
 public:
  explicit Table(std::vector<Column> columns);

  // Cells are cleaned (CleanForTerminal, line breaks become spaces); a short row is padded
  // with empty cells.
  void AddRow(std::vector<std::string> cells);

  bool empty() const { return rows_.empty(); }

  // The title row and every row, columns two spaces apart, widths in characters (UTF-8 code
  // points), no trailing spaces.
  std::string Render() const;

  // The rows alone, aligned as Render aligns them: for "name  value" listings.
  std::string RenderRows() const;

 private:
  std::string RenderLines(bool with_titles) const;

  std::vector<Column> columns_;
  std::vector<std::vector<std::string>> rows_;
};

// Drops control characters (ESC and the rest of C0, DEL, C1) from server text. With
// `keep_line_breaks`, '\n' and '\t' stay (an answer's paragraphs); without, they become spaces.
std::string CleanForTerminal(std::string_view text, bool keep_line_breaks);

// Characters (UTF-8 code points) in `text`.
size_t DisplayWidth(std::string_view text);

// `text` cut to at most `max_characters` (UTF-8 code points), the last of them "…" when cut.
std::string CutTo(const std::string& text, size_t max_characters);

// 1234567 → "1,234,567"; -5 → "-5".
std::string FormatCount(int64_t value);

// 1234.5 → "$1,234.5000": four decimals, since a single call often costs a fraction of a cent.
std::string FormatCost(double dollars);

// "2025-01-02 03:04:05 UTC"; "-" when unset (seconds and nanos both 0).
std::string FormatTime(const google::protobuf::Timestamp& time);

// "3d 4h 5m 6s", "5m 0s", "12s"; "0s" for anything under a second.
std::string FormatDuration(const google::protobuf::Duration& duration);

// Milliseconds, a tenth of one below 100: "0.4 ms", "12.3 ms", "1,234 ms".
std::string FormatMilliseconds(absl::Duration duration);

// `time` seen from `now`, at a glance: "in 45s", "in 4m", "in 2h 5m", "in 3d 4h"; "expired"
// when it has passed; "-" when unset.
std::string FormatRelative(const google::protobuf::Timestamp& time, absl::Time now);

}  // namespace herald::heraldctl
