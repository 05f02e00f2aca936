// component/config/config.h
//
// Herald's configuration: one TOML file (SPEC §5), read once at start and validated before
// anything connects. `${VAR}` in a string value is replaced from the environment; a missing
// variable, an unknown key, a wrong type or an out-of-range value is an error that names the
// file, the line and the key (and, for a misspelt key, the nearest known one).
//
//   absl::StatusOr<Config> config = LoadConfigFile("/etc/herald/herald.toml");
//   if (!config.ok()) { std::cerr << config.status().message(); return 2; }
//   config->server.component_domain;   // "agent.localhost"
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "component/agent/agent_options.h"
#include "providers/llm_options.h"
#include "skills/approvals/approval_rules.h"
#include "skills/mcp/mcp_server_options.h"

namespace herald::config {

enum class ConnectionMode { kComponent, kClient };
enum class StartTls { kRequired, kOptional };

struct ServerConfig {
  ConnectionMode mode = ConnectionMode::kComponent;
  std::string host = "127.0.0.1";
  int port = 5347;  // 5222 is the default in client mode when `port` is not set
  // Component mode (XEP-0114).
  std::string component_domain;
  std::string component_secret;
  // Client mode (C2S).
  std::string jid;
  std::string password;
  std::string resource = "herald";
  StartTls starttls = StartTls::kRequired;
  bool tls_verify = true;
  std::string tls_ca_file;  // empty: the system's trust store
  // Keepalive (X5): a whitespace byte after this much write silence, and an XEP-0199 ping
  // to the server after this much read silence; no answer within ping_timeout reconnects.
  int whitespace_keepalive_seconds = 60;
  int ping_interval_seconds = 120;
  int ping_timeout_seconds = 30;
  // Reconnect (X4): exponential backoff with full jitter between these bounds.
  int reconnect_initial_ms = 1000;
  int reconnect_max_ms = 60000;
  // Permanent errors (bad secret, conflict, host-unknown) stop Herald unless this is true.
  bool reconnect_on_permanent_errors = false;
  // Outbound stanzas held while disconnected; beyond this the oldest are dropped and logged.
  int outbound_queue_limit = 1000;
  int max_stanza_bytes = 512 * 1024;
  // No outbound stanza is larger: a longer message goes out in parts (see session.h).
  int max_outbound_stanza_bytes = 64 * 1024;
  // MUC services (domains) whose relayed invitations name the inviter truthfully; empty: the
  // ones the server announces by disco.
  std::vector<std::string> muc_services;

  friend bool operator==(const ServerConfig&, const ServerConfig&) = default;
};

struct LogConfig {
  std::string level = "info";  // "debug" | "info" | "warning" | "error"

  friend bool operator==(const LogConfig&, const LogConfig&) = default;
};

// The sections SPEC §5 fixes for later features are parsed and kept as raw, validated
// values so that a config written for the full product is accepted today.

struct MemoryConfig {
  std::string path = "./data/memory";
  // The shared knowledge folder (M3); "" = <path>/shared. Who may add to it is
  // agent::AgentOptions::shared_memory_writers ([memory] shared_writers).
  std::string shared_path;
  // Memory search's vector path (M4): "openai:<model>" (through [llm.openai]) or
  // "ollama:<model>" (through [llm.ollama]); "" = keywords only.
  std::string embeddings_model;
  std::string embeddings_cache_path = "./data/embeddings.db";
  // How much keywords and meaning count in a hybrid search, in percent.
  int keyword_weight = 30;
  int vector_weight = 70;

  friend bool operator==(const MemoryConfig&, const MemoryConfig&) = default;
};

// One row of the price table: USD per million tokens of a "<provider>:<model>".
struct ModelPrice {
  std::string model;
  double input_per_mtok = 0;
  double output_per_mtok = 0;

  friend bool operator==(const ModelPrice&, const ModelPrice&) = default;
};

struct QuotaConfig {
  int64_t daily_tokens = 100000;          // default per-JID daily limit (block); 0 = none
  std::string path = "./data/ledger.db";  // the usage ledger (SQLite)
  std::vector<ModelPrice> prices;         // [[quota.prices]], for cost estimates

