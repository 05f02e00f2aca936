// tests/fakes/scram_server.h
//
// The server side of SASL SCRAM (RFC 5802, RFC 7677) for Herald's fakes: the fake XMPP
// server's C2S side and the load generator use it to check a real client's proof and answer
// with a server signature the client will verify. It shares its hash primitives with the
// client (component/xmpp/scram_internal.h), and is pinned to the RFC test vectors by its own
// tests, so it is not merely agreeing with the client's mistakes.
//
// Like a real server it keeps only StoredKey and ServerKey. ScramCredentials are derived once
// (the PBKDF2 step is the expensive part) and can be shared by many sessions; a session
// handles one authentication exchange.
//
//   absl::StatusOr<ScramCredentials> creds = ScramCredentials::FromPassword(
//       xmpp::ScramHash::kSha256, "alice", "secret", "salt-bytes", 4096);
//   absl::StatusOr<ScramServerSession> session = ScramServerSession::Create(*creds);
//   absl::StatusOr<std::string> first = session->ServerFirstMessage(client_first);
//   absl::StatusOr<std::string> final = session->ServerFinalMessage(client_final);
//   // ok: send *final ("v=...") in <success/>; not ok: send <failure><not-authorized/>.
//
// Error codes: InvalidArgument for a malformed client message, NotFound for a username
// other than the one the credentials are for, PermissionDenied for an authzid other than
// that user, Unauthenticated for a wrong proof, FailedPrecondition for calls out of order
// (including any call after a failure: a session is one exchange).
#pragma once

#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "component/xmpp/scram.h"

namespace herald::fakes {

struct ScramCredentials {
  // `iterations` may be anything from 1 up, so tests can offer a client too few of them.
  static absl::StatusOr<ScramCredentials> FromPassword(xmpp::ScramHash hash,
                                                       std::string_view username,
                                                       std::string_view password,
                                                       std::string_view salt, int iterations);

  xmpp::ScramHash hash = xmpp::ScramHash::kSha256;
  std::string username;  // unescaped, as the user typed it
  std::string salt;      // raw bytes
  int iterations = 0;
  std::string stored_key;
  std::string server_key;
};

class ScramServerSession {
 public:
  // `server_nonce` is the server's part of the nonce, for tests that replay RFC vectors;
  // empty draws a random one.
  static absl::StatusOr<ScramServerSession> Create(ScramCredentials credentials,
                                                   std::string_view server_nonce = "");

  // Convenience: derives the credentials and creates a session in one step.
  static absl::StatusOr<ScramServerSession> Create(xmpp::ScramHash hash, std::string_view username,
                                                   std::string_view password, std::string_view salt,
                                                   int iterations,
                                                   std::string_view server_nonce = "");

  // Takes the client-first message ("n,,n=user,r=nonce") and returns the server-first one
  // ("r=<client nonce><server nonce>,s=<base64 salt>,i=<iterations>"). Refuses channel
  // binding ("p="), an authzid other than the user, a mandatory extension and an unknown user.
  absl::StatusOr<std::string> ServerFirstMessage(std::string_view client_first);

  // Takes the client-final message ("c=biws,r=...,p=...") and, when the proof is right,
  // returns the server-final message "v=<base64 server signature>". The proof is compared in
  // constant time.
  absl::StatusOr<std::string> ServerFinalMessage(std::string_view client_final);

  // True once ServerFinalMessage accepted a proof.
  bool authenticated() const { return state_ == State::kAuthenticated; }
  const std::string& username() const { return credentials_.username; }

 private:
  enum class State { kAwaitingClientFirst, kAwaitingClientFinal, kAuthenticated, kFailed };

  ScramServerSession(ScramCredentials credentials, std::string server_nonce)
      : credentials_(std::move(credentials)), server_nonce_(std::move(server_nonce)) {}

  ScramCredentials credentials_;
  std::string server_nonce_;
  State state_ = State::kAwaitingClientFirst;
  std::string gs2_header_;         // as the client sent it, for checking "c="
  std::string client_first_bare_;  // for the AuthMessage
  std::string server_first_;
  std::string combined_nonce_;
};

}  // namespace herald::fakes
