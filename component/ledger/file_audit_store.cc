#include "component/ledger/file_audit_store.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "component/base/absl_string_view.h"
#include "component/base/private_files.h"
#include "glog/logging.h"

namespace herald::ledger {

namespace {

constexpr size_t kReadChunk = 64 * 1024;
constexpr size_t kMaxHeadBytes = 4096;

std::string HeadPath(const std::string& path) { return path + ".head"; }

// Reads [offset, offset + size) or up to the end of the file.
absl::StatusOr<std::string> ReadRange(int fd, uint64_t offset, uint64_t size,
                                      const std::string& path) {
  std::string bytes(size, '\0');
  size_t done = 0;
  while (done < size) {
    const ssize_t got = ::pread(fd, bytes.data() + done, size - done, offset + done);
    if (got < 0) {
      if (errno == EINTR) continue;
      return base::ErrnoStatus(errno, "read", path);
    }
    if (got == 0) break;
    done += static_cast<size_t>(got);
  }
  bytes.resize(done);
  return bytes;
}

// The whole of a small file (at most max_bytes + 1 bytes are read); nullopt when missing.
absl::StatusOr<std::optional<std::string>> ReadSmallFile(const std::string& path,
                                                         size_t max_bytes) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return std::nullopt;
    return base::ErrnoStatus(errno, "open", path);
  }
  absl::StatusOr<std::string> bytes = ReadRange(fd, 0, max_bytes + 1, path);
  ::close(fd);
  if (!bytes.ok()) return bytes.status();
  return std::optional<std::string>(*std::move(bytes));
}

// Replaces the head so that a crash leaves the old or the new one: temporary file, fdatasync,
// rename. The folder is fsynced only when the head is new (`sync_folder`): if a crash forgets
// a later rename, the older head survives and the entries after it are recovered at Open.
absl::Status WriteHeadFile(const std::string& head_path, int folder_fd, const AuditHead& head,
                           bool sync_folder) {
  const std::string temporary = head_path + ".tmp";
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return base::ErrnoStatus(errno, "create", temporary);
  if (!base::WriteAll(fd, EncodeAuditHead(head)) || ::fdatasync(fd) != 0) {
    const int error = errno;
    ::close(fd);
    return base::ErrnoStatus(error, "write", temporary);
  }
  if (::close(fd) != 0) return base::ErrnoStatus(errno, "close", temporary);
  if (::rename(temporary.c_str(), head_path.c_str()) != 0) {
    return base::ErrnoStatus(errno, "rename to", head_path);
  }
  if (sync_folder && ::fsync(folder_fd) != 0) {
    return base::ErrnoStatus(errno, "fsync the folder of", head_path);
  }
  return absl::OkStatus();
}

// Hands out a file's lines one at a time, reading it in large chunks.
class LineScanner {
 public:
  LineScanner(int fd, const std::string& path) : fd_(fd), path_(path) {}

  struct Line {
    std::string_view bytes;  // without the '\n'; valid until the next call
    uint64_t offset = 0;     // of its first byte in the file
    bool complete = false;   // ended with '\n' (an over-long line comes back incomplete)
  };
  // nullopt at the end of the file.
  absl::StatusOr<std::optional<Line>> Next() {
    for (;;) {
      const size_t newline = buffer_.find('\n', start_);
      if (newline != std::string::npos) {
        Line line{.bytes = std::string_view(buffer_).substr(start_, newline - start_),
                  .offset = buffer_offset_ + start_,
                  .complete = true};
        start_ = newline + 1;
        return line;
      }
      if (eof_ || buffer_.size() - start_ > kMaxAuditLineBytes) {
        if (start_ == buffer_.size()) return std::nullopt;
        Line line{.bytes = std::string_view(buffer_).substr(start_),
                  .offset = buffer_offset_ + start_,
                  .complete = false};
        start_ = buffer_.size();
        eof_ = true;  // nothing after a line that cannot be an entry is read
        return line;
      }
      buffer_.erase(0, start_);
      buffer_offset_ += start_;
      start_ = 0;
      const size_t old_size = buffer_.size();
      buffer_.resize(old_size + kReadChunk);
      ssize_t got;
      do {
        got = ::read(fd_, buffer_.data() + old_size, kReadChunk);
      } while (got < 0 && errno == EINTR);
      if (got < 0) return base::ErrnoStatus(errno, "read", path_);
      buffer_.resize(old_size + static_cast<size_t>(got));
      if (got == 0) eof_ = true;
    }
  }

 private:
  const int fd_;
  const std::string& path_;
  std::string buffer_;
  size_t start_ = 0;
  uint64_t buffer_offset_ = 0;
  bool eof_ = false;
};

