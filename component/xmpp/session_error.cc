#include "component/xmpp/session_error.h"

#include <string>

#include "absl/strings/cord.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "component/base/absl_string_view.h"

namespace herald::xmpp {
namespace {

using base::kExitAuthentication;
using base::kExitConflict;
using base::kExitFailure;
using base::kExitHostUnknown;
using base::MakePermanent;

std::string Suffix(std::string_view text) {
  return text.empty() ? std::string() : absl::StrCat(" (server says: ", AbslView(text), ")");
}

}  // namespace

absl::Status StreamErrorStatus(SessionMode mode, std::string_view condition,
                               std::string_view text) {
  const bool component = mode == SessionMode::kComponent;
  if (condition == "not-authorized") {
    return MakePermanent(
        absl::PermissionDeniedError(absl::StrCat(
            component ? "the server refused the component secret (not-authorized): check that "
                        "[server] component_secret matches the secret configured for the "
                        "component on the server"
                      : "the server refused the account's credentials (not-authorized)",
            Suffix(text))),
        kExitAuthentication);
  }
  if (condition == "host-unknown") {
    return MakePermanent(absl::FailedPreconditionError(absl::StrCat(
                             component ? "the server does not serve this component domain "
                                         "(host-unknown): declare [server] component_domain as a "
                                         "component on the server"
                                       : "the server does not serve the account's domain "
                                         "(host-unknown)",
                             Suffix(text))),
                         kExitHostUnknown);
  }
  if (condition == "conflict") {
    return MakePermanent(
        absl::AlreadyExistsError(
            absl::StrCat("another connection already uses this name (conflict): is a second "
                         "Herald running with the same ",
                         component ? "component_domain" : "jid and resource", "?", Suffix(text))),
        kExitConflict);
  }
  if (condition == "host-gone" || condition == "improper-addressing" ||
      condition == "invalid-namespace" || condition == "unsupported-version" ||
      condition == "unsupported-stanza-type" || condition == "bad-format") {
    // The server and Herald disagree about the protocol: retrying repeats the same exchange.
    return MakePermanent(
        absl::FailedPreconditionError(absl::StrCat("the server closed the stream with <",
                                                   AbslView(condition), "/>", Suffix(text))),
        kExitFailure);
  }
  // system-shutdown, connection-timeout, reset, policy-violation, see-other-host,
  // internal-server-error, resource-constraint...: worth another try after a backoff.
  return absl::UnavailableError(
      absl::StrCat("the server closed the stream with <", AbslView(condition), "/>", Suffix(text)));
}

}  // namespace herald::xmpp