  friend bool operator==(const QuotaConfig&, const QuotaConfig&) = default;
};

// [storage]: where the state several instances would share is kept (D1; docs/scale-out.md).
enum class StorageBackend { kSqlite, kPostgresql };

struct StorageConfig {
  StorageBackend backend = StorageBackend::kSqlite;  // SQLite files and markdown on this host
  std::string postgresql;  // a libpq connection string; may hold a password (a secret)
  int pool_size = 4;       // connections to PostgreSQL, shared by the stores
  int lease_seconds = 10;  // a conversation's lease (storage/conversation_inbox.h)

  friend bool operator==(const StorageConfig&, const StorageConfig&) = default;
};

// [skills.image_generate]: the image_generate skill (E2; docs/media.md), there when a model is.
struct ImageGenerateConfig {
  std::string model;  // "openai:<model>"; "" = no image_generate skill
  std::string size = "1024x1024";

  friend bool operator==(const ImageGenerateConfig&, const ImageGenerateConfig&) = default;
};

// [skills.url_fetch]: the url_fetch builtin (S4; docs/web-skills.md).
struct UrlFetchConfig {
  int64_t max_bytes = 1 << 20;        // of a response body; a longer page is cut there
  int64_t max_text_bytes = 64 << 10;  // of the text the model reads from one page
  int timeout_seconds = 20;           // the whole fetch, redirects included
  // Media types read ("type/subtype" or "type/*", lower case); empty: url_fetch's defaults
  // (HTML, plain text, Markdown, CSV, JSON, XML, RSS/Atom).
  std::vector<std::string> allowed_content_types;
  // Exempt from the private-address refusal: host names, "*.domain", addresses, networks.
  std::vector<std::string> allow_hosts;
  std::string user_agent = "Herald url_fetch";

  friend bool operator==(const UrlFetchConfig&, const UrlFetchConfig&) = default;
};

// [skills.http_tools]: the registry's tools whose executor is HTTP (S6; docs/tool-search.md).
struct HttpToolsConfig {
  int64_t max_bytes = 1 << 20;        // of an answer's body; a longer one is cut there
  int64_t max_text_bytes = 64 << 10;  // of the text the model reads from one answer
  int timeout_seconds = 30;           // one call, resolution to body
  // Exempt from the private-address refusal: host names, "*.domain", addresses, networks.
  std::vector<std::string> allow_hosts;

  friend bool operator==(const HttpToolsConfig&, const HttpToolsConfig&) = default;
};

// [skills.web_search]: the web_search builtin (S4; docs/web-skills.md).
struct WebSearchConfig {
  std::string backend = "searxng";  // "searxng" | "tavily"
  // SearXNG: the instance's base URL (required when web_search is enabled); Tavily: the API
  // (https://api.tavily.com unless set).
  std::string url;
  std::string api_key;  // Tavily's key (required for Tavily); a secret
  int max_results = 5;
  int timeout_seconds = 15;

  friend bool operator==(const WebSearchConfig&, const WebSearchConfig&) = default;
};

struct SkillsConfig {
  std::vector<std::string> enabled;
  std::string path = "./skills.d";  // the folder of skill manifests (docs/skills.md)
  // A root Herald runs each skill run as a uid of its own: this one and the next 1023.
  int64_t sandbox_uid_base = 2'000'000'000;
  // [skills.sandbox] require: the sandbox layers without which external skills and MCP
  // servers are disabled (skills/sandbox/sandbox_policy.h names them). Default: all of them.
  std::vector<std::string> sandbox_require = {"users", "seccomp", "landlock", "network_namespace",
                                              "ipc_namespace"};
  UrlFetchConfig url_fetch;
  ImageGenerateConfig image_generate;
  HttpToolsConfig http_tools;
  WebSearchConfig web_search;
  std::vector<skills::mcp::McpServerOptions> mcp;  // [[skills.mcp]]
  skills::ApprovalRules approvals;
  // How long a run waits for a missing credential before the tool call fails.
  int credential_timeout_seconds = 900;
  // The credential store (S8; docs/skills.md "Credentials"): SQLite, values sealed with
  // AES-256-GCM under a 32-byte key from credentials_key_file, or when that is "" from the
  // environment variable HERALD_CREDENTIALS_KEY (64 hex digits).
  std::string credentials_path = "./data/credentials.db";
  // The external tool registry and its search index (S6; docs/tool-search.md): SQLite.
  std::string tool_registry_path = "./data/tools.db";
  // WordNet's folder (Debian's wordnet-base), for the alternatives of a query's words; "" or
  // a folder without WordNet: no alternatives. Read when a registry is imported.
  std::string tool_thesaurus_path = "/usr/share/wordnet";
  // Registry tools by id: loaded in every run / never loaded (users add their own with /tools).
  std::vector<std::string> pinned_tools;
  std::vector<std::string> blocked_tools;
  std::string credentials_key_file;
  // Rotation: entries sealed under these keys are re-sealed under the current one at start.
  std::vector<std::string> credentials_previous_key_files;

