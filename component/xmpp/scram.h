// component/xmpp/scram.h
//
// The client side of SASL SCRAM (RFC 5802) with SHA-1 and SHA-256 (RFC 7677), without
// channel binding ("n,,"). It builds the client-first and client-final messages and verifies
// the server's signature, so a server that does not know the password is caught. Usernames
// are escaped ("," as "=2C", "=" as "=3D"); SASLprep is not applied, so a password is used as
// its UTF-8 bytes (the same as every server for ASCII passwords). The messages here are the
// raw SCRAM text; XMPP carries them base64-encoded, which is the caller's job.
//
// Errors: InvalidArgument for a malformed or unacceptable server message (nonce, salt,
// iteration count), Unauthenticated when the server refuses us ("e=...", its text in the
// status message) or its signature is wrong, FailedPrecondition for calls out of order.
// No status message ever contains the password.
//
//   absl::StatusOr<ScramClient> scram = ScramClient::Create(ScramHash::kSha256, "bot", pw);
//   Send(Base64(scram->ClientFirstMessage()));
//   absl::StatusOr<std::string> final = scram->ClientFinalMessage(Unbase64(challenge));
//   Send(Base64(*final));
//   absl::Status verified = scram->VerifyServerFinal(Unbase64(success_data));
#pragma once

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace herald::xmpp {

enum class ScramHash { kSha1, kSha256 };

// "SCRAM-SHA-1" or "SCRAM-SHA-256".
std::string_view ScramMechanismName(ScramHash hash);

// PBKDF2 iteration counts a server may ask for; below the minimum is refused as a downgrade,
// above the maximum as a denial of service.
inline constexpr int kScramMinIterations = 4096;
inline constexpr int kScramMaxIterations = 1000000;

class ScramClient {
 public:
  // `client_nonce` is for tests (RFC vectors); empty draws 24 random bytes, base64-encoded.
  static absl::StatusOr<ScramClient> Create(ScramHash hash, std::string_view username,
                                            std::string_view password,
                                            std::string_view client_nonce = "");

  // "n,,n=<user>,r=<nonce>"
  std::string ClientFirstMessage() const;

  // Takes the server-first message ("r=...,s=...,i=...") and returns the client-final one.
  // Fails when the server nonce does not extend the client's, the salt is not base64, or the
  // iteration count is out of range. The password is wiped once it has been used.
  absl::StatusOr<std::string> ClientFinalMessage(std::string_view server_first);

  // Takes the server-final message ("v=..." or "e=...") and checks the server signature in
  // constant time.
  absl::Status VerifyServerFinal(std::string_view server_final) const;

 private:
  ScramClient(ScramHash hash, std::string username, std::string password, std::string nonce);

  ScramHash hash_;
  std::string username_;  // escaped
  std::string password_;
  std::string client_nonce_;
  std::string client_first_bare_;
  std::string expected_server_signature_;  // set by ClientFinalMessage
};

}  // namespace herald::xmpp
