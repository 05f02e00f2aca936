#include "control/runtime_changes.h"

#include <utility>

#include "component/agent/access_policy.h"
#include "component/config/config_keys.h"
#include "component/config/module_options.h"
#include "control/runtime_state.h"
#include "glog/logging.h"

namespace herald::control {
namespace {

// The same room with the same settings; the JIDs compared as the addresses they are.
bool SameRoom(const agent::RoomSettings& a, const agent::RoomSettings& b) {
  return NormalizedJidEntry(a.jid) == NormalizedJidEntry(b.jid) && a.nick == b.nick &&
         a.activation == b.activation;
}

const agent::RoomSettings* FindRoom(const std::vector<agent::RoomSettings>& list,
                                    const std::string& jid) {
  const std::string wanted = NormalizedJidEntry(jid);
  for (const agent::RoomSettings& room : list) {
    if (NormalizedJidEntry(room.jid) == wanted) return &room;
  }
  return nullptr;
}

// Leaves the rooms `now` no longer has (or has with other settings) and the unlisted ones to
// leave, then joins the new ones.
void ApplyRooms(const std::vector<agent::RoomSettings>& before,
                const std::vector<agent::RoomSettings>& now,
                const std::vector<xmpp::Jid>& leave_unlisted, agent::RoomManager& rooms,
                std::vector<RoomFailure>& failures) {
  auto leave = [&](const xmpp::Jid& jid, const std::string& spelled) {
    if (absl::Status left = rooms.Leave(jid); !left.ok() && !absl::IsNotFound(left)) {
      failures.push_back({RoomFailure::Step::kLeave, spelled, std::move(left)});
    }
  };
  for (const agent::RoomSettings& room : before) {
    const agent::RoomSettings* kept = FindRoom(now, room.jid);
    if (kept != nullptr && SameRoom(*kept, room)) continue;
    absl::StatusOr<xmpp::Jid> jid = xmpp::Jid::Parse(room.jid);
    if (!jid.ok()) continue;
    leave(jid->Bare(), room.jid);
  }
  for (const xmpp::Jid& jid : leave_unlisted) {
    if (FindRoom(before, jid.BareString()) == nullptr) leave(jid.Bare(), jid.BareString());
  }
  for (const agent::RoomSettings& room : now) {
    const agent::RoomSettings* had = FindRoom(before, room.jid);
    if (had != nullptr && SameRoom(*had, room)) continue;
    if (absl::Status joined = rooms.Join(room); !joined.ok() && !absl::IsAlreadyExists(joined)) {
      failures.push_back({RoomFailure::Step::kJoin, room.jid, std::move(joined)});
    }
  }
}

}  // namespace

absl::StatusOr<ConfigChange> PutInForce(DesiredRuntime desired, const LiveRuntime& live,
                                        std::string* refused_table) {
  config::Config& running = live.config;
  config::Config next = std::move(desired.config);

  // Everything that can fail is checked before anything changes; the registry takes the
  // enabled skills only when they are all valid.
  absl::StatusOr<agent::AccessPolicy> policy = agent::AccessPolicy::Create(next.agent);
  if (!policy.ok()) {
    if (refused_table != nullptr) *refused_table = "agent";
    return policy.status();
  }
  if (running.skills.enabled != next.skills.enabled) {
    if (absl::Status s = live.skills.SetEnabled(next.skills.enabled); !s.ok()) {
      if (refused_table != nullptr) *refused_table = "skills";
      return s;
    }
  }

  // Each declared key says whether a change applies it or it waits for a restart; what waits
  // keeps its running value, so that the configuration in force says what Herald does.
  ConfigChange change;
  for (const config::ConfigKey& key : config::ConfigKeys()) {
    if (!key.IsReloadUnit() || key.same(running, next)) continue;
    if (key.reload == config::OnReload::kApplies) {
      change.applied.emplace_back(key.path);
    } else {
      change.requires_restart.emplace_back(key.path);
      key.keep(running, next);
    }
  }

  ApplyRooms(running.rooms, next.rooms, desired.leave_unlisted, live.rooms, change.room_failures);
  if (live.ledger != nullptr) {
    live.ledger->SetDefaultDailyTokens(next.quota.daily_tokens);
    live.ledger->SetPrices(config::PriceTableFrom(next.quota));
  }
  if (running.log.level != next.log.level) {
    const config::LogLevelOptions log = config::LogLevelOptionsFrom(next.log);
    FLAGS_minloglevel = log.min_severity;
    FLAGS_v = log.verbosity;
  }
  running = std::move(next);
  if (live.turn != nullptr) *live.turn = config::TurnOptionsFrom(running);
  live.agent.SetPolicy(*std::move(policy));
  return change;
}

}  // namespace herald::control
