// control/shared_runtime_state.h
//
// With several instances on one database ([storage] backend = "postgresql";
// docs/scale-out.md), the allowlist and room changes made at run time (AdminService's
// UpdateAllowlist, JoinRoom and LeaveRoom, an admin's /allowlist and /rooms in chat) are kept
// in the database rather than in [control] state_path, so that they are every instance's:
// ejabberd hands a person's stanzas to any instance, and every instance wants every room (one
// of them, the holder of its lease, is in it: storage/shared_rooms.h). They are a RuntimeState
// (runtime_state.h) in two shared documents (storage::SharedDocuments), "allowlist" and
// "rooms", each with its own version.
//
// Every call blocks on the database: worker threads or start-up.
//
//   absl::StatusOr<SharedRuntimeState> now = ReadSharedRuntimeState(*documents);
//   ApplyRuntimeState(now->changes, config);                   // laid over the file's lists
//   RecordSharedRuntimeState(*documents, change);              // "add bob", from any instance
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "component/config/config.h"
#include "component/storage/shared_documents.h"
#include "control/runtime_state.h"

namespace herald::control {

struct SharedRuntimeState {
  // Each grows with every change of its half, by any instance; 0: none yet.
  int64_t allowlist_version = 0;
  int64_t rooms_version = 0;
  RuntimeState changes;

  bool SameVersions(const SharedRuntimeState& other) const {
    return allowlist_version == other.allowlist_version && rooms_version == other.rooms_version;
  }
};

absl::StatusOr<SharedRuntimeState> ReadSharedRuntimeState(storage::SharedDocuments& documents);

// Records `change` after the changes every instance made before (each half in one
// transaction), and returns what is recorded then.
absl::StatusOr<SharedRuntimeState> RecordSharedRuntimeState(storage::SharedDocuments& documents,
                                                            const RuntimeState& change);

// What main lays over the configuration file at start: the state file at `path` and then, when
// `shared` is not null, the shared changes. On an error `config` is unchanged.
absl::Status ApplyRuntimeState(const std::string& path, storage::SharedDocuments* shared,
                               config::Config& config);

}  // namespace herald::control
