#include "component/memory/memory_store.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <tuple>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "component/base/absl_string_view.h"
#include "component/memory/atomic_file.h"
#include "component/memory/jid_folder.h"
#include "component/memory/markdown_format.h"
#include "component/memory/memory_search.h"

namespace herald::memory {
namespace {

namespace fs = std::filesystem;

constexpr char kHistoryFile[] = "history.md";
constexpr char kSessionsFolder[] = "sessions";
constexpr char kContextFile[] = "context.md";
constexpr char kIdentityFile[] = "identity.md";
constexpr char kChosenIdentityFile[] = "chosen-identity.txt";
constexpr char kInstructionsFile[] = "instructions.md";
constexpr char kTrashPrefix[] = ".forget-";
// History reads this much of the end of the file first and doubles it until it holds enough
// entries, so a long history costs what the last entries take, not the whole file.
constexpr uint64_t kFirstHistoryChunk = 64 << 10;
// Search skips files larger than this rather than reading them into memory.
constexpr uint64_t kMaxSearchFileBytes = 32 << 20;

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

// Identity names become file names under identities/: a conservative alphabet, no leading
// dot, so a name can never reach outside that folder.
absl::Status CheckIdentityName(std::string_view name) {
  if (name.empty() || name.size() > 64) {
    return absl::InvalidArgumentError("an identity name has 1 to 64 characters");
  }
  for (size_t i = 0; i < name.size(); ++i) {
    const auto c = static_cast<unsigned char>(name[i]);
    const bool ok = absl::ascii_isalnum(c) || c == '_' || c == '-' || (c == '.' && i > 0);
    if (!ok) {
      return absl::InvalidArgumentError(
          "an identity name uses letters, digits, '_', '-' and '.' (not first)");
    }
  }
  return absl::OkStatus();
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

}  // namespace

class MemoryStore::Impl {
 public:
  explicit Impl(std::string root) : root_(std::move(root)) {}

  const std::string& root() const { return root_; }

  std::string ConversationFolder(const ConversationRef& ref) const {
    return absl::StrCat(root_, "/", KindFolder(ref.kind), "/", EncodeFolderName(ref.address));
  }

  std::string SessionFolder(const ConversationRef& ref) const {
    std::string folder = ConversationFolder(ref);
    if (!ref.thread.empty()) absl::StrAppend(&folder, "/threads/", EncodeFolderName(ref.thread));
    return folder;
  }

  std::string Relative(const std::string& path) const {
    return path.size() > root_.size() ? path.substr(root_.size() + 1) : path;
  }

