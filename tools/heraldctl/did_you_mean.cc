#include "tools/heraldctl/did_you_mean.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "component/base/absl_string_view.h"
#include "component/base/edit_distance.h"
#include "tools/heraldctl/argument_checks.h"
#include "tools/heraldctl/command_table.h"
#include "tools/heraldctl/global_flags.h"

namespace herald::heraldctl {
namespace {

// " (did you mean 'sessions'?)" when a candidate is close (base::NearestName); "" otherwise.
std::string DidYouMean(std::string_view typed, const std::vector<std::string>& candidates) {
  std::vector<std::string_view> names;
  for (const std::string& candidate : candidates) {
    if (candidate.size() > 2) names.push_back(candidate);  // "-h" is no likely meaning of "-x"
  }
  const std::string_view best = base::NearestName(typed, names);
  return best.empty() ? "" : absl::StrCat(" (did you mean '", AbslView(best), "'?)");
}

// " (--limit belongs to a command: ...)" when some command has the flag; "" otherwise.
std::string BelongsToACommand(std::string_view name) {
  for (const CommandSpec& any : Commands()) {
    if (FindFlag(any.flags, name) != nullptr) {
      return absl::StrCat(" (", AbslView(name),
                          " belongs to a command: put it after the command's name)");
    }
  }
  return "";
}

}  // namespace

absl::Status UnknownFlagError(std::string_view name, const CommandSpec* command) {
  std::vector<std::string> candidates;
  for (const FlagSpec& flag : GlobalFlagSpecs()) candidates.emplace_back(flag.name);
  if (command != nullptr) {
    for (const FlagSpec& flag : command->flags) candidates.emplace_back(flag.name);
  }
  std::string hint = DidYouMean(name, candidates);
  if (command == nullptr) {
    // Perhaps a command's flag given before the command.
    if (hint.empty()) hint = BelongsToACommand(name);
    return UsageError(
        absl::StrCat("unknown flag ", Quoted(name), hint, "; see 'heraldctl --help'"));
  }
  return UsageError(absl::StrCat("unknown flag ", Quoted(name), " for '", AbslView(command->path),
                                 "'", hint, "; see 'heraldctl ", AbslView(command->path),
                                 " --help'"));
}

absl::Status UnknownCommandError(const std::vector<std::string>& words) {
  if (words.size() == 1) {
    return UsageError(absl::StrCat("unknown command ", Quoted(words[0]),
                                   DidYouMean(words[0], TopLevelWords()),
                                   "; see 'heraldctl --help'"));
  }
  std::vector<std::string> subcommands = Subcommands(words[0]);
  return UsageError(absl::StrCat("unknown command ", Quoted(words[0] + " " + words[1]),
                                 DidYouMean(words[1], subcommands), "; '", words[0], "' has ",
                                 absl::StrJoin(subcommands, ", ")));
}

}  // namespace herald::heraldctl
