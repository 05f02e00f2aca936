// skills/credentials/sealed_value.h
//
// One credential value sealed with AES-256-GCM (OpenSSL): a fresh random 12-byte nonce per
// seal, a 16-byte tag, and the owner and the name as additional authenticated data, so that a
// sealed value copied to another owner or name does not open. Opening says only whether the
// value authenticated, never why not: a damaged row and a tampered one look the same. Wipe
// plaintexts when done with them.
//
//   absl::StatusOr<SealedValue> sealed = Seal(key, "alice@localhost", "GITHUB_TOKEN", token);
//   std::optional<std::string> value = OpenSealed(key, "alice@localhost", "GITHUB_TOKEN", *sealed);
//   if (value.has_value()) { use(*value); WipeSecret(*value); }
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "skills/credentials/sealing_key.h"

namespace herald::skills::credentials_internal {

// The three columns a sealed value is stored in.
struct SealedValue {
  std::string nonce;
  std::string ciphertext;  // as long as the plaintext
  std::string tag;
};

// Fails only when OpenSSL does (no random bytes, no cipher context).
absl::StatusOr<SealedValue> Seal(const SealingKey& key, std::string_view owner,
                                 std::string_view name, std::string_view plaintext);

// The plaintext, or nullopt when `sealed` does not authenticate under `key` for this owner
// and name (or is not shaped like a sealed value at all).
std::optional<std::string> OpenSealed(const SealingKey& key, std::string_view owner,
                                      std::string_view name, const SealedValue& sealed);

// Overwrites `text` in place (a plaintext, or a ciphertext about to be dropped).
void WipeSecret(std::string& text);

}  // namespace herald::skills::credentials_internal
