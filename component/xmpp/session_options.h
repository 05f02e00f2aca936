// component/xmpp/session_options.h
//
// SessionOptions says how XmppSession reaches its server and how it behaves there: the mode
// (XEP-0114 component or client account) and its credentials, TLS, the timeouts of
// negotiation, keepalive and reconnection, and the limits on what it reads and writes. The
// negotiation units read it as well as the session; component/config fills it from [server].
//
//   SessionOptions options{.mode = SessionMode::kComponent, .component_domain = "herald.localhost",
//                          .component_secret = secret};
//   auto session = XmppSession::Create(io, options, on_event, on_stopped);
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "component/xmpp/iq_responder.h"
#include "component/xmpp/jid.h"
#include "component/xmpp/session_error.h"
#include "component/xmpp/stream_parser.h"

namespace herald::xmpp {

struct SessionOptions {
  SessionMode mode = SessionMode::kComponent;
  std::string host = "127.0.0.1";
  uint16_t port = 5347;
  // The domain the server itself answers for: target of keepalive pings.
  std::string server_domain;
  // Component mode.
  std::string component_domain;
  std::string component_secret;
  // Client mode.
  Jid account;  // bare
  std::string password;
  std::string resource = "herald";
  bool starttls_required = true;
  bool tls_verify = true;
  std::string tls_ca_file;

  absl::Duration connect_timeout = absl::Seconds(10);
  absl::Duration negotiation_timeout = absl::Seconds(30);
  absl::Duration whitespace_keepalive = absl::Seconds(60);
  absl::Duration ping_interval = absl::Seconds(120);
  absl::Duration ping_timeout = absl::Seconds(30);
  absl::Duration reconnect_initial = absl::Seconds(1);
  absl::Duration reconnect_max = absl::Seconds(60);
  // A SelfPing left unanswered this long is reported as not joined ("timeout").
  absl::Duration self_ping_timeout = absl::Seconds(30);
  bool reconnect_on_permanent_errors = false;
  size_t outbound_queue_limit = 1000;
  StreamLimits limits;
  // No stanza larger than this is written: a longer message body is split into several
  // messages (at most kMaxMessageParts, the rest cut with a note), anything else is dropped
  // and logged. Keep it under the server's own limit (Prosody: 512 KiB for components,
  // 256 KiB for clients), or the server closes the stream on it.
  size_t max_outbound_stanza_bytes = 64 * 1024;
  // MUC services whose mediated invitations are believed (domains); empty: the ones the
  // server announces by disco (muc_services.h).
  std::vector<std::string> muc_services;
  // How long the discovery of the server's MUC services may take before it is given up.
  absl::Duration muc_discovery_timeout = absl::Seconds(10);
  // How long the discovery of the server's HTTP upload service (XEP-0363, upload_service.h)
  // may take before it is decided by the answers that came.
  absl::Duration upload_discovery_timeout = absl::Seconds(10);

  // Whether disco#info lists the agent protocol (urn:herald:agent:0; [agent_protocol]).
  bool agent_protocol = false;

  DiscoIdentity identity;
  std::string version;
};

}  // namespace herald::xmpp
