#include "component/memory/shared_memory.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string_view>
#include <system_error>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "component/base/absl_string_view.h"
#include "component/memory/atomic_file.h"
#include "glog/logging.h"

namespace herald::memory {
namespace {

using base::PostgresConnection;
using base::PostgresResult;
using base::SqlParams;

// Version i + 1 of the memory tables is made by kMigrations[i] (base::ApplySchema).
constexpr std::string_view kMigrations[] = {
    R"sql(
CREATE TABLE memory_folders (
  folder text PRIMARY KEY,   -- relative to the memory root: users/<encoded JID>, rooms/..., api/...
  version bigint NOT NULL    -- raised by every change to the folder's files
);
CREATE TABLE memory_files (
  folder text NOT NULL,
  path text NOT NULL,        -- relative to the folder: history.md, threads/<t>/sessions/<s>.md
  content bytea NOT NULL,    -- the file's bytes, as on disk
  PRIMARY KEY (folder, path)
);
)sql",
};

constexpr char kRaiseVersion[] = R"sql(
INSERT INTO memory_folders (folder, version) VALUES ($1, 1)
ON CONFLICT (folder) DO UPDATE SET version = memory_folders.version + 1
RETURNING version
)sql";

// Appends to the file and raises the folder's version, atomically (one statement).
constexpr char kAppendAndRaise[] = R"sql(
WITH appended AS (
  INSERT INTO memory_files (folder, path, content) VALUES ($1, $2, $3)
  ON CONFLICT (folder, path) DO UPDATE SET content = memory_files.content || excluded.content
)
INSERT INTO memory_folders (folder, version) VALUES ($1, 1)
ON CONFLICT (folder) DO UPDATE SET version = memory_folders.version + 1
RETURNING version
)sql";

constexpr char kPut[] = R"sql(
INSERT INTO memory_files (folder, path, content) VALUES ($1, $2, $3)
ON CONFLICT (folder, path) DO UPDATE SET content = excluded.content
)sql";

constexpr char kMarker[] = ".unshared";

// A file name read from the database, where it could have been put by anyone with access: only
// a relative path Herald could have made, with no hidden or empty part.
bool IsSafeRelative(std::string_view path) {
  if (path.empty() || path.size() > 4096 || path.find('\0') != std::string_view::npos) {
    return false;
  }
  int depth = 0;
  for (absl::string_view part : absl::StrSplit(AbslView(path), '/')) {
    if (part.empty() || part[0] == '.' || ++depth > 9) return false;
  }
  return true;
}

}  // namespace

absl::StatusOr<std::unique_ptr<SharedMemory>> SharedMemory::Open(
    std::shared_ptr<base::PostgresDatabase> db, std::string root, Options options) {
  if (absl::Status s = base::ApplySchema(*db, "memory", kMigrations); !s.ok()) return s;
  return std::unique_ptr<SharedMemory>(new SharedMemory(std::move(db), std::move(root), options));
}

std::string SharedMemory::LocalFolder(const std::string& folder) const {
  return absl::StrCat(root_, "/", folder);
}

std::optional<SharedMemory::Known> SharedMemory::Find(const std::string& folder) {
  {
    absl::MutexLock lock(&mu_);
    if (auto it = known_.find(folder); it != known_.end()) return it->second;
  }
  absl::StatusOr<std::optional<std::string>> marker =
      ReadFileIfExists(absl::StrCat(LocalFolder(folder), "/", kMarker), 64);
  if (!marker.ok() || !marker->has_value()) return std::nullopt;
  Known known{.unshared = true};
  if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(**marker), &known.version)) known.version = -1;
  Remember(folder, known);
  return known;
}

void SharedMemory::Remember(const std::string& folder, Known known) {
  absl::MutexLock lock(&mu_);
  known_[folder] = known;
}

void SharedMemory::MarkUnshared(const std::string& folder) {
  int64_t base = -1;
  {
    absl::MutexLock lock(&mu_);
    Known& known = known_[folder];
    if (known.unshared) return;
    known.unshared = true;
    base = known.version;
  }
  // On disk too, so that a restart still writes the folder whole rather than taking the
  // database's older copy.
  const absl::Status s =
      WriteFileAtomically(absl::StrCat(LocalFolder(folder), "/", kMarker), absl::StrCat(base));
  LOG(WARNING) << "memory: " << folder
               << " changed while the database was away; it is written whole when it is back"
               << (s.ok() ? "" : absl::StrCat(" (the marker was not kept: ", s.ToString(), ")"));
}

