#include "component/xmpp/scram_internal.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <cstdint>
#include <limits>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "component/base/absl_string_view.h"

namespace herald::xmpp::scram_internal {
namespace {

const EVP_MD* Digest(ScramHash hash) {
  switch (hash) {
    case ScramHash::kSha1:
      return EVP_sha1();
    case ScramHash::kSha256:
      return EVP_sha256();
  }
  return EVP_sha256();
}

}  // namespace

size_t DigestSize(ScramHash hash) { return static_cast<size_t>(EVP_MD_get_size(Digest(hash))); }

std::string Hash(ScramHash hash, std::string_view data) {
  std::string out(EVP_MAX_MD_SIZE, '\0');
  unsigned int length = 0;
  // EVP_Digest cannot fail for a built-in digest short of memory exhaustion; an empty result
  // then makes every comparison fail, which is the safe direction.
  if (EVP_Digest(data.data(), data.size(), reinterpret_cast<unsigned char*>(out.data()), &length,
                 Digest(hash), nullptr) != 1) {
    return std::string();
  }
  out.resize(length);
  return out;
}

std::string Hmac(ScramHash hash, std::string_view key, std::string_view data) {
  std::string out(EVP_MAX_MD_SIZE, '\0');
  unsigned int length = 0;
  if (key.size() > static_cast<size_t>(std::numeric_limits<int>::max()) ||
      HMAC(Digest(hash), key.data(), static_cast<int>(key.size()),
           reinterpret_cast<const unsigned char*>(data.data()), data.size(),
           reinterpret_cast<unsigned char*>(out.data()), &length) == nullptr) {
    return std::string();
  }
  out.resize(length);
  return out;
}

absl::StatusOr<std::string> Hi(ScramHash hash, std::string_view password, std::string_view salt,
                               int iterations) {
  constexpr size_t kIntMax = static_cast<size_t>(std::numeric_limits<int>::max());
  if (iterations < 1) return absl::InvalidArgumentError("SCRAM iteration count must be positive");
  if (password.size() > kIntMax || salt.size() > kIntMax) {
    return absl::InvalidArgumentError("SCRAM password or salt is too long");
  }
  std::string out(DigestSize(hash), '\0');
  if (PKCS5_PBKDF2_HMAC(password.data(), static_cast<int>(password.size()),
                        reinterpret_cast<const unsigned char*>(salt.data()),
                        static_cast<int>(salt.size()), iterations, Digest(hash),
                        static_cast<int>(out.size()),
                        reinterpret_cast<unsigned char*>(out.data())) != 1) {
    return absl::InternalError("OpenSSL could not compute PBKDF2 for SCRAM");
  }
  return out;
}

ScramKeys DeriveKeys(ScramHash hash, std::string_view salted_password) {
  ScramKeys keys;
  keys.client_key = Hmac(hash, salted_password, "Client Key");
  keys.stored_key = Hash(hash, keys.client_key);
  keys.server_key = Hmac(hash, salted_password, "Server Key");
  return keys;
}

std::string AuthMessage(std::string_view client_first_bare, std::string_view server_first,
                        std::string_view client_final_without_proof) {
  return absl::StrCat(AbslView(client_first_bare), ",", AbslView(server_first), ",",
                      AbslView(client_final_without_proof));
}

std::string XorBytes(std::string_view a, std::string_view b) {
  std::string out(a.size(), '\0');
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    out[i] = static_cast<char>(a[i] ^ b[i]);
  }
  return out;
}

bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  // Lengths are public (the digest size), so only the contents need constant time.
  if (a.size() != b.size()) return false;
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

void Cleanse(std::string& secret) {
  if (!secret.empty()) OPENSSL_cleanse(secret.data(), secret.size());
  secret.clear();
}

absl::StatusOr<std::vector<Attribute>> ParseAttributes(std::string_view message) {
  if (message.empty()) return absl::InvalidArgumentError("the SCRAM message is empty");
  std::vector<Attribute> attributes;
  size_t start = 0;
  while (true) {
    size_t comma = message.find(',', start);
    std::string_view item =
        message.substr(start, comma == std::string_view::npos ? message.npos : comma - start);
    if (item.size() < 2 || !absl::ascii_isalpha(static_cast<unsigned char>(item[0])) ||
        item[1] != '=') {
      return absl::InvalidArgumentError(
          "the SCRAM message has an item that is not of the form 'x=value'");
    }
    attributes.push_back(Attribute{item[0], item.substr(2)});
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return attributes;
}

std::string EscapeSaslName(std::string_view name) {
  std::string out;
  out.reserve(name.size());
  for (char c : name) {
    if (c == ',') {
      out += "=2C";
    } else if (c == '=') {
      out += "=3D";
    } else {
      out += c;
    }
  }
  return out;
}

absl::StatusOr<std::string> UnescapeSaslName(std::string_view escaped) {
  std::string out;
  out.reserve(escaped.size());
  for (size_t i = 0; i < escaped.size(); ++i) {
    char c = escaped[i];
    if (c == ',') return absl::InvalidArgumentError("a SCRAM username contains a bare ','");
    if (c != '=') {
      out += c;
      continue;
    }
    // ABNF strings are case-insensitive (RFC 5234), so "=2c" is as good as "=2C".
    absl::string_view code = AbslView(escaped.substr(i + 1, 2));
    if (absl::EqualsIgnoreCase(code, "2C")) {
      out += ',';
    } else if (absl::EqualsIgnoreCase(code, "3D")) {
      out += '=';
    } else {
      return absl::InvalidArgumentError(
          "a SCRAM username contains '=' that is not followed by 2C or 3D");
    }
    i += 2;
  }
  return out;
}

bool IsValidNonce(std::string_view nonce) {
  if (nonce.empty()) return false;
  for (char c : nonce) {
    unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x21 || u > 0x7E || c == ',') return false;
  }
  return true;
}

absl::StatusOr<std::string> RandomNonce() {
  unsigned char bytes[24];
  if (RAND_bytes(bytes, sizeof(bytes)) != 1) {
    return absl::InternalError("OpenSSL could not produce random bytes for a SCRAM nonce");
  }
  return absl::Base64Escape(absl::string_view(reinterpret_cast<const char*>(bytes), sizeof(bytes)));
}

absl::StatusOr<int> ParseIterationCount(std::string_view text) {
  // Ten digits already exceed the maximum; refusing longer input early keeps SimpleAtoi from
  // having to reason about overflow, and digits-only refuses "+4096" and " 4096".
  if (text.empty() || text.size() > 10) {
    return absl::InvalidArgumentError("the SCRAM iteration count is not a number in range");
  }
  for (char c : text) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) {
      return absl::InvalidArgumentError("the SCRAM iteration count is not a decimal number");
    }
  }
  int64_t value = 0;
  if (!absl::SimpleAtoi(AbslView(text), &value)) {
    return absl::InvalidArgumentError("the SCRAM iteration count is not a decimal number");
  }
  if (value < kScramMinIterations) {
    return absl::InvalidArgumentError(
        absl::StrCat("the server asked for ", value, " SCRAM iterations, fewer than the minimum ",
                     kScramMinIterations, " (refused as a downgrade)"));
  }
  if (value > kScramMaxIterations) {
    return absl::InvalidArgumentError(
        absl::StrCat("the server asked for ", value, " SCRAM iterations, more than the maximum ",
                     kScramMaxIterations, " (refused as a denial of service)"));
  }
  return static_cast<int>(value);
}

}  // namespace herald::xmpp::scram_internal
