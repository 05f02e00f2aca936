// component/base/file_diagnostics.h
//
// FileDiagnostics collects the problems found in one text file Herald reads — the config, a
// skill's manifest, a scripted provider's rules — so that whoever wrote it sees all of them at
// once, each as "FILE:LINE: message", ordered by line. It also holds the helpers that
// put text from the file into a message safely: hostile bytes are escaped and long text is cut,
// so a crafted key or value cannot forge extra lines in a log or flood it.
//
//   FileDiagnostics diagnostics("herald.toml");
//   diagnostics.Add(12, "unknown key 'alowed_jids' in [agent] (did you mean 'allowed_jids'?)");
//   absl::Status status = diagnostics.ToStatus();   // InvalidArgument, or OK when empty
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "component/base/absl_string_view.h"

namespace herald::base {

class FileDiagnostics {
 public:
  // More than this many problems are summarised as "... and N more": a hostile file with
  // thousands of bad keys must not produce a megabyte of error text.
  static constexpr size_t kMaxReported = 20;

  explicit FileDiagnostics(std::string source_name) : source_name_(std::move(source_name)) {}

  // `line` 0 means the problem has no line (a missing section, say); column 0 means no column.
  void Add(int64_t line, std::string message) { Add(line, 0, std::move(message)); }
  void Add(int64_t line, int64_t column, std::string message);

  bool empty() const { return entries_.empty(); }
  size_t size() const { return entries_.size(); }

  // One "FILE:LINE: ..." line per problem, sorted by line (in the order added within a line),
  // the first kMaxReported and then "... and N more problems".
  std::vector<std::string> Messages() const;
  // InvalidArgument with Messages() one per line; OK if none.
  absl::Status ToStatus() const;

 private:
  struct Entry {
    int64_t line;
    int64_t column;
    std::string message;
  };
  std::string source_name_;
  std::vector<Entry> entries_;
};

// `text` in double quotes with control and non-ASCII bytes escaped, cut to 64 bytes; for values
// and variable names taken from the file.
std::string QuoteValue(std::string_view text);

// The same in single quotes, for key names ('alowed_jids').
std::string QuoteKey(std::string_view text);

// Escapes control bytes so that text from a library (a toml++ description) stays on one line.
std::string OneLine(std::string_view text);

}  // namespace herald::base