absl::Status SharedMemory::Refresh(const std::string& folder) {
  std::optional<Known> known = Find(folder);
  if (known.has_value() && known->unshared) {
    absl::Status s = Upload(folder, known->version);
    if (s.ok() || !absl::IsFailedPrecondition(s)) return s;
    // Another instance changed the folder since: its copy wins; this one is kept aside.
    // A hidden name beside the folder: no conversation, search or export sees it.
    const size_t slash = folder.find('/');
    const std::string aside =
        absl::StrCat(root_, "/", folder.substr(0, slash), "/.superseded-", folder.substr(slash + 1),
                     "-", absl::ToUnixSeconds(absl::Now()));
    std::error_code error;
    std::filesystem::rename(LocalFolder(folder), aside, error);
    LOG(ERROR) << "memory: " << folder << " was changed by another instance while this one "
               << "could not write it; the database's copy is taken, this one is "
               << (error ? absl::StrCat("lost (", error.message(), ")")
                         : absl::StrCat("kept in ", aside));
    known.reset();
  } else if (known.has_value() && absl::Now() - known->checked < options_.recheck) {
    return absl::OkStatus();
  }
  absl::StatusOr<PostgresResult> row =
      db_->Exec("SELECT version FROM memory_folders WHERE folder = $1", SqlParams().Text(folder));
  if (!row.ok()) return row.status();
  if (row->rows() == 0) {
    // Never shared: memory from before the switch, or nothing at all yet.
    absl::StatusOr<std::vector<std::string>> files = ListRegularFiles(LocalFolder(folder));
    if (!files.ok()) return files.status();
    if (!files->empty()) return Upload(folder, 0);
    Remember(folder, {.version = 0, .checked = absl::Now()});
    return absl::OkStatus();
  }
  if (known.has_value() && row->Int64(0, 0) == known->version) {
    Remember(folder, {.version = known->version, .checked = absl::Now()});
    return absl::OkStatus();
  }
  return Download(folder);
}

