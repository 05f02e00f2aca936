// control/runtime_state.h
//
// The allowlist and room changes made at run time (AdminService.UpdateAllowlist, JoinRoom,
// LeaveRoom) survive a restart: they are kept as a JSON file at [control] state_path and laid
// over the configuration file's lists at start and at every reload. The file records the
// changes, not the result — "add bob", "remove carol", "join lobby", "leave tech" — so that an
// operator's later edit of the configuration file still counts for everything not changed
// at run time.
//
//   {"version": 1,
//    "allowlist": {"add_jids": ["bob@localhost"], "remove_jids": [],
//                  "add_domains": [], "remove_domains": []},
//    "rooms": {"join": [{"jid": "lobby@conference.localhost", "nick": "herald",
//                        "activation": "mention"}],
//              "leave": []}}
//
// The file is replaced atomically (temporary file, fsync, rename, fsync of the folder). A
// missing file is an empty state; a file that cannot be read or parsed is an error that names
// it and what is wrong, never silently ignored.
//
// In main, before the AccessPolicy and the RoomManager are built:
//   absl::Status s = control::ApplyRuntimeState(config.control.state_path, config);
//   if (!s.ok()) { std::cerr << s.message(); return kExitConfig; }
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "component/config/config.h"

namespace herald::control {

struct RuntimeState {
  std::vector<std::string> add_jids;
  std::vector<std::string> remove_jids;
  std::vector<std::string> add_domains;
  std::vector<std::string> remove_domains;
  std::vector<agent::RoomSettings> join_rooms;
  std::vector<std::string> leave_rooms;  // bare room JIDs

  // Records a change; a later change of the same entry replaces an earlier one.
  void AllowJid(const std::string& jid);
  void DisallowJid(const std::string& jid);
  void AllowDomain(const std::string& domain);
  void DisallowDomain(const std::string& domain);
  void JoinRoom(const agent::RoomSettings& room);
  void LeaveRoom(const std::string& room);
  // Records every change `change` holds, as the calls above would, in their order.
  void Record(const RuntimeState& change);

  bool empty() const;
};

// Reads the state at `path`: empty when the file does not exist; InvalidArgument (naming the
// file) when it is not a state file, a field has the wrong type, or an entry is not a JID,
// domain or room; the read error otherwise. Blocking.
absl::StatusOr<RuntimeState> LoadRuntimeState(const std::string& path);

// Replaces the file atomically, creating its folder (mode 0700) when missing. Blocking.
absl::Status SaveRuntimeState(const std::string& path, const RuntimeState& state);

// The JSON of a state, as the file holds it, and back: errors as LoadRuntimeState's, naming
// `source` (a path, or where else the text was kept).
std::string EncodeRuntimeState(const RuntimeState& state);
absl::StatusOr<RuntimeState> ParseRuntimeState(std::string_view text, const std::string& source);

// The allowlist entries of a state alone, and its rooms alone.
RuntimeState AllowlistPart(const RuntimeState& state);
RuntimeState RoomsPart(const RuntimeState& state);

// Lays `state` over config.agent.allowed_jids / allowed_domains and config.rooms.
void ApplyRuntimeState(const RuntimeState& state, config::Config& config);

// LoadRuntimeState then ApplyRuntimeState; on an error `config` is unchanged.
absl::Status ApplyRuntimeState(const std::string& path, config::Config& config);

// How allowlist entries and room JIDs are compared: a JID's bare, normalised form ("*" stays
// "*"); a domain in lower case.
std::string NormalizedJidEntry(const std::string& jid);
std::string NormalizedDomainEntry(const std::string& domain);

}  // namespace herald::control
