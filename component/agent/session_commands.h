// component/agent/session_commands.h
//
// The slash commands that read or change a conversation's memory (A3, A4, A5): /status (with
// the session's size), /new and /reset (archive the session), /forget (erase it and the
// carried-over context), /history [n], /context, /identity [name] and /remember (a note in
// the conversation's memory, or in the shared folder for shared writers). Their file work runs on
// the conversation's strand of the worker pool; a failure is logged and the sender gets a
// short apology. They are rows of the table in slash_commands.h.
//
//   {"history", Who::kAnyone, "[n]", "the last n messages ...", &HistoryCommand},
#pragma once

#include <asio.hpp>
#include <string>

#include "component/agent/slash_commands.h"

namespace herald::agent {

// Name, version, uptime, connection and model; the session's messages and archives.
asio::awaitable<std::string> StatusCommand(const CommandContext& context);
// Cancels the running answer and archives the session.
asio::awaitable<std::string> NewSessionCommand(const CommandContext& context);
// Cancels the running answer; erases the session and the carried-over context.
asio::awaitable<std::string> ForgetCommand(const CommandContext& context);
// The last n (default 10, at most 50) entries of the session.
asio::awaitable<std::string> HistoryCommand(const CommandContext& context);
// What is carried over between sessions (context.md).
asio::awaitable<std::string> ContextCommand(const CommandContext& context);
// Without a name: the identity in use and those to choose from; with one: chooses it.
asio::awaitable<std::string> IdentityCommand(const CommandContext& context);
// "/remember <text>": a note in this conversation's notes.md (a room's is the room's shared
// memory); "/remember shared <text>": a note every conversation's memory search finds, for
// [memory] shared_writers only, from a 1:1 chat (in a room the sender's JID is not known).
asio::awaitable<std::string> RememberCommand(const CommandContext& context);

}  // namespace herald::agent
