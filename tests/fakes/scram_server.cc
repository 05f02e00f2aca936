#include "tests/fakes/scram_server.h"

#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "component/base/absl_string_view.h"
#include "component/xmpp/scram_internal.h"

namespace herald::fakes {
namespace {

namespace scram = xmpp::scram_internal;

}  // namespace

absl::StatusOr<ScramCredentials> ScramCredentials::FromPassword(xmpp::ScramHash hash,
                                                                std::string_view username,
                                                                std::string_view password,
                                                                std::string_view salt,
                                                                int iterations) {
  if (username.empty()) return absl::InvalidArgumentError("the SCRAM username is empty");
  if (salt.empty()) return absl::InvalidArgumentError("the SCRAM salt is empty");
  absl::StatusOr<std::string> salted_password = scram::Hi(hash, password, salt, iterations);
  if (!salted_password.ok()) return salted_password.status();
  scram::ScramKeys keys = scram::DeriveKeys(hash, *salted_password);
  ScramCredentials credentials;
  credentials.hash = hash;
  credentials.username = std::string(username);
  credentials.salt = std::string(salt);
  credentials.iterations = iterations;
  credentials.stored_key = std::move(keys.stored_key);
  credentials.server_key = std::move(keys.server_key);
  return credentials;
}

absl::StatusOr<ScramServerSession> ScramServerSession::Create(ScramCredentials credentials,
                                                              std::string_view server_nonce) {
  std::string nonce;
  if (server_nonce.empty()) {
    absl::StatusOr<std::string> random = scram::RandomNonce();
    if (!random.ok()) return random.status();
    nonce = *std::move(random);
  } else if (!scram::IsValidNonce(server_nonce)) {
    return absl::InvalidArgumentError(
        "a SCRAM nonce must be printable ASCII characters other than ','");
  } else {
    nonce = std::string(server_nonce);
  }
  return ScramServerSession(std::move(credentials), std::move(nonce));
}

absl::StatusOr<ScramServerSession> ScramServerSession::Create(xmpp::ScramHash hash,
                                                              std::string_view username,
                                                              std::string_view password,
                                                              std::string_view salt, int iterations,
                                                              std::string_view server_nonce) {
  absl::StatusOr<ScramCredentials> credentials =
      ScramCredentials::FromPassword(hash, username, password, salt, iterations);
  if (!credentials.ok()) return credentials.status();
  return Create(*std::move(credentials), server_nonce);
}

absl::StatusOr<std::string> ScramServerSession::ServerFirstMessage(std::string_view client_first) {
  if (state_ != State::kAwaitingClientFirst) {
    return absl::FailedPreconditionError("this SCRAM session already received a client-first");
  }
  state_ = State::kFailed;  // until proven otherwise

  // gs2-header = gs2-cbind-flag "," [authzid] ","
  size_t first_comma = client_first.find(',');
  size_t second_comma = first_comma == std::string_view::npos
                            ? std::string_view::npos
                            : client_first.find(',', first_comma + 1);
  if (second_comma == std::string_view::npos) {
    return absl::InvalidArgumentError("the SCRAM client-first message has no GS2 header");
  }
  std::string_view cbind_flag = client_first.substr(0, first_comma);
  std::string_view authzid = client_first.substr(first_comma + 1, second_comma - first_comma - 1);
  if (cbind_flag != "n" && cbind_flag != "y") {
    return absl::InvalidArgumentError(
        "the SCRAM client asked for channel binding, which this server does not offer");
  }
  if (!authzid.empty()) {
    if (authzid.substr(0, 2) != "a=") {
      return absl::InvalidArgumentError("the SCRAM GS2 header has a malformed authzid");
    }
    absl::StatusOr<std::string> name = scram::UnescapeSaslName(authzid.substr(2));
    if (!name.ok()) return name.status();
    if (*name != credentials_.username) {
      return absl::PermissionDeniedError("the SCRAM client asked to act as another user");
    }
  }
  std::string_view bare = client_first.substr(second_comma + 1);

  absl::StatusOr<std::vector<scram::Attribute>> attributes = scram::ParseAttributes(bare);
  if (!attributes.ok()) return attributes.status();
  if ((*attributes)[0].name == 'm') {
    return absl::InvalidArgumentError("the SCRAM client requires an unsupported extension");
  }
  if (attributes->size() < 2 || (*attributes)[0].name != 'n' || (*attributes)[1].name != 'r') {
    return absl::InvalidArgumentError(
        "the SCRAM client-first message lacks a username (n=) and nonce (r=), in that order");
  }
  absl::StatusOr<std::string> username = scram::UnescapeSaslName((*attributes)[0].value);
  if (!username.ok()) return username.status();
  if (*username != credentials_.username) {
    return absl::NotFoundError("the SCRAM client named a user this server does not know");
  }
  std::string_view client_nonce = (*attributes)[1].value;
  if (!scram::IsValidNonce(client_nonce)) {
    return absl::InvalidArgumentError("the SCRAM client nonce is empty or not printable ASCII");
  }

  gs2_header_ = std::string(client_first.substr(0, second_comma + 1));
  client_first_bare_ = std::string(bare);
  combined_nonce_ = absl::StrCat(AbslView(client_nonce), server_nonce_);
  server_first_ = absl::StrCat("r=", combined_nonce_, ",s=", absl::Base64Escape(credentials_.salt),
                               ",i=", credentials_.iterations);
  state_ = State::kAwaitingClientFinal;
  return server_first_;
}

absl::StatusOr<std::string> ScramServerSession::ServerFinalMessage(std::string_view client_final) {
  if (state_ != State::kAwaitingClientFinal) {
    return absl::FailedPreconditionError(
        "this SCRAM session is not waiting for a client-final message");
  }
  state_ = State::kFailed;

  absl::StatusOr<std::vector<scram::Attribute>> attributes = scram::ParseAttributes(client_final);
  if (!attributes.ok()) return attributes.status();
  const std::vector<scram::Attribute>& items = *attributes;
  if (items.size() < 3 || items[0].name != 'c' || items[1].name != 'r' ||
      items.back().name != 'p') {
    return absl::InvalidArgumentError(
        "the SCRAM client-final message lacks c=, r= and p= (in that order, p= last)");
  }
  std::string channel_binding;
  if (!absl::Base64Unescape(AbslView(items[0].value), &channel_binding) ||
      channel_binding != gs2_header_) {
    return absl::InvalidArgumentError(
        "the SCRAM channel binding (c=) does not repeat the client's GS2 header");
  }
  if (items[1].value != combined_nonce_) {
    return absl::InvalidArgumentError("the SCRAM client-final nonce is not the one agreed");
  }
  std::string proof;
  if (!absl::Base64Unescape(AbslView(items.back().value), &proof)) {
    return absl::InvalidArgumentError("the SCRAM client proof is not valid base64");
  }

  // Everything before ",p=..." is signed; p= is the last attribute, so it ends the message.
  std::string_view without_proof =
      client_final.substr(0, client_final.size() - items.back().value.size() - 3);
  std::string auth_message = scram::AuthMessage(client_first_bare_, server_first_, without_proof);
  const xmpp::ScramHash hash = credentials_.hash;
  std::string client_signature = scram::Hmac(hash, credentials_.stored_key, auth_message);
  // A proof of the wrong length falls through to the comparison and fails there, so the
  // outcome is the same as for a wrong proof of the right length.
  std::string client_key = scram::XorBytes(proof, client_signature);
  bool proof_ok = proof.size() == client_signature.size() &&
                  scram::ConstantTimeEquals(scram::Hash(hash, client_key), credentials_.stored_key);
  scram::Cleanse(client_key);
  if (!proof_ok) {
    return absl::UnauthenticatedError("the SCRAM client proof is wrong (invalid-proof)");
  }
  state_ = State::kAuthenticated;
  return absl::StrCat("v=",
                      absl::Base64Escape(scram::Hmac(hash, credentials_.server_key, auth_message)));
}

}  // namespace herald::fakes