absl::Status SharedMemory::Upload(const std::string& folder, int64_t base) {
  const std::string local = LocalFolder(folder);
  absl::StatusOr<std::vector<std::string>> files = ListRegularFiles(local);
  if (!files.ok()) return files.status();
  std::vector<std::pair<std::string, std::string>> contents;
  for (std::string& file : *files) {
    absl::StatusOr<std::optional<std::string>> bytes =
        ReadFileIfExists(absl::StrCat(local, "/", file));
    if (!bytes.ok()) return bytes.status();
    if (bytes->has_value()) contents.emplace_back(std::move(file), **std::move(bytes));
  }
  int64_t version = 0;
  absl::Status s = db_->Transaction([&](PostgresConnection& c) -> absl::Status {
    absl::StatusOr<PostgresResult> row =
        c.Exec("SELECT version FROM memory_folders WHERE folder = $1 FOR UPDATE",
               SqlParams().Text(folder));
    if (!row.ok()) return row.status();
    if (row->rows() > 0 && row->Int64(0, 0) != base) {
      return absl::FailedPreconditionError(
          absl::StrCat("memory ", folder, " changed in the database since version ", base));
    }
    absl::StatusOr<PostgresResult> done =
        c.Exec("DELETE FROM memory_files WHERE folder = $1", SqlParams().Text(folder));
    for (const auto& [file, bytes] : contents) {
      if (!done.ok()) break;
      done = c.Exec(kPut, SqlParams().Text(folder).Text(file).Bytes(bytes));
    }
    if (done.ok()) done = c.Exec(kRaiseVersion, SqlParams().Text(folder));
    if (!done.ok()) return done.status();
    version = done->Int64(0, 0);
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  ::unlink(absl::StrCat(local, "/", kMarker).c_str());
  Remember(folder, {.version = version, .checked = absl::Now()});
  return absl::OkStatus();
}

absl::Status SharedMemory::Download(const std::string& folder) {
  // One statement: the version and the files of one snapshot.
  absl::StatusOr<PostgresResult> rows = db_->Exec(
      "SELECT d.version, f.path, f.content FROM memory_folders d "
      "LEFT JOIN memory_files f ON f.folder = d.folder WHERE d.folder = $1",
      SqlParams().Text(folder));
  if (!rows.ok()) return rows.status();
  if (rows->rows() == 0) return absl::OkStatus();
  const std::string local = LocalFolder(folder);
  absl::flat_hash_set<std::string> kept;
  for (int i = 0; i < rows->rows(); ++i) {
    if (rows->IsNull(i, 1)) continue;  // a folder without files: forgotten
    const std::string file(rows->Text(i, 1));
    if (!IsSafeRelative(file)) {
      LOG(WARNING) << "memory: " << folder << ": the database names a file that cannot be one ("
                   << absl::CHexEscape(file.substr(0, 80)) << "); left out";
      continue;
    }
    const std::string path = absl::StrCat(local, "/", file);
    std::string bytes = rows->Bytes(i, 2);
    absl::StatusOr<std::optional<std::string>> mine = ReadFileIfExists(path);
    if (!mine.ok() || !mine->has_value() || **mine != bytes) {
      if (absl::Status s = WriteFileAtomically(path, bytes); !s.ok()) return s;
    }
    kept.insert(file);
  }
  absl::StatusOr<std::vector<std::string>> files = ListRegularFiles(local);
  if (!files.ok()) return files.status();
  for (const std::string& file : *files) {
    if (kept.contains(file)) continue;
    const std::string path = absl::StrCat(local, "/", file);
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
      return absl::InternalError(absl::StrCat("remove ", path, ": ", std::strerror(errno)));
    }
  }
  if (kept.empty()) {
    std::error_code error;
    std::filesystem::remove_all(local, error);
  }
  Remember(folder, {.version = rows->Int64(0, 0), .checked = absl::Now()});
  return absl::OkStatus();
}

bool SharedMemory::Unshared(const std::string& folder) {
  absl::MutexLock lock(&mu_);
  auto it = known_.find(folder);
  return it != known_.end() && it->second.unshared;
}

absl::Status SharedMemory::Change(const std::string& folder,
                                  absl::FunctionRef<absl::Status(PostgresConnection&)> body) {
  if (Unshared(folder)) return absl::OkStatus();  // written whole when the database is back
  int64_t version = 0;
  absl::Status s = db_->Transaction([&](PostgresConnection& c) -> absl::Status {
    if (absl::Status written = body(c); !written.ok()) return written;
    absl::StatusOr<PostgresResult> raised = c.Exec(kRaiseVersion, SqlParams().Text(folder));
    if (!raised.ok()) return raised.status();
    version = raised->Int64(0, 0);
    return absl::OkStatus();
  });
  if (!s.ok()) return Record(folder, s);
  return Record(folder, version);
}

absl::Status SharedMemory::Record(const std::string& folder, absl::StatusOr<int64_t> version) {
  if (!version.ok()) {
    MarkUnshared(folder);
    return version.status();
  }
  absl::MutexLock lock(&mu_);
  Known& known = known_[folder];
  if (known.version == *version - 1) {
    known.version = *version;
    known.checked = absl::Now();
  } else {
    // Another instance's change in between: the next Refresh takes the database's copy, which
    // holds both.
    known.version = -1;
    known.checked = absl::InfinitePast();
  }
  return absl::OkStatus();
}

absl::Status SharedMemory::Appended(const std::string& folder, const std::string& file,
                                    std::string_view bytes) {
  // The hot path (two appends a turn): one statement, so one round trip, instead of a
  // transaction's four.
  if (Unshared(folder)) return absl::OkStatus();
  absl::StatusOr<PostgresResult> raised =
      db_->Exec(kAppendAndRaise, SqlParams().Text(folder).Text(file).Bytes(bytes));
  if (!raised.ok()) return Record(folder, raised.status());
  return Record(folder, raised->Int64(0, 0));
}

absl::Status SharedMemory::Changed(const std::string& folder, const std::vector<std::string>& files,
                                   const std::vector<std::string>& removed_under) {
  // Read before the transaction, which then holds its connection only for the writes.
  std::vector<std::optional<std::string>> contents;
  for (const std::string& file : files) {
    absl::StatusOr<std::optional<std::string>> bytes =
        ReadFileIfExists(absl::StrCat(LocalFolder(folder), "/", file));
    if (!bytes.ok()) {
      MarkUnshared(folder);
      return bytes.status();
    }
    contents.push_back(*std::move(bytes));
  }
  return Change(folder, [&](PostgresConnection& c) -> absl::Status {
    for (size_t i = 0; i < files.size(); ++i) {
      absl::StatusOr<PostgresResult> done =
          contents[i].has_value()
              ? c.Exec(kPut, SqlParams().Text(folder).Text(files[i]).Bytes(*contents[i]))
              : c.Exec("DELETE FROM memory_files WHERE folder = $1 AND path = $2",
                       SqlParams().Text(folder).Text(files[i]));
      if (!done.ok()) return done.status();
    }
    for (const std::string& prefix : removed_under) {
      absl::StatusOr<PostgresResult> done =
          c.Exec("DELETE FROM memory_files WHERE folder = $1 AND starts_with(path, $2)",
                 SqlParams().Text(folder).Text(prefix));
      if (!done.ok()) return done.status();
    }
    return absl::OkStatus();
  });
}

absl::Status SharedMemory::Removed(const std::string& folder) {
  {
    // Forgotten here: a change that did not reach the database is forgotten too.
    absl::MutexLock lock(&mu_);
    if (auto it = known_.find(folder); it != known_.end()) it->second.unshared = false;
  }
  return Change(folder, [&](PostgresConnection& c) {
    return c.Exec("DELETE FROM memory_files WHERE folder = $1", SqlParams().Text(folder)).status();
  });
}

}  // namespace herald::memory
