#include "component/memory/memory_store.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/mutex.h"
#include "component/base/absl_string_view.h"
#include "component/memory/atomic_file.h"
#include "component/memory/jid_folder.h"
#include "component/memory/markdown_format.h"
#include "component/memory/memory_search.h"
#include "component/memory/shared_memory.h"
#include "glog/logging.h"

namespace herald::memory {
namespace {

namespace fs = std::filesystem;

constexpr char kHistoryFile[] = "history.md";
constexpr char kSessionsFolder[] = "sessions";
constexpr char kContextFile[] = "context.md";
constexpr char kNotesFile[] = "notes.md";
constexpr char kSharedNotesFile[] = "herald-notes.md";
constexpr char kSharedShown[] = "shared";
constexpr char kTrashPrefix[] = ".forget-";
// History reads this much of the end of the file first and doubles it until it holds enough
// entries, so a long history costs what the last entries take, not the whole file.
constexpr uint64_t kFirstHistoryChunk = 64 << 10;
// Search skips files larger than this rather than reading them into memory.
constexpr uint64_t kMaxSearchFileBytes = 32 << 20;
// Parsed files kept for search: past this many bytes of text the whole cache is dropped.
constexpr size_t kMaxCachedBytes = 64 << 20;

std::atomic<uint64_t> trash_counter{0};

// The folder under the root that holds conversations of a kind.
const char* KindFolder(ConversationRef::Kind kind) {
  switch (kind) {
    case ConversationRef::Kind::kDirect:
      return "users";
    case ConversationRef::Kind::kRoom:
      return "rooms";
    case ConversationRef::Kind::kApi:
      return "api";
  }
  return "users";
}

// sessions/ names sort by time and then by suffix ("-2" after the plain name, "-10" after
// "-9"); names of another shape (hand-made) go last, by name.
std::tuple<bool, std::string, int64_t, std::string> SessionSortKey(const std::string& name) {
  auto other = std::make_tuple(true, std::string(), int64_t{0}, name);
  absl::string_view stem(name);
  if (!absl::ConsumeSuffix(&stem, ".md") || stem.size() < 15) return other;
  for (size_t i = 0; i < 15; ++i) {
    const bool ok =
        i == 8 ? stem[i] == '-' : absl::ascii_isdigit(static_cast<unsigned char>(stem[i]));
    if (!ok) return other;
  }
  int64_t suffix = 1;
  absl::string_view rest = stem.substr(15);
  if (!rest.empty() && (!absl::ConsumePrefix(&rest, "-") || !absl::SimpleAtoi(rest, &suffix))) {
    return other;
  }
  return std::make_tuple(false, std::string(stem.substr(0, 15)), suffix, name);
}

// What identifies one version of a file: a change by Herald or by hand changes one of these.
struct FileIdentity {
  dev_t device = 0;
  ino_t inode = 0;
  off_t size = 0;
  int64_t modified_ns = 0;
  int64_t changed_ns = 0;

  friend bool operator==(const FileIdentity&, const FileIdentity&) = default;
};

struct CachedFile {
  FileIdentity identity;
  std::vector<SearchDocument> documents;
  size_t bytes = 0;
};

int64_t Nanoseconds(const timespec& t) { return int64_t{t.tv_sec} * 1'000'000'000 + t.tv_nsec; }

std::string EntryExcerpt(const MemoryEntry& entry) {
  return absl::StrCat(entry.author, " (", entry.role, ", ",
                      absl::FormatTime("%Y-%m-%d %H:%M UTC", entry.time, absl::UTCTimeZone()),
                      "): ", entry.text);
}

}  // namespace

class MemoryStore::Impl {
 public:
  Impl(std::string root, std::string shared) : root_(std::move(root)), shared_(std::move(shared)) {}

  const std::string& root() const { return root_; }
  const std::string& shared() const { return shared_; }

  std::string ConversationFolder(const ConversationRef& ref) const {
    return absl::StrCat(root_, "/", SharedName(ref));
  }

