// component/xmpp/client_negotiation.h
//
// The negotiation of a client (C2S) stream, RFC 6120 and 6121: STARTTLS (required unless the
// options allow plain text), SASL with the strongest mechanism both sides offer (SCRAM-SHA-256,
// SCRAM-SHA-1, PLAIN only over TLS; a SCRAM server must prove it knows the password), resource
// binding, and the RFC 3921 session for the old servers that still require one, then XEP-0198
// stream management where the server offers it: a stream that was managed and cut is resumed
// instead of bound anew (nothing is lost or repeated), and a new one is managed with
// resumption enabled. Each step restarts the stream where the RFC says so. What reconnecting cannot
// fix (a refused password or certificate, no usable mechanism, a resource conflict) is a permanent
// status with its exit code (component/base/exit_code.h).
//
//   absl::StatusOr<ClientStream> stream =
//       co_await NegotiateClient(connection, options, [&] { return NextId(); }, &sm);
//   if (stream->resumed) ...  // the old stream goes on: no presence or roster to send again
#pragma once

#include <asio.hpp>
#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "component/xmpp/jid.h"
#include "component/xmpp/session_options.h"
#include "component/xmpp/stream_connection.h"
#include "component/xmpp/stream_management.h"

namespace herald::xmpp {

// The stream a client negotiation ends with: the bound full JID, and whether it is the old
// managed stream resumed (XEP-0198) rather than a new one.
struct ClientStream {
  Jid bound;
  bool resumed = false;
};

// Negotiates a client stream on `connection` for options.account. `next_id` names the IQs it
// sends. `sm`, when not null, is the stream management state kept across connections: it is
// resumed from and enabled here. `options` and `sm` must outlive the coroutine.
asio::awaitable<absl::StatusOr<ClientStream>> NegotiateClient(StreamConnection& connection,
                                                              const SessionOptions& options,
                                                              std::function<std::string()> next_id,
                                                              StreamManagement* sm = nullptr);

}  // namespace herald::xmpp
