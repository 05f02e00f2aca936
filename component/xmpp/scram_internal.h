// component/xmpp/scram_internal.h
//
// The pieces of SASL SCRAM (RFC 5802) that the client (component/xmpp/scram.h) and the
// test server (tests/fakes/scram_server.h) share: the hash primitives H, HMAC and Hi, the key
// derivation, constant-time comparison, and the small wire-format helpers (attribute lists,
// saslname escaping, nonces, iteration counts). Keeping them in one place means the server
// used in tests cannot agree with the client merely because both carry the same bug twice:
// the RFC vectors in tests/component/xmpp/scram_test.cc pin these functions down.
//
// Not for use outside SCRAM; everything here is in herald::xmpp::scram_internal.
//
//   std::string salted = *scram_internal::Hi(ScramHash::kSha256, password, salt, 4096);
//   scram_internal::ScramKeys keys = scram_internal::DeriveKeys(ScramHash::kSha256, salted);
//   std::string signature = scram_internal::Hmac(ScramHash::kSha256, keys.server_key, auth);
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "component/xmpp/scram.h"

namespace herald::xmpp::scram_internal {

// The GS2 header of a client that neither supports nor asks for channel binding, and its
// base64 form, which is what the client-final "c=" attribute carries.
inline constexpr std::string_view kGs2HeaderNoBinding = "n,,";
inline constexpr std::string_view kChannelBindingNoBinding = "biws";

// Output size of the hash in bytes: 20 for SHA-1, 32 for SHA-256.
size_t DigestSize(ScramHash hash);

// H(data).
std::string Hash(ScramHash hash, std::string_view data);

// HMAC(key, data).
std::string Hmac(ScramHash hash, std::string_view key, std::string_view data);

// Hi(password, salt, i): PBKDF2 with HMAC, output as long as the hash. Fails only when
// OpenSSL does (or for an iteration count below 1); range policy is the caller's.
absl::StatusOr<std::string> Hi(ScramHash hash, std::string_view password, std::string_view salt,
                               int iterations);

// The keys derived from SaltedPassword. A server stores only stored_key and server_key.
struct ScramKeys {
  std::string client_key;  // HMAC(SaltedPassword, "Client Key")
  std::string stored_key;  // H(ClientKey)
  std::string server_key;  // HMAC(SaltedPassword, "Server Key")
};
ScramKeys DeriveKeys(ScramHash hash, std::string_view salted_password);

// client-first-message-bare + "," + server-first-message + "," + client-final-without-proof
std::string AuthMessage(std::string_view client_first_bare, std::string_view server_first,
                        std::string_view client_final_without_proof);

// Bytewise XOR of two strings of the same length (ClientKey ^ ClientSignature).
std::string XorBytes(std::string_view a, std::string_view b);

// Equality whose running time depends only on the lengths, so comparing a proof or a
// signature does not tell an attacker how many leading bytes were right.
bool ConstantTimeEquals(std::string_view a, std::string_view b);

// Overwrites a string holding key material before it is released.
void Cleanse(std::string& secret);

// One "x=value" attribute of a SCRAM message; value points into the parsed message.
struct Attribute {
  char name;
  std::string_view value;
};

// Splits "a=1,b=2" into its attributes, in order. Fails (InvalidArgument) on an empty
// message or an item that is not an ASCII letter followed by '='.
absl::StatusOr<std::vector<Attribute>> ParseAttributes(std::string_view message);

// saslname escaping (RFC 5802 §5.1): ',' becomes "=2C" and '=' becomes "=3D".
std::string EscapeSaslName(std::string_view name);
// The reverse; fails on a bare ',' or an '=' not followed by "2C" or "3D" (either case).
absl::StatusOr<std::string> UnescapeSaslName(std::string_view escaped);

// A nonce is one or more printable ASCII characters other than ','.
bool IsValidNonce(std::string_view nonce);

// 24 random bytes from OpenSSL's CSPRNG, base64-encoded (32 characters, never ',').
absl::StatusOr<std::string> RandomNonce();

// Parses the "i=" value: decimal digits only (no sign, no spaces), then checks that it lies
// in [kScramMinIterations, kScramMaxIterations].
absl::StatusOr<int> ParseIterationCount(std::string_view text);

}  // namespace herald::xmpp::scram_internal
