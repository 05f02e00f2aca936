// component/agent/tool_commands.h
//
// /tools (a row of slash_commands.h): the registry tools (S6) pinned or blocked for the
// conversation's owner — the person in a 1:1 chat, the room in a room (where only admins
// change them).
//
//   /tools                 what is pinned and blocked here, and by the operator
//   /tools pin <id>        load this registry tool at the start of every run
//   /tools unpin <id>
//   /tools block <id>      never load it, even when a search finds it
//   /tools unblock <id>
#pragma once

#include <asio.hpp>
#include <string>

#include "component/agent/slash_commands.h"

namespace herald::agent {

asio::awaitable<std::string> ToolsCommand(const CommandContext& context);

}  // namespace herald::agent
