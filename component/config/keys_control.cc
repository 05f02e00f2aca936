// The keys of [quota] (token limits, prices), [storage] (SQLite or PostgreSQL) and [control]
// (the gRPC control plane).
//
// Declared as key_declarations.h says; docs/configuration.md's key tables are made from
// these (`bazel run //tools/config:config_reference`).

#include <vector>

#include "component/config/key_declarations.h"

namespace herald::config::declare {

void DeclareQuotaKeys(std::vector<ConfigKey>& keys) {
  std::vector<ConfigKey> declared = {
      Part("quota", K::kTable),
      Applies(
          "quota.daily_tokens", K::kInteger, [](auto& c) -> auto& { return c.quota.daily_tokens; })
          .Range(0, kNoMaximum)
          .Doc("`100000`",
               "default per-JID daily token limit (blocking); `0` = unlimited. A per-JID day limit "
               "set with `heraldctl limits set` replaces it for that JID"),
      Restart(
          "quota.path", K::kString, [](auto& c) -> auto& { return c.quota.path; })
          .Type("string, not empty")
          .Doc("`\"./data/ledger.db\"`",
               "the usage ledger and limits (SQLite, WAL); created when missing, mode 0600"),
      Applies(
          "quota.prices", K::kTableArray, [](auto& c) -> auto& { return c.quota.prices; }),
      Part("quota.prices.model", K::kString)
          .Type("string, `\"<provider>:<model>\"`, unique")
          .Doc("— (required)", "a model as the router names it"),
      Part("quota.prices.input_per_mtok", K::kNumber)
          .Type("number ≥ 0")
          .Doc("`0`",
               "USD per million input tokens, for the cost estimates of `GetUsage`; a model "
               "without a price shows its cost as unknown"),
      Part("quota.prices.output_per_mtok", K::kNumber)
          .Type("number ≥ 0")
          .Doc("`0`", "USD per million output tokens, as `input_per_mtok`"),
  };
  for (ConfigKey& key : declared) keys.push_back(std::move(key));
}

void DeclareStorageKeys(std::vector<ConfigKey>& keys) {
  std::vector<ConfigKey> declared = {
      Part("storage", K::kTable),
      Restart(
          "storage.backend", K::kString, [](auto& c) -> auto& { return c.storage.backend; })
          .Type("string, `\"sqlite\"` or `\"postgresql\"`")
          .Doc("`\"sqlite\"`",
               "where the shared state is kept: `\"sqlite\"`, files on this host (the ledger "
               "in `quota.path`, the audit chain in `control.audit_path`, the credentials in "
               "`skills.credentials_path`, the schedules in `schedules.path`), or "
               "`\"postgresql\"`, the database "
               "`storage.postgresql` names, which several instances share: those, the "
               "conversations' memory, the allowlist and room changes, the inbox and leases "
               "of the 1:1 conversations they answer, and the room leases "
               "([scale-out.md](scale-out.md) says what is shared)"),
      Restart(
          "storage.postgresql", K::kString, [](auto& c) -> auto& { return c.storage.postgresql; },
          kSecret)
          .Type("string, libpq connection string, secret")
          .Doc("unset",
               "the database, as `\"host=/run/postgresql dbname=herald\"` or "
               "`\"postgresql://herald@db.example.org/herald\"`; required with `backend = "
               "\"postgresql\"`. It may hold a password, so it is never logged or shown; "
               "prefer `${VAR}` or libpq's password file. Herald creates and migrates its "
               "tables at start and refuses a database written by a newer Herald"),
      Restart(
          "storage.pool_size", K::kInteger, [](auto& c) -> auto& { return c.storage.pool_size; })
          .Range(1, 64)
          .Doc("`4`", "connections Herald keeps open to PostgreSQL, shared by its stores"),
      Restart(
          "storage.lease_seconds", K::kInteger,
          [](auto& c) -> auto& { return c.storage.lease_seconds; })
          .Range(3, 600)
          .Doc("`10`",
               "how long an instance's hold on a 1:1 conversation or a room lasts without being "
               "renewed (every 2 s): when an instance dies, another answers its people and "
               "rooms after this long. Longer rides out longer database outages without "
               "handing them over; shorter fails over sooner ([scale-out.md](scale-out.md))"),
  };
  for (ConfigKey& key : declared) keys.push_back(std::move(key));
}

void DeclareHttpKeys(std::vector<ConfigKey>& keys) {
  std::vector<ConfigKey> declared = {
      Part("http", K::kTable),
      Restart(
          "http.listen", K::kString, [](auto& c) -> auto& { return c.http.listen; })
          .Type("string, `\"HOST:PORT\"`")
          .Doc("`\"\"` (no listener)",
               "the one HTTP listener: `/metrics` ([operations.md](operations.md)), the "
               "HTTP/JSON API under `/api/` ([http-api.md](http-api.md)) and the webhooks. A "
               "port off "
               "loopback (`127.0.0.0/8`, `[::1]`, `localhost`) is refused unless `tls_cert` and "
               "`tls_key` are set; from loopback `/metrics` needs no token, from elsewhere a "
               "control token with the `read` scope"),
      Restart(
          "http.tls_cert", K::kString, [](auto& c) -> auto& { return c.http.tls_cert; })
          .Type("string, PEM file path")
          .Doc("unset", "the certificate (chain) of the listener's TLS; set both or neither"),
      Restart(
          "http.tls_key", K::kString, [](auto& c) -> auto& { return c.http.tls_key; })
          .Type("string, PEM file path")
          .Doc("unset", "the private key of that certificate"),
  };
  for (ConfigKey& key : declared) keys.push_back(std::move(key));
}

void DeclareTraceKeys(std::vector<ConfigKey>& keys) {
  std::vector<ConfigKey> declared = {
      Part("traces", K::kTable),
      Restart(
          "traces.keep", K::kInteger, [](auto& c) -> auto& { return c.traces.keep; })
          .Range(0, 100000)
          .Doc("`100`",
               "finished run traces kept in memory for `AdminService.ListTraces`/`GetTrace` "
               "and the console (besides the runs in progress); `0` turns tracing off"),
      Restart(
          "traces.max_spans", K::kInteger, [](auto& c) -> auto& { return c.traces.max_spans; })
          .Range(2, 100000)
          .Doc("`512`", "spans kept per trace; more are counted as dropped"),
      Restart(
          "traces.otlp_endpoint", K::kString,
          [](auto& c) -> auto& { return c.traces.otlp_endpoint; })
          .Type("string, http(s) URL")
          .Doc("`\"\"` (no export)",
               "where finished traces are POSTed as OTLP/HTTP JSON, e.g. "
               "`\"http://127.0.0.1:4318/v1/traces\"` (an OpenTelemetry Collector). "
               "Operator-chosen, so not SSRF-guarded"),
      Restart(
          "traces.export_interval_seconds", K::kInteger,
          [](auto& c) -> auto& { return c.traces.export_interval_seconds; })
          .Range(1, 3600)
          .Doc("`5`", "how often the traces finished meanwhile are sent, in one request"),
  };
  for (ConfigKey& key : declared) keys.push_back(std::move(key));
}

void DeclareWebhookKeys(std::vector<ConfigKey>& keys) {
  std::vector<ConfigKey> declared = {
      Part("webhooks", K::kTable),
      Restart(
          "webhooks.in", K::kTableArray, [](auto& c) -> auto& { return c.webhooks.in; }),
      Part("webhooks.in.name", K::kString)
          .Type("string, 1-64 of `a-z 0-9 _ -`, unique")
          .Doc("— (required)", "the endpoint is `POST /webhooks/<name>` on `[http] listen`"),
      Part("webhooks.in.secret", K::kString, kSecret)
          .Type("string, at least 16 bytes")
          .Doc("— (required)",
               "the HMAC-SHA256 key of `X-Herald-Signature`; use `\"${NAME}\"` to read it from "
               "the environment"),
      Part("webhooks.in.to", K::kString)
          .Type("string, bare JID")
          .Doc("— (required)",
               "who hears the delivery: a JID (a chat message) or a room Herald is in (to the "
               "room)"),
      Part("webhooks.in.template", K::kString)
          .Doc("`\"{{text}}\"`",
               "the message: `{{field}}` (or `{{a.b}}`) from the JSON body; nothing else is "
               "evaluated"),
      Part("webhooks.in.max_body_bytes", K::kInteger)
          .Range(1, 1 << 20)
          .Doc("`65536`", "a larger body is refused (413)"),
      Part("webhooks.in.rate_per_minute", K::kInteger)
          .Range(1, 10000)
          .Doc("`60`", "deliveries taken a minute; more are refused (429)"),
      Restart(
          "webhooks.out", K::kTableArray, [](auto& c) -> auto& { return c.webhooks.out; }),
      Part("webhooks.out.name", K::kString)
          .Type("string, unique")
          .Doc("`\"out-<n>\"`", "names the target in dead letters and logs"),
      Part("webhooks.out.url", K::kString)
          .Type("string, http(s) URL")
          .Doc("— (required)",
               "where events are POSTed. Operator-chosen, so not SSRF-guarded (a private address "
               "is fine)"),
      Part("webhooks.out.secret", K::kString, kSecret)
          .Type("string, at least 16 bytes")
          .Doc("— (required)", "the HMAC-SHA256 key of each delivery's `X-Herald-Signature`"),
      Part("webhooks.out.events", K::kStringArray)
          .Type("array of event types, not empty")
          .Doc("— (required)",
               "`run_completed`, `run_failed`, `action_required`, `limit_reached` (or "
               "`limit_blocked`), `limit_warned` (or `limit_warning`), or any type `heraldctl "
               "events` names"),
      Part("webhooks.out.max_queue", K::kInteger)
          .Range(1, 100000)
          .Doc("`1000`", "deliveries waiting for this target; past it an event is a dead letter"),
      Part("webhooks.out.max_attempts", K::kInteger)
          .Range(1, 20)
          .Doc("`5`", "attempts (1 s, 2 s, 4 s ... apart, at most a minute) before a dead letter"),
      Part("webhooks.out.timeout_seconds", K::kInteger)
          .Range(1, 120)
          .Doc("`10`", "one attempt; anything but a 2xx in time is a failed attempt"),
      Restart(
          "webhooks.dead_letters_path", K::kString,
          [](auto& c) -> auto& { return c.webhooks.dead_letters_path; })
          .Type("string, not empty")
          .Doc("`\"./data/webhooks.db\"`",
               "deliveries given up (SQLite, mode 0600): `heraldctl webhooks dead-letters`, "
               "`heraldctl webhooks replay ID`"),
  };
  for (ConfigKey& key : declared) keys.push_back(std::move(key));
}

void DeclareControlKeys(std::vector<ConfigKey>& keys) {
  std::vector<ConfigKey> declared = {
      Part("control", K::kTable),
      Restart(
          "control.listen", K::kString, [](auto& c) -> auto& { return c.control.listen; })
          .Doc("`\"unix:./data/control.sock\"`",
               "`\"unix:PATH\"` (at most 107 bytes; the socket is created with mode 0600) or "
               "`\"HOST:PORT\"`. A TCP address off loopback (`127.0.0.0/8`, `[::1]`, `localhost`) "
               "is refused unless `tls_cert` and `tls_key` are set"),
      Restart(
          "control.tokens", K::kTableArray, [](auto& c) -> auto& { return c.control.tokens; }),
      Part("control.tokens.name", K::kString)
          .Type("string, not empty, unique")
          .Doc("— (required)", "names the caller in the audit log"),
      // A hash, but a careless operator may paste the token itself here.
      Part("control.tokens.token_sha256", K::kString, kSecret)
          .Type("string, 64 lowercase hex digits")
          .Doc("— (required)",
               "the SHA-256 of the bearer token — **never the token itself**: `printf %s "
               "\"$TOKEN\" \\| sha256sum`. Anything else is refused without being quoted."),
      Part("control.tokens.scopes", K::kStringArray)
          .Type("array of strings, not empty")
          .Doc("— (required)", "any of `\"read\"`, `\"operate\"`, `\"execute\"`, `\"admin\"`"),
      Restart(
          "control.tls_cert", K::kString, [](auto& c) -> auto& { return c.control.tls_cert; })
          .Type("string, PEM file path")
          .Doc("unset",
               "the certificate (chain) of a TCP listener's TLS; set both `tls_cert` and `tls_key` "
               "or neither"),
      Restart(
          "control.tls_key", K::kString, [](auto& c) -> auto& { return c.control.tls_key; })
          .Type("string, PEM file path")
          .Doc("unset", "the private key of that certificate"),
      Restart(
          "control.tls_client_ca", K::kString,
          [](auto& c) -> auto& { return c.control.tls_client_ca; })
          .Type("string, PEM file path")
          .Doc("unset",
               "mTLS: clients must present a certificate this CA signed (needs "
               "`tls_cert`/`tls_key`)"),
      Restart(
          "control.audit_path", K::kString, [](auto& c) -> auto& { return c.control.audit_path; })
          .Type("string, not empty")
          .Doc("`\"./data/audit.log\"`",
               "the hash-chained audit log (one entry per gRPC call and admin command); with "
               "[storage] backend = \"postgresql\" the chain is in the database and this is "
               "not used"),
      Restart(
          "control.state_path", K::kString, [](auto& c) -> auto& { return c.control.state_path; })
          .Type("string, not empty")
          .Doc("`\"./data/runtime-state.json\"`",
               "allowlist and rooms changed at run time over `AdminService`, reapplied at start"),
      Restart(
          "control.shutdown_grace_seconds", K::kInteger,
          [](auto& c) -> auto& { return c.control.shutdown_grace_seconds; })
          .Range(0, 3600)
          .Doc("`5`",
               "at shutdown, running streams may finish within this before they are cancelled"),
      Restart(
          "control.subscriber_queue_limit", K::kInteger,
          [](auto& c) -> auto& { return c.control.subscriber_queue_limit; })
          .Range(1, 1 << 20)
          .Doc("`1024`",
               "events an `AdminService.Subscribe` stream may fall behind before it is dropped"),
  };
  for (ConfigKey& key : declared) keys.push_back(std::move(key));
}

}  // namespace herald::config::declare
