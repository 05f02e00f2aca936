#include "component/memory/folder_watcher.h"

#include <sys/inotify.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <utility>

#include "absl/strings/str_cat.h"
#include "glog/logging.h"

namespace herald::memory {
namespace {

namespace fs = std::filesystem;

constexpr uint32_t kFolderEvents = IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE |
                                   IN_CREATE | IN_DELETE_SELF | IN_ONLYDIR | IN_DONT_FOLLOW;

bool Hidden(std::string_view name) { return !name.empty() && name[0] == '.'; }

}  // namespace

absl::StatusOr<std::unique_ptr<FolderWatcher>> FolderWatcher::Start(
    asio::io_context& io, const std::vector<std::string>& folders, Changed changed,
    absl::Duration quiet) {
  const int descriptor = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (descriptor < 0) {
    return absl::InternalError(absl::StrCat("inotify: ", std::strerror(errno)));
  }
  std::unique_ptr<FolderWatcher> watcher(
      new FolderWatcher(io, descriptor, std::move(changed), quiet));
  for (const std::string& folder : folders) watcher->WatchTree(folder);
  watcher->Read();
  return watcher;
}

FolderWatcher::FolderWatcher(asio::io_context& io, int descriptor, Changed changed,
                             absl::Duration quiet)
    : descriptor_(io, descriptor), timer_(io), changed_(std::move(changed)), quiet_(quiet) {}

FolderWatcher::~FolderWatcher() {
  *alive_ = false;
  std::error_code ignored;
  timer_.cancel();
  descriptor_.close(ignored);
}

void FolderWatcher::WatchTree(const std::string& folder) {
  std::error_code error;
  if (!fs::is_directory(fs::symlink_status(folder, error))) return;
  const int watch = ::inotify_add_watch(descriptor_.native_handle(), folder.c_str(), kFolderEvents);
  if (watch < 0) {
    if (!warned_) {
      warned_ = true;
      LOG(WARNING) << "memory: cannot watch " << folder << " for edits (" << std::strerror(errno)
                   << "); edits there are found when a search reads the file";
    }
    return;
  }
  if (!folders_.emplace(watch, folder).second) return;  // already watched
  for (fs::directory_iterator it(folder, fs::directory_options::skip_permission_denied, error);
       !error && it != fs::directory_iterator(); it.increment(error)) {
    const std::string name = it->path().filename().string();
    if (Hidden(name)) continue;
    if (it->is_directory(error) && !it->is_symlink(error)) WatchTree(it->path().string());
  }
}

void FolderWatcher::Read() {
  descriptor_.async_read_some(asio::buffer(buffer_), [this, alive = alive_](std::error_code error,
                                                                            size_t bytes) {
    if (!*alive || error == asio::error::operation_aborted) return;
    if (error && error != asio::error::would_block && error != asio::error::try_again) {
      LOG(WARNING) << "memory: the folder watcher stopped: " << error.message();
      return;
    }
    for (size_t offset = 0; offset + sizeof(inotify_event) <= bytes;) {
      const auto* event = reinterpret_cast<const inotify_event*>(buffer_ + offset);
      offset += sizeof(inotify_event) + event->len;
      if (event->mask & IN_Q_OVERFLOW) {
        LOG(WARNING) << "memory: the folder watcher missed events (queue overflow)";
        continue;
      }
      if (event->mask & IN_IGNORED) {
        folders_.erase(event->wd);
        continue;
      }
      auto it = folders_.find(event->wd);
      if (it == folders_.end() || event->len == 0) continue;
      const std::string name(event->name);
      if (Hidden(name)) continue;
      std::string path = absl::StrCat(it->second, "/", name);
      if (event->mask & IN_ISDIR) {
        // A new folder (a new user, sessions/, a folder moved in) may already hold files.
        if (event->mask & (IN_CREATE | IN_MOVED_TO)) {
          WatchTree(path);
          std::error_code ignored;
          for (fs::recursive_directory_iterator file(path, ignored);
               !ignored && file != fs::recursive_directory_iterator(); file.increment(ignored)) {
            if (file->is_regular_file(ignored)) Noticed(file->path().string());
          }
        }
        continue;
      }
      if (event->mask & IN_CREATE) continue;  // reported when closed after writing
      Noticed(std::move(path));
    }
    Read();
  });
}

void FolderWatcher::Noticed(std::string path) {
  pending_.insert(std::move(path));
  if (timer_armed_) return;
  timer_armed_ = true;
  timer_.expires_after(absl::ToChronoNanoseconds(quiet_));
  timer_.async_wait([this, alive = alive_](std::error_code error) {
    if (!*alive || error) return;
    timer_armed_ = false;
    std::vector<std::string> paths(pending_.begin(), pending_.end());
    pending_.clear();
    std::sort(paths.begin(), paths.end());
    changed_(std::move(paths));
  });
}

}  // namespace herald::memory
