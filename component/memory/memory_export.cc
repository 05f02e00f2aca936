// component/memory/memory_export.cc
//
// MemoryStore::ListFiles and ReadFilePart (memory_store.h): a conversation's files as Herald
// keeps them, for `heraldctl memory export` (SessionService.ExportMemory).
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "component/base/absl_string_view.h"
#include "component/base/private_files.h"
#include "component/memory/memory_store.h"

namespace herald::memory {
namespace {

// Adds the regular files under `folder` (named `relative` from the conversation's folder) to
// `files`, depth first. Hidden names and symbolic links are left out, as searches leave them.
absl::Status ListUnder(const std::string& folder, const std::string& relative, int depth,
                       std::vector<std::string>& files) {
  if (depth > 8) return absl::OkStatus();  // Herald makes at most threads/X/sessions/
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

absl::StatusOr<std::vector<std::string>> MemoryStore::ListFiles(const ConversationRef& ref) const {
  if (absl::Status s = base::CheckConversationRef(ref); !s.ok()) return s;
  const ConversationRef whole{.kind = ref.kind, .address = ref.address};
  std::vector<std::string> files;
  if (absl::Status s = ListUnder(FolderFor(whole), "", 0, files); !s.ok()) return s;
  std::sort(files.begin(), files.end());
  return files;
}

absl::StatusOr<MemoryFilePart> MemoryStore::ReadFilePart(const ConversationRef& ref,
                                                         std::string_view file, uint64_t offset,
                                                         size_t max_bytes) const {
  absl::StatusOr<std::vector<std::string>> files = ListFiles(ref);
  if (!files.ok()) return files.status();
  // Only a name ListFiles gives: nothing outside the folder, no link, no hidden file.
  if (!std::binary_search(files->begin(), files->end(), file)) {
    return absl::NotFoundError(
        absl::StrCat("no file ", AbslView(file), " is kept for ", base::ConversationName(ref)));
  }
  const ConversationRef whole{.kind = ref.kind, .address = ref.address};
  const std::string path = absl::StrCat(FolderFor(whole), "/", AbslView(file));
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return base::ErrnoStatus(errno, "open", path);
  absl::Cleanup close = [fd] { ::close(fd); };
  struct stat info;
  if (::fstat(fd, &info) != 0) return base::ErrnoStatus(errno, "stat", path);
  MemoryFilePart part{.size = static_cast<uint64_t>(info.st_size)};
  if (offset >= part.size) return part;
  part.content.resize(std::min<uint64_t>(max_bytes, part.size - offset));
  size_t done = 0;
  while (done < part.content.size()) {
    const ssize_t n = ::pread(fd, part.content.data() + done, part.content.size() - done,
                              static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return base::ErrnoStatus(errno, "read", path);
    if (n == 0) break;  // cut short since the stat
    done += static_cast<size_t>(n);
  }
  part.content.resize(done);
  return part;
}

}  // namespace herald::memory
