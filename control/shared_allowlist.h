// control/shared_allowlist.h
//
// With several instances on one database ([storage] backend = "postgresql";
// docs/scale-out.md), the allowlist changes made at run time (AdminService.UpdateAllowlist,
// an admin's /allowlist in chat) are kept in the database rather than in [control]
// state_path, so that a person allowed through any instance may talk to all of them: ejabberd
// hands a person's stanzas to any instance. They are the allowlist half of a RuntimeState
// (runtime_state.h), as JSON in the shared document "allowlist" (storage::SharedDocuments).
// Rooms stay in each instance's state file: every instance in a room would answer in it.
//
// Every call blocks on the database: worker threads or start-up.
//
//   absl::StatusOr<SharedAllowlist> now = ReadSharedAllowlist(*documents);
//   ApplyRuntimeState(now->changes, config);                 // laid over the file's lists
//   RecordSharedAllowlist(*documents, change);               // "add bob", from any instance
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "component/config/config.h"
#include "component/storage/shared_documents.h"
#include "control/runtime_state.h"

namespace herald::control {

struct SharedAllowlist {
  int64_t version = 0;   // grows with every change, by any instance; 0: none yet
  RuntimeState changes;  // allowlist entries only
};

absl::StatusOr<SharedAllowlist> ReadSharedAllowlist(storage::SharedDocuments& documents);

// Records the allowlist entries of `change` (its rooms are not the database's), after the
// changes every instance made before, in one transaction.
absl::StatusOr<SharedAllowlist> RecordSharedAllowlist(storage::SharedDocuments& documents,
                                                      const RuntimeState& change);

// What main lays over the configuration file at start: the state file at `path` and then, when
// `shared` is not null, the shared allowlist changes. On an error `config` is unchanged.
absl::Status ApplyRuntimeState(const std::string& path, storage::SharedDocuments* shared,
                               config::Config& config);

}  // namespace herald::control
