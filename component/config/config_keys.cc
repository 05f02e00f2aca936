#include "component/config/config_keys.h"

#include <algorithm>
#include <functional>
#include <utility>

namespace herald::config {
namespace {

using K = ValueKind;

constexpr bool kSecret = true;

// A table that only holds keys ([server]) or a key inside a reload unit.
ConfigKey Part(std::string_view path, ValueKind kind, bool secret = false) {
  return ConfigKey{.path = path, .kind = kind, .secret = secret};
}

// A reload unit; `field` gives the unit's value in a Config (const or not), and `same`
// compares two values of it.
template <typename Field, typename Same = std::equal_to<>>
ConfigKey Unit(std::string_view path, ValueKind kind, OnReload reload, Field field,
               bool secret = false, Same same = {}) {
  return ConfigKey{
      .path = path,
      .kind = kind,
      .secret = secret,
      .reload = reload,
      .same = [field, same](const Config& a, const Config& b) { return same(field(a), field(b)); },
      .keep = [field](const Config& running, Config& fresh) { field(fresh) = field(running); },
  };
}

template <typename Field>
ConfigKey Applies(std::string_view path, ValueKind kind, Field field) {
  return Unit(path, kind, OnReload::kApplies, field);
}

template <typename Field>
ConfigKey Restart(std::string_view path, ValueKind kind, Field field, bool secret = false) {
  return Unit(path, kind, OnReload::kRestart, field, secret);
}

// MCP servers compare by their settings, not by the line they were read from.
bool SameMcpServers(const std::vector<skills::mcp::McpServerOptions>& a,
                    const std::vector<skills::mcp::McpServerOptions>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                    [](const auto& x, const auto& y) { return x.SameSettings(y); });
}

// The fields below are written `[](auto& c) -> auto& { return c.section.key; }` so that one
// lambda reads a const Config and writes a mutable one.
std::vector<ConfigKey> Declare() {
  return {
      Part("server", K::kTable),
      Restart(
          "server.mode", K::kString, [](auto& c) -> auto& { return c.server.mode; }),
      Restart(
          "server.host", K::kString, [](auto& c) -> auto& { return c.server.host; }),
      Restart(
          "server.port", K::kInteger, [](auto& c) -> auto& { return c.server.port; }),
      Restart(
          "server.component_domain", K::kString,
          [](auto& c) -> auto& { return c.server.component_domain; }),
      Restart(
          "server.component_secret", K::kString,
          [](auto& c) -> auto& { return c.server.component_secret; }, kSecret),
      Restart(
          "server.jid", K::kString, [](auto& c) -> auto& { return c.server.jid; }),
      Restart(
          "server.password", K::kString, [](auto& c) -> auto& { return c.server.password; },
          kSecret),
      Restart(
          "server.resource", K::kString, [](auto& c) -> auto& { return c.server.resource; }),
      Restart(
          "server.starttls", K::kString, [](auto& c) -> auto& { return c.server.starttls; }),
      Restart(
          "server.tls_verify", K::kBoolean, [](auto& c) -> auto& { return c.server.tls_verify; }),
      Restart(
          "server.tls_ca_file", K::kString, [](auto& c) -> auto& { return c.server.tls_ca_file; }),
      Restart(
          "server.whitespace_keepalive_seconds", K::kInteger,
          [](auto& c) -> auto& { return c.server.whitespace_keepalive_seconds; }),
      Restart(
          "server.ping_interval_seconds", K::kInteger,
          [](auto& c) -> auto& { return c.server.ping_interval_seconds; }),
      Restart(
          "server.ping_timeout_seconds", K::kInteger,
          [](auto& c) -> auto& { return c.server.ping_timeout_seconds; }),
      Restart(
          "server.reconnect_initial_ms", K::kInteger,
          [](auto& c) -> auto& { return c.server.reconnect_initial_ms; }),
      Restart(
          "server.reconnect_max_ms", K::kInteger,
          [](auto& c) -> auto& { return c.server.reconnect_max_ms; }),
      Restart(
          "server.reconnect_on_permanent_errors", K::kBoolean,
          [](auto& c) -> auto& { return c.server.reconnect_on_permanent_errors; }),
      Restart(
          "server.outbound_queue_limit", K::kInteger,
          [](auto& c) -> auto& { return c.server.outbound_queue_limit; }),
      Restart(
          "server.max_stanza_bytes", K::kInteger,
          [](auto& c) -> auto& { return c.server.max_stanza_bytes; }),
      Restart(
          "server.max_outbound_stanza_bytes", K::kInteger,
          [](auto& c) -> auto& { return c.server.max_outbound_stanza_bytes; }),
      Restart(
          "server.muc_services", K::kStringArray,
          [](auto& c) -> auto& { return c.server.muc_services; }),

      Part("agent", K::kTable),
      Applies(
          "agent.name", K::kString, [](auto& c) -> auto& { return c.agent.name; }),
      Applies(
          "agent.allowed_jids", K::kStringArray,
          [](auto& c) -> auto& { return c.agent.allowed_jids; }),
      Applies(
          "agent.allowed_domains", K::kStringArray,
          [](auto& c) -> auto& { return c.agent.allowed_domains; }),
      Applies(
          "agent.admin_jids", K::kStringArray, [](auto& c) -> auto& { return c.agent.admin_jids; }),
      Restart(
          "agent.dev_command_jids", K::kStringArray,
          [](auto& c) -> auto& { return c.agent.dev_command_jids; }),
      Applies(
          "agent.unallowed", K::kString, [](auto& c) -> auto& { return c.agent.unallowed; }),
      Applies(
          "agent.max_tool_rounds", K::kInteger,
          [](auto& c) -> auto& { return c.agent.max_tool_rounds; }),
      Applies(
          "agent.mailbox_limit", K::kInteger,
          [](auto& c) -> auto& { return c.agent.mailbox_limit; }),
      Restart(
          "agent.rate_limit_per_minute", K::kInteger,
          [](auto& c) -> auto& { return c.agent.rate_limit_per_minute; }),
      Applies(
          "agent.session_idle_minutes", K::kInteger,
          [](auto& c) -> auto& { return c.agent.session_idle_minutes; }),
      Applies(
          "agent.history_messages", K::kInteger,
          [](auto& c) -> auto& { return c.agent.history_messages; }),
      Applies(
          "agent.carry_over_summary", K::kBoolean,
          [](auto& c) -> auto& { return c.agent.carry_over_summary; }),
      Restart(
          "agent.injection_policy", K::kString,
          [](auto& c) -> auto& { return c.agent.injection_policy; }),
      Restart(
          "agent.injection_phrases", K::kStringArray,
          [](auto& c) -> auto& { return c.agent.injection_phrases; }),

      Part("log", K::kTable),
      Applies(
          "log.level", K::kString, [](auto& c) -> auto& { return c.log.level; }),

      Part("llm", K::kTable),
      Restart(
          "llm.default", K::kString, [](auto& c) -> auto& { return c.llm.default_model; }),
      Restart(
          "llm.fallback", K::kStringArray, [](auto& c) -> auto& { return c.llm.fallback; }),
      Restart(
          "llm.tiers", K::kTable, [](auto& c) -> auto& { return c.llm.tiers; }),
      Part("llm.tiers.heavy", K::kString),
      Part("llm.tiers.standard", K::kString),
      Part("llm.tiers.light", K::kString),
      Part("llm.tiers.vision", K::kString),
      Restart(
          "llm.anthropic", K::kTable, [](auto& c) -> auto& { return c.llm.anthropic; }),
      Part("llm.anthropic.api_key", K::kString, kSecret),
      Part("llm.anthropic.base_url", K::kString),
      Restart(
          "llm.openai", K::kTable, [](auto& c) -> auto& { return c.llm.openai; }),
      Part("llm.openai.api_key", K::kString, kSecret),
      Part("llm.openai.base_url", K::kString),
      Restart(
          "llm.ollama", K::kTable, [](auto& c) -> auto& { return c.llm.ollama; }),
      Part("llm.ollama.host", K::kString),
      Restart(
          "llm.scripted", K::kTable, [](auto& c) -> auto& { return c.llm.scripted; }),
      Part("llm.scripted.rules_file", K::kString),
      Applies(
          "llm.max_tokens", K::kInteger, [](auto& c) -> auto& { return c.llm.max_tokens; }),
      Applies(
          "llm.stream", K::kBoolean, [](auto& c) -> auto& { return c.llm.stream; }),
      Restart(
          "llm.connect_timeout_seconds", K::kInteger,
          [](auto& c) -> auto& { return c.llm.connect_timeout_seconds; }),
      Restart(
          "llm.request_timeout_seconds", K::kInteger,
          [](auto& c) -> auto& { return c.llm.request_timeout_seconds; }),
      Restart(
          "llm.max_retries", K::kInteger, [](auto& c) -> auto& { return c.llm.max_retries; }),
      Restart(
          "llm.circuit_breaker_failures", K::kInteger,
          [](auto& c) -> auto& { return c.llm.circuit_breaker_failures; }),
      Restart(
          "llm.circuit_breaker_cooldown_seconds", K::kInteger,
          [](auto& c) -> auto& { return c.llm.circuit_breaker_cooldown_seconds; }),

      Part("memory", K::kTable),
      Restart(
          "memory.path", K::kString, [](auto& c) -> auto& { return c.memory.path; }),

      Applies(
          "rooms", K::kTableArray, [](auto& c) -> auto& { return c.rooms; }),
      Part("rooms.jid", K::kString),
      Part("rooms.nick", K::kString),
      Part("rooms.activation", K::kString),

      Part("quota", K::kTable),
      Applies(
          "quota.daily_tokens", K::kInteger, [](auto& c) -> auto& { return c.quota.daily_tokens; }),
      Restart(
          "quota.path", K::kString, [](auto& c) -> auto& { return c.quota.path; }),
      Applies(
          "quota.prices", K::kTableArray, [](auto& c) -> auto& { return c.quota.prices; }),
      Part("quota.prices.model", K::kString),
      Part("quota.prices.input_per_mtok", K::kNumber),
      Part("quota.prices.output_per_mtok", K::kNumber),

      Part("skills", K::kTable),
      Applies(
          "skills.enabled", K::kStringArray, [](auto& c) -> auto& { return c.skills.enabled; }),
      Restart(
          "skills.path", K::kString, [](auto& c) -> auto& { return c.skills.path; }),
      Restart(
          "skills.sandbox_uid_base", K::kInteger,
          [](auto& c) -> auto& { return c.skills.sandbox_uid_base; }),
      Part("skills.sandbox", K::kTable),
      Restart(
          "skills.sandbox.require", K::kStringArray,
          [](auto& c) -> auto& { return c.skills.sandbox_require; }),
      // The builtins take these options when they are registered, at start.
      Restart(
          "skills.url_fetch", K::kTable, [](auto& c) -> auto& { return c.skills.url_fetch; }),
      Part("skills.url_fetch.max_bytes", K::kInteger),
      Part("skills.url_fetch.max_text_bytes", K::kInteger),
      Part("skills.url_fetch.timeout_seconds", K::kInteger),
      Part("skills.url_fetch.allowed_content_types", K::kStringArray),
      Part("skills.url_fetch.allow_hosts", K::kStringArray),
      Part("skills.url_fetch.user_agent", K::kString),
      Restart(
          "skills.web_search", K::kTable, [](auto& c) -> auto& { return c.skills.web_search; }),
      Part("skills.web_search.backend", K::kString),
      Part("skills.web_search.url", K::kString),
      Part("skills.web_search.api_key", K::kString, kSecret),
      Part("skills.web_search.max_results", K::kInteger),
      Part("skills.web_search.timeout_seconds", K::kInteger),
      Unit(
          "skills.mcp", K::kTableArray, OnReload::kRestart,
          [](auto& c) -> auto& { return c.skills.mcp; }, /*secret=*/false, SameMcpServers),
      Part("skills.mcp.name", K::kString),
      Part("skills.mcp.command", K::kStringArray),
      Part("skills.mcp.capabilities", K::kStringArray),
      Part("skills.mcp.environment", K::kStringTable, kSecret),
      Part("skills.mcp.url", K::kString),
      Part("skills.mcp.headers", K::kStringTable, kSecret),
      Part("skills.mcp.timeout_seconds", K::kInteger),
      Part("skills.mcp.memory_mb", K::kInteger),
      Part("skills.mcp.max_processes", K::kInteger),
      Part("skills.mcp.enabled", K::kBoolean),
      Applies(
          "skills.approvals", K::kTable, [](auto& c) -> auto& { return c.skills.approvals; }),
      Part("skills.approvals.categories", K::kStringArray),
      Part("skills.approvals.skills", K::kStringArray),
      Part("skills.approvals.exempt_skills", K::kStringArray),
      Part("skills.approvals.safe_mode_jids", K::kStringArray),
      Part("skills.approvals.timeout_seconds", K::kInteger),
      Applies(
          "skills.credential_timeout_seconds", K::kInteger,
          [](auto& c) -> auto& { return c.skills.credential_timeout_seconds; }),
      Restart(
          "skills.credentials_path", K::kString,
          [](auto& c) -> auto& { return c.skills.credentials_path; }),
      Restart(
          "skills.credentials_key_file", K::kString,
          [](auto& c) -> auto& { return c.skills.credentials_key_file; }),
      Restart(
          "skills.credentials_previous_key_files", K::kStringArray,
          [](auto& c) -> auto& { return c.skills.credentials_previous_key_files; }),

      Part("control", K::kTable),
      Restart(
          "control.listen", K::kString, [](auto& c) -> auto& { return c.control.listen; }),
      Restart(
          "control.tokens", K::kTableArray, [](auto& c) -> auto& { return c.control.tokens; }),
      Part("control.tokens.name", K::kString),
      // A hash, but a careless operator may paste the token itself here.
      Part("control.tokens.token_sha256", K::kString, kSecret),
      Part("control.tokens.scopes", K::kStringArray),
      Restart(
          "control.tls_cert", K::kString, [](auto& c) -> auto& { return c.control.tls_cert; }),
      Restart(
          "control.tls_key", K::kString, [](auto& c) -> auto& { return c.control.tls_key; }),
      Restart(
          "control.tls_client_ca", K::kString,
          [](auto& c) -> auto& { return c.control.tls_client_ca; }),
      Restart(
          "control.audit_path", K::kString, [](auto& c) -> auto& { return c.control.audit_path; }),
      Restart(
          "control.state_path", K::kString, [](auto& c) -> auto& { return c.control.state_path; }),
      Restart(
          "control.shutdown_grace_seconds", K::kInteger,
          [](auto& c) -> auto& { return c.control.shutdown_grace_seconds; }),
      Restart(
          "control.subscriber_queue_limit", K::kInteger,
          [](auto& c) -> auto& { return c.control.subscriber_queue_limit; }),
  };
}

}  // namespace

const std::vector<ConfigKey>& ConfigKeys() {
  static const std::vector<ConfigKey>* const kKeys = new std::vector<ConfigKey>(Declare());
  return *kKeys;
}

}  // namespace herald::config
