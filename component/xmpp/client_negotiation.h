// component/xmpp/client_negotiation.h
//
// The negotiation of a client (C2S) stream, RFC 6120 and 6121: STARTTLS (required unless the
// options allow plain text), SASL with the strongest mechanism both sides offer (SCRAM-SHA-256,
// SCRAM-SHA-1, PLAIN only over TLS; a SCRAM server must prove it knows the password), resource
// binding, and the RFC 3921 session for the old servers that still require one. Each step
// restarts the stream where the RFC says so. What reconnecting cannot fix (a refused password
// or certificate, no usable mechanism, a resource conflict) is a permanent status with its
// exit code (component/base/exit_code.h).
//
//   absl::StatusOr<Jid> bound =
//       co_await NegotiateClient(connection, options, [&] { return NextId(); });
#pragma once

#include <asio.hpp>
#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "component/xmpp/jid.h"
#include "component/xmpp/session_options.h"
#include "component/xmpp/stream_connection.h"

namespace herald::xmpp {

// Negotiates a client stream on `connection` for options.account; the bound full JID.
// `next_id` names the IQs it sends. `options` must outlive the coroutine.
asio::awaitable<absl::StatusOr<Jid>> NegotiateClient(StreamConnection& connection,
                                                     const SessionOptions& options,
                                                     std::function<std::string()> next_id);

}  // namespace herald::xmpp