  // The conversation's folder relative to the root, as SharedMemory names it.
  static std::string SharedName(const ConversationRef& ref) {
    return absl::StrCat(KindFolder(ref.kind), "/", EncodeFolderName(ref.address));
  }

  std::string SessionFolder(const ConversationRef& ref) const {
    std::string folder = ConversationFolder(ref);
    if (!ref.thread.empty()) absl::StrAppend(&folder, "/threads/", EncodeFolderName(ref.thread));
    return folder;
  }

  // A file's name as searches show it: relative to the root, or "shared/..." for the shared
  // folder wherever it is.
  std::string Relative(const std::string& path) const {
    if (IsUnder(path, shared_)) return absl::StrCat(kSharedShown, path.substr(shared_.size()));
    return IsUnder(path, root_) ? path.substr(root_.size() + 1) : path;
  }

  static bool IsUnder(std::string_view path, std::string_view folder) {
    return path.size() > folder.size() + 1 && absl::StartsWith(AbslView(path), AbslView(folder)) &&
           path[folder.size()] == '/';
  }

  // The documents of `path` (see MemoryStore::Chunks); `entries` says how it is split. Reads
  // the file only when it changed since it was last read.
  absl::StatusOr<std::vector<SearchDocument>> Documents(const std::string& path,
                                                        bool entries) const;
  void Forget(const std::string& path) const {
    absl::MutexLock lock(&mu_);
    if (auto it = cache_.find(path); it != cache_.end()) {
      cached_bytes_ -= it->second.bytes;
      cache_.erase(it);
    }
  }

 private:
  std::string root_;
  std::string shared_;
  mutable absl::Mutex mu_;
  mutable absl::flat_hash_map<std::string, CachedFile> cache_ ABSL_GUARDED_BY(mu_);

 public:
  std::unique_ptr<SharedMemory> sharing;  // null on one host
  // Notes come from slash commands (on the conversation's strand) and from memory_save (on
  // the pool), and shared notes from every conversation: their appends take turns.
  absl::Mutex notes_mu;

