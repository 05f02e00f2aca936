#include "component/memory/jid_folder.h"

#include <openssl/sha.h>

#include <array>

#include "component/base/hex.h"

namespace herald::memory {
namespace {

constexpr char kHashMark = '~';
// Prefix kept in front of "~<64 hex digits>" so that hashed names stay recognisable.
constexpr size_t kHashedPrefixLength = kMaxFolderNameLength - 1 - 2 * SHA256_DIGEST_LENGTH;

bool IsLiteral(unsigned char c, bool first) {
  if (c >= 'a' && c <= 'z') return true;
  if (c >= '0' && c <= '9') return true;
  if (c == '-' || c == '_') return true;
  return c == '.' && !first;
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;  // lower-case hex is not canonical
}

}  // namespace

std::string EncodeFolderName(std::string_view name) {
  if (name.empty()) return "%";
  std::string encoded;
  encoded.reserve(name.size());
  // Where each escape or literal starts, so a hashed name is cut between them.
  size_t cut = 0;
  for (size_t i = 0; i < name.size(); ++i) {
    const auto c = static_cast<unsigned char>(name[i]);
    if (IsLiteral(c, i == 0)) {
      encoded.push_back(static_cast<char>(c));
    } else {
      encoded.push_back('%');
      base::AppendHexByte(c, base::HexCase::kUpper, encoded);
    }
    if (encoded.size() <= kHashedPrefixLength) cut = encoded.size();
    if (encoded.size() > kMaxFolderNameLength) break;  // hashed anyway; stop copying
  }
  if (encoded.size() <= kMaxFolderNameLength) return encoded;
  encoded.resize(cut);
  encoded.push_back(kHashMark);
  encoded += base::Sha256Hex(name);
  return encoded;
}

std::optional<std::string> DecodeFolderName(std::string_view folder_name) {
  if (folder_name == "%") return std::string();
  if (folder_name.empty() || folder_name.size() > kMaxFolderNameLength) return std::nullopt;
  std::string decoded;
  decoded.reserve(folder_name.size());
  for (size_t i = 0; i < folder_name.size(); ++i) {
    const auto c = static_cast<unsigned char>(folder_name[i]);
    const bool first = decoded.empty();
    if (c != '%') {
      if (!IsLiteral(c, first)) return std::nullopt;  // includes '~': hashed names
      decoded.push_back(static_cast<char>(c));
      continue;
    }
    if (i + 2 >= folder_name.size()) return std::nullopt;
    const int high = HexValue(folder_name[i + 1]);
    const int low = HexValue(folder_name[i + 2]);
    if (high < 0 || low < 0) return std::nullopt;
    const auto byte = static_cast<unsigned char>(high * 16 + low);
    if (IsLiteral(byte, first)) return std::nullopt;  // an escape the encoder never writes
    decoded.push_back(static_cast<char>(byte));
    i += 2;
  }
  return decoded;
}

}  // namespace herald::memory
