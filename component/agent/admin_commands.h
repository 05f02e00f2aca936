// component/agent/admin_commands.h
//
// The admin slash commands that change the running Herald (rows of slash_commands.h, and
// ad-hoc commands with a form, adhoc_commands.h): who may talk to it and which rooms it is in.
//
//   /allowlist                          who may talk to Herald: JIDs, domains, admins
//   /allowlist add|remove <jid|domain>  changes it
//   /rooms                              every room, joined or not, and what it answers
//   /rooms join <room> [mention|all]    joins one (again, with other settings)
//   /rooms leave <room>                 leaves one
//
// A change goes through the control plane's recorded path (runtime_edit.h), as
// AdminService.UpdateAllowlist, JoinRoom and LeaveRoom do: it is kept across restarts and
// reloads. Each change is written to the audit log with the admin as actor ("chat:JID"),
// whether it worked or not. "*" (everyone) is not accepted here: opening Herald to everyone
// is a configuration file or control plane decision.
#pragma once

#include <asio.hpp>
#include <string>

#include "component/agent/slash_commands.h"

namespace herald::agent {

asio::awaitable<std::string> AllowlistCommand(const CommandContext& context);
// /pair: a one-time code a new person sends to join the allowlist (pairing.h).
asio::awaitable<std::string> PairCommand(const CommandContext& context);
asio::awaitable<std::string> RoomsCommand(const CommandContext& context);

}  // namespace herald::agent
