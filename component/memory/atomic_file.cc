#include "component/memory/atomic_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <optional>
#include <string>
#include <utility>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "component/base/absl_string_view.h"
#include "component/base/private_files.h"

namespace herald::memory {
namespace {

// Closes on every path out of a function.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }
  // close() can report a deferred write error; callers that wrote check it.
  int Close() {
    const int result = ::close(fd_);
    fd_ = -1;
    return result;
  }

 private:
  int fd_;
};

std::string Parent(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

bool PreadAll(int fd, char* data, size_t size, off_t offset) {
  while (size > 0) {
    const ssize_t got = ::pread(fd, data, size, offset);
    if (got < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    if (got == 0) {
      errno = EIO;  // the file shrank under us
      return false;
    }
    data += got;
    size -= static_cast<size_t>(got);
    offset += got;
  }
  return true;
}

std::atomic<uint64_t> temp_counter{0};

// A regular file opened for reading, and its size.
struct RegularFile {
  Fd fd;
  uint64_t size;
};

// Opens `path` for reading when it is a regular file; nullopt when it does not exist.
// O_NONBLOCK keeps a FIFO planted in the memory folder from blocking the worker in open(); the
// check that follows refuses it (reads of regular files ignore the flag).
absl::StatusOr<std::optional<RegularFile>> OpenRegularFile(const std::string& path) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  if (fd.get() < 0) {
    if (errno == ENOENT) return std::nullopt;
    return base::ErrnoStatus(errno, "open", path);
  }
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return base::ErrnoStatus(errno, "stat", path);
  if (!S_ISREG(st.st_mode)) return absl::FailedPreconditionError("not a regular file: " + path);
  return RegularFile{std::move(fd), static_cast<uint64_t>(st.st_size)};
}

// Adds the regular files under `folder` (named `relative` from where the listing began) to
// `files`, depth first (ListRegularFiles).
absl::Status ListUnder(const std::string& folder, const std::string& relative, int depth,
                       std::vector<std::string>& files) {
  if (depth > 8) return absl::OkStatus();
  DIR* dir = ::opendir(folder.c_str());
  if (dir == nullptr) {
    if (errno == ENOENT) return absl::OkStatus();
    return base::ErrnoStatus(errno, "list", folder);
  }
  absl::Cleanup close = [dir] { ::closedir(dir); };
  while (const dirent* entry = ::readdir(dir)) {
    const std::string_view name = entry->d_name;
    if (name.empty() || name[0] == '.') continue;
    const std::string path = absl::StrCat(folder, "/", AbslView(name));
    const std::string shown =
        relative.empty() ? std::string(name) : absl::StrCat(relative, "/", AbslView(name));
    struct stat info;
    if (::lstat(path.c_str(), &info) != 0) continue;  // gone since it was listed
    if (S_ISDIR(info.st_mode)) {
      if (absl::Status s = ListUnder(path, shown, depth + 1, files); !s.ok()) return s;
    } else if (S_ISREG(info.st_mode)) {
      files.push_back(shown);
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status SyncDirectory(const std::string& path) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (fd.get() < 0) return base::ErrnoStatus(errno, "open folder", path);
  if (::fsync(fd.get()) != 0) return base::ErrnoStatus(errno, "fsync folder", path);
  return absl::OkStatus();
}

absl::Status CreateDirectories(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return absl::OkStatus();
    return absl::FailedPreconditionError(absl::StrCat("not a folder: ", path));
  }
  if (errno != ENOENT) return base::ErrnoStatus(errno, "stat", path);
  const std::string parent = Parent(path);
  if (parent != path) {
    absl::Status status = CreateDirectories(parent);
    if (!status.ok()) return status;
  }
  if (::mkdir(path.c_str(), 0700) != 0) {
    if (errno == EEXIST && ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
      return absl::OkStatus();  // created by someone else meanwhile
    }
    return base::ErrnoStatus(errno, "create folder", path);
  }
  return SyncDirectory(parent);
}

absl::Status AppendDurably(const std::string& path, std::string_view bytes,
                           const TailRepairFn& repair, std::string* written) {
  bool created = false;
  int raw = ::open(path.c_str(), O_RDWR | O_APPEND | O_CLOEXEC);
  if (raw < 0 && errno == ENOENT) {
    absl::Status status = CreateDirectories(Parent(path));
    if (!status.ok()) return status;
    raw = ::open(path.c_str(), O_RDWR | O_APPEND | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    created = raw >= 0;
    if (raw < 0 && errno == EEXIST) raw = ::open(path.c_str(), O_RDWR | O_APPEND | O_CLOEXEC);
  }
  if (raw < 0) return base::ErrnoStatus(errno, "open", path);
  Fd fd(raw);

  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return base::ErrnoStatus(errno, "stat", path);
  char last[2];
  const size_t tail_size = st.st_size < 2 ? static_cast<size_t>(st.st_size) : 2;
  if (tail_size > 0 && !PreadAll(fd.get(), last, tail_size, st.st_size - tail_size)) {
    return base::ErrnoStatus(errno, "read", path);
  }
  std::string buffer = repair(std::string_view(last, tail_size));
  buffer.append(bytes.data(), bytes.size());

  if (!base::WriteAll(fd.get(), buffer)) {
    const int error = errno;
    // Leave no partial entry behind when the disk is full; if this fails too, the next
    // append repairs the tail.
    if (::ftruncate(fd.get(), st.st_size) == 0) ::fdatasync(fd.get());
    return base::ErrnoStatus(error, "write", path);
  }
  if (::fdatasync(fd.get()) != 0) return base::ErrnoStatus(errno, "fsync", path);
  if (fd.Close() != 0) return base::ErrnoStatus(errno, "close", path);
  if (created) {
    if (absl::Status status = SyncDirectory(Parent(path)); !status.ok()) return status;
  }
  if (written != nullptr) *written = std::move(buffer);
  return absl::OkStatus();
}

absl::Status WriteFileAtomically(const std::string& path, std::string_view contents) {
  const std::string parent = Parent(path);
  absl::Status status = CreateDirectories(parent);
  if (!status.ok()) return status;
  const std::string base = path.substr(path.find_last_of('/') + 1);
  std::string temp;
  int raw = -1;
  for (int attempt = 0; attempt < 16 && raw < 0; ++attempt) {
    // A leading dot: folder-name encoding never produces one, so a temporary file never
    // shadows a memory file.
    temp = absl::StrCat(parent, "/.", base, ".tmp-", ::getpid(), "-", temp_counter++);
    raw = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (raw < 0 && errno != EEXIST) break;
  }
  if (raw < 0) return base::ErrnoStatus(errno, "create", temp);
  Fd fd(raw);
  absl::Status result;
  if (!base::WriteAll(fd.get(), contents)) {
    result = base::ErrnoStatus(errno, "write", temp);
  } else if (::fsync(fd.get()) != 0) {
    result = base::ErrnoStatus(errno, "fsync", temp);
  } else if (fd.Close() != 0) {
    result = base::ErrnoStatus(errno, "close", temp);
  } else if (::rename(temp.c_str(), path.c_str()) != 0) {
    result = base::ErrnoStatus(errno, "rename to", path);
  } else {
    return SyncDirectory(parent);
  }
  ::unlink(temp.c_str());
  return result;
}

absl::StatusOr<std::optional<std::string>> ReadFileIfExists(const std::string& path,
                                                            uint64_t max_bytes) {
  absl::StatusOr<std::optional<RegularFile>> file = OpenRegularFile(path);
  if (!file.ok()) return file.status();
  if (!file->has_value()) return std::nullopt;
  if ((*file)->size > max_bytes) {
    return absl::ResourceExhaustedError(
        absl::StrCat("file larger than ", max_bytes, " bytes: ", path));
  }
  std::string contents(static_cast<size_t>((*file)->size), '\0');
  if (!PreadAll((*file)->fd.get(), contents.data(), contents.size(), 0)) {
    return base::ErrnoStatus(errno, "read", path);
  }
  return contents;
}

absl::StatusOr<std::optional<FileTail>> ReadFileTail(const std::string& path, uint64_t max_bytes) {
  absl::StatusOr<std::optional<RegularFile>> file = OpenRegularFile(path);
  if (!file.ok()) return file.status();
  if (!file->has_value()) return std::nullopt;
  const Fd& fd = (*file)->fd;
  const uint64_t size = (*file)->size;
  const uint64_t offset = size > max_bytes ? size - max_bytes : 0;
  FileTail tail;
  tail.whole_file = offset == 0;
  tail.bytes.resize(static_cast<size_t>(size - offset));
  if (!PreadAll(fd.get(), tail.bytes.data(), tail.bytes.size(), static_cast<off_t>(offset))) {
    return base::ErrnoStatus(errno, "read", path);
  }
  return tail;
}

absl::Status RenameNoReplace(const std::string& from, const std::string& to) {
  if (::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) == 0) {
    return absl::OkStatus();
  }
  if (errno != EINVAL && errno != ENOSYS) return base::ErrnoStatus(errno, "rename to", to);
  // The file system cannot refuse atomically; the caller serialises renames into `to`'s
  // folder, so checking first is enough there.
  struct stat st;
  if (::lstat(to.c_str(), &st) == 0) return base::ErrnoStatus(EEXIST, "rename to", to);
  if (::rename(from.c_str(), to.c_str()) != 0) return base::ErrnoStatus(errno, "rename to", to);
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::string>> ListRegularFiles(const std::string& folder) {
  std::vector<std::string> files;
  if (absl::Status s = ListUnder(folder, "", 0, files); !s.ok()) return s;
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace herald::memory
