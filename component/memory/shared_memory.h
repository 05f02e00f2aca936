// component/memory/shared_memory.h
//
// SharedMemory keeps the conversations' memory folders of several instances on one domain
// ([storage] backend = "postgresql", docs/scale-out.md) in PostgreSQL, byte for byte, so that
// the instance that takes a conversation over has its history, notes and context. Each
// instance goes on reading and writing its markdown files as on one host (search, history and
// the file watcher are unchanged); SharedMemory keeps that copy and the database's together:
//
//   - every change MemoryStore makes to a conversation's folder is written to the database
//     too, and raises the folder's version: an append as the bytes appended, any other change
//     as the new contents of the files it touched, or their removal;
//   - before MemoryStore reads or changes a folder, Refresh compares the version this
//     instance last knew with the database's (at most once per `recheck`, well under the
//     inbox's lease time, so an instance that takes a conversation over always looks); when
//     another instance changed the folder since, the local copy is made the database's;
//   - a change the database could not take (it was away) leaves a marker in the folder
//     (.unshared, holding the version the local copy was made on) and the folder is written
//     whole once the database is back, unless another instance changed it meanwhile: the
//     database's copy wins then, and this is logged. A folder the database has never seen
//     (memory from before the switch to PostgreSQL) is written whole at its first use.
//
// Tables (schema "memory", base::ApplySchema): memory_folders (folder, version) and
// memory_files (folder, path, content). A folder is named relative to the memory root
// ("users/alice%40localhost"), a file relative to its folder ("threads/x/history.md"); names
// read from the database are checked like any input, so a row cannot write outside its
// folder. Errors are logged and returned; MemoryStore goes on with its own copy whatever they
// are, so that an outage does not silence Herald.
//
// Every call blocks on the database and the disk: call it from worker threads. Calls for
// different folders may overlap; calls for one folder must not (the conversation's actor
// serialises them).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "component/base/postgres_database.h"

namespace herald::memory {

class SharedMemory {
 public:
  struct Options {
    // How long a folder's version, once checked, is taken as current.
    absl::Duration recheck = absl::Seconds(1);
  };

  // Applies the schema; `root` is the memory root the folders are under.
  static absl::StatusOr<std::unique_ptr<SharedMemory>> Open(
      std::shared_ptr<base::PostgresDatabase> db, std::string root, Options options);

  // Brings the local copy of `folder` up to date with the database (see above).
  absl::Status Refresh(const std::string& folder);
  // `bytes` were appended to `file` of `folder`.
  absl::Status Appended(const std::string& folder, const std::string& file, std::string_view bytes);
  // `files` of `folder` were written or removed, and so was everything under the folders
  // `removed_under` ("attachments/").
  absl::Status Changed(const std::string& folder, const std::vector<std::string>& files,
                       const std::vector<std::string>& removed_under = {});
  // The whole folder was removed (Forget).
  absl::Status Removed(const std::string& folder);

 private:
  struct Known {
    int64_t version = -1;  // the database's as last seen; 0: it had no such folder; -1: unknown
    absl::Time checked = absl::InfinitePast();
    bool unshared = false;  // a change did not reach the database; `version` is its base
  };

  SharedMemory(std::shared_ptr<base::PostgresDatabase> db, std::string root, Options options)
      : db_(std::move(db)), root_(std::move(root)), options_(options) {}

  std::string LocalFolder(const std::string& folder) const;
  // Runs one change: raises the folder's version with `body`'s writes in one transaction, and
  // marks the folder unshared when it fails.
  absl::Status Change(const std::string& folder,
                      absl::FunctionRef<absl::Status(base::PostgresConnection&)> body);
  // After a change: the version it made, or its error (the folder is marked unshared then).
  absl::Status Record(const std::string& folder, absl::StatusOr<int64_t> version);
  // Whether a change did not reach the database: then none is sent until the folder is
  // written whole.
  bool Unshared(const std::string& folder);
  // Writes the whole local copy, when the database's version is still `base` (or it has no
  // such folder). FailedPrecondition when another instance changed it.
  absl::Status Upload(const std::string& folder, int64_t base);
  // Makes the local copy the database's.
  absl::Status Download(const std::string& folder);
  void MarkUnshared(const std::string& folder);
  // What is known of `folder`: from memory, else from its marker on disk (a change made before
  // a restart that did not reach the database), else nothing.
  std::optional<Known> Find(const std::string& folder);
  void Remember(const std::string& folder, Known known);

  const std::shared_ptr<base::PostgresDatabase> db_;
  const std::string root_;
  const Options options_;
  absl::Mutex mu_;
  absl::flat_hash_map<std::string, Known> known_ ABSL_GUARDED_BY(mu_);
};

}  // namespace herald::memory
