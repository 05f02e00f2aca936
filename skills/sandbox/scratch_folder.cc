#include "skills/sandbox/scratch_folder.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <system_error>
#include <vector>

#include "absl/strings/str_cat.h"

namespace herald::skills::sandbox {

absl::StatusOr<std::string> CreateScratchFolder(const std::string& root,
                                                std::optional<std::pair<uid_t, gid_t>> owner) {
  std::string path = absl::StrCat(root, "/herald-skill-XXXXXX");
  std::vector<char> buffer(path.begin(), path.end());
  buffer.push_back('\0');
  if (::mkdtemp(buffer.data()) == nullptr) {
    return absl::ErrnoToStatus(errno, absl::StrCat("creating a scratch folder under ", root));
  }
  path.assign(buffer.data());
  if (owner.has_value() && ::chown(path.c_str(), owner->first, owner->second) != 0) {
    const int error = errno;
    ::rmdir(path.c_str());
    return absl::ErrnoToStatus(error, absl::StrCat("chown of the scratch folder ", path));
  }
  return path;
}

absl::Status RemoveScratchFolder(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code error;
  fs::remove_all(path, error);
  if (!error) return absl::OkStatus();
  // A folder the run made unreadable or unwritable (chmod 000): give the owner its rights
  // back, then try once more. Symbolic links are not followed.
  fs::permissions(path, fs::perms::owner_all, fs::perm_options::add, error);
  for (fs::recursive_directory_iterator
           it(path, fs::directory_options::skip_permission_denied, error),
       end;
       !error && it != end; it.increment(error)) {
    if (it->is_directory(error) && !it->is_symlink(error)) {
      fs::permissions(it->path(), fs::perms::owner_all, fs::perm_options::add, error);
      error.clear();
    }
  }
  error.clear();
  fs::remove_all(path, error);
  if (error) {
    return absl::InternalError(
        absl::StrCat("removing the scratch folder ", path, ": ", error.message()));
  }
  return absl::OkStatus();
}

}  // namespace herald::skills::sandbox
