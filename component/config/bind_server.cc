// component/config/bind_server.cc
//
// [server]: the XMPP connection (SPEC §5).
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "component/config/bind_sections.h"
#include "component/config/toml_binder.h"
#include "component/config/value_formats.h"

namespace herald::config {

void BindServer(Binder& b, const Section& root, ServerConfig& server) {
  Section s = b.Sub(root, "server");

  const bool mode_valid = b.Enum<ConnectionMode>(s, "mode",
                                                 {{"component", ConnectionMode::kComponent},
                                                  {"client", ConnectionMode::kClient}},
                                                 &server.mode) ||
                          !b.Has(s, "mode");
  // With a misspelt mode, which keys are required is unknown: report only the mode.
  const bool client = mode_valid && server.mode == ConnectionMode::kClient;
  const bool component = mode_valid && server.mode == ConnectionMode::kComponent;

  if (b.NonEmptyString(s, "host", &server.host)) {
    if (std::any_of(server.host.begin(), server.host.end(),
                    [](char c) { return static_cast<unsigned char>(c) <= 0x20; })) {
      b.Error(s, "host",
              absl::StrCat("server.host must be a host name or address without spaces; got ",
                           b.Shown(b.Node(s, "host"))));
    }
  }
  b.Integer(s, "port", &server.port);
  if (client && !b.Has(s, "port")) server.port = 5222;

  // Component mode (XEP-0114).
  if (b.NonEmptyString(s, "component_domain", &server.component_domain) &&
      !IsValidDomain(server.component_domain)) {
    b.Error(s, "component_domain",
            absl::StrCat("server.component_domain must be a domain such as \"agent.localhost\"; "
                         "got ",
                         b.Shown(b.Node(s, "component_domain"))));
    server.component_domain.clear();
  } else if (component && !b.Has(s, "component_domain")) {
    b.Error(s.line,
            "server.component_domain is required in component mode (the domain the XMPP server "
            "routes to Herald, e.g. \"agent.localhost\")");
  }
  if (!b.NonEmptyString(s, "component_secret", &server.component_secret) && component &&
      !b.Has(s, "component_secret")) {
    b.Error(s.line,
            "server.component_secret is required in component mode (the shared secret of the "
            "component in the XMPP server's config; use \"${VARIABLE}\" to keep it out of the "
            "file)");
  }

  // Client mode (C2S).
  if (b.NonEmptyString(s, "jid", &server.jid) && !IsValidBareJid(server.jid, true)) {
    std::string message = absl::StrCat(
        "server.jid must be a bare JID with a localpart, such as \"herald@example.org\"; got ",
        b.Shown(b.Node(s, "jid")));
    if (server.jid.find('/') != std::string::npos) {
      absl::StrAppend(&message, " (set the resource with server.resource)");
    }
    b.Error(s, "jid", std::move(message));
    server.jid.clear();
  } else if (client && !b.Has(s, "jid")) {
    b.Error(s.line, "server.jid is required in client mode (the account Herald logs in as)");
  }
  if (!b.NonEmptyString(s, "password", &server.password) && client && !b.Has(s, "password")) {
    b.Error(s.line,
            "server.password is required in client mode (use \"${VARIABLE}\" to keep it out of "
            "the file)");
  }
  if (b.NonEmptyString(s, "resource", &server.resource) &&
      (server.resource.size() > 1023 ||
       std::any_of(server.resource.begin(), server.resource.end(), [](char c) {
         unsigned char byte = static_cast<unsigned char>(c);
         return byte < 0x20 || byte == 0x7f;
       }))) {
    b.Error(s, "resource", "server.resource must be at most 1023 bytes without control characters");
  }
  b.Enum<StartTls>(s, "starttls",
                   {{"required", StartTls::kRequired}, {"optional", StartTls::kOptional}},
                   &server.starttls);
  b.Bool(s, "tls_verify", &server.tls_verify);
  b.String(s, "tls_ca_file", &server.tls_ca_file);

  // Keepalive and reconnect.
  b.Integer(s, "whitespace_keepalive_seconds", &server.whitespace_keepalive_seconds);
  bool ping_ok = b.Integer(s, "ping_interval_seconds", &server.ping_interval_seconds);
  ping_ok &= b.Integer(s, "ping_timeout_seconds", &server.ping_timeout_seconds);
  // A ping allowed to take longer than the gap between pings would overlap the next one.
  if (ping_ok && server.ping_interval_seconds > 0 &&
      server.ping_timeout_seconds >= server.ping_interval_seconds) {
    b.Error(b.Has(s, "ping_timeout_seconds") ? b.Line(s, "ping_timeout_seconds")
                                             : b.Line(s, "ping_interval_seconds"),
            absl::StrCat("server.ping_timeout_seconds (", server.ping_timeout_seconds,
                         ") must be shorter than server.ping_interval_seconds (",
                         server.ping_interval_seconds, ")"));
  }
  bool reconnect_ok = b.Integer(s, "reconnect_initial_ms", &server.reconnect_initial_ms);
  reconnect_ok &= b.Integer(s, "reconnect_max_ms", &server.reconnect_max_ms);
  if (reconnect_ok && server.reconnect_max_ms < server.reconnect_initial_ms) {
    b.Error(b.Has(s, "reconnect_max_ms") ? b.Line(s, "reconnect_max_ms")
                                         : b.Line(s, "reconnect_initial_ms"),
            absl::StrCat("server.reconnect_max_ms (", server.reconnect_max_ms,
                         ") must be at least server.reconnect_initial_ms (",
                         server.reconnect_initial_ms, ")"));
  }
  b.Bool(s, "reconnect_on_permanent_errors", &server.reconnect_on_permanent_errors);
  b.Integer(s, "outbound_queue_limit", &server.outbound_queue_limit);
  // RFC 6120 §13.12: a server accepts stanzas of at least 10000 bytes, so Herald must too.
  b.Integer(s, "max_stanza_bytes", &server.max_stanza_bytes);
  b.Integer(s, "max_outbound_stanza_bytes", &server.max_outbound_stanza_bytes);
  for (Binder::Element& element : b.StringList(s, "muc_services")) {
    if (!IsValidDomain(element.value)) {
      b.ElementError(element, absl::StrCat(element.path,
                                           " must be the domain of a MUC service such as "
                                           "\"conference.example.org\"; got ",
                                           b.Shown(element.node)));
      continue;
    }
    server.muc_services.push_back(absl::AsciiStrToLower(element.value));
  }
}

}  // namespace herald::config
