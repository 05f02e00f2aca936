// component/agent/slash_command.h
//
// Parsing of the runtime's slash commands (A3). A message is a command when its first
// non-blank character is '/', followed by a word; commands are answered by the runtime with
// zero LLM calls, and an unknown command gets the help text rather than the model. Whether a
// sender may run a command (dev commands) is decided by the runtime.
//
//   std::optional<SlashCommand> command = ParseSlashCommand("/history 5");
//   command->name;   // "history"
//   command->args;   // "5"
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace herald::agent {

struct SlashCommand {
  std::string name;  // lower case, without the '/'
  std::string args;  // the rest, trimmed
};

// nullopt when `body` is not a command: "/" alone, "//x", "/ x" and "/1" are plain text.
std::optional<SlashCommand> ParseSlashCommand(std::string_view body);

// Commands everyone may use; dev commands (debug, raw) need [agent] dev_command_jids.
bool IsKnownCommand(std::string_view name);
bool IsDevCommand(std::string_view name);

// The /help text.
std::string HelpText(bool show_dev_commands);

}  // namespace herald::agent
