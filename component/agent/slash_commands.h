// component/agent/slash_commands.h
//
// The runtime's slash commands (A3) as one table. Each row names a command, says who may run
// it, gives its /help line and points at the function that answers it; /help, the answer to
// an unknown command and the permission check all read the same rows, so adding a command is
// one row and one function. Commands are answered by the runtime with zero LLM calls; a
// command the sender may not run is answered as if it did not exist.
//
// The handlers live by what they touch: session_commands.h (the conversation's memory),
// usage_report.h (/usage), pending_answers.h (/approve, /deny, /safemode, /pending),
// admin_commands.h (/allowlist, /rooms) and slash_commands.cc (the rest). They run on the I/O loop;
// file work goes to the conversation's strand.
//
//   std::optional<SlashCommand> command = ParseSlashCommand(body);   // slash_command.h
//   const CommandContext context{.services = services, ..., .command = *command};
//   if (std::optional<std::string> reply = AnswerSlashCommandNow(context)) ... // most commands
//   std::string reply = co_await RunSlashCommand(context);                      // the rest
#pragma once

#include <asio.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>

#include "component/agent/access_policy.h"
#include "component/agent/conversation.h"
#include "component/agent/slash_command.h"
#include "component/base/conversation_ref.h"

namespace herald::agent {

// Who may run a command as a whole. (Being an admin also widens what some commands of
// everyone's accept — /usage <jid>, /approve of someone else's run — and those handlers check
// it.)
enum class Who {
  kAnyone,
  kAdmin,  // [agent] admin_jids
  kDev,    // [agent] dev_command_jids
};

// What a handler may use. Everything is owned by the caller and outlives the handler.
struct CommandContext {
  RuntimeServices& services;
  const AccessPolicy& policy;
  Conversation& conversation;
  // The session the command is about: the conversation in the message's thread.
  const base::ConversationRef& session;
  const IncomingMessage& message;
  const SlashCommand& command;
  // The sender may run developer commands, or admin commands (and /help lists them).
  bool dev = false;
  bool admin = false;
};

// Answers one command at once: the reply the sender gets. Most commands read or flip state
// on the I/O loop and are answered this way, with no coroutine.
using CommandAnswer = std::string (*)(const CommandContext& context);
// Answers one command that has to wait (for file work on the conversation's strand).
using CommandHandler = asio::awaitable<std::string> (*)(const CommandContext& context);

struct CommandEntry {
  std::string_view name;       // without the '/'
  Who who;                     // who may run it
  std::string_view arguments;  // as /help shows them, e.g. "[n]" or "<id> [reason]"
  std::string_view help;       // the /help line
  std::variant<CommandAnswer, CommandHandler> run;
};

// Every row, in /help order.
std::span<const CommandEntry> CommandTable();
// The row of the command called `name`, or nullptr.
const CommandEntry* FindCommand(std::string_view name);
bool IsKnownCommand(std::string_view name);
bool IsDevCommand(std::string_view name);
// Whether a sender who is (or is not) a developer and an admin may run `entry`.
bool MayRun(const CommandEntry& entry, bool dev, bool admin);

// The /help text: every row in table order that a sender who is (or is not) a developer and
// an admin may run.
std::string HelpText(bool dev, bool admin);

// The reply to context.command when it is answered at once, as most are; a command that does
// not exist, or that the sender may not run, gets "Unknown command /name." and the help text.
// Nullopt for a command whose handler has to wait: run it with RunSlashCommand.
std::optional<std::string> AnswerSlashCommandNow(const CommandContext& context);

// Runs context.command's handler, whichever kind it is, with the same answers as above.
asio::awaitable<std::string> RunSlashCommand(const CommandContext& context);

}  // namespace herald::agent
