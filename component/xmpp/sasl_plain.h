// component/xmpp/sasl_plain.h
//
// SASL PLAIN (RFC 4616): the one message a client sends, "authzid NUL authcid NUL password".
// PLAIN hands the password to the server in the clear, so the C2S code offers it only inside
// TLS and only when the server offers no SCRAM mechanism; that policy lives with the caller.
// The result is the raw message; XMPP sends it base64-encoded in <auth/>.
//
//   absl::StatusOr<std::string> response = SaslPlainInitialResponse("bot", password);
//   if (response.ok()) Send(Auth("PLAIN", absl::Base64Escape(*response)));
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace herald::xmpp {

// Fails with InvalidArgument when the username is empty or any part contains a NUL byte
// (NUL is PLAIN's separator, so such a part could not be told apart from the next one).
// An empty authzid means "act as the authenticated user", which is what Herald wants.
absl::StatusOr<std::string> SaslPlainInitialResponse(std::string_view username,
                                                     std::string_view password,
                                                     std::string_view authzid = "");

}  // namespace herald::xmpp
