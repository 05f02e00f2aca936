#include "control/config_reload.h"

#include <algorithm>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "component/agent/access_policy.h"
#include "component/config/config_keys.h"
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

ledger::PriceTable PriceTableOf(const std::vector<config::ModelPrice>& prices) {
  std::map<std::string, ledger::Price> table;
  for (const config::ModelPrice& price : prices) {
    table[price.model] = {.input_per_mtok = price.input_per_mtok,
                          .output_per_mtok = price.output_per_mtok};
  }
  return ledger::PriceTable(std::move(table));
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

  // Each declared key says whether a reload applies it or it waits for a restart; what waits
  // keeps its running value, so that the configuration in force says what Herald does.
  ReloadReport report;
  config::Config next = std::move(fresh);
  for (const config::ConfigKey& key : config::ConfigKeys()) {
    if (!key.IsReloadUnit() || key.same(live, next)) continue;
    if (key.reload == config::OnReload::kApplies) {
      report.applied.emplace_back(key.path);
    } else {
      report.requires_restart.emplace_back(key.path);
      key.keep(live, next);
    }
  }

  ApplyRooms(live.rooms, next.rooms, targets.rooms);
  if (targets.ledger != nullptr) {
    targets.ledger->SetDefaultDailyTokens(next.quota.daily_tokens);
    targets.ledger->SetPrices(PriceTableOf(next.quota.prices));
  }
  if (live.log.level != next.log.level) {
    FLAGS_minloglevel = SeverityFor(next.log.level);
    FLAGS_v = next.log.level == "debug" ? 1 : 0;
  }
  live = std::move(next);
  if (targets.turn != nullptr) *targets.turn = config::TurnOptionsFrom(live);
  targets.agent.SetPolicy(*std::move(policy));

  const std::string applied_list = absl::StrJoin(report.applied, ",");
  const std::string restart_list = absl::StrJoin(report.requires_restart, ",");
  LOG(INFO) << "configuration reloaded from " << live.source_path
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
