// component/config/bind_sections.h
//
// The parts of the config loader, one per table of the file: each reads its table of a document
// that passed CheckSchema into the Config with a Binder, checking what the schema cannot
// (ranges, formats, keys that need each other) and reporting every problem. config.cc calls
// them in order; they are not for use outside component/config.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "component/config/config.h"
#include "component/config/toml_binder.h"
#include "toml++/toml.h"

namespace herald::config {

void BindServer(Binder& b, const Section& root, ServerConfig& server);

// [agent]; the server's settings give the default allowed domain.
void BindAgent(Binder& b, const Section& root, const ServerConfig& server,
               agent::AgentOptions& agent);

// [[rooms]]
void BindRooms(Binder& b, const toml::table& root, std::vector<agent::RoomSettings>& rooms);

void BindLog(Binder& b, const Section& root, LogConfig& log);
void BindLlm(Binder& b, const Section& root, providers::LlmOptions& llm);
void BindSkills(Binder& b, const Section& root, SkillsConfig& skills);

// [[skills.mcp]], within [skills].
void BindMcpServers(Binder& b, const Section& skills,
                    std::vector<skills::mcp::McpServerOptions>& servers);

void BindQuota(Binder& b, const Section& root, QuotaConfig& quota);
void BindStorage(Binder& b, const Section& root, StorageConfig& storage);
// [memory]; shared_writers lands in `agent` (the runtime checks it).
void BindMemory(Binder& b, const Section& root, MemoryConfig& memory, agent::AgentOptions& agent);
void BindControl(Binder& b, const Section& root, ControlConfig& control);
void BindHttp(Binder& b, const Section& root, HttpConfig& http);
void BindTraces(Binder& b, const Section& root, TracesConfig& traces);
void BindAttachments(Binder& b, const Section& root, AttachmentsConfig& attachments);
void BindVoice(Binder& b, const Section& root, VoiceConfig& voice);
// "allow_hosts" of `s`: host names, "*.domain", addresses and networks (bind_skills.cc).
void BindAllowHosts(Binder& b, const Section& s, std::vector<std::string>& allow_hosts);
void BindWebhooks(Binder& b, const Section& root, const HttpConfig& http, WebhooksConfig& webhooks);
// [schedules] and [[schedules.task]]; a task's `to` is a room when [[rooms]] names it.
void BindSchedules(Binder& b, const Section& root, SchedulesConfig& schedules);
// [[pubsub]] (after [[rooms]]: a feed's `to` is a room when they name it).
void BindPubsub(Binder& b, const toml::table& root, const std::vector<agent::RoomSettings>& rooms,
                std::vector<agent::PubsubFeed>& feeds);

// [agent_protocol] with its [[agent_protocol.peer]], and [[delegate.agent]].
void BindAgentProtocol(Binder& b, const Section& root, agent::AgentProtocolOptions& protocol,
                       std::vector<agent::DelegateTarget>& targets);

// Reads a list of bare JIDs (or "*" where `allow_star`), lower-cased so that they compare
// equal to the normalised JIDs of incoming stanzas.
std::vector<std::string> JidList(Binder& b, const Section& s, std::string_view key,
                                 bool allow_star);

}  // namespace herald::config
