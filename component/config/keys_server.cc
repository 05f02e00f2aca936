// The keys of [server]: the connection to the XMPP server.
//
// Declared as key_declarations.h says; docs/configuration.md's key tables are made from
// these (`bazel run //tools/config:config_reference`).

#include <vector>

#include "component/config/key_declarations.h"

namespace herald::config::declare {

void DeclareServerKeys(std::vector<ConfigKey>& keys) {
  std::vector<ConfigKey> declared = {
      Part("server", K::kTable),
      Restart(
          "server.mode", K::kString, [](auto& c) -> auto& { return c.server.mode; })
          .Doc("`\"component\"`",
               "`\"component\"`: an XEP-0114 external component (needs access to the server's "
               "config). `\"client\"`: an ordinary account over C2S."),
      Restart(
          "server.host", K::kString, [](auto& c) -> auto& { return c.server.host; })
          .Doc("`\"127.0.0.1\"`", "the server's host name or address"),
      Restart(
          "server.port", K::kInteger, [](auto& c) -> auto& { return c.server.port; })
          .Range(1, 65535)
          .Doc("`5347`; `5222` in client mode", "the server's component (or client) port"),
      Restart(
          "server.component_domain", K::kString,
          [](auto& c) -> auto& { return c.server.component_domain; })
          .Type("string, a domain")
          .Doc("— (required in component mode)",
               "the domain the server routes to Herald, as in the server's config "
               "(`agent.example.org`)"),
      Restart(
          "server.component_secret", K::kString,
          [](auto& c) -> auto& { return c.server.component_secret; }, kSecret)
          .Doc("— (required in component mode, not empty)",
               "the component's shared secret; use `\"${HERALD_SECRET}\"`"),
      Restart(
          "server.jid", K::kString, [](auto& c) -> auto& { return c.server.jid; })
          .Type("string, bare JID with a localpart")
          .Doc("— (required in client mode)",
               "the account Herald logs in as (`herald@example.org`); no resource"),
      Restart(
          "server.password", K::kString, [](auto& c) -> auto& { return c.server.password; },
          kSecret)
          .Doc("— (required in client mode, not empty)",
               "the account's password; use `\"${...}\"`"),
      Restart(
          "server.resource", K::kString, [](auto& c) -> auto& { return c.server.resource; })
          .Doc("`\"herald\"`",
               "the resource to bind in client mode (at most 1023 bytes, no control characters)"),
      Restart(
          "server.starttls", K::kString, [](auto& c) -> auto& { return c.server.starttls; })
          .Doc("`\"required\"`",
               "client mode: `\"required\"` refuses a server without STARTTLS; `\"optional\"` "
               "continues in clear text when the server does not offer it"),
      Restart(
          "server.tls_verify", K::kBoolean, [](auto& c) -> auto& { return c.server.tls_verify; })
          .Doc("`true`", "client mode: verify the server's certificate and name"),
      Restart(
          "server.tls_ca_file", K::kString, [](auto& c) -> auto& { return c.server.tls_ca_file; })
          .Doc("`\"\"` (system trust store)",
               "a PEM file of CA certificates to trust instead of the system's"),
      Restart(
          "server.whitespace_keepalive_seconds", K::kInteger,
          [](auto& c) -> auto& { return c.server.whitespace_keepalive_seconds; })
          .Range(0, 3600)
          .Doc("`60`", "send a whitespace byte after this long without writing; `0` = off"),
      Restart(
          "server.ping_interval_seconds", K::kInteger,
          [](auto& c) -> auto& { return c.server.ping_interval_seconds; })
          .Range(0, 86400)
          .Doc("`120`",
               "send an XEP-0199 ping after this long without hearing from the server; `0` = off"),
      Restart(
          "server.ping_timeout_seconds", K::kInteger,
          [](auto& c) -> auto& { return c.server.ping_timeout_seconds; })
          .Range(1, 3600)
          .Doc("`30`",
               "no answer to a ping within this long forces a reconnect; must be shorter than "
               "`ping_interval_seconds` when pings are on"),
      Restart(
          "server.reconnect_initial_ms", K::kInteger,
          [](auto& c) -> auto& { return c.server.reconnect_initial_ms; })
          .Range(1, 3'600'000)
          .Doc("`1000`", "first reconnect delay; it doubles (with full jitter) after each failure"),
      Restart(
          "server.reconnect_max_ms", K::kInteger,
          [](auto& c) -> auto& { return c.server.reconnect_max_ms; })
          .Range(1, 86'400'000)
          .Doc("`60000`", "the delay's ceiling; at least `reconnect_initial_ms`"),
      Restart(
          "server.reconnect_on_permanent_errors", K::kBoolean,
          [](auto& c) -> auto& { return c.server.reconnect_on_permanent_errors; })
          .Doc("`false`",
               "keep retrying after a permanent error (secret refused, conflict, host-unknown) "
               "instead of exiting"),
      Restart(
          "server.outbound_queue_limit", K::kInteger,
          [](auto& c) -> auto& { return c.server.outbound_queue_limit; })
          .Range(0, 1'000'000)
          .Doc("`1000`",
               "stanzas held while disconnected; beyond it the oldest are dropped and logged"),
      Restart(
          "server.max_stanza_bytes", K::kInteger,
          [](auto& c) -> auto& { return c.server.max_stanza_bytes; })
          .Range(10'000, 64 << 20)
          .Doc("`524288`",
               "a larger incoming stanza is read past and dropped (its sender gets a "
               "`policy-violation` error) rather than held; the stream stays up. Only a single tag "
               "over this size, or a stanza over 8 MiB, ends the stream (10000 is RFC 6120's "
               "minimum)"),
      Restart(
          "server.max_outbound_stanza_bytes", K::kInteger,
          [](auto& c) -> auto& { return c.server.max_outbound_stanza_bytes; })
          .Range(10'000, 64 << 20)
          .Doc("`65536`",
               "no stanza Herald writes is larger: a longer message goes out as up to 8 messages "
               "cut after a line, the rest left out with a note; keep it under the server's limit "
               "(Prosody: 512 KiB for components, 256 KiB for clients), which closes the stream on "
               "a larger stanza"),
      Restart(
          "server.muc_services", K::kStringArray,
          [](auto& c) -> auto& { return c.server.muc_services; })
          .Type("array of domains")
          .Doc("`[]`",
               "MUC services whose relayed (XEP-0045 mediated) invitations are believed to name "
               "the inviter truthfully; empty: the services the server announces (disco#items of "
               "its domain, then disco#info identity `conference`). An invitation relayed by a "
               "room on any other service is ignored and logged; XEP-0249 direct invitations, "
               "whose sender the server stamps, are unaffected"),
  };
  for (ConfigKey& key : declared) keys.push_back(std::move(key));
}

}  // namespace herald::config::declare
