#include "control/config_reload.h"

#include <algorithm>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "component/agent/access_policy.h"
#include "component/config/module_options.h"
#include "component/xmpp/jid.h"
#include "glog/logging.h"

namespace herald::control {
namespace {

int SeverityFor(const std::string& level) {
  if (level == "debug" || level == "info") return google::GLOG_INFO;
  if (level == "warning") return google::GLOG_WARNING;
  return google::GLOG_ERROR;
}

bool SameRoom(const agent::RoomSettings& a, const agent::RoomSettings& b) {
  return a.jid == b.jid && a.nick == b.nick && a.activation == b.activation;
}

bool SameRooms(const std::vector<agent::RoomSettings>& a,
               const std::vector<agent::RoomSettings>& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), SameRoom);
}

bool SamePrices(const std::vector<config::ModelPrice>& a,
                const std::vector<config::ModelPrice>& b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](const auto& x, const auto& y) {
           return x.model == y.model && x.input_per_mtok == y.input_per_mtok &&
                  x.output_per_mtok == y.output_per_mtok;
         });
}

bool SameTokens(const std::vector<config::ControlToken>& a,
                const std::vector<config::ControlToken>& b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](const auto& x, const auto& y) {
           return x.name == y.name && x.token_sha256 == y.token_sha256 && x.scopes == y.scopes;
         });
}

bool SameProvider(const providers::HostedProviderOptions& a,
                  const providers::HostedProviderOptions& b) {
  return a.api_key == b.api_key && a.base_url == b.base_url;
}

ledger::PriceTable PriceTableOf(const std::vector<config::ModelPrice>& prices) {
  std::map<std::string, ledger::Price> table;
  for (const config::ModelPrice& price : prices) {
    table[price.model] = {.input_per_mtok = price.input_per_mtok,
                          .output_per_mtok = price.output_per_mtok};
  }
  return ledger::PriceTable(std::move(table));
}

// The settings only a restart applies, compared one by one.
std::vector<std::string> RestartOnlyChanges(const config::Config& old,
                                            const config::Config& fresh) {
  std::vector<std::string> changed;
  auto check = [&changed](const char* name, bool same) {
    if (!same) changed.push_back(name);
  };
  const config::ServerConfig& s = old.server;
  const config::ServerConfig& f = fresh.server;
  check("server.mode", s.mode == f.mode);
  check("server.host", s.host == f.host);
  check("server.port", s.port == f.port);
  check("server.component_domain", s.component_domain == f.component_domain);
  check("server.component_secret", s.component_secret == f.component_secret);
  check("server.jid", s.jid == f.jid);
  check("server.password", s.password == f.password);
  check("server.resource", s.resource == f.resource);
  check("server.starttls", s.starttls == f.starttls);
  check("server.tls_verify", s.tls_verify == f.tls_verify);
  check("server.tls_ca_file", s.tls_ca_file == f.tls_ca_file);
  check("server.whitespace_keepalive_seconds",
        s.whitespace_keepalive_seconds == f.whitespace_keepalive_seconds);
  check("server.ping_interval_seconds", s.ping_interval_seconds == f.ping_interval_seconds);
  check("server.ping_timeout_seconds", s.ping_timeout_seconds == f.ping_timeout_seconds);
  check("server.reconnect_initial_ms", s.reconnect_initial_ms == f.reconnect_initial_ms);
  check("server.reconnect_max_ms", s.reconnect_max_ms == f.reconnect_max_ms);
  check("server.reconnect_on_permanent_errors",
        s.reconnect_on_permanent_errors == f.reconnect_on_permanent_errors);
  check("server.outbound_queue_limit", s.outbound_queue_limit == f.outbound_queue_limit);
  check("server.max_stanza_bytes", s.max_stanza_bytes == f.max_stanza_bytes);
  check("server.max_outbound_stanza_bytes",
        s.max_outbound_stanza_bytes == f.max_outbound_stanza_bytes);
  check("server.muc_services", s.muc_services == f.muc_services);

  check("agent.dev_command_jids", old.agent.dev_command_jids == fresh.agent.dev_command_jids);
  check("agent.rate_limit_per_minute",
        old.agent.rate_limit_per_minute == fresh.agent.rate_limit_per_minute);
  check("agent.injection_policy", old.agent.injection_policy == fresh.agent.injection_policy);
  check("agent.injection_phrases", old.agent.injection_phrases == fresh.agent.injection_phrases);

  const config::SkillsConfig& k = old.skills;
  const config::SkillsConfig& j = fresh.skills;
  check("skills.path", k.path == j.path);
  check("skills.sandbox_uid_base", k.sandbox_uid_base == j.sandbox_uid_base);
  check("skills.sandbox.require", k.sandbox_require == j.sandbox_require);
  check("skills.credentials_path", k.credentials_path == j.credentials_path);
  check("skills.credentials_key_file", k.credentials_key_file == j.credentials_key_file);
  check("skills.credentials_previous_key_files",
        k.credentials_previous_key_files == j.credentials_previous_key_files);
  check("skills.mcp",
        k.mcp.size() == j.mcp.size() &&
            std::equal(k.mcp.begin(), k.mcp.end(), j.mcp.begin(),
                       [](const skills::mcp::McpServerOptions& a,
                          const skills::mcp::McpServerOptions& b) { return a.SameSettings(b); }));

  const providers::LlmOptions& l = old.llm;
  const providers::LlmOptions& n = fresh.llm;
  check("llm.default", l.default_model == n.default_model);
  check("llm.fallback", l.fallback == n.fallback);
  check("llm.tiers", l.tiers == n.tiers);
  check("llm.anthropic", SameProvider(l.anthropic, n.anthropic));
  check("llm.openai", SameProvider(l.openai, n.openai));
  check("llm.ollama", l.ollama.host == n.ollama.host);
  check("llm.scripted", l.scripted.rules_file == n.scripted.rules_file);
  check("llm.connect_timeout_seconds", l.connect_timeout_seconds == n.connect_timeout_seconds);
  check("llm.request_timeout_seconds", l.request_timeout_seconds == n.request_timeout_seconds);
  check("llm.max_retries", l.max_retries == n.max_retries);
  check("llm.circuit_breaker_failures", l.circuit_breaker_failures == n.circuit_breaker_failures);
  check("llm.circuit_breaker_cooldown_seconds",
        l.circuit_breaker_cooldown_seconds == n.circuit_breaker_cooldown_seconds);

  check("memory.path", old.memory.path == fresh.memory.path);
  check("quota.path", old.quota.path == fresh.quota.path);

  const config::ControlConfig& c = old.control;
  const config::ControlConfig& d = fresh.control;
  check("control.listen", c.listen == d.listen);
  check("control.tokens", SameTokens(c.tokens, d.tokens));
  check("control.tls_cert", c.tls_cert == d.tls_cert);
  check("control.tls_key", c.tls_key == d.tls_key);
  check("control.tls_client_ca", c.tls_client_ca == d.tls_client_ca);
  check("control.audit_path", c.audit_path == d.audit_path);
  check("control.state_path", c.state_path == d.state_path);
  check("control.shutdown_grace_seconds", c.shutdown_grace_seconds == d.shutdown_grace_seconds);
  check("control.subscriber_queue_limit", c.subscriber_queue_limit == d.subscriber_queue_limit);
  return changed;
}

