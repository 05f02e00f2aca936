// control/runtime_changes.h
//
// The one way the running Herald's configuration changes. Every change builds the
// configuration that should be in force and hands it to PutInForce:
//
//   a reload (AdminService.ReloadConfig, SIGHUP; config_reload.h)
//       the configuration file loaded afresh, with the runtime state laid over it;
//   an allowlist or room change (AdminService.UpdateAllowlist, JoinRoom, LeaveRoom)
//       the configuration in force, with that one change laid over it (runtime_state.h).
//
// PutInForce first checks everything that can refuse the configuration (the allowlists and
// admins: AccessPolicy::Create; [skills] enabled: the registry); on an error nothing has
// changed. Then each key that only a restart applies keeps its running value and is listed
// (component/config/config_keys.h), the rooms no longer wanted are left and the new ones
// joined (a room with other settings is left and joined again with them), and the ledger's
// default daily limit and prices, the log level, the configuration in force, the turn options
// and the agent's access policy take the new values.
//
// Reporting is the caller's: a reload logs and publishes CONFIG_RELOADED, an RPC answers its
// caller. Everything runs on the I/O loop (the Agent, RoomManager, registry and Config live
// there).
//
//   config::Config desired = live.config;
//   ApplyRuntimeState(change, desired);                  // "add bob", "join lobby", ...
//   absl::StatusOr<ConfigChange> done = PutInForce({.config = std::move(desired)}, live);
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "component/agent/agent.h"
#include "component/agent/rooms.h"
#include "component/config/config.h"
#include "component/ledger/usage_ledger.h"
#include "component/xmpp/jid.h"
#include "skills/registry.h"

namespace herald::control {

// The parts of the running Herald a configuration change reaches (I/O loop only).
struct LiveRuntime {
  config::Config& config;  // the configuration in force; replaced by PutInForce
  agent::Agent& agent;
  agent::RoomManager& rooms;
  skills::SkillRegistry& skills;
  ledger::UsageLedger* ledger = nullptr;  // may be null (tests)
  agent::TurnOptions* turn = nullptr;     // what turns read; may be null (tests)
};

// What should be in force.
struct DesiredRuntime {
  config::Config config;
  // Rooms to leave that no configuration lists (joined on an invitation).
  std::vector<xmpp::Jid> leave_unlisted;
};

// A room the RoomManager would not leave or join. Leaving a room it does not know and joining
// one it is already in are not failures.
struct RoomFailure {
  enum class Step { kLeave, kJoin };
  Step step;
  std::string room;  // as the configuration spells it
  absl::Status status;
};

struct ConfigChange {
  std::vector<std::string> applied;           // "agent.allowed_jids", "rooms", ...
  std::vector<std::string> requires_restart;  // "server.port", "control.listen", ...
  std::vector<RoomFailure> room_failures;     // the rest of the change is in force
};

// Puts `desired` in force. On an error (an allowlist entry or an enabled skill that is not
// valid) nothing has changed, the status is the check's own, and `refused_table` (when not
// null) names the table whose check refused it: "agent" or "skills". I/O loop only.
absl::StatusOr<ConfigChange> PutInForce(DesiredRuntime desired, const LiveRuntime& live,
                                        std::string* refused_table = nullptr);

}  // namespace herald::control
