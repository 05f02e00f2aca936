// tools/heraldctl/command_spec.h
//
// The grammar of heraldctl's command line as data. A FlagSpec is one flag as help shows it. A
// CommandSpec is one row of the command table (command_table.h): the words that name the
// command, its usage line and summary, its flags, how many positional arguments it takes, and
// the builder that checks what was given and makes the Command (command_builders.h).
// ParsedArguments is what the generic pass (command_line.cc) hands a builder: the positional
// arguments, and each of the command's flags with its values in the order given.
//
//   const CommandSpec* spec = FindCommand("sessions list");
//   absl::StatusOr<Command> command = spec->build(parsed);
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "tools/heraldctl/invocation.h"

namespace herald::heraldctl {

struct FlagSpec {
  std::string_view name;        // "--limit"
  std::string_view value_name;  // "N"; "" = a switch
  std::string_view help;        // "" = not listed in help (-h, shown with --help)
  bool repeated = false;        // may be given more than once
};

// What the generic pass collected for one command, before its builder checks the values.
struct ParsedArguments {
  std::vector<std::string> positional;
  std::map<std::string, std::vector<std::string>, std::less<>> flags;

  bool Has(std::string_view name) const { return flags.find(name) != flags.end(); }
  // The last value given; "" when the flag is absent.
  std::string Value(std::string_view name) const {
    auto found = flags.find(name);
    return found == flags.end() ? std::string() : found->second.back();
  }
  std::vector<std::string> Values(std::string_view name) const {
    auto found = flags.find(name);
    return found == flags.end() ? std::vector<std::string>() : found->second;
  }
};

// Runs after the argument counts are checked: positional has at least min_positional items.
using Builder = absl::StatusOr<Command> (*)(const ParsedArguments& parsed);

struct CommandSpec {
  std::string_view path;       // "sessions list"
  std::string_view arguments;  // the usage line after the path
  std::string_view summary;
  std::vector<FlagSpec> flags;
  int min_positional = 0;
  int max_positional = 0;  // -1 = any number
  Builder build = nullptr;
};

// The first word of a two-word command ("sessions" of "sessions list").
struct GroupSpec {
  std::string_view name;
  std::string_view summary;
};

}  // namespace herald::heraldctl
