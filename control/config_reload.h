// control/config_reload.h
//
// Reloading the configuration without dropping the XMPP stream (C6; AdminService.ReloadConfig
// and SIGHUP). The file is read and validated in full first; when it is bad nothing changes
// and the error says why. Otherwise the file's configuration, with the runtime state laid over
// its allowlists and rooms (runtime_state.h), is put in force through the one path every
// change of the running configuration takes (runtime_changes.h): what can change at run time
// is applied at once, every other changed setting is listed as needing a restart and keeps its
// running value. docs/configuration.md lists which is which, from the key declarations.
//
// What is a reload's own is the reporting: the error names the file and the table
// ("config.toml: [agent] ..."), a room that could not be left or joined is logged, and one
// log line and a CONFIG_RELOADED event say what was applied and what needs a restart.
//
// It runs on the I/O loop (the Agent, RoomManager, registry and Config live there); the files
// are read before, off the loop, by the RuntimeEditor (runtime_editor.h), which SIGHUP and
// AdminService.ReloadConfig call.
//
//   ReloadTargets targets{.config = config, .agent = agent, .rooms = rooms, .skills = registry,
//                         .ledger = ledger.get(), .events = &bus};
//   absl::StatusOr<ReloadReport> report = ApplyReloadedConfig(std::move(fresh), state, targets);
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "component/agent/agent.h"
#include "component/agent/rooms.h"
#include "component/config/config.h"
#include "component/events/event_bus.h"
#include "component/ledger/usage_ledger.h"
#include "control/runtime_changes.h"
#include "control/runtime_state.h"
#include "skills/registry.h"

namespace herald::control {

struct ReloadReport {
  std::vector<std::string> applied;           // "agent.allowed_jids", "rooms", ...
  std::vector<std::string> requires_restart;  // "server.port", "control.listen", ...
};

struct ReloadTargets {
  config::Config& config;  // the configuration in force; updated in place
  agent::Agent& agent;
  agent::RoomManager& rooms;
  skills::SkillRegistry& skills;
  ledger::UsageLedger* ledger = nullptr;  // may be null (tests)
  events::EventBus* events = nullptr;     // may be null (tests)
  // What turns read ([llm] max_tokens, [skills.approvals] ...); may be null (tests).
  agent::TurnOptions* turn = nullptr;
};

// Applies `fresh` (as LoadConfigFile returned it) with `state` laid over its allowlist and
// rooms. On an error (an allowlist entry or an enabled skill that is not valid) nothing has
// changed. I/O loop only.
absl::StatusOr<ReloadReport> ApplyReloadedConfig(config::Config fresh, const RuntimeState& state,
                                                 ReloadTargets targets);

}  // namespace herald::control
