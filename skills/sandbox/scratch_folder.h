// skills/sandbox/scratch_folder.h
//
// The private folder a sandboxed run works in (its cwd, HOME and TMPDIR): created empty with
// mode 0700 under a root folder, owned by the run's uid when the run has its own, and removed
// with everything in it when the run is over. Blocking (disk): call from the worker pool.
//
//   absl::StatusOr<std::string> path = CreateScratchFolder("/tmp", uid, gid);
//   ...
//   absl::Status removed = RemoveScratchFolder(*path);
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace herald::skills::sandbox {

// A new folder "<root>/herald-skill-XXXXXX"; chowned to `owner` when given.
absl::StatusOr<std::string> CreateScratchFolder(const std::string& root,
                                                std::optional<std::pair<uid_t, gid_t>> owner);

// Removes the folder and its contents without following symbolic links, restoring the
// owner's permissions on folders the run locked itself out of.
absl::Status RemoveScratchFolder(const std::string& path);

}  // namespace herald::skills::sandbox
