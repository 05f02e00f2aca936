// component/memory/memory_attachments.cc
//
// MemoryStore::SaveAttachment and ReadAttachment (memory_store.h): the files people sent, kept
// in the conversation's folder under names Herald makes.
#include <openssl/rand.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "component/base/absl_string_view.h"
#include "component/base/hex.h"
#include "component/memory/atomic_file.h"
#include "component/memory/memory_store.h"

namespace herald::memory {
namespace {

// 1-8 of [a-z0-9].
bool IsExtension(std::string_view extension) {
  if (extension.empty() || extension.size() > 8) return false;
  for (char c : extension) {
    if (!absl::ascii_islower(c) && !absl::ascii_isdigit(c)) return false;
  }
  return true;
}

// "attachments/" + "YYYYMMDD-HHMMSS-" + 8 hex + "." + extension.
bool IsAttachmentName(std::string_view file) {
  const std::string prefix = absl::StrCat(kAttachmentsFolder, "/");
  if (file.substr(0, prefix.size()) != prefix) return false;
  file.remove_prefix(prefix.size());
  const size_t dot = file.find('.');
  if (dot != 24 || !IsExtension(file.substr(dot + 1))) return false;
  for (size_t i = 0; i < dot; ++i) {
    const char c = file[i];
    const bool dash = i == 8 || i == 15;
    if (dash ? c != '-' : !absl::ascii_isxdigit(c)) return false;
  }
  return true;
}

}  // namespace

absl::StatusOr<std::string> MemoryStore::SaveAttachment(const ConversationRef& ref,
                                                        std::string_view bytes,
                                                        std::string_view extension,
                                                        absl::Time now) {
  absl::Status status = base::CheckConversationRef(ref);
  if (!status.ok()) return status;
  if (!IsExtension(extension)) {
    return absl::InvalidArgumentError("an attachment's extension is 1-8 of a-z and 0-9");
  }
  unsigned char random[4];
  if (RAND_bytes(random, sizeof(random)) != 1) {
    return absl::InternalError("no random bytes for an attachment's name");
  }
  const std::string name =
      base::HexEncode(std::string_view(reinterpret_cast<const char*>(random), sizeof(random)));
  const std::string file = absl::StrCat(kAttachmentsFolder, "/",
                                        absl::FormatTime("%Y%m%d-%H%M%S", now, absl::UTCTimeZone()),
                                        "-", name, ".", AbslView(extension));
  Refresh(ref);
  status = WriteFileAtomically(absl::StrCat(FolderFor(ref), "/", file), bytes);
  if (!status.ok()) return status;
  ShareChange(ref, {ThreadPrefix(ref) + file});
  return file;
}

absl::StatusOr<std::string> MemoryStore::ReadAttachment(const ConversationRef& ref,
                                                        std::string_view file) const {
  absl::Status status = base::CheckConversationRef(ref);
  if (!status.ok()) return status;
  if (!IsAttachmentName(file)) {
    return absl::InvalidArgumentError("not the name of an attachment Herald kept");
  }
  Refresh(ref);
  absl::StatusOr<std::optional<std::string>> bytes =
      ReadFileIfExists(absl::StrCat(FolderFor(ref), "/", AbslView(file)));
  if (!bytes.ok()) return bytes.status();
  if (!bytes->has_value()) return absl::NotFoundError("the attachment is no longer kept");
  return **bytes;
}

}  // namespace herald::memory