// Leaves the rooms `now` no longer has (or has with other settings) and joins the new ones.
void ApplyRooms(const std::vector<agent::RoomSettings>& before,
                const std::vector<agent::RoomSettings>& now, agent::RoomManager& rooms) {
  auto find = [](const std::vector<agent::RoomSettings>& list, const std::string& jid) {
    const std::string wanted = NormalizedJidEntry(jid);
    for (const agent::RoomSettings& room : list) {
      if (NormalizedJidEntry(room.jid) == wanted) return &room;
    }
    return static_cast<const agent::RoomSettings*>(nullptr);
  };
  for (const agent::RoomSettings& room : before) {
    const agent::RoomSettings* kept = find(now, room.jid);
    if (kept != nullptr && SameRoom(*kept, room)) continue;
    absl::StatusOr<xmpp::Jid> jid = xmpp::Jid::Parse(room.jid);
    if (!jid.ok()) continue;
    if (absl::Status left = rooms.Leave(jid->Bare()); !left.ok() && !absl::IsNotFound(left)) {
      LOG(WARNING) << "reload: could not leave " << room.jid << ": " << left;
    }
  }
  for (const agent::RoomSettings& room : now) {
    const agent::RoomSettings* had = find(before, room.jid);
    if (had != nullptr && SameRoom(*had, room)) continue;
    if (absl::Status joined = rooms.Join(room); !joined.ok() && !absl::IsAlreadyExists(joined)) {
      LOG(WARNING) << "reload: could not join " << room.jid << ": " << joined;
    }
  }
}

}  // namespace

