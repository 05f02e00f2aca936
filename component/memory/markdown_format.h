// component/memory/markdown_format.h
//
// The markdown of history.md and sessions/*.md (docs/memory.md): one entry per message,
//
//   ### 2025-01-14T09:30:12.345678Z · user · alice@localhost
//   > the message, every line quoted,
//   >
//   > so that no message line can look like a header or an end of entry
//
// A header line ("### " time " · " role " · " author), the text's lines each behind "> "
// (an empty line is a lone ">"), and a blank line that closes the entry. Because every text
// line starts with '>', the structure is unambiguous line by line: a reader can start at any
// line boundary (History reads from the end of the file) and a message can never forge an
// entry. An entry without its closing blank line was cut short by a crash and is ignored, as
// is one interrupted by any other line (see TailNeedsRepair).
//
//   std::string bytes = FormatEntry(entry);
//   std::vector<MemoryEntry> entries = ParseEntries(file_contents, /*at_file_start=*/true);
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "component/memory/memory_store.h"

namespace herald::memory {

// The bytes of one complete entry; ParseEntries gives back exactly `entry`.
std::string FormatEntry(const MemoryEntry& entry);

// The complete entries of `text`, in order. When `at_file_start` is false `text` is a tail of
// a file that may begin in the middle of a line, so its first line is skipped.
std::vector<MemoryEntry> ParseEntries(std::string_view text, bool at_file_start);

// The last `max_entries` complete entries of `text` (all when fewer), in order. Cheaper than
// ParseEntries on a long text: only the entries returned are parsed in full.
std::vector<MemoryEntry> ParseLastEntries(std::string_view text, bool at_file_start,
                                          size_t max_entries);

// Whether a file whose last bytes are `last_two_bytes` (fewer for a shorter file) can take
// another entry as is: it is empty or ends with the blank line that closes an entry.
bool EndsOnEntryBoundary(std::string_view last_two_bytes);

// What to write before the next entry when the file does not end on an entry boundary (a
// write cut short by a crash, or a hand edit): it ends the partial line and adds a comment
// line that makes readers drop the unfinished entry, then a blank line.
std::string TailRepair(std::string_view last_two_bytes);

}  // namespace herald::memory
