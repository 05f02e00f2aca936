// skills/credentials/sealing_key.h
//
// The key the credential store seals values under: 32 random bytes that live outside the
// database, in a key file only Herald's user may read (raw, or as 64 hex digits with an
// optional newline) or in an environment variable (64 hex digits). Loading refuses what is
// not such a key — a file group or others may read (PermissionDenied, saying `chmod 600`), a
// file of the wrong size, 32 bytes of text (a typed password, half a hex key) — and never puts
// a key byte in a message. A key is known by its id, the first 8 bytes of its SHA-256 in hex,
// which reveals nothing of it; its bytes are wiped when it is destroyed.
//
//   absl::StatusOr<std::unique_ptr<SealingKey>> key = LoadKeyFile("/etc/herald/credentials.key");
//   absl::StatusOr<std::unique_ptr<SealingKey>> env =
//   LoadKeyFromEnvironment("HERALD_CREDENTIALS_KEY"); LOG(INFO) << "sealing under key id " <<
//   (*key)->id;
#pragma once

#include <array>
#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace herald::skills::credentials_internal {

struct SealingKey {
  std::array<unsigned char, 32> bytes{};
  std::string id;  // hex of the first 8 bytes of SHA-256(bytes)

  SealingKey() = default;
  SealingKey(const SealingKey&) = delete;
  SealingKey& operator=(const SealingKey&) = delete;
  ~SealingKey();
};

// Blocking (reads the file).
absl::StatusOr<std::unique_ptr<SealingKey>> LoadKeyFile(const std::string& path);

// From the environment variable `variable`; FailedPrecondition, saying how to make a key, when
// it is unset or empty.
absl::StatusOr<std::unique_ptr<SealingKey>> LoadKeyFromEnvironment(const std::string& variable);

}  // namespace herald::skills::credentials_internal