 private:
  mutable size_t cached_bytes_ ABSL_GUARDED_BY(mu_) = 0;
};

absl::StatusOr<std::vector<SearchDocument>> MemoryStore::Impl::Documents(const std::string& path,
                                                                         bool entries) const {
  struct stat info;
  if (::lstat(path.c_str(), &info) != 0) {
    if (errno == ENOENT) {
      Forget(path);
      return std::vector<SearchDocument>();
    }
    return absl::InternalError(
        absl::StrCat("stat ", Relative(path), ": ", std::generic_category().message(errno)));
  }
  if (!S_ISREG(info.st_mode) || static_cast<uint64_t>(info.st_size) > kMaxSearchFileBytes) {
    Forget(path);
    return std::vector<SearchDocument>();
  }
  // Taken before the read: a change during the read shows as a new identity next time.
  const FileIdentity identity{.device = info.st_dev,
                              .inode = info.st_ino,
                              .size = info.st_size,
                              .modified_ns = Nanoseconds(info.st_mtim),
                              .changed_ns = Nanoseconds(info.st_ctim)};
  {
    absl::MutexLock lock(&mu_);
    if (auto it = cache_.find(path); it != cache_.end() && it->second.identity == identity) {
      return it->second.documents;
    }
  }
  absl::StatusOr<std::optional<std::string>> text = ReadFileIfExists(path, kMaxSearchFileBytes);
  if (absl::IsResourceExhausted(text.status())) return std::vector<SearchDocument>();
  if (!text.ok()) return text.status();
  if (!text->has_value()) {
    Forget(path);
    return std::vector<SearchDocument>();
  }
  const std::string relative = Relative(path);
  std::vector<SearchDocument> documents;
  if (entries) {
    for (MemoryEntry& entry : ParseEntries(**text, /*at_file_start=*/true)) {
      documents.push_back({relative, EntryExcerpt(entry), entry.time});
    }
  } else {
    const absl::Time modified = absl::TimeFromTimespec(info.st_mtim);
    for (std::string& paragraph : SplitParagraphs(**text)) {
      documents.push_back({relative, std::move(paragraph), modified});
    }
  }
  const size_t bytes = (*text)->size();
  absl::MutexLock lock(&mu_);
  if (auto it = cache_.find(path); it != cache_.end()) {
    cached_bytes_ -= it->second.bytes;
    cache_.erase(it);
  }
  if (cached_bytes_ + bytes > kMaxCachedBytes) {
    cache_.clear();
    cached_bytes_ = 0;
  }
  if (bytes <= kMaxCachedBytes) {
    cache_[path] = CachedFile{.identity = identity, .documents = documents, .bytes = bytes};
    cached_bytes_ += bytes;
  }
  return documents;
}

MemoryStore::MemoryStore(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
MemoryStore::~MemoryStore() = default;

absl::StatusOr<std::unique_ptr<MemoryStore>> MemoryStore::Open(const std::string& root,
                                                               const std::string& shared,
                                                               Sharing sharing) {
  if (root.empty()) return absl::InvalidArgumentError("the memory path is empty");
  std::string normalised = root;
  while (normalised.size() > 1 && normalised.back() == '/') normalised.pop_back();
  std::string shared_folder = shared.empty() ? absl::StrCat(normalised, "/shared") : shared;
  while (shared_folder.size() > 1 && shared_folder.back() == '/') shared_folder.pop_back();
  absl::Status status = CreateDirectories(normalised);
  if (!status.ok()) return status;
  // Everyone's search sees the shared folder: it must hold no conversation's folder, and
  // lie in none.
  {
    std::error_code error;
    const fs::path root_path = fs::weakly_canonical(normalised, error);
    const fs::path shared_path = fs::weakly_canonical(shared_folder, error);
    auto inside = [](const fs::path& path, const fs::path& folder) {
      const fs::path relative = path.lexically_relative(folder);
      return !relative.empty() && *relative.begin() != "..";
    };
    bool overlaps = inside(root_path, shared_path);  // the root is, or is in, the shared folder
    for (ConversationRef::Kind kind : base::kConversationKinds) {
      overlaps = overlaps || inside(shared_path, root_path / KindFolder(kind));
    }
    if (overlaps) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the shared folder ", shared_folder,
          " overlaps the conversations' folders: every user's search would see other users' "
          "memory; choose a folder outside ",
          normalised, "/users, rooms and api"));
    }
  }
  // Fail now rather than at the first message when the folder is read-only.
  const std::string probe = absl::StrCat(normalised, "/.write-test-", ::getpid());
  status = WriteFileAtomically(probe, "");
  if (!status.ok()) return status;
  ::unlink(probe.c_str());
  // Finish deletions a crash interrupted (Forget renames a folder away before removing it).
  for (ConversationRef::Kind kind : base::kConversationKinds) {
    std::error_code error;
    const std::string folder = absl::StrCat(normalised, "/", KindFolder(kind));
    for (const fs::directory_entry& entry : fs::directory_iterator(folder, error)) {
      if (absl::StartsWith(entry.path().filename().string(), kTrashPrefix)) {
        std::error_code ignored;
        fs::remove_all(entry.path(), ignored);
      }
    }
  }
  auto impl = std::make_unique<Impl>(normalised, shared_folder);
  if (sharing.postgres != nullptr) {
    absl::StatusOr<std::unique_ptr<SharedMemory>> shared_memory =
        SharedMemory::Open(std::move(sharing.postgres), normalised, {.recheck = sharing.recheck});
    if (!shared_memory.ok()) return shared_memory.status();
    impl->sharing = *std::move(shared_memory);
  }
  return std::unique_ptr<MemoryStore>(new MemoryStore(std::move(impl)));
}

void MemoryStore::Refresh(const ConversationRef& ref) const {
  if (impl_->sharing == nullptr) return;
  const std::string name = Impl::SharedName(ref);
  if (absl::Status s = impl_->sharing->Refresh(name); !s.ok()) {
    LOG_EVERY_N(WARNING, 100) << "memory: " << name
                              << " may miss other instances' changes: " << s.message();
  }
}