 private:
  std::string root_;
};

MemoryStore::MemoryStore(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
MemoryStore::~MemoryStore() = default;

absl::StatusOr<std::unique_ptr<MemoryStore>> MemoryStore::Open(const std::string& root) {
  if (root.empty()) return absl::InvalidArgumentError("the memory path is empty");
  std::string normalised = root;
  while (normalised.size() > 1 && normalised.back() == '/') normalised.pop_back();
  absl::Status status = CreateDirectories(normalised);
  if (!status.ok()) return status;
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
  return std::unique_ptr<MemoryStore>(new MemoryStore(std::make_unique<Impl>(normalised)));
}

absl::Status MemoryStore::Append(const ConversationRef& ref, const MemoryEntry& entry) {
  absl::Status status = base::CheckConversationRef(ref);
  if (!status.ok()) return status;
  return AppendDurably(absl::StrCat(impl_->SessionFolder(ref), "/", kHistoryFile),
                       FormatEntry(entry), TailRepair);
}

absl::StatusOr<std::vector<MemoryEntry>> MemoryStore::History(const ConversationRef& ref,
                                                              size_t max_entries) const {
  absl::Status status = base::CheckConversationRef(ref);
  if (!status.ok()) return status;
  if (max_entries == 0) return std::vector<MemoryEntry>();
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
    return name;
  }
  return absl::ResourceExhaustedError("too many archived sessions with the same time");
}

absl::StatusOr<std::vector<std::string>> MemoryStore::ListSessions(
    const ConversationRef& ref) const {
  absl::Status status = base::CheckConversationRef(ref);
  if (!status.ok()) return status;
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
    if (errno == ENOENT) return absl::OkStatus();
    return absl::InternalError(absl::StrCat("rename ", folder, ": ", std::strerror(errno)));
  }
  status = SyncDirectory(parent);
  if (!status.ok()) return status;
  std::error_code error;
  fs::remove_all(trash, error);
  if (error) return absl::InternalError(absl::StrCat("remove ", trash, ": ", error.message()));
  return absl::OkStatus();
}

absl::Status MemoryStore::ClearSession(const ConversationRef& ref) {
  absl::Status status = base::CheckConversationRef(ref);
  if (!status.ok()) return status;
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
  return absl::OkStatus();
}

absl::StatusOr<std::string> MemoryStore::ReadContext(const ConversationRef& ref) const {
  absl::Status status = base::CheckConversationRef(ref);
  if (!status.ok()) return status;
  absl::StatusOr<std::optional<std::string>> text =
      ReadFileIfExists(absl::StrCat(impl_->ConversationFolder(ref), "/", kContextFile));
  if (!text.ok()) return text.status();
  return text->value_or("");
}

absl::Status MemoryStore::WriteContext(const ConversationRef& ref, std::string_view text) {
  absl::Status status = base::CheckConversationRef(ref);
  if (!status.ok()) return status;
  return WriteFileAtomically(absl::StrCat(impl_->ConversationFolder(ref), "/", kContextFile), text);
}

absl::StatusOr<std::optional<std::string>> MemoryStore::ReadOwnIdentity(
    const ConversationRef& ref) const {
  absl::Status status = base::CheckConversationRef(ref);
  if (!status.ok()) return status;
  return ReadFileIfExists(absl::StrCat(impl_->ConversationFolder(ref), "/", kIdentityFile));
}

absl::StatusOr<std::optional<std::string>> MemoryStore::ChosenIdentity(
    const ConversationRef& ref) const {
  absl::Status status = base::CheckConversationRef(ref);
  if (!status.ok()) return status;
  absl::StatusOr<std::optional<std::string>> text = ReadFileIfExists(
      absl::StrCat(impl_->ConversationFolder(ref), "/", kChosenIdentityFile), 4096);
  if (!text.ok()) return text.status();
  if (!text->has_value()) return std::nullopt;
  // An operator may have edited the file by hand: a name that is not valid is no choice.
  std::string name(absl::StripAsciiWhitespace(**text));
  if (!CheckIdentityName(name).ok()) return std::nullopt;
  return name;
}

absl::Status MemoryStore::SetChosenIdentity(const ConversationRef& ref, std::string_view name) {
  absl::Status status = base::CheckConversationRef(ref);
  if (!status.ok()) return status;
  const std::string folder = impl_->ConversationFolder(ref);
  const std::string path = absl::StrCat(folder, "/", kChosenIdentityFile);
  if (name.empty()) {
    if (::unlink(path.c_str()) != 0) {
      if (errno == ENOENT) return absl::OkStatus();
      return absl::InternalError(absl::StrCat("remove ", path, ": ", std::strerror(errno)));
    }
    return SyncDirectory(folder);
  }
  status = CheckIdentityName(name);
  if (!status.ok()) return status;
  return WriteFileAtomically(path, absl::StrCat(AbslView(name), "\n"));
}

absl::StatusOr<std::optional<std::string>> MemoryStore::ReadNamedIdentity(
    std::string_view name) const {
  absl::Status status = CheckIdentityName(name);
  if (!status.ok()) return status;
  return ReadFileIfExists(absl::StrCat(impl_->root(), "/identities/", AbslView(name), ".md"));
}

absl::StatusOr<std::vector<std::string>> MemoryStore::ListIdentities() const {
  const fs::path folder = impl_->root() + "/identities";
  std::vector<std::string> names;
  std::error_code error;
  fs::directory_iterator it(folder, error);
  if (error) {
    if (error == std::errc::no_such_file_or_directory) return names;
    return absl::InternalError(absl::StrCat("list ", folder.string(), ": ", error.message()));
  }
  for (const fs::directory_entry& entry : it) {
    const std::string file_name = entry.path().filename().string();
    absl::string_view name(file_name);
    if (!absl::ConsumeSuffix(&name, ".md")) continue;
    const std::string_view view(name.data(), name.size());
    if (!CheckIdentityName(view).ok() || !entry.is_regular_file(error)) continue;
    names.emplace_back(view);
  }
  std::sort(names.begin(), names.end());
  return names;
}

absl::StatusOr<std::optional<std::string>> MemoryStore::ReadGlobalIdentity() const {
  return ReadFileIfExists(absl::StrCat(impl_->root(), "/", kIdentityFile));
}

absl::StatusOr<std::optional<std::string>> MemoryStore::ReadRoomInstructions(
    const ConversationRef& room) const {
  absl::Status status = base::CheckConversationRef(room);
  if (!status.ok()) return status;
  if (room.kind != ConversationRef::Kind::kRoom) {
    return absl::InvalidArgumentError("only rooms have instructions");
  }
  return ReadFileIfExists(absl::StrCat(impl_->ConversationFolder(room), "/", kInstructionsFile));
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

std::string EntryExcerpt(const MemoryEntry& entry) {
  return absl::StrCat(entry.author, " (", entry.role, ", ",
                      absl::FormatTime("%Y-%m-%d %H:%M UTC", entry.time, absl::UTCTimeZone()),
                      "): ", entry.text);
}

}  // namespace

absl::StatusOr<std::vector<MemoryHit>> MemoryStore::Search(const ConversationRef& ref,
                                                           std::string_view query, size_t limit,
                                                           const MemoryEntry* leave_out) const {
  absl::Status status = base::CheckConversationRef(ref);
  if (!status.ok()) return status;
  // The whole conversation (every thread) and shared/; nothing else is ever opened.
  std::vector<fs::path> files = MarkdownFiles(impl_->ConversationFolder(ref));
  const std::vector<fs::path> shared = MarkdownFiles(impl_->root() + "/shared");
  const size_t own_files = files.size();
  files.insert(files.end(), shared.begin(), shared.end());

  std::vector<SearchDocument> documents;
  for (size_t i = 0; i < files.size(); ++i) {
    const std::string path = files[i].string();
    absl::StatusOr<std::optional<std::string>> text = ReadFileIfExists(path, kMaxSearchFileBytes);
    if (absl::IsResourceExhausted(text.status())) continue;  // too large to search
    if (!text.ok()) return text.status();
    if (!text->has_value()) continue;  // removed meanwhile
    const std::string relative = impl_->Relative(path);
    const bool entries = i < own_files && (files[i].filename() == kHistoryFile ||
                                           files[i].parent_path().filename() == kSessionsFolder);
    if (entries) {
      for (const MemoryEntry& entry : ParseEntries(**text, /*at_file_start=*/true)) {
        if (leave_out != nullptr && entry == *leave_out) continue;
        documents.push_back({relative, EntryExcerpt(entry)});
      }
    } else {
      for (std::string& paragraph : SplitParagraphs(**text)) {
        documents.push_back({relative, std::move(paragraph)});
      }
    }
  }
  return RankBm25(documents, query, limit);
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