// Verify's work. With `log_may_grow` (the process's own log, just flushed) the log is checked up
// to the entry the head records and what a writer appends after it is left alone.
absl::StatusOr<AuditVerifyReport> VerifyFiles(const std::string& path, bool log_may_grow) {
  // The head first: the writer replaces it only once the log holds what it records.
  const std::string head_path = HeadPath(path);
  absl::StatusOr<std::optional<std::string>> head_text = ReadSmallFile(head_path, kMaxHeadBytes);
  if (!head_text.ok()) return head_text.status();
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0 && errno != ENOENT) return base::ErrnoStatus(errno, "open", path);
  if (fd < 0 && !head_text->has_value()) {
    return absl::NotFoundError(absl::StrCat("no audit log at ", path));
  }

  AuditVerifyReport report;
  const auto fail = [&report](uint64_t position, std::string problem) {
    report.ok = false;
    report.first_bad_entry = position;
    report.problem = std::move(problem);
    return report;
  };
  std::optional<AuditHead> head;
  std::string head_problem;
  if (head_text->has_value()) {
    absl::StatusOr<AuditHead> parsed = ParseAuditHead(**head_text);
    if (parsed.ok()) {
      head = *std::move(parsed);
    } else {
      head_problem = std::string(parsed.status().message());
    }
  }

  if (log_may_grow && !head) {
    if (fd >= 0) ::close(fd);
    return fail(0, absl::StrCat("the head file ", head_path, " is missing or was changed"));
  }

  std::string last_hash(kGenesisHash);
  std::string hash_at_head(kGenesisHash);
  uint64_t end_of_head_entry = 0;
  if (fd >= 0 && !(log_may_grow && head->entries == 0)) {
    LineScanner scanner(fd, path);
    uint64_t position = 0;
    for (;;) {
      absl::StatusOr<std::optional<LineScanner::Line>> line = scanner.Next();
      if (!line.ok()) {
        ::close(fd);
        return line.status();
      }
      if (!line->has_value()) break;
      const LineScanner::Line& current = **line;
      ++position;
      if (!current.complete) {
        ::close(fd);
        return fail(position,
                    absl::StrCat("entry ", position, " (byte ", current.offset,
                                 ") is incomplete: the log ends inside a line, or has a line "
                                 "longer than any entry (a write cut short, or bytes added)"));
      }
      absl::StatusOr<ParsedAuditLine> parsed = ParseAuditLine(current.bytes);
      if (!parsed.ok()) {
        ::close(fd);
        return fail(position, absl::StrCat("entry ", position, " (byte ", current.offset, ") is ",
                                           parsed.status().message(), " (it was changed)"));
      }
      if (std::string problem = AuditChainProblem(*parsed, position, last_hash); !problem.empty()) {
        ::close(fd);
        return fail(position, std::move(problem));
      }
      last_hash = std::move(parsed->hash);
      report.entries = position;
      if (head && position == head->entries) {
        hash_at_head = last_hash;
        end_of_head_entry = current.offset + current.bytes.size() + 1;
        if (log_may_grow) break;
      }
    }
  }
  if (fd >= 0) ::close(fd);

  if (!head_text->has_value()) {
    return fail(0, absl::StrCat("the head file ", head_path,
                                " is missing (it records how many entries the log has)"));
  }
  if (!head) {
    return fail(0, absl::StrCat("the head file ", head_path, " was changed: ", head_problem));
  }
  if (head->entries > report.entries) {
    return fail(report.entries + 1,
                absl::StrCat("the log has ", report.entries, " entries but its head records ",
                             head->entries, ": entries ", report.entries + 1, " to ", head->entries,
                             " were cut off"));
  }
  if (hash_at_head != head->last_hash) {
    return fail(0, absl::StrCat("the head file ", head_path, " does not match entry ",
                                head->entries, "'s hash (the head was changed)"));
  }
  if (end_of_head_entry != head->bytes) {
    return fail(0, absl::StrCat("the head file ", head_path, " records the log's size after entry ",
                                head->entries, " as ", head->bytes, " bytes, but it is ",
                                end_of_head_entry, " (the head was changed)"));
  }
  report.entries_after_head = report.entries - head->entries;
  if (report.entries_after_head > 0) {
    return fail(head->entries + 1,
                absl::StrCat("entries ", head->entries + 1, " to ", report.entries,
                             " are valid but not recorded in the head file: written just before "
                             "a crash (Herald records them at its next start), or the head was "
                             "moved back"));
  }
  return report;
}

}  // namespace

absl::StatusOr<AuditVerifyReport> FileAuditStore::VerifyFile(const std::string& path) {
  return VerifyFiles(path, /*log_may_grow=*/false);
}

