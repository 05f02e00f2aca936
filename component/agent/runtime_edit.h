// component/agent/runtime_edit.h
//
// What an admin's /allowlist and /rooms (admin_commands.h) reach outside the agent: the list of
// rooms, and a change of the allowlist or the rooms. The change is recorded and put in force by
// the control plane's RuntimeEditor (control/runtime_editor.h), the same path
// AdminService.UpdateAllowlist, JoinRoom and LeaveRoom take, so that it outlives a restart and
// a reload; component/main.cc wires the two functions to it. The agent only says what to
// change and audits who asked.
//
//   services.edits.apply(RuntimeEdit{.kind = RuntimeEdit::Kind::kAllow, .entry = "bob@x.org"},
//                        [](absl::Status done) { ... });   // called once, on the I/O loop
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace herald::agent {

// One change an admin asked for in chat.
struct RuntimeEdit {
  enum class Kind {
    kAllow,      // add `entry` (a bare JID, or a domain) to the allowlist
    kDisallow,   // take it off
    kJoinRoom,   // join room `entry` (a room's bare JID) with `activation`
    kLeaveRoom,  // leave room `entry`
  };
  Kind kind = Kind::kAllow;
  std::string entry;
  std::string activation;  // kJoinRoom: "mention" or "all"; empty: the default
};

// A room Herald is in, joining, or configured for.
struct RoomStatus {
  std::string jid;         // bare
  std::string nick;        // the nick it has (or asks for) there
  std::string activation;  // "mention" | "all"
  bool joined = false;
};

// Both run on the I/O loop; either may be unset (tests, or a runtime without a control plane):
// then /allowlist and /rooms say so.
struct RuntimeEdits {
  // Every room: the configured ones, then those joined on an invitation.
  std::function<std::vector<RoomStatus>()> rooms;
  // Validates, records and puts `edit` in force; `done` is called once, on the I/O loop, with
  // the outcome (InvalidArgument naming the bad entry, NotFound for a room Herald is not in,
  // or the room's refusal to be joined).
  std::function<void(RuntimeEdit edit, std::function<void(absl::Status)> done)> apply;
};

}  // namespace herald::agent
