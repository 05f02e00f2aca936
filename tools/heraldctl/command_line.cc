#include "tools/heraldctl/command_line.h"

#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "component/base/absl_string_view.h"
#include "tools/heraldctl/argument_checks.h"
#include "tools/heraldctl/command_spec.h"
#include "tools/heraldctl/command_table.h"
#include "tools/heraldctl/did_you_mean.h"
#include "tools/heraldctl/help_text.h"

namespace herald::heraldctl {

absl::StatusOr<Invocation> ParseCommandLine(const std::vector<std::string>& args,
                                            const Environment& environment) {
  GlobalFlagValues global;
  bool help_command = false;       // `heraldctl help WORDS...`
  std::vector<std::string> words;  // the command's name as typed so far
  const CommandSpec* spec = nullptr;
  ParsedArguments parsed;
  bool flags_ended = false;

  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (!flags_ended && arg == "--") {
      flags_ended = true;
      continue;
    }
    if (!flags_ended && arg.size() > 1 && arg[0] == '-') {
      std::string name = arg;
      std::optional<std::string> inline_value;
      if (size_t equals = arg.find('='); arg.substr(0, 2) == "--" && equals != std::string::npos) {
        name = arg.substr(0, equals);
        inline_value = arg.substr(equals + 1);
      }
      const GlobalFlag* global_flag = FindGlobalFlag(name);
      const FlagSpec* flag = global_flag != nullptr ? &global_flag->spec : nullptr;
      if (flag == nullptr && spec != nullptr) flag = FindFlag(spec->flags, name);
      if (flag == nullptr) return UnknownFlagError(name, spec);
      std::string value;
      if (!flag->value_name.empty()) {
        if (inline_value) {
          value = *inline_value;
        } else if (i + 1 < args.size()) {
          value = args[++i];
        } else {
          return UsageError(
              absl::StrCat(name, " needs a value (", AbslView(flag->value_name), ")"));
        }
      } else if (inline_value) {
        return UsageError(absl::StrCat(name, " takes no value"));
      }
      if (global_flag != nullptr) {
        if (absl::Status status = global_flag->apply(value, global); !status.ok()) return status;
        continue;
      }
      if (!flag->repeated && parsed.Has(name)) {
        return UsageError(absl::StrCat(name, " is given twice"));
      }
      parsed.flags[name].push_back(std::move(value));
      continue;
    }
    // A positional argument: part of the command's name, or one of its arguments.
    if (help_command) {
      words.push_back(arg);
    } else if (spec != nullptr) {
      parsed.positional.push_back(arg);
    } else if (words.empty() && arg == "help") {
      help_command = true;
    } else {
      words.push_back(arg);
      std::string path = absl::StrJoin(words, " ");
      spec = FindCommand(path);
      if (spec == nullptr && !(words.size() == 1 && IsGroup(path))) {
        return UnknownCommandError(words);
      }
    }
  }

  Invocation invocation;
  invocation.options = global.options;
  if (global.help || help_command) {
    std::string topic = absl::StrJoin(words, " ");
    if (help_command && !topic.empty() && !HelpFor(topic).ok()) {
      if (words.size() > 2 || (words.size() == 2 && !IsGroup(words[0]))) {
        return UsageError(absl::StrCat("no help for ", Quoted(topic), "; see 'heraldctl --help'"));
      }
      return UnknownCommandError(words);
    }
    invocation.command = HelpCommand{topic};
    return invocation;
  }
  if (global.version) {
    invocation.command = VersionCommand{};
    return invocation;
  }
  if (words.empty()) return UsageError("no command given; see 'heraldctl --help'");
  if (spec == nullptr) {
    return UsageError(absl::StrCat(
        "'", words[0], "' needs a subcommand: ", absl::StrJoin(Subcommands(words[0]), ", "),
        "; see 'heraldctl ", words[0], " --help'"));
  }
  int given = static_cast<int>(parsed.positional.size());
  if (given < spec->min_positional) {
    return UsageError(absl::StrCat("missing arguments; usage: heraldctl ", UsageLine(*spec)));
  }
  if (spec->max_positional >= 0 && given > spec->max_positional) {
    return UsageError(absl::StrCat("unexpected argument ",
                                   Quoted(parsed.positional[spec->max_positional]),
                                   "; usage: heraldctl ", UsageLine(*spec)));
  }
  absl::StatusOr<Command> command = spec->build(parsed);
  if (!command.ok()) return command.status();
  invocation.command = *std::move(command);
  // `heraldctl version` talks to no server, so where one is does not matter.
  if (std::holds_alternative<VersionCommand>(invocation.command)) return invocation;

  absl::StatusOr<GlobalOptions> options = ResolveOptions(global, environment);
  if (!options.ok()) return options.status();
  invocation.options = *std::move(options);
  return invocation;
}

}  // namespace herald::heraldctl
