// component/xmpp/component_handshake.h
//
// The XEP-0114 negotiation of a component stream: Herald opens a jabber:component:accept
// stream to its component domain, the server answers with a stream id, and Herald proves it
// knows the shared secret with <handshake>hex(SHA-1(id + secret))</handshake>. A refused
// secret or an unknown domain comes back as the server's stream error, made a status that
// says which (session_error.h).
//
//   absl::StatusOr<Jid> jid = co_await NegotiateComponent(connection, options);
#pragma once

#include <asio.hpp>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "component/xmpp/jid.h"
#include "component/xmpp/session_options.h"
#include "component/xmpp/stream_connection.h"

namespace herald::xmpp {

// XEP-0114 §3: lowercase hex SHA-1 of the stream id followed by the secret.
std::string ComponentHandshake(std::string_view stream_id, std::string_view secret);

// Negotiates the component stream on `connection` with options.component_domain and
// options.component_secret; the component's JID once the server accepted the handshake.
// `options` must outlive the coroutine.
asio::awaitable<absl::StatusOr<Jid>> NegotiateComponent(StreamConnection& connection,
                                                        const SessionOptions& options);

}  // namespace herald::xmpp
