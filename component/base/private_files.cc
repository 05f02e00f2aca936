#include "component/base/private_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "component/base/absl_string_view.h"

namespace herald::base {

absl::Status ErrnoStatus(int error, std::string_view what, const std::string& path) {
  return absl::ErrnoToStatus(error, absl::StrCat(AbslView(what), " ", path));
}

std::string ParentFolder(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

absl::Status SyncFolder(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus(errno, "open folder", path);
  const int result = ::fsync(fd);
  const int error = errno;
  ::close(fd);
  if (result != 0) return ErrnoStatus(error, "fsync folder", path);
  return absl::OkStatus();
}

absl::Status CreatePrivateParentFolders(const std::string& path) {
  // The missing folders, deepest first.
  std::vector<std::string> missing;
  for (std::string folder = ParentFolder(path); folder != "." && folder != "/";
       folder = ParentFolder(folder)) {
    struct stat info;
    if (::stat(folder.c_str(), &info) == 0) {
      if (!S_ISDIR(info.st_mode)) {
        return absl::FailedPreconditionError(absl::StrCat(folder, " is not a folder"));
      }
      break;
    }
    if (errno != ENOENT) return ErrnoStatus(errno, "stat", folder);
    missing.push_back(folder);
  }
  for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
    if (::mkdir(it->c_str(), 0700) != 0 && errno != EEXIST) {
      return ErrnoStatus(errno, "create folder", *it);
    }
    if (absl::Status s = SyncFolder(ParentFolder(*it)); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> CreatePrivateFile(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  const bool created = fd >= 0;
  if (!created) {
    if (errno != EEXIST) return ErrnoStatus(errno, "create", path);
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return ErrnoStatus(errno, "open", path);
  }
  struct stat info;
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    ::close(fd);
    return absl::FailedPreconditionError(absl::StrCat(path, " is not a regular file"));
  }
  if ((info.st_mode & 0777) != 0600 && ::fchmod(fd, 0600) != 0) {
    const int error = errno;
    ::close(fd);
    return ErrnoStatus(error, "chmod", path);
  }
  if (created && ::fsync(fd) != 0) {
    const int error = errno;
    ::close(fd);
    return ErrnoStatus(error, "fsync", path);
  }
  ::close(fd);
  if (created) {
    if (absl::Status s = SyncFolder(ParentFolder(path)); !s.ok()) return s;
  }
  return created;
}

bool WriteAll(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t written = ::write(fd, bytes.data(), bytes.size());
    if (written < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    bytes.remove_prefix(static_cast<size_t>(written));
  }
  return true;
}

}  // namespace herald::base
