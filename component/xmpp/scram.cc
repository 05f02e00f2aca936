#include "component/xmpp/scram.h"

#include <utility>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "component/base/absl_string_view.h"
#include "component/xmpp/scram_internal.h"

namespace herald::xmpp {
namespace {

using scram_internal::Attribute;

// The server's "e=" text ends up in a log line; keep it short and free of control bytes.
std::string Printable(std::string_view text) {
  constexpr size_t kMaxShown = 200;
  std::string shown = absl::CHexEscape(AbslView(text.substr(0, kMaxShown)));
  if (text.size() > kMaxShown) shown += "...";
  return shown;
}

}  // namespace

std::string_view ScramMechanismName(ScramHash hash) {
  switch (hash) {
    case ScramHash::kSha1:
      return "SCRAM-SHA-1";
    case ScramHash::kSha256:
      return "SCRAM-SHA-256";
  }
  return "SCRAM-SHA-256";
}

absl::StatusOr<ScramClient> ScramClient::Create(ScramHash hash, std::string_view username,
                                                std::string_view password,
                                                std::string_view client_nonce) {
  if (username.empty()) return absl::InvalidArgumentError("the SCRAM username is empty");
  // RFC 5802 forbids NUL in the username; a NUL in the password would be cut off by
  // servers that store it as a C string, so neither can mean what the operator meant.
  if (username.find('\0') != std::string_view::npos) {
    return absl::InvalidArgumentError("the SCRAM username contains a NUL byte");
  }
  if (password.find('\0') != std::string_view::npos) {
    return absl::InvalidArgumentError("the SCRAM password contains a NUL byte");
  }
  std::string nonce;
  if (client_nonce.empty()) {
    absl::StatusOr<std::string> random = scram_internal::RandomNonce();
    if (!random.ok()) return random.status();
    nonce = *std::move(random);
  } else if (!scram_internal::IsValidNonce(client_nonce)) {
    return absl::InvalidArgumentError(
        "a SCRAM nonce must be printable ASCII characters other than ','");
  } else {
    nonce = std::string(client_nonce);
  }
  return ScramClient(hash, scram_internal::EscapeSaslName(username), std::string(password),
                     std::move(nonce));
}

ScramClient::ScramClient(ScramHash hash, std::string username, std::string password,
                         std::string nonce)
    : hash_(hash),
      username_(std::move(username)),
      password_(std::move(password)),
      client_nonce_(std::move(nonce)),
      client_first_bare_(absl::StrCat("n=", username_, ",r=", client_nonce_)) {}

std::string ScramClient::ClientFirstMessage() const {
  return absl::StrCat(AbslView(scram_internal::kGs2HeaderNoBinding), client_first_bare_);
}

absl::StatusOr<std::string> ScramClient::ClientFinalMessage(std::string_view server_first) {
  if (!expected_server_signature_.empty()) {
    return absl::FailedPreconditionError("the SCRAM client-final message was already built");
  }
  absl::StatusOr<std::vector<Attribute>> parsed = scram_internal::ParseAttributes(server_first);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("malformed SCRAM server-first message: ", parsed.status().message()));
  }
  const std::vector<Attribute>& attributes = *parsed;
  if (attributes[0].name == 'm') {
    return absl::InvalidArgumentError(
        "the server requires a SCRAM extension (m=) that Herald does not support");
  }
  // RFC 5802 fixes the order r, s, i; extensions may follow and are ignored.
  if (attributes[0].name != 'r') {
    return absl::InvalidArgumentError("the SCRAM server-first message has no nonce (r=)");
  }
  if (attributes.size() < 2 || attributes[1].name != 's') {
    return absl::InvalidArgumentError("the SCRAM server-first message has no salt (s=)");
  }
  if (attributes.size() < 3 || attributes[2].name != 'i') {
    return absl::InvalidArgumentError("the SCRAM server-first message has no iteration count (i=)");
  }

  std::string_view nonce = attributes[0].value;
  if (!absl::StartsWith(AbslView(nonce), client_nonce_)) {
    return absl::InvalidArgumentError(
        "the SCRAM server nonce does not start with the client nonce (a replayed or forged "
        "challenge)");
  }
  if (nonce.size() == client_nonce_.size()) {
    return absl::InvalidArgumentError("the SCRAM server did not add its own part to the nonce");
  }
  if (!scram_internal::IsValidNonce(nonce)) {
    return absl::InvalidArgumentError(
        "the SCRAM server nonce contains characters other than printable ASCII");
  }

  std::string salt;
  if (!absl::Base64Unescape(AbslView(attributes[1].value), &salt)) {
    return absl::InvalidArgumentError("the SCRAM salt is not valid base64");
  }
  if (salt.empty()) return absl::InvalidArgumentError("the SCRAM salt is empty");

  absl::StatusOr<int> iterations = scram_internal::ParseIterationCount(attributes[2].value);
  if (!iterations.ok()) return iterations.status();

  absl::StatusOr<std::string> salted_password =
      scram_internal::Hi(hash_, password_, salt, *iterations);
  if (!salted_password.ok()) return salted_password.status();
  scram_internal::ScramKeys keys = scram_internal::DeriveKeys(hash_, *salted_password);
  scram_internal::Cleanse(*salted_password);

  std::string without_proof = absl::StrCat("c=", AbslView(scram_internal::kChannelBindingNoBinding),
                                           ",r=", AbslView(nonce));
  std::string auth_message =
      scram_internal::AuthMessage(client_first_bare_, server_first, without_proof);
  std::string client_signature = scram_internal::Hmac(hash_, keys.stored_key, auth_message);
  std::string proof = scram_internal::XorBytes(keys.client_key, client_signature);
  expected_server_signature_ = scram_internal::Hmac(hash_, keys.server_key, auth_message);

  scram_internal::Cleanse(keys.client_key);
  scram_internal::Cleanse(keys.server_key);
  scram_internal::Cleanse(password_);
  return absl::StrCat(without_proof, ",p=", absl::Base64Escape(proof));
}

absl::Status ScramClient::VerifyServerFinal(std::string_view server_final) const {
  if (expected_server_signature_.empty()) {
    return absl::FailedPreconditionError(
        "the SCRAM server-final message arrived before the client-final message was built");
  }
  absl::StatusOr<std::vector<Attribute>> parsed = scram_internal::ParseAttributes(server_final);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("malformed SCRAM server-final message: ", parsed.status().message()));
  }
  const Attribute& first = parsed->front();
  if (first.name == 'e') {
    return absl::UnauthenticatedError(
        absl::StrCat("the server refused SCRAM authentication: ", Printable(first.value)));
  }
  if (first.name != 'v') {
    return absl::InvalidArgumentError(
        "the SCRAM server-final message has neither a signature (v=) nor an error (e=)");
  }
  std::string signature;
  if (!absl::Base64Unescape(AbslView(first.value), &signature)) {
    return absl::InvalidArgumentError("the SCRAM server signature is not valid base64");
  }
  if (!scram_internal::ConstantTimeEquals(signature, expected_server_signature_)) {
    return absl::UnauthenticatedError(
        "the SCRAM server signature is wrong: the server does not know this account's "
        "password, or something is impersonating it");
  }
  return absl::OkStatus();
}

}  // namespace herald::xmpp
