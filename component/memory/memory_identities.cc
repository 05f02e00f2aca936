// component/memory/memory_identities.cc
//
// MemoryStore's identities (A5) and a room's instructions (memory_store.h): the files that say
// who Herald is in a conversation.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "component/base/absl_string_view.h"
#include "component/memory/atomic_file.h"
#include "component/memory/memory_store.h"

namespace herald::memory {
namespace {

namespace fs = std::filesystem;

constexpr char kIdentityFile[] = "identity.md";
constexpr char kChosenIdentityFile[] = "chosen-identity.txt";
constexpr char kInstructionsFile[] = "instructions.md";

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

// The folder of the whole conversation, whatever ref.thread says.
std::string ConversationFolder(const MemoryStore& store, const ConversationRef& ref) {
  return store.FolderFor(ConversationRef{.kind = ref.kind, .address = ref.address});
}

}  // namespace

absl::StatusOr<std::optional<std::string>> MemoryStore::ReadOwnIdentity(
    const ConversationRef& ref) const {
  absl::Status status = base::CheckConversationRef(ref);
  if (!status.ok()) return status;
  Refresh(ref);
  return ReadFileIfExists(absl::StrCat(ConversationFolder(*this, ref), "/", kIdentityFile));
}

absl::StatusOr<std::optional<std::string>> MemoryStore::ChosenIdentity(
    const ConversationRef& ref) const {
  absl::Status status = base::CheckConversationRef(ref);
  if (!status.ok()) return status;
  Refresh(ref);
  absl::StatusOr<std::optional<std::string>> text = ReadFileIfExists(
      absl::StrCat(ConversationFolder(*this, ref), "/", kChosenIdentityFile), 4096);
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
  if (!name.empty()) status = CheckIdentityName(name);
  if (!status.ok()) return status;
  Refresh(ref);
  const std::string folder = ConversationFolder(*this, ref);
  const std::string path = absl::StrCat(folder, "/", kChosenIdentityFile);
  if (name.empty()) {
    if (::unlink(path.c_str()) != 0) {
      if (errno == ENOENT) return absl::OkStatus();
      return absl::InternalError(absl::StrCat("remove ", path, ": ", std::strerror(errno)));
    }
    status = SyncDirectory(folder);
  } else {
    status = WriteFileAtomically(path, absl::StrCat(AbslView(name), "\n"));
  }
  if (status.ok()) ShareChange(ref, {kChosenIdentityFile});
  return status;
}

absl::StatusOr<std::optional<std::string>> MemoryStore::ReadNamedIdentity(
    std::string_view name) const {
  absl::Status status = CheckIdentityName(name);
  if (!status.ok()) return status;
  return ReadFileIfExists(absl::StrCat(root(), "/identities/", AbslView(name), ".md"));
}

absl::StatusOr<std::vector<std::string>> MemoryStore::ListIdentities() const {
  const fs::path folder = root() + "/identities";
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
  return ReadFileIfExists(absl::StrCat(root(), "/", kIdentityFile));
}

absl::StatusOr<std::optional<std::string>> MemoryStore::ReadRoomInstructions(
    const ConversationRef& room) const {
  absl::Status status = base::CheckConversationRef(room);
  if (!status.ok()) return status;
  if (room.kind != ConversationRef::Kind::kRoom) {
    return absl::InvalidArgumentError("only rooms have instructions");
  }
  Refresh(room);
  return ReadFileIfExists(absl::StrCat(ConversationFolder(*this, room), "/", kInstructionsFile));
}

}  // namespace herald::memory