  friend bool operator==(const SkillsConfig&, const SkillsConfig&) = default;
};

struct ControlToken {
  std::string name;
  std::string token_sha256;
  std::vector<std::string> scopes;

  friend bool operator==(const ControlToken&, const ControlToken&) = default;
};

struct ControlConfig {
  std::string listen = "unix:./data/control.sock";
  std::vector<ControlToken> tokens;
  // TLS for a TCP listener (required unless the address is loopback); mTLS when a client
  // CA is set. PEM files.
  std::string tls_cert;
  std::string tls_key;
  std::string tls_client_ca;
  std::string audit_path = "./data/audit.log";           // the hash-chained audit log
  std::string state_path = "./data/runtime-state.json";  // allowlist and rooms set at run time
  int shutdown_grace_seconds = 5;     // running streams may finish within this at shutdown
  int subscriber_queue_limit = 1024;  // events a Subscribe stream may lag before it is dropped

  friend bool operator==(const ControlConfig&, const ControlConfig&) = default;
};

// [http]: Herald's one HTTP listener (SPEC §11): /metrics, and what else serves HTTP.
struct HttpConfig {
  std::string listen;  // "HOST:PORT"; "" = no listener
  // PEM files; required off loopback, as for [control].
  std::string tls_cert;
  std::string tls_key;

  friend bool operator==(const HttpConfig&, const HttpConfig&) = default;
};

// [attachments]: files people send (XEP-0066/0363 links), downloaded, sniffed, and read by the
// model (docs/media.md).
struct AttachmentsConfig {
  bool enabled = true;
  int64_t max_bytes = 10 << 20;          // of one file; a larger one is refused
  int64_t max_per_message = 4;           // more links in one message are not downloaded
  int64_t timeout_seconds = 30;          // one download: resolution, redirects and body
  int64_t text_budget_bytes = 32 << 10;  // of a document's text the model reads, per message
  int64_t max_pdf_pages = 50;            // pages of a PDF read; the rest is said to be left out
  // Exempt from the private-address refusal, like [skills.url_fetch] allow_hosts; the XMPP
  // server's own upload service needs no entry.
  std::vector<std::string> allow_hosts;
  // Files out: what one run may send through the server's upload service.
  int64_t send_max_files = 4;
  int64_t send_max_bytes = 10 << 20;
  int64_t send_timeout_seconds = 60;

  friend bool operator==(const AttachmentsConfig&, const AttachmentsConfig&) = default;
};

// [voice]: voice messages as text, and answers spoken (V1; docs/media.md).
struct VoiceConfig {
  std::string transcription = "local";  // "local" | "openai:<model>" | "off"
  std::string speech = "local";         // "local" | "openai:<model>" | "off"
  std::string voice;                    // the provider's or espeak-ng's voice; "" = default
  bool show_transcript = true;
  bool answer_voice_notes = false;
  int64_t max_seconds = 120;

  friend bool operator==(const VoiceConfig&, const VoiceConfig&) = default;
};

// [traces]: every run as a trace of spans (component/trace/tracer.h, docs/operations.md).
struct TracesConfig {
  int64_t keep = 100;  // finished traces kept in memory; 0 = tracing off
  int64_t max_spans = 512;
  // OTLP/HTTP JSON endpoint of a collector ("http://127.0.0.1:4318/v1/traces"); "" = none.
  std::string otlp_endpoint;
  int64_t export_interval_seconds = 5;