absl::StatusOr<std::unique_ptr<FileAuditStore>> FileAuditStore::Open(const std::string& path,
                                                                     std::string* recovered_note) {
  if (path.empty()) return absl::InvalidArgumentError("audit log path is empty");
  const std::string head_path = HeadPath(path);
  const auto damaged = [&path](std::string_view what) {
    return absl::DataLossError(absl::StrCat(
        "audit log ", path, ": ", AbslView(what),
        ". Not continuing a log that may have been tampered with: run `heraldctl audit verify` "
        "(or AuditLog::Verify) to see where, then move ",
        path, " and its .head aside to start a new log"));
  };
  if (absl::Status s = base::CreatePrivateParentFolders(path); !s.ok()) return s;
  const int folder_fd =
      ::open(base::ParentFolder(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (folder_fd < 0) return base::ErrnoStatus(errno, "open the folder of", path);
  int log_fd = -1;
  auto close_fds = [&] {
    if (log_fd >= 0) ::close(log_fd);
    ::close(folder_fd);
  };

  absl::StatusOr<std::optional<std::string>> head_text = ReadSmallFile(head_path, kMaxHeadBytes);
  if (!head_text.ok()) {
    close_fds();
    return head_text.status();
  }
  struct stat info;
  const bool log_exists = ::stat(path.c_str(), &info) == 0;
  AuditHead head;
  if (head_text->has_value()) {
    absl::StatusOr<AuditHead> parsed = ParseAuditHead(**head_text);
    if (!parsed.ok()) {
      close_fds();
      return damaged(absl::StrCat("its head file is not valid: ", parsed.status().message()));
    }
    head = *std::move(parsed);
    if (!log_exists && head.entries > 0) {
      close_fds();
      return damaged("the log is missing but its head records entries");
    }
  } else {
    if (log_exists && info.st_size > 0) {
      close_fds();
      return damaged("its head file is missing");
    }
    // A new log: the head comes first, so that a log never exists without one.
    if (absl::Status s = WriteHeadFile(head_path, folder_fd, head, /*sync_folder=*/true); !s.ok()) {
      close_fds();
      return s;
    }
  }

  if (absl::StatusOr<bool> created = base::CreatePrivateFile(path); !created.ok()) {
    close_fds();
    return created.status();
  }
  log_fd = ::open(path.c_str(), O_RDWR | O_APPEND | O_CLOEXEC);
  if (log_fd < 0) {
    const absl::Status status = base::ErrnoStatus(errno, "open", path);
    close_fds();
    return status;
  }
  if (::flock(log_fd, LOCK_EX | LOCK_NB) != 0) {
    const absl::Status status = errno == EWOULDBLOCK
                                    ? absl::FailedPreconditionError(absl::StrCat(
                                          "audit log ", path, " is in use by another process"))
                                    : base::ErrnoStatus(errno, "lock", path);
    close_fds();
    return status;
  }
  if (::fstat(log_fd, &info) != 0) {
    const absl::Status status = base::ErrnoStatus(errno, "stat", path);
    close_fds();
    return status;
  }
  const uint64_t size = static_cast<uint64_t>(info.st_size);
  if (size < head.bytes) {
    close_fds();
    return damaged(absl::StrCat("it is ", size, " bytes long but its head records ", head.bytes,
                                ": entries were cut off"));
  }

  // Read from the start of the entry the head names to the end of the file.
  const uint64_t from =
      head.entries == 0 ? 0 : head.bytes - std::min<uint64_t>(head.bytes, kMaxAuditLineBytes + 1);
  absl::StatusOr<std::string> tail = ReadRange(log_fd, from, size - from, path);
  if (!tail.ok()) {
    close_fds();
    return tail.status();
  }
  if (tail->size() != size - from) {
    close_fds();
    return absl::InternalError(absl::StrCat("audit log ", path, " changed size while opening"));
  }
  ChainState state{.entries = head.entries, .bytes = head.bytes, .last_hash = head.last_hash};
  if (head.entries == 0) {
    if (head.bytes != 0 || head.last_hash != kGenesisHash) {
      close_fds();
      return damaged("its head file does not describe an empty log");
    }
  } else {
    const std::string_view anchored = std::string_view(*tail).substr(0, head.bytes - from);
    const size_t newline =
        anchored.size() >= 2 ? anchored.rfind('\n', anchored.size() - 2) : std::string::npos;
    if (anchored.empty() || anchored.back() != '\n' || (newline == std::string::npos && from > 0)) {
      close_fds();
      return damaged("the head does not point at the end of an entry");
    }
    const size_t line_start = newline == std::string::npos ? 0 : newline + 1;
    absl::StatusOr<ParsedAuditLine> last =
        ParseAuditLine(anchored.substr(line_start, anchored.size() - 1 - line_start));
    if (!last.ok() || last->seq != head.entries || last->hash != head.last_hash ||
        last->actual_hash != last->hash) {
      close_fds();
      return damaged(absl::StrCat("its last entry does not match its head (entry ", head.entries,
                                  " or the head was changed)"));
    }
  }

  // Entries after the head: a batch written just before the process stopped. Take those that
  // continue the chain; mend only a last line a crash cut short.
  std::string_view after = std::string_view(*tail).substr(head.bytes - from);
  std::optional<std::string> recovered;
  while (!after.empty()) {
    const size_t newline = after.find('\n');
    if (newline == std::string_view::npos) {
      LOG(WARNING) << "audit log " << path << ": removing " << after.size()
                   << " bytes at its end, an entry a crash cut short";
      if (::ftruncate(log_fd, static_cast<off_t>(state.bytes)) != 0 || ::fdatasync(log_fd) != 0) {
        const absl::Status status = base::ErrnoStatus(errno, "truncate", path);
        close_fds();
        return status;
      }
      recovered = absl::StrCat("removed ", after.size(), " bytes after entry ", state.entries,
                               ": an entry a crash cut short");
      break;
    }
    absl::StatusOr<ParsedAuditLine> line = ParseAuditLine(after.substr(0, newline));
    if (!line.ok() || !AuditChainProblem(*line, state.entries + 1, state.last_hash).empty()) {
      close_fds();
      return damaged(absl::StrCat("entry ", state.entries + 1,
                                  ", after those its head records, is not a valid continuation"));
    }
    ++state.entries;
    state.bytes += newline + 1;
    state.last_hash = line->hash;
    after.remove_prefix(newline + 1);
  }
  if (state.entries != head.entries) {
    LOG(WARNING) << "audit log " << path << ": entries " << head.entries + 1 << " to "
                 << state.entries << " were not recorded in its head; recording them";
    recovered = absl::StrCat(recovered ? *recovered + "; " : "", "recorded entries ",
                             head.entries + 1, " to ", state.entries,
                             " in the head: they were written just before the last stop");
  }
  if (recovered) {
    const AuditHead anchored{
        .entries = state.entries, .bytes = state.bytes, .last_hash = state.last_hash};
    if (absl::Status s = WriteHeadFile(head_path, folder_fd, anchored, /*sync_folder=*/false);
        !s.ok()) {
      close_fds();
      return s;
    }
  }

  if (recovered && recovered_note != nullptr) *recovered_note = *recovered;
  return std::unique_ptr<FileAuditStore>(
      new FileAuditStore(path, log_fd, folder_fd, std::move(state)));
}

FileAuditStore::FileAuditStore(std::string path, int log_fd, int folder_fd, ChainState state)
    : path_(std::move(path)),
      head_path_(HeadPath(path_)),
      log_fd_(log_fd),
      folder_fd_(folder_fd),
      chain_(std::move(state)) {}

FileAuditStore::~FileAuditStore() {
  ::close(log_fd_);
  ::close(folder_fd_);
}

absl::StatusOr<AuditVerifyReport> FileAuditStore::Verify() {
  return VerifyFiles(path_, /*log_may_grow=*/true);
}

absl::StatusOr<AuditPage> FileAuditStore::ReadNewest(std::optional<uint64_t> before, size_t limit) {
  return ReadAuditNewest(path_, before, limit);
}

absl::Status FileAuditStore::Write(const std::vector<AuditEntry>& batch, absl::Time now) {
  ChainState next = chain_;
  std::string text;
  for (const AuditEntry& entry : batch) {
    std::string hash;
    text +=
        EncodeAuditLine(next.entries + 1, CanonicalAuditEntry(entry, now), next.last_hash, &hash);
    ++next.entries;
    next.last_hash = std::move(hash);
  }
  next.bytes += text.size();
  if (!base::WriteAll(log_fd_, text) || ::fdatasync(log_fd_) != 0) {
    const absl::Status status = base::ErrnoStatus(errno, "write", path_);
    // Leave no partial batch behind: the entries are written again, whole, later.
    if (::ftruncate(log_fd_, static_cast<off_t>(chain_.bytes)) != 0) {
      LOG(ERROR) << "audit log " << path_ << ": cannot truncate a failed write: "
                 << base::ErrnoStatus(errno, "truncate", path_);
    }
    return status;
  }
  chain_ = std::move(next);
  // The entries are durable now. When the head cannot be replaced they stay valid (Verify
  // counts them in entries_after_head) and the next batch writes the head again.
  const AuditHead head{
      .entries = chain_.entries, .bytes = chain_.bytes, .last_hash = chain_.last_hash};
  if (absl::Status s = WriteHeadFile(head_path_, folder_fd_, head, /*sync_folder=*/false);
      !s.ok()) {
    LOG(ERROR) << "audit log " << path_ << ": cannot replace its head: " << s;
  }
  return absl::OkStatus();
}

}  // namespace herald::ledger
