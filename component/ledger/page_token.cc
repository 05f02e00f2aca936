#include "component/ledger/page_token.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <optional>

#include "absl/strings/escaping.h"
#include "component/base/absl_string_view.h"

namespace herald::ledger {
namespace {

constexpr char kVersion = 1;
constexpr size_t kMacBytes = 16;
// Tokens come from clients: refuse big ones before decoding them.
constexpr size_t kMaxTokenChars = 16 * 1024;

void AppendUint64(std::string& out, uint64_t value) {
  for (int shift = 56; shift >= 0; shift -= 8) out.push_back(static_cast<char>(value >> shift));
}

void AppendString(std::string& out, std::string_view text) {
  AppendUint64(out, text.size());
  out.append(text);
}

// Reads what AppendUint64 / AppendString wrote, refusing to run past the end.
class Reader {
 public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}

  std::optional<uint64_t> Uint64() {
    if (bytes_.size() < 8) return std::nullopt;
    uint64_t value = 0;
    for (int i = 0; i < 8; ++i) value = (value << 8) | static_cast<unsigned char>(bytes_[i]);
    bytes_.remove_prefix(8);
    return value;
  }
  std::optional<std::string> String() {
    std::optional<uint64_t> size = Uint64();
    if (!size || *size > bytes_.size()) return std::nullopt;
    std::string text(bytes_.substr(0, *size));
    bytes_.remove_prefix(*size);
    return text;
  }
  std::optional<char> Byte() {
    if (bytes_.empty()) return std::nullopt;
    const char byte = bytes_[0];
    bytes_.remove_prefix(1);
    return byte;
  }
  bool AtEnd() const { return bytes_.empty(); }

 private:
  std::string_view bytes_;
};

absl::Status BadToken() {
  return absl::InvalidArgumentError(
      "page_token is not a token from a previous page of this query; start again without one");
}

}  // namespace

std::string PageTokenCodec::Mac(std::string_view payload) const {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  HMAC(EVP_sha256(), key_.data(), static_cast<int>(key_.size()),
       reinterpret_cast<const unsigned char*>(payload.data()), payload.size(), digest, &size);
  return std::string(reinterpret_cast<const char*>(digest), kMacBytes);
}

std::string PageTokenCodec::Encode(const PageCursor& cursor) const {
  std::string payload;
  payload.push_back(kVersion);
  payload.push_back(static_cast<char>(cursor.window));
  AppendUint64(payload, static_cast<uint64_t>(cursor.window_start));
  AppendString(payload, cursor.jid_filter);
  AppendString(payload, cursor.model_filter);
  AppendString(payload, cursor.after_jid);
  AppendString(payload, cursor.after_model);
  payload += Mac(payload);
  return absl::WebSafeBase64Escape(payload);
}

absl::StatusOr<PageCursor> PageTokenCodec::Decode(std::string_view token) const {
  if (token.size() > kMaxTokenChars) return BadToken();
  std::string bytes;
  if (!absl::WebSafeBase64Unescape(AbslView(token), &bytes)) return BadToken();
  if (bytes.size() < kMacBytes + 2) return BadToken();
  const std::string_view payload(bytes.data(), bytes.size() - kMacBytes);
  const std::string expected = Mac(payload);
  if (CRYPTO_memcmp(expected.data(), bytes.data() + payload.size(), kMacBytes) != 0) {
    return BadToken();
  }
  Reader reader(payload);
  PageCursor cursor;
  std::optional<char> version = reader.Byte();
  std::optional<char> window = reader.Byte();
  std::optional<uint64_t> start = reader.Uint64();
  std::optional<std::string> jid_filter = reader.String();
  std::optional<std::string> model_filter = reader.String();
  std::optional<std::string> after_jid = reader.String();
  std::optional<std::string> after_model = reader.String();
  if (!version || *version != kVersion || !window || !start || !jid_filter || !model_filter ||
      !after_jid || !after_model || !reader.AtEnd()) {
    return BadToken();
  }
  if (*window < static_cast<char>(Window::kDay) || *window > static_cast<char>(Window::kLifetime)) {
    return BadToken();
  }
  cursor.window = static_cast<Window>(*window);
  cursor.window_start = static_cast<int64_t>(*start);
  cursor.jid_filter = std::move(*jid_filter);
  cursor.model_filter = std::move(*model_filter);
  cursor.after_jid = std::move(*after_jid);
  cursor.after_model = std::move(*after_model);
  return cursor;
}

}  // namespace herald::ledger
