// component/memory/folder_watcher.h
//
// FolderWatcher notices files changed under some folders, so that memory search re-indexes
// what a person edited by hand (M3) without being asked. It uses inotify on the I/O loop
// (one descriptor, read without blocking): a file closed after writing, moved in or out, or
// deleted anywhere under the folders is reported — subfolders created later included — once
// per quiet period, however many events it caused, with its absolute path. Hidden names
// (temporary files, folders being forgotten) are not reported.
//
// When the kernel refuses another watch (fs.inotify.max_user_watches), the folders not
// watched are logged once; searches stay correct without the watcher (MemoryStore re-reads a
// file whose inode, size or times changed), they only find edits later and embed them then.
//
//   auto watcher = FolderWatcher::Start(io, {store.root(), store.shared_folder()},
//       [&](std::vector<std::string> paths) { for (auto& p : paths) search.Reindex(p); });
#pragma once

#include <asio.hpp>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace herald::memory {

class FolderWatcher {
 public:
  using Changed = std::function<void(std::vector<std::string> paths)>;

  // Watches `folders` (missing ones are skipped; one inside another is watched once).
  // `changed` runs on the I/O loop with the files changed during the last `quiet` period,
  // sorted. Call on the I/O loop's thread (or before it runs); fails when inotify cannot be
  // opened.
  static absl::StatusOr<std::unique_ptr<FolderWatcher>> Start(
      asio::io_context& io, const std::vector<std::string>& folders, Changed changed,
      absl::Duration quiet = absl::Milliseconds(300));
  ~FolderWatcher();  // on the I/O loop's thread; `changed` is never called afterwards

  // How many folders are watched (for tests and logs).
  size_t watched_folders() const { return folders_.size(); }

 private:
  FolderWatcher(asio::io_context& io, int descriptor, Changed changed, absl::Duration quiet);

  // Watches `folder` and, recursively, the folders in it.
  void WatchTree(const std::string& folder);
  void Read();
  void Noticed(std::string path);

  asio::posix::stream_descriptor descriptor_;
  asio::steady_timer timer_;
  Changed changed_;
  absl::Duration quiet_;
  absl::flat_hash_map<int, std::string> folders_;  // watch descriptor -> folder
  absl::flat_hash_set<std::string> pending_;
  bool timer_armed_ = false;
  bool warned_ = false;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
  char buffer_[16 * 1024] __attribute__((aligned(8)));
};

}  // namespace herald::memory
