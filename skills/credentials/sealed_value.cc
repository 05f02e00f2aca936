#include "skills/credentials/sealed_value.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include <memory>

#include "skills/credentials/credential_checks.h"

namespace herald::skills::credentials_internal {
namespace {

constexpr size_t kNonceBytes = 12;
constexpr size_t kTagBytes = 16;

// Binds a sealed value to its row: a ciphertext moved to another owner or name fails to open.
// NUL cannot occur in either, so the encoding is unambiguous.
std::string AdditionalData(std::string_view owner, std::string_view name) {
  std::string aad = "herald credential v1";
  aad.push_back('\0');
  aad.append(owner);
  aad.push_back('\0');
  aad.append(name);
  return aad;
}

using CipherContext = std::unique_ptr<EVP_CIPHER_CTX, decltype(&EVP_CIPHER_CTX_free)>;

}  // namespace

absl::StatusOr<SealedValue> Seal(const SealingKey& key, std::string_view owner,
                                 std::string_view name, std::string_view plaintext) {
  SealedValue sealed;
  sealed.nonce.resize(kNonceBytes);
  if (RAND_bytes(reinterpret_cast<unsigned char*>(sealed.nonce.data()), kNonceBytes) != 1) {
    return absl::InternalError("credentials: no random bytes for a nonce");
  }
  CipherContext ctx(EVP_CIPHER_CTX_new(), &EVP_CIPHER_CTX_free);
  if (ctx == nullptr) return absl::ResourceExhaustedError("credentials: no cipher context");
  const std::string aad = AdditionalData(owner, name);
  sealed.ciphertext.resize(plaintext.size());
  sealed.tag.resize(kTagBytes);
  int length = 0;
  const bool ok =
      EVP_EncryptInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr, nullptr, nullptr) == 1 &&
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_IVLEN, kNonceBytes, nullptr) == 1 &&
      EVP_EncryptInit_ex(ctx.get(), nullptr, nullptr, key.bytes.data(),
                         reinterpret_cast<const unsigned char*>(sealed.nonce.data())) == 1 &&
      EVP_EncryptUpdate(ctx.get(), nullptr, &length,
                        reinterpret_cast<const unsigned char*>(aad.data()),
                        static_cast<int>(aad.size())) == 1 &&
      EVP_EncryptUpdate(ctx.get(), reinterpret_cast<unsigned char*>(sealed.ciphertext.data()),
                        &length, reinterpret_cast<const unsigned char*>(plaintext.data()),
                        static_cast<int>(plaintext.size())) == 1 &&
      static_cast<size_t>(length) == plaintext.size() &&
      EVP_EncryptFinal_ex(ctx.get(), reinterpret_cast<unsigned char*>(sealed.ciphertext.data()),
                          &length) == 1 &&
      length == 0 &&
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_GET_TAG, kTagBytes, sealed.tag.data()) == 1;
  if (!ok) return absl::InternalError("credentials: AES-256-GCM sealing failed");
  return sealed;
}

std::optional<std::string> OpenSealed(const SealingKey& key, std::string_view owner,
                                      std::string_view name, const SealedValue& sealed) {
  if (sealed.nonce.size() != kNonceBytes || sealed.tag.size() != kTagBytes ||
      sealed.ciphertext.size() > kMaxCredentialValueBytes) {
    return std::nullopt;
  }
  CipherContext ctx(EVP_CIPHER_CTX_new(), &EVP_CIPHER_CTX_free);
  if (ctx == nullptr) return std::nullopt;
  const std::string aad = AdditionalData(owner, name);
  std::string plaintext(sealed.ciphertext.size(), '\0');
  std::string tag = sealed.tag;
  int length = 0;
  const bool ok =
      EVP_DecryptInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr, nullptr, nullptr) == 1 &&
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_IVLEN, kNonceBytes, nullptr) == 1 &&
      EVP_DecryptInit_ex(ctx.get(), nullptr, nullptr, key.bytes.data(),
                         reinterpret_cast<const unsigned char*>(sealed.nonce.data())) == 1 &&
      EVP_DecryptUpdate(ctx.get(), nullptr, &length,
                        reinterpret_cast<const unsigned char*>(aad.data()),
                        static_cast<int>(aad.size())) == 1 &&
      EVP_DecryptUpdate(ctx.get(), reinterpret_cast<unsigned char*>(plaintext.data()), &length,
                        reinterpret_cast<const unsigned char*>(sealed.ciphertext.data()),
                        static_cast<int>(sealed.ciphertext.size())) == 1 &&
      static_cast<size_t>(length) == plaintext.size() &&
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_TAG, kTagBytes, tag.data()) == 1 &&
      EVP_DecryptFinal_ex(ctx.get(), reinterpret_cast<unsigned char*>(plaintext.data()), &length) ==
          1;
  if (!ok) {
    OPENSSL_cleanse(plaintext.data(), plaintext.size());
    return std::nullopt;
  }
  return plaintext;
}

void WipeSecret(std::string& text) { OPENSSL_cleanse(text.data(), text.size()); }

}  // namespace herald::skills::credentials_internal
