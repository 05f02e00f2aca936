// tools/heraldctl/command_line.h
//
// heraldctl's command line: argv in, an Invocation (invocation.h: the global options and one
// command) out, without touching the network or the disk. Global flags (global_flags.h) may
// stand before or after the command; a command's own flags come after its name; `--` ends the
// flags. A usage error is InvalidArgument with a message that says what is wrong and, where it
// can, what was meant (did_you_mean.h) — never the token.
//
//   absl::StatusOr<Invocation> invocation = ParseCommandLine(args, ReadEnvironment());
//   if (!invocation.ok()) { ...print the message, exit 2... }
//   std::visit(runner, invocation->command);
//
// HERALD_TARGET and HERALD_TOKEN stand in for --target and --token when those are absent.
// The commands, their flags and builders are one table (command_table.h); help is made from it
// (help_text.h).
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tools/heraldctl/global_flags.h"
#include "tools/heraldctl/invocation.h"

namespace herald::heraldctl {

// `args` is argv without the program name.
absl::StatusOr<Invocation> ParseCommandLine(const std::vector<std::string>& args,
                                            const Environment& environment);

}  // namespace herald::heraldctl