  friend bool operator==(const TracesConfig&, const TracesConfig&) = default;
};

// [[webhooks.in]]: an endpoint POST /webhooks/<name> on the HTTP listener (docs/webhooks.md).
struct WebhookInConfig {
  std::string name;                        // [a-z0-9_-], 1-64 bytes, unique
  std::string secret;                      // HMAC-SHA256 key of X-Herald-Signature; a secret
  std::string to;                          // a bare JID, or a room Herald is in
  std::string template_text = "{{text}}";  // `template`: {{field}} from the JSON body
  int64_t max_body_bytes = 64 * 1024;
  int rate_per_minute = 60;

  friend bool operator==(const WebhookInConfig&, const WebhookInConfig&) = default;
};

// [[webhooks.out]]: events POSTed, signed, to a URL (docs/webhooks.md).
struct WebhookOutConfig {
  std::string name;  // in dead letters and logs; default "out-<n>"
  std::string url;
  std::string secret;
  // Event names as the bus names them ("run_completed", "limit_blocked", ...); the SPEC's
  // "limit_reached" and "limit_warned" are read as "limit_blocked" and "limit_warning".
  std::vector<std::string> events;
  int max_queue = 1000;
  int max_attempts = 5;
  int timeout_seconds = 10;

  friend bool operator==(const WebhookOutConfig&, const WebhookOutConfig&) = default;
};

struct WebhooksConfig {
  std::vector<WebhookInConfig> in;
  std::vector<WebhookOutConfig> out;
  std::string dead_letters_path = "./data/webhooks.db";

  friend bool operator==(const WebhooksConfig&, const WebhooksConfig&) = default;
};

// [[schedules.task]]: an operator's schedule (docs/proactivity.md).
struct ScheduleTaskConfig {
  std::string name;  // [a-z0-9_-], 1-64 bytes, unique
  std::string to;    // a bare JID (a chat) or a room of [[rooms]]
  std::string prompt;
  std::string when;  // "every 1d", "cron 0 9 * * MON" (repeating only)
  std::string timezone = "UTC";

  friend bool operator==(const ScheduleTaskConfig&, const ScheduleTaskConfig&) = default;
};

// [schedules]: reminders and recurring prompts (docs/proactivity.md).
struct SchedulesConfig {
  bool enabled = true;
  std::string path = "./data/schedules.db";
  int max_per_user = 20;
  int min_interval_seconds = 300;
  std::string missed = "run_once";  // "run_once" | "skip"
  std::vector<ScheduleTaskConfig> tasks;

  friend bool operator==(const SchedulesConfig&, const SchedulesConfig&) = default;
};

struct Config {
  std::string source_path;  // the file it was read from, for messages
  ServerConfig server;
  agent::AgentOptions agent;
  LogConfig log;
  providers::LlmOptions llm;
  MemoryConfig memory;
  std::vector<agent::RoomSettings> rooms;
  QuotaConfig quota;
  StorageConfig storage;
  SkillsConfig skills;
  ControlConfig control;
  HttpConfig http;
  TracesConfig traces;
  AttachmentsConfig attachments;
  VoiceConfig voice;
  WebhooksConfig webhooks;
  SchedulesConfig schedules;
  agent::AgentProtocolOptions agent_protocol;
  std::vector<agent::DelegateTarget> delegate;  // [[delegate.agent]]

  friend bool operator==(const Config&, const Config&) = default;
};

// Looks up an environment variable; nullopt when it is not set.
using EnvLookup = std::function<std::optional<std::string>(std::string_view name)>;

// Reads and validates the file; `${VAR}` comes from the process environment.
absl::StatusOr<Config> LoadConfigFile(const std::string& path);

// Parses and validates TOML text; `source_name` is used in messages.
absl::StatusOr<Config> LoadConfigString(std::string_view text, std::string_view source_name,
                                        const EnvLookup& env);

}  // namespace herald::config