// A change the database did not take is marked and logged by SharedMemory, and written later:
// the local change stands either way.
void MemoryStore::ShareAppend(const ConversationRef& ref, const std::string& file,
                              std::string_view bytes) {
  if (impl_->sharing == nullptr) return;
  impl_->sharing->Appended(Impl::SharedName(ref), file, bytes).IgnoreError();
}

void MemoryStore::ShareChange(const ConversationRef& ref, const std::vector<std::string>& files,
                              const std::vector<std::string>& removed_under) {
  if (impl_->sharing == nullptr) return;
  impl_->sharing->Changed(Impl::SharedName(ref), files, removed_under).IgnoreError();
}

void MemoryStore::ShareRemoval(const ConversationRef& ref) {
  if (impl_->sharing == nullptr) return;
  impl_->sharing->Removed(Impl::SharedName(ref)).IgnoreError();
}

std::string MemoryStore::ThreadPrefix(const ConversationRef& ref) {
  return ref.thread.empty() ? "" : absl::StrCat("threads/", EncodeFolderName(ref.thread), "/");
}

absl::Status MemoryStore::Append(const ConversationRef& ref, const MemoryEntry& entry) {
  absl::Status status = base::CheckConversationRef(ref);
  if (!status.ok()) return status;
  Refresh(ref);
  std::string written;
  status = AppendDurably(absl::StrCat(impl_->SessionFolder(ref), "/", kHistoryFile),
                         FormatEntry(entry), TailRepair, &written);
  if (status.ok()) ShareAppend(ref, ThreadPrefix(ref) + kHistoryFile, written);
  return status;
}

absl::Status MemoryStore::AddNote(const ConversationRef& ref, const MemoryEntry& entry) {
  absl::Status status = base::CheckConversationRef(ref);
  if (!status.ok()) return status;
  Refresh(ref);
  absl::MutexLock lock(&impl_->notes_mu);
  std::string written;
  status = AppendDurably(absl::StrCat(impl_->ConversationFolder(ref), "/", kNotesFile),
                         FormatEntry(entry), TailRepair, &written);
  if (status.ok()) ShareAppend(ref, kNotesFile, written);
  return status;
}

absl::Status MemoryStore::AddSharedNote(const MemoryEntry& entry) {
  absl::Status status = CreateDirectories(impl_->shared());
  if (!status.ok()) return status;
  absl::MutexLock lock(&impl_->notes_mu);
  return AppendDurably(absl::StrCat(impl_->shared(), "/", kSharedNotesFile), FormatEntry(entry),
                       TailRepair);
}

const std::string& MemoryStore::root() const { return impl_->root(); }
const std::string& MemoryStore::shared_folder() const { return impl_->shared(); }

absl::StatusOr<std::vector<MemoryEntry>> MemoryStore::History(const ConversationRef& ref,
                                                              size_t max_entries) const {
  absl::Status status = base::CheckConversationRef(ref);
  if (!status.ok()) return status;
  if (max_entries == 0) return std::vector<MemoryEntry>();
  Refresh(ref);
  const std::string path = absl::StrCat(impl_->SessionFolder(ref), "/", kHistoryFile);
  for (uint64_t chunk = kFirstHistoryChunk;; chunk *= 2) {
    absl::StatusOr<std::optional<FileTail>> tail = ReadFileTail(path, chunk);
    if (!tail.ok()) return tail.status();
    if (!tail->has_value()) return std::vector<MemoryEntry>();
    std::vector<MemoryEntry> entries =
        ParseLastEntries((*tail)->bytes, (*tail)->whole_file, max_entries);
    if (entries.size() >= max_entries || (*tail)->whole_file) return entries;
  }
}

absl::StatusOr<std::optional<absl::Time>> MemoryStore::LastActivity(
    const ConversationRef& ref) const {
  absl::StatusOr<std::vector<MemoryEntry>> last = History(ref, 1);
  if (!last.ok()) return last.status();
  if (last->empty()) return std::nullopt;
  return last->back().time;
}

