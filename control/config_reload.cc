#include "control/config_reload.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "glog/logging.h"

namespace herald::control {

absl::StatusOr<ReloadReport> ApplyReloadedConfig(config::Config fresh, const RuntimeState& state,
                                                 ReloadTargets targets) {
  ApplyRuntimeState(state, fresh);
  const std::string source = fresh.source_path;
  std::string refused_table;
  absl::StatusOr<ConfigChange> change = PutInForce({.config = std::move(fresh)},
                                                   LiveRuntime{.config = targets.config,
                                                               .agent = targets.agent,
                                                               .rooms = targets.rooms,
                                                               .skills = targets.skills,
                                                               .ledger = targets.ledger,
                                                               .turn = targets.turn},
                                                   &refused_table);
  if (!change.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": [", refused_table, "] ", change.status().message()));
  }
  for (const RoomFailure& failure : change->room_failures) {
    LOG(WARNING) << "reload: could not "
                 << (failure.step == RoomFailure::Step::kLeave ? "leave " : "join ") << failure.room
                 << ": " << failure.status;
  }

  ReloadReport report{.applied = std::move(change->applied),
                      .requires_restart = std::move(change->requires_restart)};
  const std::string applied_list = absl::StrJoin(report.applied, ",");
  const std::string restart_list = absl::StrJoin(report.requires_restart, ",");
  LOG(INFO) << "configuration reloaded from " << targets.config.source_path
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

}  // namespace herald::control
