#include "component/xmpp/sasl_plain.h"

#include "absl/status/status.h"

namespace herald::xmpp {

absl::StatusOr<std::string> SaslPlainInitialResponse(std::string_view username,
                                                     std::string_view password,
                                                     std::string_view authzid) {
  if (username.empty()) return absl::InvalidArgumentError("the SASL PLAIN username is empty");
  if (username.find('\0') != std::string_view::npos) {
    return absl::InvalidArgumentError("the SASL PLAIN username contains a NUL byte");
  }
  if (password.find('\0') != std::string_view::npos) {
    return absl::InvalidArgumentError("the SASL PLAIN password contains a NUL byte");
  }
  if (authzid.find('\0') != std::string_view::npos) {
    return absl::InvalidArgumentError("the SASL PLAIN authorization identity contains a NUL byte");
  }
  std::string message;
  message.reserve(authzid.size() + username.size() + password.size() + 2);
  message.append(authzid);
  message.push_back('\0');
  message.append(username);
  message.push_back('\0');
  message.append(password);
  return message;
}

}  // namespace herald::xmpp
