// component/memory/atomic_file.h
//
// The file operations memory is made of, each durable before it returns: appends that are
// fsynced (and repaired first when the file ends in a write a crash cut short), whole-file
// replacement that readers see either before or after but never half-written (temporary
// file, fsync, rename, fsync of the folder), folder creation whose entries are fsynced into
// their parents, and a rename that never overwrites. All of them block: call them from the
// worker pool.
//
//   absl::Status s = AppendDurably(path, bytes, [](std::string_view tail) { return ""; });
//   absl::Status s = WriteFileAtomically(dir + "/context.md", text);
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace herald::memory {

// Creates `path` and its missing parents (mode 0700), fsyncing each parent that gained an
// entry. Fails when a component exists and is not a folder.
absl::Status CreateDirectories(const std::string& path);

// Makes the entries of a folder (created, renamed, removed files) durable.
absl::Status SyncDirectory(const std::string& path);

// Gets the last bytes of the file (up to two; none when it is empty) and answers what to
// write in front of the new bytes.
using TailRepairFn = std::function<std::string(std::string_view last_bytes)>;

// Appends `prefix + bytes` with one write, where prefix = repair(last bytes), then fdatasyncs.
// Creates the file (mode 0600) and its folders when missing and fsyncs the folder then. On a
// failed write (disk full) the file is truncated back to its old size. `written`, when set,
// gets what was appended (the prefix and the bytes).
absl::Status AppendDurably(const std::string& path, std::string_view bytes,
                           const TailRepairFn& repair, std::string* written = nullptr);

// Replaces `path` (creating it and its folders when missing) so that a crash leaves either
// the old or the new contents.
absl::Status WriteFileAtomically(const std::string& path, std::string_view contents);

// The whole file; nullopt when it does not exist. ResourceExhausted when it is larger than
// `max_bytes`.
absl::StatusOr<std::optional<std::string>> ReadFileIfExists(const std::string& path,
                                                            uint64_t max_bytes = 64u << 20);

struct FileTail {
  std::string bytes;        // the last min(size, max_bytes) bytes
  bool whole_file = false;  // bytes start at offset 0
};
// The end of a file; nullopt when it does not exist.
absl::StatusOr<std::optional<FileTail>> ReadFileTail(const std::string& path, uint64_t max_bytes);

// Renames `from` to `to` unless `to` exists (AlreadyExists then), atomically where the file
// system supports RENAME_NOREPLACE.
absl::Status RenameNoReplace(const std::string& from, const std::string& to);

// The regular files under `folder` as paths relative to it, sorted; none when it does not
// exist. Hidden names (temporary files, markers) and symbolic links are left out, and so is
// anything deeper than 8 folders (Herald makes at most threads/X/sessions/).
absl::StatusOr<std::vector<std::string>> ListRegularFiles(const std::string& folder);

}  // namespace herald::memory
