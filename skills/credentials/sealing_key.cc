#include "skills/credentials/sealing_key.h"

#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/sha.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <string_view>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "component/base/hex.h"
#include "component/base/private_files.h"

namespace herald::skills::credentials_internal {
namespace {

constexpr size_t kKeyBytes = 32;
// Longer than any key file holds: a bigger file is refused before it is read.
constexpr size_t kMaxKeyFileBytes = 66;
constexpr char kMakeKeyHint[] = "head -c 32 /dev/urandom > FILE && chmod 600 FILE";

// Decodes 64 hex digits into key->bytes; false when `hex` is not that. Decoded in place
// (rather than by base::HexDecode) so that no copy of the key is left in freed memory.
bool DecodeHexKey(std::string_view hex, SealingKey* key) {
  if (hex.size() != 2 * kKeyBytes) return false;
  for (size_t i = 0; i < kKeyBytes; ++i) {
    const int high = base::HexDigitValue(hex[2 * i]);
    const int low = base::HexDigitValue(hex[2 * i + 1]);
    if (high < 0 || low < 0) {
      OPENSSL_cleanse(key->bytes.data(), key->bytes.size());
      return false;
    }
    key->bytes[i] = static_cast<unsigned char>(high * 16 + low);
  }
  return true;
}

absl::Status SetKeyId(SealingKey* key) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  if (SHA256(key->bytes.data(), key->bytes.size(), digest) == nullptr) {
    return absl::InternalError("credentials: SHA-256 failed");
  }
  key->id.clear();
  for (int i = 0; i < 8; ++i) base::AppendHexByte(digest[i], base::HexCase::kLower, key->id);
  OPENSSL_cleanse(digest, sizeof(digest));
  return absl::OkStatus();
}

}  // namespace

SealingKey::~SealingKey() { OPENSSL_cleanse(bytes.data(), bytes.size()); }

absl::StatusOr<std::unique_ptr<SealingKey>> LoadKeyFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return base::ErrnoStatus(errno, "open credentials key file", path);
  absl::Cleanup close_fd = [fd] { ::close(fd); };
  struct stat info;
  if (::fstat(fd, &info) != 0) return base::ErrnoStatus(errno, "stat", path);
  if (!S_ISREG(info.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat("credentials key file ", path, " is not a regular file"));
  }
  if ((info.st_mode & 0077) != 0) {
    return absl::PermissionDeniedError(absl::StrFormat(
        "credentials key file %s may be read or changed by group or others (mode %04o); only "
        "Herald's user may have access: chmod 600 %s",
        path, info.st_mode & 07777, path));
  }
  const std::string size_rule = absl::StrCat(
      "credentials key file ", path,
      " must hold exactly 32 random bytes or 64 hex digits (and an optional newline); make one "
      "with: ",
      kMakeKeyHint);
  if (static_cast<size_t>(info.st_size) > kMaxKeyFileBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(size_rule, " (it holds ", info.st_size, " bytes)"));
  }

  std::array<char, kMaxKeyFileBytes + 1> buffer{};
  absl::Cleanup wipe = [&buffer] { OPENSSL_cleanse(buffer.data(), buffer.size()); };
  size_t size = 0;
  while (size < buffer.size()) {
    const ssize_t n = ::read(fd, buffer.data() + size, buffer.size() - size);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return base::ErrnoStatus(errno, "read", path);
    if (n == 0) break;
    size += static_cast<size_t>(n);
  }

  auto key = std::make_unique<SealingKey>();
  std::string_view content(buffer.data(), size);
  if (size == kKeyBytes) {
    // 32 bytes of text are a typed password or half a hex key, not random bytes.
    if (std::all_of(content.begin(), content.end(), [](char c) { return c >= 0x20 && c < 0x7f; })) {
      return absl::InvalidArgumentError(absl::StrCat(
          "credentials key file ", path,
          " holds 32 characters of text, not 32 random bytes (a hex key is 64 digits); make one "
          "with: ",
          kMakeKeyHint));
    }
    std::copy(content.begin(), content.end(), key->bytes.begin());
  } else {
    if (!content.empty() && content.back() == '\n') content.remove_suffix(1);
    if (!content.empty() && content.back() == '\r') content.remove_suffix(1);
    if (!DecodeHexKey(content, key.get())) {
      return absl::InvalidArgumentError(absl::StrCat(size_rule, " (it holds ", size, " bytes)"));
    }
  }
  if (absl::Status s = SetKeyId(key.get()); !s.ok()) return s;
  return key;
}

absl::StatusOr<std::unique_ptr<SealingKey>> LoadKeyFromEnvironment(const std::string& variable) {
  if (variable.empty()) {
    return absl::InvalidArgumentError(
        "credentials: no key file and no environment variable to read the key from");
  }
  const char* value = std::getenv(variable.c_str());
  if (value == nullptr || *value == '\0') {
    return absl::FailedPreconditionError(absl::StrCat(
        "credentials: no key; set [skills] credentials_key_file (make one with: ", kMakeKeyHint,
        ") or the environment variable ", variable, " to 64 hex digits (openssl rand -hex 32)"));
  }
  auto key = std::make_unique<SealingKey>();
  std::string_view hex(value);
  if (!DecodeHexKey(hex, key.get())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "credentials: the environment variable ", variable,
        " must hold 64 hex digits (openssl rand -hex 32); it holds ", hex.size(), " characters"));
  }
  if (absl::Status s = SetKeyId(key.get()); !s.ok()) return s;
  return key;
}

}  // namespace herald::skills::credentials_internal
