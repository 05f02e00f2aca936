// control/config_reload.h
//
// Reloading the configuration without dropping the XMPP stream (C6; AdminService.ReloadConfig
// and SIGHUP). The file is read and validated in full first; when it is bad nothing changes
// and the error says why. Otherwise what can change at run time is applied at once:
//
//   agent.*            allowlists (with the runtime state laid over them, runtime_state.h),
//                      admins, name, refusal mode, loop and mailbox limits, session settings
//                      -> the live config and Agent::SetPolicy
//   [[rooms]]          rooms added are joined, rooms removed are left, changed ones rejoined
//   quota.daily_tokens, quota.prices -> the ledger
//   skills.enabled     -> the registry
//   log.level          -> glog
//   llm.max_tokens, llm.stream -> read by every turn
//
// and every other changed setting is listed as needing a restart (server.*, control.*,
// memory.path, quota.path, the LLM providers, models, timeouts and retries, and the
// agent settings the runtime reads once at start: dev_command_jids, rate_limit_per_minute,
// injection_policy, injection_phrases); the running process keeps the old value of those. A
// CONFIG_RELOADED event says what happened.
//
// Everything runs on the I/O loop (the Agent, RoomManager, registry and Config live there).
//
//   ReloadTargets targets{.config = config, .agent = agent, .rooms = rooms, .skills = registry,
//                         .ledger = ledger.get(), .events = &bus};
//   absl::StatusOr<ReloadReport> report = ReloadConfig(config_path, targets);   // on SIGHUP
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "component/agent/agent.h"
#include "component/agent/rooms.h"
#include "component/config/config.h"
#include "component/events/event_bus.h"
#include "component/ledger/usage_ledger.h"
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

// Reads the configuration file at `path` and the runtime state file of the configuration in
// force (small files, read with blocking calls), then ApplyReloadedConfig. I/O loop only.
absl::StatusOr<ReloadReport> ReloadConfig(const std::string& path, ReloadTargets targets);

}  // namespace herald::control
