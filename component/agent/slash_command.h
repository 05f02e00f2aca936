// component/agent/slash_command.h
//
// Parsing of the runtime's slash commands (A3). A message is a command when its first
// non-blank character is '/', followed by a word. Which commands exist, who may run them and
// how they are answered is the table in slash_commands.h.
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

}  // namespace herald::agent
