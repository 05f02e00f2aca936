#include "tools/heraldctl/heraldctl.h"

#include <memory>
#include <variant>

#include "absl/strings/str_cat.h"
#include "tools/heraldctl/command_line.h"
#include "tools/heraldctl/commands.h"
#include "tools/heraldctl/connection.h"
#include "tools/heraldctl/exit_code.h"
#include "tools/heraldctl/help_text.h"

namespace herald::heraldctl {
namespace {

int UsageFailure(std::ostream& err, const absl::Status& status) {
  err << "heraldctl: " << status.message() << "\n";
  err.flush();
  return static_cast<int>(ExitCode::kUsage);
}

}  // namespace

int RunHeraldctl(const std::vector<std::string>& args, const Environment& environment, int input,
                 std::ostream& out, std::ostream& err, Interrupt* interrupt) {
  if (args.empty()) {
    err << OverviewHelp();
    return static_cast<int>(ExitCode::kUsage);
  }
  absl::StatusOr<Invocation> invocation = ParseCommandLine(args, environment);
  if (!invocation.ok()) return UsageFailure(err, invocation.status());

  std::shared_ptr<grpc::Channel> channel;
  bool needs_server = !std::holds_alternative<HelpCommand>(invocation->command) &&
                      !std::holds_alternative<VersionCommand>(invocation->command);
  if (needs_server) {
    ConnectionOptions& connection = invocation->options.connection;
    if (!connection.token_file.empty()) {
      absl::StatusOr<std::string> token = ReadTokenFile(connection.token_file);
      if (!token.ok()) return UsageFailure(err, token.status());
      connection.token = *token;
    }
    absl::StatusOr<std::shared_ptr<grpc::Channel>> opened = OpenChannel(connection);
    if (!opened.ok()) return UsageFailure(err, opened.status());
    channel = *opened;
  }
  CommandRunner runner(channel, invocation->options, input, out, err, interrupt);
  return static_cast<int>(runner.Run(invocation->command));
}

}  // namespace herald::heraldctl
