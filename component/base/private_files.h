// component/base/private_files.h
//
// Files that only Herald's user may read: the ledger database and the audit log hold who used
// what and who did what. Missing parent folders are created with mode 0700 (and fsynced into
// their parents), files with mode 0600; an existing file is narrowed to 0600.
//
//   absl::Status s = CreatePrivateParentFolders("./data/ledger/usage.db");
//   absl::StatusOr<bool> created = CreatePrivateFile("./data/ledger/usage.db");
#pragma once

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace herald::base {

// Creates the missing folders above `path`. Fails when one exists and is not a folder.
absl::Status CreatePrivateParentFolders(const std::string& path);

// Creates `path` (mode 0600) when missing, or sets an existing file's mode to 0600. Answers
// whether it created the file (its folder entry is then fsynced).
absl::StatusOr<bool> CreatePrivateFile(const std::string& path);

// The folder part of `path` ("." when there is none).
std::string ParentFolder(const std::string& path);

// Makes the entries of a folder (created or renamed files) durable.
absl::Status SyncFolder(const std::string& path);

// Writes all of `bytes` to `fd`, going on after short writes and EINTR; false with errno set
// when a write fails.
bool WriteAll(int fd, std::string_view bytes);

// An error for the failed system call `what` on `path` with errno `error`.
absl::Status ErrnoStatus(int error, std::string_view what, const std::string& path);

}  // namespace herald::base
