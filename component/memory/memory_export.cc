// component/memory/memory_export.cc
//
// MemoryStore::ListFiles and ReadFilePart (memory_store.h): a conversation's files as Herald
// keeps them, for `heraldctl memory export` (SessionService.ExportMemory).
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
#include "component/memory/atomic_file.h"
#include "component/memory/memory_store.h"

namespace herald::memory {

absl::StatusOr<std::vector<std::string>> MemoryStore::ListFiles(const ConversationRef& ref) const {
  if (absl::Status s = base::CheckConversationRef(ref); !s.ok()) return s;
  const ConversationRef whole{.kind = ref.kind, .address = ref.address};
  Refresh(whole);
  return ListRegularFiles(FolderFor(whole));
}

absl::StatusOr<MemoryFilePart> MemoryStore::ReadFilePart(const ConversationRef& ref,
                                                         std::string_view file, uint64_t offset,
                                                         size_t max_bytes) const {
  if (absl::Status s = base::CheckConversationRef(ref); !s.ok()) return s;
  const absl::Status not_kept = absl::NotFoundError(
      absl::StrCat("no file ", AbslView(file), " is kept for ", base::ConversationName(ref)));
  // Only a name ListFiles could give: nothing outside the folder, no hidden name, and no
  // symbolic link on the way (each folder on the path is checked, then the file is opened
  // without following one).
  const ConversationRef whole{.kind = ref.kind, .address = ref.address};
  Refresh(whole);
  std::string path = FolderFor(whole);
  const std::vector<absl::string_view> parts = absl::StrSplit(AbslView(file), '/');
  for (absl::string_view part : parts) {
    if (part.empty() || part[0] == '.') return not_kept;
  }
  for (absl::string_view part : parts) {
    struct stat info;
    if (::lstat(path.c_str(), &info) != 0 || !S_ISDIR(info.st_mode)) return not_kept;
    absl::StrAppend(&path, "/", part);
  }
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0 && (errno == ENOENT || errno == ELOOP || errno == ENOTDIR)) return not_kept;
  if (fd < 0) return base::ErrnoStatus(errno, "open", path);
  absl::Cleanup close = [fd] { ::close(fd); };
  struct stat info;
  if (::fstat(fd, &info) != 0) return base::ErrnoStatus(errno, "stat", path);
  if (!S_ISREG(info.st_mode)) return not_kept;
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