absl::StatusOr<std::string> MemoryStore::ArchiveSession(const ConversationRef& ref,
                                                        absl::Time now) {
  absl::StatusOr<std::vector<MemoryEntry>> last = History(ref, 1);
  if (!last.ok()) return last.status();
  if (last->empty()) return std::string();
  const std::string folder = impl_->SessionFolder(ref);
  const std::string sessions = absl::StrCat(folder, "/", kSessionsFolder);
  absl::Status status = CreateDirectories(sessions);
  if (!status.ok()) return status;
  const std::string stamp = absl::FormatTime("%Y%m%d-%H%M%S", now, absl::UTCTimeZone());
  const std::string history = absl::StrCat(folder, "/", kHistoryFile);
  for (int suffix = 1; suffix <= 10000; ++suffix) {
    const std::string name =
        suffix == 1 ? absl::StrCat(stamp, ".md") : absl::StrCat(stamp, "-", suffix, ".md");
    status = RenameNoReplace(history, absl::StrCat(sessions, "/", name));
    if (absl::IsAlreadyExists(status)) continue;
    if (!status.ok()) return status;
    // Both folders changed: the new name must survive a crash, and so must the old name's
    // removal (or the session would come back as the current one).
    status = SyncDirectory(sessions);
    if (status.ok()) status = SyncDirectory(folder);
    if (!status.ok()) return status;
    const std::string prefix = ThreadPrefix(ref);
    ShareChange(ref, {prefix + kHistoryFile, absl::StrCat(prefix, kSessionsFolder, "/", name)});
    return name;
  }
  return absl::ResourceExhaustedError("too many archived sessions with the same time");
}

absl::StatusOr<std::vector<std::string>> MemoryStore::ListSessions(
    const ConversationRef& ref) const {
  absl::Status status = base::CheckConversationRef(ref);
  if (!status.ok()) return status;
  Refresh(ref);
  const fs::path sessions = absl::StrCat(impl_->SessionFolder(ref), "/", kSessionsFolder);
  std::vector<std::string> names;
  std::error_code error;
  fs::directory_iterator it(sessions, error);
  if (error) {
    if (error == std::errc::no_such_file_or_directory) return names;
    return absl::InternalError(absl::StrCat("list ", sessions.string(), ": ", error.message()));
  }
  for (const fs::directory_entry& entry : it) {
    std::string name = entry.path().filename().string();
    if (name.empty() || name[0] == '.' || !absl::EndsWith(name, ".md")) continue;
    if (!entry.is_regular_file(error)) continue;
    names.push_back(std::move(name));
  }
  std::sort(names.begin(), names.end(), [](const std::string& a, const std::string& b) {
    return SessionSortKey(a) < SessionSortKey(b);
  });
  return names;
}

absl::Status MemoryStore::Forget(const ConversationRef& ref) {
  absl::Status status = base::CheckConversationRef(ref);
  if (!status.ok()) return status;
  const std::string folder = impl_->ConversationFolder(ref);
  const std::string parent = folder.substr(0, folder.find_last_of('/'));
  // Renaming first makes the forgetting atomic: after a crash the conversation is either
  // whole or gone, and Open removes what is left of the renamed folder.
  const std::string trash = absl::StrCat(parent, "/", kTrashPrefix, ::getpid(), "-",
                                         trash_counter++, "-", absl::ToUnixNanos(absl::Now()));
  if (::rename(folder.c_str(), trash.c_str()) != 0) {
    if (errno == ENOENT) {
      ShareRemoval(ref);  // it may be kept for other instances all the same
      return absl::OkStatus();
    }
    return absl::InternalError(absl::StrCat("rename ", folder, ": ", std::strerror(errno)));
  }
  status = SyncDirectory(parent);
  if (!status.ok()) return status;
  ShareRemoval(ref);
  std::error_code error;
  fs::remove_all(trash, error);
  if (error) return absl::InternalError(absl::StrCat("remove ", trash, ": ", error.message()));
  return absl::OkStatus();
}

