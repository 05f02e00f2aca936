// tools/heraldctl/global_flags.h
//
// heraldctl's global flags — where Herald is, how to authenticate, how to print — as a table:
// one row per flag with its help text and what it sets. Global flags may stand anywhere on the
// command line, and the last of a repeated one wins, so that a shell alias can be overridden.
// HERALD_TARGET and HERALD_TOKEN stand in for --target and --token when those are absent.
// ResolveOptions checks the connection once the whole line is read: the target's form, a
// token a header cannot carry (never quoting it), TLS on a unix socket, plaintext off loopback.
//
//   GlobalFlagValues values;
//   const GlobalFlag* flag = FindGlobalFlag("--timeout");
//   absl::Status applied = flag->apply("2.5", values);
//   absl::StatusOr<GlobalOptions> options = ResolveOptions(values, ReadEnvironment());
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "tools/heraldctl/command_spec.h"
#include "tools/heraldctl/invocation.h"

namespace herald::heraldctl {

// The environment variables heraldctl reads; nullopt = unset.
struct Environment {
  std::optional<std::string> target;  // HERALD_TARGET
  std::optional<std::string> token;   // HERALD_TOKEN
};

// HERALD_TARGET and HERALD_TOKEN from this process's environment; an empty one counts as unset.
Environment ReadEnvironment();

// What the global flags said, flag by flag as they were read.
struct GlobalFlagValues {
  GlobalOptions options;              // what needs no environment: --json, --timeout, --tls, ...
  std::optional<std::string> target;  // --target
  std::optional<std::string> token;   // --token
  bool help = false;                  // --help, -h
  bool version = false;               // --version
};

struct GlobalFlag {
  FlagSpec spec;
  // Records the flag's value (for a switch, ""); a usage error when the value is malformed.
  absl::Status (*apply)(const std::string& value, GlobalFlagValues& values);
};

// Every global flag, in the order `heraldctl --help` lists them.
absl::Span<const GlobalFlag> GlobalFlags();
// The same flags as FlagSpecs, for help and did-you-mean.
std::vector<FlagSpec> GlobalFlagSpecs();
// Null when `name` is no global flag.
const GlobalFlag* FindGlobalFlag(std::string_view name);

// The options a command that talks to Herald runs with: the connection from the flags, else
// the environment, else the defaults, checked. A usage error never shows the token.
absl::StatusOr<GlobalOptions> ResolveOptions(const GlobalFlagValues& values,
                                             const Environment& environment);

}  // namespace herald::heraldctl
