// component/ledger/audit_reader.h
//
// Reads the audit log (audit_log.h, format in audit_format.h) from its end backwards, a page
// at a time: the newest entries first, for AdminService.ListAuditEntries. A page costs what
// it returns, not the size of the log: the file is read backwards from the cursor in 64 KiB
// blocks, and only as far as the oldest entry of the page.
//
// The cursor is a byte offset: where the oldest entry of the last page starts. Reading a
// page "before" it gives the entries that precede it; 0 means the first entry was reached.
// A cursor from outside (a page token) is checked: it must lie within the file and be 0 or
// follow a '\n', else InvalidArgument. The reader shows entries as they are stored; it checks
// neither hashes nor the chain (AuditLog::Verify does).
//
// Safe on a log that a live AuditLog is appending to: a last line without its '\n' (a write
// in progress) is not returned. A complete line that is not an entry, or a line longer than
// any entry, is DataLoss naming its byte offset — the log was changed, and Verify says more;
// such a line is never skipped, so a page never hides a damaged entry. Blocking file I/O:
// call it from a worker thread.
//
//   absl::StatusOr<AuditPage> page = ReadAuditNewest(path, /*before=*/std::nullopt, 100);
//   for (const ParsedAuditLine& line : page->entries) ...   // newest first
//   if (page->older > 0) next = ReadAuditNewest(path, page->older, 100);
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "component/ledger/audit_format.h"

namespace herald::ledger {

struct AuditPage {
  std::vector<ParsedAuditLine> entries;  // newest first
  // Where the oldest entry returned starts in the file: the `before` of the next (older)
  // page. 0 when the page reaches the first entry, or is empty: nothing older remains.
  uint64_t older = 0;
};

// Up to `limit` (at least 1) entries of the log at `path` that end at or before byte
// `before` (nullopt: the end of the file), newest first. NotFound when there is no file;
// InvalidArgument for a `before` past the end of the file, or one that is neither 0 nor just
// after a '\n'.
absl::StatusOr<AuditPage> ReadAuditNewest(const std::string& path, std::optional<uint64_t> before,
                                          size_t limit);

}  // namespace herald::ledger