absl::Status MemoryStore::ClearSession(const ConversationRef& ref) {
  absl::Status status = base::CheckConversationRef(ref);
  if (!status.ok()) return status;
  Refresh(ref);
  const std::pair<std::string, const char*> files[] = {
      {impl_->SessionFolder(ref), kHistoryFile}, {impl_->ConversationFolder(ref), kContextFile}};
  for (const auto& [folder, name] : files) {
    const std::string file = absl::StrCat(folder, "/", name);
    if (::unlink(file.c_str()) != 0) {
      if (errno == ENOENT) continue;
      return absl::InternalError(absl::StrCat("remove ", file, ": ", std::strerror(errno)));
    }
    status = SyncDirectory(folder);
    if (!status.ok()) return status;
  }
  std::error_code error;
  fs::remove_all(absl::StrCat(impl_->SessionFolder(ref), "/", kAttachmentsFolder), error);
  if (error) return absl::InternalError(absl::StrCat("remove attachments: ", error.message()));
  const std::string prefix = ThreadPrefix(ref);
  ShareChange(ref, {prefix + kHistoryFile, kContextFile},
              {absl::StrCat(prefix, kAttachmentsFolder, "/")});
  return absl::OkStatus();
}

absl::StatusOr<std::string> MemoryStore::ReadContext(const ConversationRef& ref) const {
  absl::Status status = base::CheckConversationRef(ref);
  if (!status.ok()) return status;
  Refresh(ref);
  absl::StatusOr<std::optional<std::string>> text =
      ReadFileIfExists(absl::StrCat(impl_->ConversationFolder(ref), "/", kContextFile));
  if (!text.ok()) return text.status();
  return text->value_or("");
}

absl::Status MemoryStore::WriteContext(const ConversationRef& ref, std::string_view text) {
  absl::Status status = base::CheckConversationRef(ref);
  if (!status.ok()) return status;
  Refresh(ref);
  status =
      WriteFileAtomically(absl::StrCat(impl_->ConversationFolder(ref), "/", kContextFile), text);
  if (status.ok()) ShareChange(ref, {kContextFile});
  return status;
}

