#include "component/config/module_options.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "component/xmpp/jid.h"
#include "glog/logging.h"

namespace herald::config {

absl::StatusOr<xmpp::SessionOptions> SessionOptionsFrom(const ServerConfig& server,
                                                        std::string name, std::string version) {
  xmpp::SessionOptions options;
  options.host = server.host;
  if (server.port < 1 || server.port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat("server.port out of range: ", server.port));
  }
  options.port = static_cast<uint16_t>(server.port);
  if (server.mode == ConnectionMode::kComponent) {
    options.mode = xmpp::SessionMode::kComponent;
    absl::StatusOr<xmpp::Jid> domain = xmpp::Jid::Parse(server.component_domain);
    if (!domain.ok() || !domain->IsDomain()) {
      return absl::InvalidArgumentError(
          absl::StrCat("server.component_domain is not a domain: ", server.component_domain));
    }
    options.component_domain = domain->domain();
    options.component_secret = server.component_secret;
    options.server_domain = xmpp::ParentDomain(options.component_domain);
    options.identity = {.category = "component", .type = "generic", .name = name};
  } else {
    options.mode = xmpp::SessionMode::kClient;
    absl::StatusOr<xmpp::Jid> account = xmpp::Jid::Parse(server.jid);
    if (!account.ok() || account->local().empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("server.jid is not an account JID: ", server.jid));
    }
    options.account = account->Bare();
    options.password = server.password;
    options.resource = server.resource;
    options.starttls_required = server.starttls == StartTls::kRequired;
    options.tls_verify = server.tls_verify;
    options.tls_ca_file = server.tls_ca_file;
    options.server_domain = options.account.domain();
    options.identity = {.category = "client", .type = "bot", .name = name};
  }
  options.whitespace_keepalive = absl::Seconds(server.whitespace_keepalive_seconds);
  options.ping_interval = absl::Seconds(server.ping_interval_seconds);
  options.ping_timeout = absl::Seconds(server.ping_timeout_seconds);
  options.reconnect_initial = absl::Milliseconds(server.reconnect_initial_ms);
  options.reconnect_max = absl::Milliseconds(server.reconnect_max_ms);
  options.reconnect_on_permanent_errors = server.reconnect_on_permanent_errors;
  options.outbound_queue_limit = static_cast<size_t>(std::max(1, server.outbound_queue_limit));
  options.limits.max_stanza_bytes = static_cast<size_t>(server.max_stanza_bytes);
  options.max_outbound_stanza_bytes = static_cast<size_t>(server.max_outbound_stanza_bytes);
  options.muc_services = server.muc_services;
  options.version = std::move(version);
  return options;
}

skills::BuiltinOptions BuiltinOptionsFrom(const SkillsConfig& skills) {
  skills::BuiltinOptions options;
  const UrlFetchConfig& fetch = skills.url_fetch;
  options.url_fetch.max_bytes = static_cast<size_t>(fetch.max_bytes);
  options.url_fetch.max_text_bytes = static_cast<size_t>(fetch.max_text_bytes);
  options.url_fetch.timeout = absl::Seconds(fetch.timeout_seconds);
  if (!fetch.allowed_content_types.empty()) {
    options.url_fetch.allowed_content_types = fetch.allowed_content_types;
  }
  options.url_fetch.allow_hosts = fetch.allow_hosts;
  options.url_fetch.user_agent = fetch.user_agent;
  const WebSearchConfig& search = skills.web_search;
  options.web_search = {.backend = search.backend,
                        .url = search.url,
                        .api_key = search.api_key,
                        .max_results = search.max_results,
                        .timeout = absl::Seconds(search.timeout_seconds)};
  return options;
}

skills::HttpToolOptions HttpToolOptionsFrom(const HttpToolsConfig& http_tools) {
  return {.max_bytes = static_cast<size_t>(http_tools.max_bytes),
          .max_text_bytes = static_cast<size_t>(http_tools.max_text_bytes),
          .timeout = absl::Seconds(http_tools.timeout_seconds),
          .allow_hosts = http_tools.allow_hosts};
}

agent::AttachmentOptions AttachmentOptionsFrom(const Config& config) {
  const AttachmentsConfig& attachments = config.attachments;
  return {.enabled = attachments.enabled,
          .max_bytes = static_cast<size_t>(attachments.max_bytes),
          .max_per_message = static_cast<size_t>(attachments.max_per_message),
          .timeout = absl::Seconds(attachments.timeout_seconds),
          .text_budget_bytes = static_cast<size_t>(attachments.text_budget_bytes),
          .max_pdf_pages = static_cast<int>(attachments.max_pdf_pages),
          .allow_hosts = attachments.allow_hosts,
          .vision = config.llm.tiers.contains("vision"),
          .send_max_files = static_cast<size_t>(attachments.send_max_files),
          .send_max_bytes = static_cast<size_t>(attachments.send_max_bytes),
          .send_timeout = absl::Seconds(attachments.send_timeout_seconds)};
}

