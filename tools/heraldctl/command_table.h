// tools/heraldctl/command_table.h
//
// Every command heraldctl knows, one row each (CommandSpec, command_spec.h): the words that
// name it, its usage line, summary, flags, argument counts and builder. The parser, the help
// texts and the did-you-mean hints all read this table, so adding a command is one row here
// and one builder in command_builders.h. A two-word command belongs to a group: "sessions
// list" to "sessions".
//
//   const CommandSpec* spec = FindCommand("sessions list");   // null: no such command
//   std::vector<std::string> words = Subcommands("sessions");  // "list", "history", ...
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/types/span.h"
#include "tools/heraldctl/command_spec.h"

namespace herald::heraldctl {

// Every command, in the order help lists them.
const std::vector<CommandSpec>& Commands();
// The groups, in the order help lists them.
absl::Span<const GroupSpec> CommandGroups();

// "sessions list" → its row; null when there is no such command (a group is none).
const CommandSpec* FindCommand(std::string_view path);
bool IsGroup(std::string_view name);
// Whether `path` ("sessions list") is a command of `group` ("sessions").
bool InGroup(std::string_view path, std::string_view group);
// The second words of a group's commands ("list", "history", ...), in table order.
std::vector<std::string> Subcommands(std::string_view group);
// The first words people type: "help", the commands without a group, and the groups.
std::vector<std::string> TopLevelWords();

// `name`'s row in `flags`; null when it is not there.
const FlagSpec* FindFlag(absl::Span<const FlagSpec> flags, std::string_view name);

}  // namespace herald::heraldctl
