#include "component/ledger/audit_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"
#include "component/base/private_files.h"

namespace herald::ledger {
namespace {

constexpr size_t kReadBlock = 64 * 1024;

// The bytes [start, end) of a file, grown backwards a block at a time and cut from the end.
class BackwardWindow {
 public:
  BackwardWindow(int fd, const std::string& path, uint64_t end)
      : fd_(fd), path_(path), start_(end) {}

  uint64_t start() const { return start_; }
  uint64_t end() const { return start_ + bytes_.size(); }
  const std::string& bytes() const { return bytes_; }

  // Prepends the block before start(); false at the start of the file.
  absl::StatusOr<bool> Grow() {
    if (start_ == 0) return false;
    const size_t size = static_cast<size_t>(std::min<uint64_t>(start_, kReadBlock));
    const uint64_t from = start_ - size;
    std::string block(size, '\0');
    size_t done = 0;
    while (done < size) {
      const ssize_t got =
          ::pread(fd_, block.data() + done, size - done, static_cast<off_t>(from + done));
      if (got < 0) {
        if (errno == EINTR) continue;
        return base::ErrnoStatus(errno, "read", path_);
      }
      if (got == 0) {
        return absl::AbortedError(
            absl::StrCat("audit log ", path_, " became shorter while it was read; try again"));
      }
      done += static_cast<size_t>(got);
    }
    bytes_.insert(0, block);
    start_ = from;
    return true;
  }

  // Drops the bytes from file offset `offset` (within the window) on.
  void CutAt(uint64_t offset) { bytes_.resize(static_cast<size_t>(offset - start_)); }

 private:
  const int fd_;
  const std::string& path_;
  uint64_t start_;
  std::string bytes_;
};

absl::StatusOr<AuditPage> ReadPage(int fd, const std::string& path, std::optional<uint64_t> before,
                                   size_t limit) {
  struct stat info;
  if (::fstat(fd, &info) != 0) return base::ErrnoStatus(errno, "stat", path);
  const uint64_t size = static_cast<uint64_t>(info.st_size);
  if (before.has_value() && *before > size) {
    return absl::InvalidArgumentError(absl::StrCat(
        "byte offset ", *before, " is past the end of the audit log (", size, " bytes)"));
  }
  BackwardWindow window(fd, path, before.value_or(size));

  // Make the window end with a complete line (or be empty at offset 0).
  if (before.has_value()) {
    if (*before > 0) {
      if (absl::StatusOr<bool> grown = window.Grow(); !grown.ok()) return grown.status();
      if (window.bytes().back() != '\n') {
        return absl::InvalidArgumentError(
            absl::StrCat("byte offset ", *before, " is not the start of an audit log entry"));
      }
    }
  } else {
    // From the end: leave out a last line without its '\n', a write in progress.
    for (;;) {
      const size_t newline = window.bytes().rfind('\n');
      const size_t in_progress = newline == std::string::npos ? window.bytes().size()
                                                              : window.bytes().size() - newline - 1;
      if (in_progress > kMaxAuditLineBytes) {
        return absl::DataLossError(absl::StrCat("audit log ", path, ": its last ", in_progress,
                                                " bytes hold no line end: longer than any entry "
                                                "(the log was changed; verify it)"));
      }
      if (newline != std::string::npos) {
        window.CutAt(window.start() + newline + 1);
        break;
      }
      absl::StatusOr<bool> grown = window.Grow();
      if (!grown.ok()) return grown.status();
      if (!*grown) {
        window.CutAt(0);  // nothing but a line in progress
        break;
      }
    }
  }

  AuditPage page;
  while (page.entries.size() < limit && window.end() > 0) {
    const std::string& bytes = window.bytes();  // ends with the '\n' of the line to take
    const size_t line_end = bytes.size() - 1;
    const size_t newline = line_end == 0 ? std::string::npos : bytes.rfind('\n', line_end - 1);
    if (newline == std::string::npos && window.start() > 0) {
      // The line starts before the window.
      if (line_end > kMaxAuditLineBytes) {
        return absl::DataLossError(absl::StrCat("audit log ", path, ": the line that ends at byte ",
                                                window.end(),
                                                " is longer than any entry (the log was changed; "
                                                "verify it)"));
      }
      if (absl::StatusOr<bool> grown = window.Grow(); !grown.ok()) return grown.status();
      continue;
    }
    const size_t line_start = newline == std::string::npos ? 0 : newline + 1;
    const uint64_t offset = window.start() + line_start;
    absl::StatusOr<ParsedAuditLine> parsed =
        ParseAuditLine(std::string_view(bytes).substr(line_start, line_end - line_start));
    if (!parsed.ok()) {
      return absl::DataLossError(absl::StrCat("audit log ", path, ": the line at byte ", offset,
                                              " is ", parsed.status().message(),
                                              " (the log was changed; verify it)"));
    }
    page.entries.push_back(*std::move(parsed));
    window.CutAt(offset);
  }
  page.older = window.end();
  return page;
}

}  // namespace

absl::StatusOr<AuditPage> ReadAuditNewest(const std::string& path, std::optional<uint64_t> before,
                                          size_t limit) {
  if (limit == 0) return absl::InvalidArgumentError("limit must be at least 1");
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return absl::NotFoundError(absl::StrCat("no audit log at ", path));
    return base::ErrnoStatus(errno, "open", path);
  }
  absl::StatusOr<AuditPage> page = ReadPage(fd, path, before, limit);
  ::close(fd);
  return page;
}

}  // namespace herald::ledger
