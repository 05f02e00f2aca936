// component/xmpp/component_handshake.cc
//
// The XEP-0114 component handshake (see the header).
#include "component/xmpp/component_handshake.h"

#include <openssl/crypto.h>
#include <openssl/sha.h>

#include <memory>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "component/base/absl_string_view.h"
#include "component/xmpp/namespaces.h"
#include "component/xmpp/session_error.h"
#include "component/xmpp/stanza.h"
#include "component/xmpp/stream_negotiation.h"

namespace herald::xmpp {

std::string ComponentHandshake(std::string_view stream_id, std::string_view secret) {
  std::string input = absl::StrCat(AbslView(stream_id), AbslView(secret));
  unsigned char digest[SHA_DIGEST_LENGTH];
  SHA1(reinterpret_cast<const unsigned char*>(input.data()), input.size(), digest);
  OPENSSL_cleanse(input.data(), input.size());
  return absl::BytesToHexString(
      absl::string_view(reinterpret_cast<const char*>(digest), sizeof(digest)));
}

asio::awaitable<absl::StatusOr<Jid>> NegotiateComponent(StreamConnection& connection,
                                                        const SessionOptions& options) {
  const std::string header_xml =
      StreamHeader(ns::kComponentAccept, options.component_domain, /*version=*/false);
  absl::Status written = co_await connection.transport.Write(header_xml);
  if (!written.ok()) co_return written;
  absl::StatusOr<std::unique_ptr<XmlElement>> header = co_await connection.NextHeader();
  if (!header.ok()) co_return header.status();
  const std::string stream_id((*header)->Attr("id"));
  if (stream_id.empty()) {
    // The server may already have sent its reason, e.g. <host-unknown/>.
    absl::StatusOr<std::unique_ptr<XmlElement>> next = co_await connection.NextStanza();
    if (next.ok() && IsStreamError(**next)) {
      co_return StreamErrorStatus(options.mode, ErrorCondition(**next), ErrorText(**next));
    }
    co_return absl::UnavailableError("the server's stream header has no id");
  }
  const std::string handshake = absl::StrCat(
      "<handshake>", ComponentHandshake(stream_id, options.component_secret), "</handshake>");
  written = co_await connection.transport.Write(handshake);
  if (!written.ok()) co_return written;
  absl::StatusOr<std::unique_ptr<XmlElement>> reply = co_await connection.NextStanza();
  if (!reply.ok()) co_return reply.status();
  if (IsStreamError(**reply)) {
    co_return StreamErrorStatus(options.mode, ErrorCondition(**reply), ErrorText(**reply));
  }
  if ((*reply)->name() != "handshake") co_return Unexpected(**reply, "<handshake/>");
  co_return Jid::Parse(options.component_domain);
}

}  // namespace herald::xmpp
