// tools/heraldctl/did_you_mean.h
//
// The usage errors for a word heraldctl does not know — a command, a subcommand, a flag — with
// the known word nearest to it when one is close enough to be what was meant (edit distance,
// component/base/edit_distance.h), and otherwise where to look. A command's flag given before
// the command is recognised and said to belong after it.
//
//   return UnknownCommandError({"sesions"});
//   // "unknown command 'sesions' (did you mean 'sessions'?); see 'heraldctl --help'"
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "tools/heraldctl/command_spec.h"

namespace herald::heraldctl {

// `name` is neither a global flag nor one of `command`'s (null: no command named yet).
absl::Status UnknownFlagError(std::string_view name, const CommandSpec* command);

// `words` (one or two) name no command: {"frobnicate"}, or {"sessions", "lsit"}.
absl::Status UnknownCommandError(const std::vector<std::string>& words);

}  // namespace herald::heraldctl
