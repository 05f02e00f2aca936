// control/runtime_editor.h
//
// The one recorded way the running Herald's allowlist and rooms change, and the way a reload
// reads its files. AdminService (UpdateAllowlist, JoinRoom, LeaveRoom, ReloadConfig), SIGHUP
// and an admin's /allowlist and /rooms in chat (agent::RuntimeEdits, component/main.cc) all
// go through it.
//
// A change is first written to the runtime state file (runtime_state.h), so that it outlives
// a restart and a reload, and then put in force (runtime_changes.h); a write that fails
// changes nothing. With several instances on one database (ControlServices::shared_documents)
// the changes are written there instead (shared_runtime_state.h), and every instance puts in
// force what the others changed within kFollowEvery (a room is then wanted by all, and one of
// them is in it: storage/shared_rooms.h). The files are
// read and written on one strand of the worker pool, so two changes never interleave and a reload
// never reads a state being written; the configuration is put in force on the I/O loop, and every
// `done` is called there, exactly once.
//
// Auditing is the caller's: a gRPC call's UnaryCall, the agent's chat command.
//
//   RuntimeEditor editor(services, config.control.state_path);
//   RuntimeState change;
//   change.AllowJid("bob@example.org");
//   editor.Change(std::move(change), {}, [](absl::StatusOr<ConfigChange> done) { ... });
//   editor.Apply({.kind = agent::RuntimeEdit::Kind::kLeaveRoom, .entry = "lobby@conf.x"},
//                [](absl::Status left) { ... });
#pragma once

#include <asio.hpp>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "component/agent/runtime_edit.h"
#include "component/xmpp/jid.h"
#include "control/config_reload.h"
#include "control/control_services.h"
#include "control/runtime_changes.h"
#include "control/runtime_state.h"
#include "control/shared_runtime_state.h"

namespace herald::control {

// An allowlist entry as the state file keeps it: a bare JID (user@domain) or "*"; a domain or
// "*". InvalidArgument otherwise, the message starting with `field` ("add_jids[0] 'x' is not
// a bare JID ...").
absl::StatusOr<std::string> AllowlistJid(const std::string& entry, std::string_view field);
absl::StatusOr<std::string> AllowlistDomain(const std::string& entry, std::string_view field);
// A room's bare JID (room@conference.domain); InvalidArgument naming `field` otherwise.
absl::StatusOr<xmpp::Jid> RoomJid(const std::string& text, std::string_view field);

class RuntimeEditor {
 public:
  // `state_path` is [control] state_path (it changes only with a restart); `services` must
  // outlive the editor.
  RuntimeEditor(ControlServices& services, std::string state_path);
  RuntimeEditor(const RuntimeEditor&) = delete;
  RuntimeEditor& operator=(const RuntimeEditor&) = delete;

  using ChangeDone = std::function<void(absl::StatusOr<ConfigChange>)>;

  // Records `change` in the state file, then puts the configuration in force with `change`
  // laid over it, leaving the unlisted rooms of `leave_unlisted` too. Any thread.
  void Change(RuntimeState change, std::vector<xmpp::Jid> leave_unlisted, ChangeDone done);

  // Joins `room` (left and joined again when its settings changed): the room's own refusal
  // is the outcome. Any thread.
  void JoinRoom(agent::RoomSettings room, std::function<void(absl::Status)> done);
  // Leaves `room` (a bare JID): NotFound when no configuration lists it and Herald is not in
  // it; a room joined on an invitation is left as well. Any thread.
  void LeaveRoom(xmpp::Jid room, std::function<void(absl::Status)> done);

  // One change an admin asked for in chat, validated as the RPCs validate theirs. Any thread.
  void Apply(agent::RuntimeEdit edit, std::function<void(absl::Status)> done);

  // The configured rooms, then those joined on an invitation. I/O loop only.
  std::vector<agent::RoomStatus> Rooms() const;

  // Rooms and Apply as the agent takes them (agent::RuntimeServices::edits).
  agent::RuntimeEdits ChatEdits();

  // Reads the configuration file and the state file, then applies them (config_reload.h).
  // FailedPrecondition "the configuration was not reloaded: ..." when the file is bad or its
  // settings are refused; nothing has changed then. Any thread.
  void Reload(std::function<void(absl::StatusOr<ReloadReport>)> done);

  static constexpr absl::Duration kFollowEvery = absl::Seconds(2);

 private:
  // Reads the shared changes every kFollowEvery (strand) and puts another instance's change
  // in force (I/O loop); one read at a time.
  void ArmFollow();
  void Follow();

  template <typename Work>
  void OnLoop(Work work) {
    asio::post(services_.io, std::move(work));
  }

  ControlServices& services_;
  const std::string state_path_;
  asio::strand<asio::thread_pool::executor_type> strand_;
  // The shared changes last put in force here, and whether the last read failed (the
  // strand's alone).
  SharedRuntimeState seen_;
  bool follow_failing_ = false;
  asio::steady_timer follow_timer_;  // I/O loop
};

}  // namespace herald::control
