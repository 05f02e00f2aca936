// component/config/module_options.h
//
// What each module is given, made from the configuration: the XMPP session's options from
// [server], the builtin skills' from [skills.url_fetch] and [skills.web_search], a turn's from
// [llm], [skills] and [server]. This is the
// one place that turns TOML's shapes (seconds as integers, names as strings) into the types
// the modules take, so that no module below component/config includes it.
//
//   absl::StatusOr<xmpp::SessionOptions> session =
//       SessionOptionsFrom(config.server, config.agent.name, kVersion);
//   skills::BuiltinOptions builtins = BuiltinOptionsFrom(config.skills);
//   agent::TurnOptions turn = TurnOptionsFrom(config);
#pragma once

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "component/config/config.h"
#include "component/ledger/price_table.h"
#include "component/memory/memory_search.h"
#include "component/schedule/scheduler.h"
#include "component/xmpp/session.h"
#include "providers/embeddings/embeddings_client.h"
#include "skills/builtin/builtins.h"
#include "skills/tool_search/http_tool.h"

namespace herald::config {

// The session's options for `server`; `name` and `version` identify Herald in disco and
// XEP-0092 answers. Fails on what the loader lets through only by mistake (a port out of
// range, a domain that is not one).
absl::StatusOr<xmpp::SessionOptions> SessionOptionsFrom(const ServerConfig& server,
                                                        std::string name, std::string version);

skills::BuiltinOptions BuiltinOptionsFrom(const SkillsConfig& skills);
// The HTTP executor of registry tools, from [skills.http_tools].
skills::HttpToolOptions HttpToolOptionsFrom(const HttpToolsConfig& http_tools);

// [attachments], and whether [llm.tiers] has a vision model.
agent::AttachmentOptions AttachmentOptionsFrom(const Config& config);
// [voice].
agent::VoiceOptions VoiceOptionsFrom(const VoiceConfig& voice);
// [skills.image_generate].
agent::ImageGenerationOptions ImageGenerationOptionsFrom(const ImageGenerateConfig& images);

// Memory search's embeddings provider from [memory] embeddings_model and the [llm] provider
// it names; nullopt when it is "" (keyword search only).
std::optional<providers::EmbeddingsOptions> EmbeddingsOptionsFrom(const Config& config);
// The weights of a hybrid memory search ([memory] keyword_weight, vector_weight: percent).
memory::SearchWeights SearchWeightsFrom(const MemoryConfig& memory);

// What each turn needs from [llm], [skills] and [server].
agent::TurnOptions TurnOptionsFrom(const Config& config);

// The ledger's price table from [[quota.prices]].
ledger::PriceTable PriceTableFrom(const QuotaConfig& quota);

// The scheduler's options and the operator's schedules ([schedules]); a task's `to` is a
// room when [[rooms]] names it, a chat otherwise. With `postgres` (the database [storage]
// opened, null for "sqlite") the schedules are kept there, shared, and the rooms of [[rooms]]
// are those whose schedules this instance runs.
schedule::SchedulerOptions SchedulerOptionsFrom(const Config& config,
                                                std::shared_ptr<base::PostgresDatabase> postgres);
std::vector<schedule::ConfiguredSchedule> ConfiguredSchedulesFrom(const Config& config);

// What [log] level sets in glog: the least severity logged, and the verbosity (1 for "debug").
struct LogLevelOptions {
  int min_severity;
  int verbosity;
};
LogLevelOptions LogLevelOptionsFrom(const LogConfig& log);

}  // namespace herald::config
