// tools/heraldctl/invocation.h
//
// What one heraldctl command line asks for, once parsed: the global options (where Herald is,
// how to authenticate, how to print) and one command, a struct per command with its checked
// arguments. command_line.h makes an Invocation from argv; commands.h carries it out.
//
//   absl::StatusOr<Invocation> invocation = ParseCommandLine(args, ReadEnvironment());
//   if (const auto* send = std::get_if<SendCommand>(&invocation->command)) { ...send->to... }
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "absl/time/time.h"
#include "proto/herald/v1/admin.pb.h"
#include "proto/herald/v1/events.pb.h"
#include "proto/herald/v1/quota.pb.h"
#include "proto/herald/v1/session.pb.h"

namespace herald::heraldctl {

inline constexpr char kDefaultTarget[] = "unix:./data/control.sock";

// Where Herald listens and how to reach it.
struct ConnectionOptions {
  std::string target = kDefaultTarget;  // "unix:PATH" or "HOST:PORT"
  std::string token;                    // "" = send no authorization
  std::string token_file;               // read the token from this file instead
  bool tls = false;                     // implied by ca_file, cert_file, key_file
  std::string ca_file;                  // PEM roots; "" = the system's
  std::string cert_file;                // mTLS client certificate (with key_file)
  std::string key_file;
  std::string server_name;  // the name the server's certificate must carry; "" = the host
  bool insecure = false;    // allow plaintext TCP off loopback
};

struct GlobalOptions {
  ConnectionOptions connection;
  bool json = false;
  absl::Duration timeout = absl::Seconds(10);  // deadline of each unary call
};

// --- Commands ------------------------------------------------------------------------------

// `help [COMMAND...]`, `--help`, `COMMAND --help`: topic "" is the overview.
struct HelpCommand {
  std::string topic;  // "", "sessions", "sessions list", ...
};
struct VersionCommand {};
struct StatusCommand {};
struct MetricsCommand {};
// `traces`: the run traces Herald keeps, newest first.
struct TracesCommand {
  std::string conversation;  // "" = every conversation; else "direct:JID", "room:JID", "api:NAME"
  int64_t limit = 0;         // 0: the server's default (50); at most 1000
};
// `trace ID`: one trace with every span.
struct TraceCommand {
  std::string id;  // a trace id or a run id
};
struct SessionsListCommand {
  v1::ConversationKind kind = v1::CONVERSATION_KIND_UNSPECIFIED;  // every kind
  std::string query;  // a substring of the address, any case; "" = every conversation
  int64_t limit = 0;  // 0 = all
};
struct SessionsHistoryCommand {
  v1::ConversationKey conversation;
  int64_t limit = 0;  // the newest N entries; 0 = all
};
struct SessionsResetCommand {
  v1::ConversationKey conversation;
};
struct SessionsForgetCommand {
  v1::ConversationKey conversation;
};
// `memory export CONVERSATION DIR`: every file Herald keeps of it, written under DIR.
struct MemoryExportCommand {
  v1::ConversationKey conversation;
  std::string folder;  // new or empty
};
struct SendCommand {
  std::string to;
  std::string text;
};
struct ConverseCommand {
  std::string conversation = "heraldctl";  // the API conversation's name
  std::string text;
};
struct CancelCommand {
  v1::ConversationKey conversation;
};
struct UsageCommand {
  std::string jid;    // "" = every JID
  std::string model;  // "" = every model
  v1::UsageWindow window = v1::USAGE_WINDOW_DAY;
  int64_t limit = 0;  // rows; 0 = all
};
struct LimitsListCommand {
  std::string jid;  // "" = every configured limit
};
struct LimitsSetCommand {
  v1::Limit limit;
};
struct LimitsRemoveCommand {
  std::string jid;
  std::string model;
  v1::UsageWindow window = v1::USAGE_WINDOW_UNSPECIFIED;
};
struct SkillsListCommand {
  std::string query;
  int64_t limit = 0;  // 0 = all
};
struct SkillsRunCommand {
  std::string name;
  std::string arguments_json = "{}";
  std::string conversation;  // "" = none; else "direct:JID", "room:JID" or "api:NAME"
};
struct SkillsPendingCommand {};
struct ToolsImportCommand {
  std::string path;  // a JSON Lines registry file, read by heraldctl and uploaded
};
struct ToolsSearchCommand {
  std::string query;
  int64_t k = 10;
};
struct SkillsApproveCommand {
  std::string action_id;
};
// A plan for a pending plan choice, with steps changed first.
struct SkillsChooseCommand {
  std::string action_id;
  int plan = 0;
  std::map<int, std::string> step_edits;
};
struct SkillsDenyCommand {
  std::string action_id;
  std::string reason;  // "" = none
};
// The values are never on the command line: the runner reads one per name from stdin.
struct SkillsCredentialsCommand {
  std::string action_id;           // exactly one of action_id and owner
  std::string owner;               // a bare JID, "room:JID" or "api:NAME"
  std::vector<std::string> names;  // distinct, in the order given
};
struct EventsCommand {
  std::vector<v1::EventType> types;  // empty = every type
  std::string jid;
  std::string conversation;  // the label form, "direct:JID"
};
struct AuditVerifyCommand {};
// `audit log`: the audit log's entries, newest first.
struct AuditLogCommand {
  int64_t limit = 100;  // entries, fetched page by page
};
struct ReloadCommand {};
struct AllowlistShowCommand {};
struct AllowlistUpdateCommand {
  v1::UpdateAllowlistRequest request;  // `allowlist add` fills add_*, `remove` remove_*
};
struct RoomsListCommand {};
struct RoomsJoinCommand {
  v1::Room room;
};
struct RoomsLeaveCommand {
  std::string jid;
};
struct WebhooksDeadLettersCommand {
  int64_t limit = 0;  // 0: the server's default (100)
};
struct WebhooksReplayCommand {
  std::string id;
};
struct PairCommand {};
struct SchedulesListCommand {
  std::string conversation;  // "" = every conversation; else "direct:JID" or "room:JID"
};
struct SchedulesCancelCommand {
  int64_t id = 0;
};

using Command = std::variant<
    HelpCommand, VersionCommand, StatusCommand, SessionsListCommand, SessionsHistoryCommand,
    SessionsResetCommand, SessionsForgetCommand, MemoryExportCommand, SendCommand, ConverseCommand,
    CancelCommand, UsageCommand, LimitsListCommand, LimitsSetCommand, LimitsRemoveCommand,
    SkillsListCommand, SkillsRunCommand, SkillsPendingCommand, SkillsApproveCommand,
    SkillsChooseCommand, SkillsDenyCommand, SkillsCredentialsCommand, ToolsImportCommand,
    ToolsSearchCommand, EventsCommand, AuditVerifyCommand, ReloadCommand, AllowlistShowCommand,
    AllowlistUpdateCommand, RoomsListCommand, RoomsJoinCommand, RoomsLeaveCommand,
    WebhooksDeadLettersCommand, WebhooksReplayCommand, PairCommand, SchedulesListCommand,
    SchedulesCancelCommand, MetricsCommand, TracesCommand, TraceCommand, AuditLogCommand>;

struct Invocation {
  GlobalOptions options;
  Command command;
};

}  // namespace herald::heraldctl