agent::VoiceOptions VoiceOptionsFrom(const VoiceConfig& voice) {
  return {.transcription = voice.transcription,
          .speech = voice.speech,
          .voice = voice.voice,
          .show_transcript = voice.show_transcript,
          .answer_voice_notes = voice.answer_voice_notes,
          .max_seconds = static_cast<int>(voice.max_seconds)};
}

agent::ImageGenerationOptions ImageGenerationOptionsFrom(const ImageGenerateConfig& images) {
  return {.model = images.model, .size = images.size};
}

std::optional<providers::EmbeddingsOptions> EmbeddingsOptionsFrom(const Config& config) {
  const std::string& model = config.memory.embeddings_model;
  const size_t colon = model.find(':');
  if (model.empty() || colon == std::string::npos) return std::nullopt;
  providers::EmbeddingsOptions options{.provider = model.substr(0, colon),
                                       .model = model.substr(colon + 1)};
  if (options.provider == "ollama") {
    options.base_url = config.llm.ollama.host;
  } else {
    options.base_url = config.llm.openai.base_url;
    options.api_key = config.llm.openai.api_key;
    options.http_version = config.llm.openai.http_version;
    options.ca_file = config.llm.openai.tls_ca_file;
  }
  options.timeout = absl::Seconds(config.llm.request_timeout_seconds);
  options.max_retries = config.llm.max_retries;
  return options;
}

memory::SearchWeights SearchWeightsFrom(const MemoryConfig& memory) {
  return memory::SearchWeights{.keyword = memory.keyword_weight / 100.0,
                               .vector = memory.vector_weight / 100.0};
}

agent::TurnOptions TurnOptionsFrom(const Config& config) {
  return agent::TurnOptions{.max_tokens = config.llm.max_tokens,
                            .stream = config.llm.stream,
                            .approvals = config.skills.approvals,
                            .credential_timeout_seconds = config.skills.credential_timeout_seconds,
                            .max_message_bytes = config.server.max_stanza_bytes,
                            .pinned_tools = config.skills.pinned_tools,
                            .blocked_tools = config.skills.blocked_tools};
}

ledger::PriceTable PriceTableFrom(const QuotaConfig& quota) {
  std::map<std::string, ledger::Price> table;
  for (const ModelPrice& price : quota.prices) {
    table[price.model] = {.input_per_mtok = price.input_per_mtok,
                          .output_per_mtok = price.output_per_mtok};
  }
  return ledger::PriceTable(std::move(table));
}

LogLevelOptions LogLevelOptionsFrom(const LogConfig& log) {
  const int severity = log.level == "debug" || log.level == "info" ? google::GLOG_INFO
                       : log.level == "warning"                    ? google::GLOG_WARNING
                                                                   : google::GLOG_ERROR;
  return LogLevelOptions{.min_severity = severity, .verbosity = log.level == "debug" ? 1 : 0};
}

schedule::SchedulerOptions SchedulerOptionsFrom(const Config& config,
                                                std::shared_ptr<base::PostgresDatabase> postgres) {
  const SchedulesConfig& schedules = config.schedules;
  schedule::SchedulerOptions options{.path = schedules.path,
                                     .postgres = std::move(postgres),
                                     .max_per_owner = schedules.max_per_user,
                                     .min_interval = absl::Seconds(schedules.min_interval_seconds),
                                     .run_missed = schedules.missed != "skip"};
  return options;
}

std::vector<schedule::ConfiguredSchedule> ConfiguredSchedulesFrom(const Config& config) {
  std::vector<schedule::ConfiguredSchedule> tasks;
  for (const ScheduleTaskConfig& task : config.schedules.tasks) {
    const bool room = std::any_of(config.rooms.begin(), config.rooms.end(),
                                  [&](const agent::RoomSettings& r) { return r.jid == task.to; });
    tasks.push_back({.name = task.name,
                     .owner = {.kind = room ? base::ConversationRef::Kind::kRoom
                                            : base::ConversationRef::Kind::kDirect,
                               .address = task.to},
                     .prompt = task.prompt,
                     .when = task.when,
                     .zone = task.timezone});
  }
  return tasks;
}

}  // namespace herald::config
