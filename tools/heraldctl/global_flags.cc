#include "tools/heraldctl/global_flags.h"

#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "component/base/absl_string_view.h"
#include "tools/heraldctl/argument_checks.h"
#include "tools/heraldctl/target.h"

namespace herald::heraldctl {
namespace {

absl::StatusOr<absl::Duration> ParseTimeout(const std::string& text) {
  char* end = nullptr;
  double seconds = text.empty() ? 0 : std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !(seconds > 0) || seconds > 86400) {
    return UsageError("--timeout needs a number of seconds greater than 0 (at most 86400)");
  }
  return absl::Seconds(seconds);
}

// A bearer token goes into a header: visible ASCII only. The message never shows it.
absl::Status CheckToken(std::string_view token, std::string_view source) {
  if (token.empty()) return UsageError(absl::StrCat(AbslView(source), " is empty"));
  if (!IsVisibleAscii(token)) {
    return UsageError(absl::StrCat("the token from ", AbslView(source),
                                   " has characters a header cannot carry (spaces, control "
                                   "characters or non-ASCII)"));
  }
  return absl::OkStatus();
}

// The setters the table names. --target and --token are kept apart from the options until
// the environment is known (ResolveOptions); the rest go straight into them.

template <std::optional<std::string> GlobalFlagValues::*kField>
absl::Status Remember(const std::string& value, GlobalFlagValues& values) {
  values.*kField = value;
  return absl::OkStatus();
}

template <std::string ConnectionOptions::*kField>
absl::Status SetText(const std::string& value, GlobalFlagValues& values) {
  values.options.connection.*kField = value;
  return absl::OkStatus();
}

template <bool ConnectionOptions::*kField>
absl::Status SetSwitch(const std::string&, GlobalFlagValues& values) {
  values.options.connection.*kField = true;
  return absl::OkStatus();
}

// --help and --version: something to do instead of the command.
template <bool GlobalFlagValues::*kField>
absl::Status Raise(const std::string&, GlobalFlagValues& values) {
  values.*kField = true;
  return absl::OkStatus();
}

absl::Status SetJson(const std::string&, GlobalFlagValues& values) {
  values.options.json = true;
  return absl::OkStatus();
}

absl::Status SetTimeout(const std::string& value, GlobalFlagValues& values) {
  absl::StatusOr<absl::Duration> timeout = ParseTimeout(value);
  if (!timeout.ok()) return timeout.status();
  values.options.timeout = *timeout;
  return absl::OkStatus();
}

constexpr GlobalFlag kGlobalFlags[] = {
    {{"--target", "ADDR",
      "unix:PATH or HOST:PORT (default: $HERALD_TARGET, else unix:./data/control.sock)"},
     &Remember<&GlobalFlagValues::target>},
    {{"--token", "TOKEN",
      "bearer token (default: $HERALD_TOKEN; prefer it or --token-file: other users can read a "
      "command line)"},
     &Remember<&GlobalFlagValues::token>},
    {{"--token-file", "FILE", "read the bearer token from FILE"},
     &SetText<&ConnectionOptions::token_file>},
    {{"--json", "", "print the API's JSON: one object, or one per line for streams"}, &SetJson},
    {{"--timeout", "SECONDS", "deadline of each call, and of connecting for streams (10)"},
     &SetTimeout},
    {{"--tls", "", "use TLS (for HOST:PORT)"}, &SetSwitch<&ConnectionOptions::tls>},
    {{"--ca", "FILE", "PEM roots to verify the server with (implies --tls)"},
     &SetText<&ConnectionOptions::ca_file>},
    {{"--cert", "FILE", "client certificate for mTLS, with --key (implies --tls)"},
     &SetText<&ConnectionOptions::cert_file>},
    {{"--key", "FILE", "the client certificate's private key"},
     &SetText<&ConnectionOptions::key_file>},
    {{"--server-name", "NAME", "the name the server's certificate carries, if not the host"},
     &SetText<&ConnectionOptions::server_name>},
    {{"--insecure", "", "allow plaintext TCP to an address that is not loopback"},
     &SetSwitch<&ConnectionOptions::insecure>},
    {{"--help", "", "this help, or a command's with COMMAND --help"},
     &Raise<&GlobalFlagValues::help>},
    {{"-h", "", ""}, &Raise<&GlobalFlagValues::help>},  // listed with --help
    {{"--version", "", "heraldctl's version"}, &Raise<&GlobalFlagValues::version>},
};

}  // namespace

Environment ReadEnvironment() {
  Environment environment;
  if (const char* target = std::getenv("HERALD_TARGET"); target != nullptr && *target != '\0') {
    environment.target = target;
  }
  if (const char* token = std::getenv("HERALD_TOKEN"); token != nullptr && *token != '\0') {
    environment.token = token;
  }
  return environment;
}

absl::Span<const GlobalFlag> GlobalFlags() { return kGlobalFlags; }

std::vector<FlagSpec> GlobalFlagSpecs() {
  std::vector<FlagSpec> specs;
  for (const GlobalFlag& flag : kGlobalFlags) specs.push_back(flag.spec);
  return specs;
}

const GlobalFlag* FindGlobalFlag(std::string_view name) {
  for (const GlobalFlag& flag : kGlobalFlags) {
    if (flag.spec.name == name) return &flag;
  }
  return nullptr;
}

absl::StatusOr<GlobalOptions> ResolveOptions(const GlobalFlagValues& values,
                                             const Environment& environment) {
  GlobalOptions options = values.options;
  ConnectionOptions& connection = options.connection;
  if (values.target) {
    connection.target = *values.target;
  } else if (environment.target) {
    connection.target = *environment.target;
  }
  absl::StatusOr<Target> target = ParseTarget(connection.target);
  if (!target.ok()) {
    if (!values.target && environment.target) {
      return UsageError(absl::StrCat("HERALD_TARGET: ", target.status().message()));
    }
    return target.status();
  }
  if (values.token && !connection.token_file.empty()) {
    return UsageError("give --token or --token-file, not both");
  }
  if (values.token) {
    if (absl::Status status = CheckToken(*values.token, "--token"); !status.ok()) return status;
    connection.token = *values.token;
  } else if (connection.token_file.empty() && environment.token) {
    if (absl::Status status = CheckToken(*environment.token, "HERALD_TOKEN"); !status.ok()) {
      return status;
    }
    connection.token = *environment.token;
  }
  if (!connection.ca_file.empty() || !connection.cert_file.empty() ||
      !connection.key_file.empty()) {
    connection.tls = true;
  }
  if (connection.cert_file.empty() != connection.key_file.empty()) {
    return UsageError("--cert and --key go together (mTLS)");
  }
  if (connection.tls && target->is_unix) {
    return UsageError("--tls is for HOST:PORT targets; a unix socket is guarded by its file mode");
  }
  if (!connection.tls && !target->is_unix && !target->IsLoopback() && !connection.insecure) {
    return UsageError(
        absl::StrCat("refusing plaintext to ", target->host,
                     ", which is not a loopback address: use --tls (with --ca FILE when the "
                     "server's certificate is not from a public CA), or --insecure"));
  }
  return options;
}

}  // namespace herald::heraldctl
