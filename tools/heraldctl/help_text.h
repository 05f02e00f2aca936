// tools/heraldctl/help_text.h
//
// What `heraldctl --help`, `heraldctl help TOPIC` and `COMMAND --help` print, made from the
// command table and the global flags so that help cannot drift from what the parser accepts:
// the overview (synopsis, commands, global flags, exit codes), a group's subcommands, or one
// command's usage line, summary and flags. Text is wrapped to 96 columns.
//
//   std::cout << OverviewHelp();
//   absl::StatusOr<std::string> text = HelpFor("sessions list");   // NotFound: no such topic
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "tools/heraldctl/command_spec.h"

namespace herald::heraldctl {

// The text `heraldctl --help` prints: synopsis, commands, global flags, exit codes.
std::string OverviewHelp();

// Help for "sessions" (its subcommands) or "sessions list" (its flags); "" and "help" are the
// overview. NotFound for an unknown topic.
absl::StatusOr<std::string> HelpFor(std::string_view topic);

// "sessions history CONVERSATION [--limit N]": the command's words and its arguments.
std::string UsageLine(const CommandSpec& spec);

}  // namespace herald::heraldctl
