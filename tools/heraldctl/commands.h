// tools/heraldctl/commands.h
//
// CommandRunner carries out one parsed command over a channel to Herald: it builds the
// request, makes the call (each with the bearer token in `authorization` metadata, a deadline
// for unary calls, following page tokens for lists), prints the answer as a table or JSON, and
// says which exit status the outcome is. It never prints the token: any text that would carry
// it (a server echoing it in an error, say) has it replaced by "[token]". Likewise the secret
// values `skills credentials` reads from `input` (never from argv): printed nowhere, "[secret]"
// in anything the server sends back, and wiped from memory after the call.
//
//   CommandRunner runner(channel, invocation.options, STDIN_FILENO, std::cout, std::cerr,
//                        &interrupt);
//   ExitCode code = runner.Run(invocation.command);
//
// Streams (`converse`, `skills run`, `events`) print each event as it arrives and flush.
#pragma once

#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "grpcpp/channel.h"
#include "grpcpp/client_context.h"
#include "proto/herald/v1/admin.grpc.pb.h"
#include "proto/herald/v1/quota.grpc.pb.h"
#include "proto/herald/v1/session.grpc.pb.h"
#include "proto/herald/v1/skill.grpc.pb.h"
#include "tools/heraldctl/exit_code.h"
#include "tools/heraldctl/interrupt.h"
#include "tools/heraldctl/invocation.h"

namespace herald::heraldctl {

class CommandRunner {
 public:
  // `channel` may be null for the commands that need none (help, version). `interrupt` may
  // be null: nothing interrupts the calls. `input` is the file descriptor secrets are read
  // from (stdin); it stays the caller's.
  CommandRunner(std::shared_ptr<grpc::Channel> channel, const GlobalOptions& options, int input,
                std::ostream& out, std::ostream& err, Interrupt* interrupt);

  ExitCode Run(const Command& command);

 private:
  ExitCode Execute(const HelpCommand& command);
  ExitCode Execute(const VersionCommand& command);
  ExitCode Execute(const StatusCommand& command);
  ExitCode Execute(const MetricsCommand& command);
  ExitCode Execute(const TracesCommand& command);
  ExitCode Execute(const TraceCommand& command);
  ExitCode Execute(const SessionsListCommand& command);
  ExitCode Execute(const SessionsHistoryCommand& command);
  ExitCode Execute(const SessionsResetCommand& command);
  ExitCode Execute(const SessionsForgetCommand& command);
  ExitCode Execute(const MemoryExportCommand& command);  // memory_commands.cc
  ExitCode Execute(const SendCommand& command);
  ExitCode Execute(const ConverseCommand& command);
  ExitCode Execute(const CancelCommand& command);
  ExitCode Execute(const UsageCommand& command);
  ExitCode Execute(const LimitsListCommand& command);
  ExitCode Execute(const LimitsSetCommand& command);
  ExitCode Execute(const LimitsRemoveCommand& command);
  ExitCode Execute(const SkillsListCommand& command);
  ExitCode Execute(const SkillsRunCommand& command);
  ExitCode Execute(const SkillsPendingCommand& command);
  ExitCode Execute(const SkillsApproveCommand& command);
  ExitCode Execute(const SkillsDenyCommand& command);
  ExitCode Execute(const SkillsChooseCommand& command);
  ExitCode Execute(const SkillsCredentialsCommand& command);
  ExitCode Execute(const ToolsImportCommand& command);
  ExitCode Execute(const ToolsSearchCommand& command);
  ExitCode Execute(const EventsCommand& command);
  ExitCode Execute(const AuditVerifyCommand& command);
  ExitCode Execute(const AuditLogCommand& command);
  ExitCode Execute(const ReloadCommand& command);
  ExitCode Execute(const AllowlistShowCommand& command);
  ExitCode Execute(const AllowlistUpdateCommand& command);
  ExitCode Execute(const RoomsListCommand& command);
  ExitCode Execute(const RoomsJoinCommand& command);
  ExitCode Execute(const RoomsLeaveCommand& command);
  ExitCode Execute(const WebhooksDeadLettersCommand& command);
  ExitCode Execute(const WebhooksReplayCommand& command);
  ExitCode Execute(const PairCommand& command);
  ExitCode Execute(const SchedulesListCommand& command);
  ExitCode Execute(const SchedulesCancelCommand& command);

  // A context with the token and, for a unary call, the deadline.
  std::unique_ptr<grpc::ClientContext> NewContext(bool unary) const;
  // One unary call, interruptible.
  grpc::Status Call(const std::function<grpc::Status(grpc::ClientContext*)>& call);
  // Follows page tokens from `request` on: `fetch(context, request, &page)` makes the call for
  // one page, `take(page)` keeps what it holds and says how many items are kept in all. Stops
  // when the server has no more pages or `limit` (0: none) items are kept; a server that
  // repeats a page token is an error, not an endless loop.
  template <typename Page, typename Request, typename Fetch, typename Take>
  grpc::Status FetchPages(Request request, int64_t limit, const Fetch& fetch, const Take& take);
  // Before a stream: waits until the channel is connected or has failed, within the timeout,
  // so that an unreachable server is reported rather than waited on (UNAVAILABLE).
  grpc::Status AwaitConnection();
  // Prints what went wrong and says how to exit.
  ExitCode Fail(const grpc::Status& status);
  // The unary answer: `human` unless --json.
  ExitCode Succeed(const google::protobuf::Message& response, const std::string& human);

  void Print(std::string_view text);  // stdout, flushed
  // Streamed text (an answer, a skill's output) as it arrives, cleaned for the terminal;
  // `at_line_start` says whether what is printed so far ends a line.
  void PrintStreamed(const std::string& text, bool* at_line_start);
  void Warn(std::string_view text);  // stderr, flushed
  std::string Redacted(std::string_view text) const;

  std::shared_ptr<grpc::Channel> channel_;
  const GlobalOptions& options_;
  int input_;
  std::ostream& out_;
  std::ostream& err_;
  Interrupt* interrupt_;
  std::vector<std::string> secrets_;  // redacted from everything printed while set
  std::unique_ptr<v1::SessionService::Stub> sessions_;
  std::unique_ptr<v1::QuotaService::Stub> quota_;
  std::unique_ptr<v1::SkillService::Stub> skills_;
  std::unique_ptr<v1::AdminService::Stub> admin_;
};

}  // namespace herald::heraldctl
