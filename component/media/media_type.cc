#include "component/media/media_type.h"

#include <magic.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <type_traits>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/string_view.h"
#include "component/base/absl_string_view.h"
#include "component/base/mutex.h"
#include "glog/logging.h"

namespace herald::media {
namespace {

constexpr std::string_view kOctetStream = "application/octet-stream";

// No decompression (a gzip is a gzip, and looking inside means inflating a stranger's bomb),
// and none of the deep parsers for formats Herald never reads (tar, ELF, OLE compound files).
constexpr int kMagicFlags = MAGIC_MIME_TYPE | MAGIC_ERROR | MAGIC_NO_CHECK_COMPRESS |
                            MAGIC_NO_CHECK_TAR | MAGIC_NO_CHECK_ELF | MAGIC_NO_CHECK_CDF |
                            MAGIC_NO_CHECK_APPTYPE;

struct MagicCloser {
  void operator()(magic_t cookie) const { magic_close(cookie); }
};
using MagicCookie = std::unique_ptr<std::remove_pointer_t<magic_t>, MagicCloser>;

// magic_load fills libmagic's process-wide type tables on first use without a lock, so
// cookies are loaded one at a time; once loaded, each is used by its own thread only.
base::Mutex& LoadMutex() {
  static auto* mu = new base::Mutex();
  return *mu;
}

MagicCookie OpenCookie() {
  base::MutexLock lock(&LoadMutex());
  MagicCookie cookie(magic_open(kMagicFlags));
  if (cookie == nullptr) {
    LOG(ERROR) << "libmagic: magic_open failed: " << std::strerror(errno)
               << "; every attachment will be unsupported";
    return nullptr;
  }
  if (magic_load(cookie.get(), nullptr) != 0) {
    const char* error = magic_error(cookie.get());
    LOG(ERROR) << "libmagic cannot load its database (Debian's libmagic-mgc installs "
                  "/usr/share/misc/magic.mgc): "
               << (error != nullptr ? error : "no reason given")
               << "; every attachment will be unsupported";
    return nullptr;
  }
  return cookie;
}

// This thread's cookie, made on first use; nullptr when libmagic could not be loaded (said
// once per thread in the log).
magic_t ThreadCookie() {
  thread_local const MagicCookie cookie = OpenCookie();
  return cookie.get();
}

// libmagic's spellings of the types Herald handles, and what SniffMediaType says instead.
struct Spelling {
  std::string_view libmagic;
  std::string_view herald;
};
constexpr Spelling kSpellings[] = {
    {"audio/x-m4a", "audio/mp4"},          // an M4A brand in an MP4 container
    {"audio/x-hx-aac-adts", "audio/aac"},  // raw AAC frames
    {"audio/x-aac", "audio/aac"},
    {"audio/x-wav", "audio/wav"},
    {"audio/vnd.wave", "audio/wav"},
    {"application/x-ndjson", "text/plain"},  // JSON Lines: text, but not one JSON value
    {"text/troff", "text/plain"},
};

struct Kind {
  std::string_view media_type;
  AttachmentKind kind;
};
constexpr Kind kKinds[] = {
    {"image/png", AttachmentKind::kImage},          {"image/jpeg", AttachmentKind::kImage},
    {"image/gif", AttachmentKind::kImage},          {"image/webp", AttachmentKind::kImage},
    {"text/plain", AttachmentKind::kDocument},      {"text/markdown", AttachmentKind::kDocument},
    {"text/csv", AttachmentKind::kDocument},        {"application/json", AttachmentKind::kDocument},
    {"application/pdf", AttachmentKind::kDocument}, {"audio/ogg", AttachmentKind::kAudio},
    {"audio/mp4", AttachmentKind::kAudio},          {"audio/aac", AttachmentKind::kAudio},
    {"audio/wav", AttachmentKind::kAudio},
};

// Text labels the file name may give bytes already sniffed as text/plain.
struct TextLabel {
  std::string_view extension;  // lower case, with the dot
  std::string_view media_type;
};
constexpr TextLabel kTextLabels[] = {
    {".md", "text/markdown"},
    {".markdown", "text/markdown"},
    {".csv", "text/csv"},
};

// `media_type` without parameters or surrounding space, in lower case, libmagic's spellings
// replaced by Herald's.
std::string Canonical(std::string_view media_type) {
  absl::string_view bare = AbslView(media_type);
  bare = bare.substr(0, bare.find(';'));
  std::string type = absl::AsciiStrToLower(absl::StripAsciiWhitespace(bare));
  for (const Spelling& spelling : kSpellings) {
    if (type == spelling.libmagic) return std::string(spelling.herald);
  }
  // libmagic's guesses at a programming language or markup ("text/x-c", "text/x-shellscript",
  // "text/x-tex", ...) are text to the model.
  if (absl::StartsWith(type, "text/x-")) return "text/plain";
  return type;
}

}  // namespace

std::string SniffMediaType(std::string_view bytes) {
  magic_t cookie = ThreadCookie();
  if (cookie == nullptr) return std::string(kOctetStream);
  const char* type = magic_buffer(cookie, bytes.empty() ? "" : bytes.data(), bytes.size());
  if (type == nullptr) {
    const char* error = magic_error(cookie);
    LOG(WARNING) << "libmagic could not sniff " << bytes.size()
                 << " bytes: " << (error != nullptr ? error : "no reason given");
    return std::string(kOctetStream);
  }
  return Canonical(type);
}

std::string SniffMediaType(std::string_view bytes, std::string_view file_name) {
  std::string type = SniffMediaType(bytes);
  if (type != "text/plain") return type;
  const std::string name = absl::AsciiStrToLower(AbslView(file_name));
  for (const TextLabel& label : kTextLabels) {
    if (name.size() > label.extension.size() && absl::EndsWith(name, AbslView(label.extension))) {
      return std::string(label.media_type);
    }
  }
  return type;
}

AttachmentKind KindOf(std::string_view media_type) {
  const std::string type = Canonical(media_type);
  for (const Kind& row : kKinds) {
    if (type == row.media_type) return row.kind;
  }
  return AttachmentKind::kUnsupported;
}

std::string_view AttachmentKindName(AttachmentKind kind) {
  switch (kind) {
    case AttachmentKind::kImage:
      return "image";
    case AttachmentKind::kDocument:
      return "document";
    case AttachmentKind::kAudio:
      return "audio";
    case AttachmentKind::kUnsupported:
      return "unsupported";
  }
  return "unsupported";
}

}  // namespace herald::media