absl::StatusOr<ReloadReport> ApplyReloadedConfig(config::Config fresh, const RuntimeState& state,
                                                 ReloadTargets targets) {
  config::Config& live = targets.config;
  ApplyRuntimeState(state, fresh);

  // Everything that can fail is checked before anything changes.
  absl::StatusOr<agent::AccessPolicy> policy = agent::AccessPolicy::Create(fresh.agent);
  if (!policy.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(fresh.source_path, ": [agent] ", policy.status().message()));
  }
  const bool skills_changed = live.skills.enabled != fresh.skills.enabled;
  if (skills_changed) {
    if (absl::Status s = targets.skills.SetEnabled(fresh.skills.enabled); !s.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(fresh.source_path, ": [skills] ", s.message()));
    }
  }

  ReloadReport report;
  report.requires_restart = RestartOnlyChanges(live, fresh);
  auto applied = [&report](const char* name, bool same) {
    if (!same) report.applied.push_back(name);
  };
  const agent::AgentOptions& a = live.agent;
  const agent::AgentOptions& b = fresh.agent;
  applied("agent.name", a.name == b.name);
  applied("agent.allowed_jids", a.allowed_jids == b.allowed_jids);
  applied("agent.allowed_domains", a.allowed_domains == b.allowed_domains);
  applied("agent.admin_jids", a.admin_jids == b.admin_jids);
  applied("agent.unallowed", a.unallowed == b.unallowed);
  applied("agent.max_tool_rounds", a.max_tool_rounds == b.max_tool_rounds);
  applied("agent.mailbox_limit", a.mailbox_limit == b.mailbox_limit);
  applied("agent.session_idle_minutes", a.session_idle_minutes == b.session_idle_minutes);
  applied("agent.history_messages", a.history_messages == b.history_messages);
  applied("agent.carry_over_summary", a.carry_over_summary == b.carry_over_summary);
  applied("rooms", SameRooms(live.rooms, fresh.rooms));
  applied("quota.daily_tokens", live.quota.daily_tokens == fresh.quota.daily_tokens);
  applied("quota.prices", SamePrices(live.quota.prices, fresh.quota.prices));
  applied("skills.enabled", !skills_changed);
  applied("skills.approvals", live.skills.approvals == fresh.skills.approvals);
  applied("skills.credential_timeout_seconds",
          live.skills.credential_timeout_seconds == fresh.skills.credential_timeout_seconds);
  applied("log.level", live.log.level == fresh.log.level);
  applied("llm.max_tokens", live.llm.max_tokens == fresh.llm.max_tokens);
  applied("llm.stream", live.llm.stream == fresh.llm.stream);

  // The agent settings read once at start keep their running values.
  agent::AgentOptions agent = fresh.agent;
  agent.dev_command_jids = a.dev_command_jids;
  agent.rate_limit_per_minute = a.rate_limit_per_minute;
  agent.injection_policy = a.injection_policy;
  agent.injection_phrases = a.injection_phrases;

  ApplyRooms(live.rooms, fresh.rooms, targets.rooms);
  if (targets.ledger != nullptr) {
    targets.ledger->SetDefaultDailyTokens(fresh.quota.daily_tokens);
    targets.ledger->SetPrices(PriceTableOf(fresh.quota.prices));
  }
  if (live.log.level != fresh.log.level) {
    FLAGS_minloglevel = SeverityFor(fresh.log.level);
    FLAGS_v = fresh.log.level == "debug" ? 1 : 0;
  }

  live.agent = std::move(agent);
  live.rooms = fresh.rooms;
  live.quota.daily_tokens = fresh.quota.daily_tokens;
  live.quota.prices = fresh.quota.prices;
  // What only a restart applies keeps its running value, so that the configuration in force
  // says what Herald does.
  config::SkillsConfig skills = fresh.skills;
  skills.path = live.skills.path;
  skills.sandbox_uid_base = live.skills.sandbox_uid_base;
  skills.sandbox_require = live.skills.sandbox_require;
  skills.credentials_path = live.skills.credentials_path;
  skills.credentials_key_file = live.skills.credentials_key_file;
  skills.credentials_previous_key_files = live.skills.credentials_previous_key_files;
  skills.mcp = live.skills.mcp;
  live.skills = std::move(skills);
  live.log = fresh.log;
  live.llm.max_tokens = fresh.llm.max_tokens;
  live.llm.stream = fresh.llm.stream;
  if (targets.turn != nullptr) *targets.turn = config::TurnOptionsFrom(live);
  targets.agent.SetPolicy(*std::move(policy));

  const std::string applied_list = absl::StrJoin(report.applied, ",");
  const std::string restart_list = absl::StrJoin(report.requires_restart, ",");
  LOG(INFO) << "configuration reloaded from " << fresh.source_path
            << "; applied: " << (applied_list.empty() ? "nothing changed" : applied_list)
            << (restart_list.empty() ? "" : "; needs a restart: ") << restart_list;
  if (targets.events != nullptr) {
    events::Event event{
        .type = events::EventType::kConfigReloaded,
        .summary =
            absl::StrCat("configuration reloaded: ", report.applied.size(), " setting(s) applied, ",
                         report.requires_restart.size(), " need a restart"),
    };
    event.attributes = {{"applied", applied_list}, {"requires_restart", restart_list}};
    targets.events->Publish(std::move(event));
  }
  return report;
}

absl::StatusOr<ReloadReport> ReloadConfig(const std::string& path, ReloadTargets targets) {
  absl::StatusOr<config::Config> fresh = config::LoadConfigFile(path);
  if (!fresh.ok()) return fresh.status();
  absl::StatusOr<RuntimeState> state = LoadRuntimeState(targets.config.control.state_path);
  if (!state.ok()) return state.status();
  return ApplyReloadedConfig(*std::move(fresh), *state, targets);
}

}  // namespace herald::control