namespace {

// The markdown files under `folder`, recursively. Symbolic links are never followed (a link
// in shared/ must not expose another user's folder) and hidden names (temporary files,
// folders being forgotten) are skipped.
std::vector<fs::path> MarkdownFiles(const fs::path& folder) {
  std::vector<fs::path> files;
  std::error_code error;
  fs::recursive_directory_iterator it(folder, fs::directory_options::skip_permission_denied, error);
  if (error) return files;
  for (const fs::recursive_directory_iterator end; it != end; it.increment(error)) {
    if (error) break;
    const std::string name = it->path().filename().string();
    const fs::file_status status = it->symlink_status(error);
    if (error) break;
    if (!name.empty() && name[0] == '.') {
      if (fs::is_directory(status)) it.disable_recursion_pending();
      continue;
    }
    if (fs::is_regular_file(status) && absl::EndsWith(name, ".md")) files.push_back(it->path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// Whether a file of a conversation's folder holds entries (history, sessions, notes) rather
// than paragraphs.
bool HoldsEntries(const fs::path& file) {
  return file.filename() == kHistoryFile || file.filename() == kNotesFile ||
         file.parent_path().filename() == kSessionsFolder;
}

}  // namespace

absl::StatusOr<std::vector<SearchDocument>> MemoryStore::Chunks(
    const ConversationRef& ref, const MemoryEntry* leave_out) const {
  absl::Status status = base::CheckConversationRef(ref);
  if (!status.ok()) return status;
  Refresh(ref);
  // The whole conversation (every thread) and the shared folder; nothing else is ever opened.
  const std::string left_out = leave_out != nullptr ? EntryExcerpt(*leave_out) : std::string();
  std::vector<SearchDocument> documents;
  for (const fs::path& file : MarkdownFiles(impl_->ConversationFolder(ref))) {
    const bool entries = HoldsEntries(file);
    absl::StatusOr<std::vector<SearchDocument>> found = impl_->Documents(file.string(), entries);
    if (!found.ok()) return found.status();
    for (SearchDocument& document : *found) {
      if (leave_out != nullptr && entries && file.filename() == kHistoryFile &&
          document.time == leave_out->time && document.text == left_out) {
        continue;
      }
      documents.push_back(std::move(document));
    }
  }
  const fs::path shared_notes = fs::path(impl_->shared()) / kSharedNotesFile;
  for (const fs::path& file : MarkdownFiles(impl_->shared())) {
    absl::StatusOr<std::vector<SearchDocument>> found =
        impl_->Documents(file.string(), file == shared_notes);
    if (!found.ok()) return found.status();
    documents.insert(documents.end(), std::make_move_iterator(found->begin()),
                     std::make_move_iterator(found->end()));
  }
  return documents;
}

absl::StatusOr<std::vector<MemoryHit>> MemoryStore::Search(const ConversationRef& ref,
                                                           std::string_view query, size_t limit,
                                                           const MemoryEntry* leave_out) const {
  absl::StatusOr<std::vector<SearchDocument>> documents = Chunks(ref, leave_out);
  if (!documents.ok()) return documents.status();
  return RankBm25(*documents, query, limit);
}

absl::StatusOr<std::vector<SearchDocument>> MemoryStore::Reindex(const std::string& path) const {
  const fs::path file(path);
  const std::string name = file.filename().string();
  if (name.empty() || name[0] == '.' || !absl::EndsWith(name, ".md")) {
    return std::vector<SearchDocument>();
  }
  // A hidden name on the way (a folder being forgotten) is never searched either.
  auto hidden_on_the_way = [&file](const std::string& folder) {
    for (const fs::path& part : file.lexically_relative(folder)) {
      const std::string text = part.string();
      if (text.empty() || text[0] == '.') return true;
    }
    return false;
  };
  if (Impl::IsUnder(path, impl_->shared())) {
    if (hidden_on_the_way(impl_->shared())) return std::vector<SearchDocument>();
    return impl_->Documents(path, file == fs::path(impl_->shared()) / kSharedNotesFile);
  }
  for (ConversationRef::Kind kind : base::kConversationKinds) {
    const std::string folder = absl::StrCat(impl_->root(), "/", KindFolder(kind));
    if (Impl::IsUnder(path, folder)) {
      if (hidden_on_the_way(folder)) return std::vector<SearchDocument>();
      return impl_->Documents(path, HoldsEntries(file));
    }
  }
  return std::vector<SearchDocument>();
}

std::string MemoryStore::FolderFor(const ConversationRef& ref) const {
  return impl_->SessionFolder(ref);
}

absl::StatusOr<std::vector<ConversationRef>> MemoryStore::ListConversations() const {
  std::vector<ConversationRef> refs;
  for (ConversationRef::Kind kind : base::kConversationKinds) {
    const std::string folder = absl::StrCat(impl_->root(), "/", KindFolder(kind));
    std::error_code error;
    fs::directory_iterator it(folder, error);
    if (error) {
      if (error == std::errc::no_such_file_or_directory) continue;
      return absl::InternalError(
          absl::StrCat("list ", impl_->Relative(folder), ": ", error.message()));
    }
    std::vector<ConversationRef> of_kind;
    for (; it != fs::directory_iterator(); it.increment(error)) {
      if (error) break;
      const std::string name = it->path().filename().string();
      if (!it->is_directory(error) || absl::StartsWith(name, kTrashPrefix)) continue;
      std::optional<std::string> address = DecodeFolderName(name);
      if (!address.has_value()) continue;
      of_kind.push_back(ConversationRef{.kind = kind, .address = *std::move(address)});
    }
    if (error) {
      return absl::InternalError(
          absl::StrCat("list ", impl_->Relative(folder), ": ", error.message()));
    }
    std::sort(
        of_kind.begin(), of_kind.end(),
        [](const ConversationRef& a, const ConversationRef& b) { return a.address < b.address; });
    refs.insert(refs.end(), std::make_move_iterator(of_kind.begin()),
                std::make_move_iterator(of_kind.end()));
  }
  return refs;
}

}  // namespace herald::memory
