#include "tools/heraldctl/command_table.h"

#include "tools/heraldctl/command_builders.h"

namespace herald::heraldctl {
namespace {

constexpr FlagSpec kLimitFlag{"--limit", "N", "at most N (default: all, fetched page by page)"};

constexpr GroupSpec kGroups[] = {
    {"sessions", "conversations and their history"},
    {"memory", "what Herald keeps of a conversation, as files"},
    {"limits", "token limits"},
    {"skills", "the skill registry, and runs waiting for a person"},
    {"tools", "the external tool registry and its search"},
    {"audit", "the audit log"},
    {"allowlist", "who may talk to Herald"},
    {"rooms", "group chats"},
    {"webhooks", "deliveries of webhooks out that were given up"},
    {"schedules", "schedules of chats and rooms"},
};

}  // namespace

// Each row: path, usage after the path, summary, flags, fewest and most positional arguments
// (-1: any number), builder.
const std::vector<CommandSpec>& Commands() {
  static const auto* commands = new std::vector<CommandSpec>{
      {"status",
       "",
       "Version, uptime, XMPP connection state and counters.",
       {},
       0,
       0,
       &BuildPlain<StatusCommand>},
      {"metrics",
       "",
       "The metrics GET /metrics serves, as Prometheus text (format 0.0.4), over the control "
       "plane: also for a Herald without [http].",
       {},
       0,
       0,
       &BuildPlain<MetricsCommand>},
      {"traces",
       "[--conversation CONVERSATION] [--limit N]",
       "The run traces Herald keeps, newest first (the runs in progress, then the last [traces] "
       "keep finished ones): start, conversation, run id, duration, spans and status.",
       {{"--conversation", "CONVERSATION", "only this conversation's runs"},
        {"--limit", "N", "at most N, 1 to 1000 (default 50)"}},
       0,
       0,
       &BuildTraces},
      {"trace",
       "ID",
       "One trace (ID is a trace id or a run id) as a timeline: each span's start from the "
       "run's start and its duration in ms, nested under its parent, its status, and its "
       "attributes.",
       {},
       1,
       1,
       &BuildTrace},
      {"sessions list",
       "[--kind direct|room|api] [--query TEXT] [--limit N]",
       "The conversations Herald keeps: 1:1 chats, rooms and API conversations.",
       {{"--kind", "direct|room|api", "only conversations of this kind"},
        {"--query", "TEXT", "only conversations whose address holds TEXT (any case)"},
        kLimitFlag},
       0,
       0,
       &BuildSessionsList},
      {"sessions history",
       "CONVERSATION [--limit N]",
       "The conversation's current session, oldest entry first.",
       {{"--limit", "N", "only the newest N entries (default: all)"}},
       1,
       1,
       &BuildSessionsHistory},
      {"sessions reset",
       "CONVERSATION",
       "Archives the current session; the next message starts an empty one.",
       {},
       1,
       1,
       &BuildSessionsReset},
      {"sessions forget",
       "CONVERSATION",
       "Deletes everything Herald remembers of the conversation.",
       {},
       1,
       1,
       &BuildSessionsForget},
      {"memory export",
       "CONVERSATION DIR",
       "Writes every file Herald keeps of the conversation (its markdown sessions, notes, "
       "context and attachments) under DIR, as kept. DIR must be new or empty.",
       {},
       2,
       2,
       &BuildMemoryExport},
      {"send",
       "JID TEXT",
       "Sends TEXT to JID as the agent (several words are joined with spaces).",
       {},
       2,
       -1,
       &BuildSend},
      {"converse",
       "TEXT [--conversation NAME]",
       "One turn of an API conversation: prints the answer as it streams. Exit 0 when the run "
       "completes, 1 when it fails.",
       {{"--conversation", "NAME", "the API conversation to continue (default: heraldctl)"}},
       1,
       -1,
       &BuildConverse},
      {"cancel",
       "CONVERSATION",
       "Cancels the running turn and the queued messages.",
       {},
       1,
       1,
       &BuildCancel},
      {"usage",
       "[--jid JID] [--model MODEL] [--window day|week|month|lifetime] [--limit N]",
       "Tokens and estimated cost per JID and model in the current window.",
       {{"--jid", "JID", "only this JID"},
        {"--model", "MODEL", "only this model (\"provider:model\")"},
        {"--window", "day|week|month|lifetime", "the UTC window (default: day)"},
        kLimitFlag},
       0,
       0,
       &BuildUsage},
      {"limits list",
       "[--jid JID]",
       "The configured limits; with --jid, every limit that applies to that JID and how much "
       "of it is used.",
       {{"--jid", "JID", "the limits that apply to this JID, with their state"}},
       0,
       0,
       &BuildLimitsList},
      {"limits set",
       "(--jid JID | --model MODEL) --window day|week|month --max-tokens N --mode block|warn",
       "Adds a limit, or replaces the one with the same JID, model and window. With both --jid "
       "and --model the limit applies to that JID's use of that model.",
       {{"--jid", "JID", "the JID the limit applies to"},
        {"--model", "MODEL", "the model the limit applies to (\"provider:model\")"},
        {"--window", "day|week|month", "the UTC window the tokens are counted in"},
        {"--max-tokens", "N", "input + output tokens allowed in the window"},
        {"--mode", "block|warn", "block: no LLM call past the limit; warn: an event only"}},
       0,
       0,
       &BuildLimitsSet},
      {"limits remove",
       "(--jid JID | --model MODEL) --window day|week|month",
       "Removes the limit with this JID, model and window.",
       {{"--jid", "JID", "the limit's JID"},
        {"--model", "MODEL", "the limit's model"},
        {"--window", "day|week|month", "the limit's window"}},
       0,
       0,
       &BuildLimitsRemove},
      {"skills list",
       "[--query TEXT] [--limit N]",
       "The skills Herald knows; enabled ones are offered to the model.",
       {{"--query", "TEXT", "only skills whose name or description contains TEXT"}, kLimitFlag},
       0,
       0,
       &BuildSkillsList},
      {"skills run",
       "NAME [--args JSON] [--conversation CONVERSATION]",
       "Runs an enabled skill and prints its output as it streams. Exit 0 when it succeeds, 1 "
       "when it fails.",
       {{"--args", "JSON", "the arguments, a JSON object (default: {})"},
        {"--conversation", "CONVERSATION", "whose memory the skill may read (default: none)"}},
       1,
       1,
       &BuildSkillsRun},
      {"tools import",
       "FILE",
       "Uploads a JSON Lines tool registry and imports it (docs/tool-search.md): a tool whose id "
       "is known is replaced, a bad line is reported with its number and skipped. Exit 1 when a "
       "line was refused.",
       {},
       1,
       1,
       &BuildToolsImport},
      {"tools search",
       "QUERY... [--k N]",
       "The registry's best tools for QUERY, best first (--json: an array of {id, name, "
       "description, score}).",
       {{"--k", "N", "how many, 1 to 100 (default 10)"}},
       1,
       -1,
       &BuildToolsSearch},
      {"skills pending",
       "",
       "The runs waiting for a person: approvals to answer with 'skills approve' or 'skills "
       "deny', credentials to give with 'skills credentials'.",
       {},
       0,
       0,
       &BuildPlain<SkillsPendingCommand>},
      {"skills approve",
       "ID",
       "Approves the pending action ID: the waiting run goes on with its call.",
       {},
       1,
       1,
       &BuildSkillsApprove},
      {"skills choose",
       "ID PLAN [STEP=TEXT]...",
       "Chooses plan PLAN (its number) of the pending plan choice ID; STEP=TEXT changes that "
       "step's description first. 'skills deny ID' chooses none.",
       {},
       2,
       -1,
       &BuildSkillsChoose},
      {"skills deny",
       "ID [--reason TEXT]",
       "Denies the pending action ID: the run goes on without the call, and the model reads "
       "the reason.",
       {{"--reason", "TEXT", "why, for the model to read (default: none)"}},
       1,
       1,
       &BuildSkillsDeny},
      {"skills credentials",
       "(--action ID | --owner OWNER) NAME...",
       "Gives the credentials a pending action asks for, or stores an owner's ahead of need. "
       "Each NAME's value is read from stdin, never from the command line: on a terminal a "
       "prompt 'NAME: ' without echo, otherwise one line per NAME. Prints the names stored.",
       {{"--action", "ID", "the pending action the credentials are for"},
        {"--owner", "OWNER", "whose they are: a bare JID or api:NAME (stored for later)"}},
       1,
       -1,
       &BuildSkillsCredentials},
      {"events",
       "[--type TYPE]... [--jid JID] [--conversation CONVERSATION]",
       "Streams Herald's events until interrupted (Ctrl-C). TYPE is message_received, "
       "run_started, run_completed, run_failed, tool_started, tool_completed, tool_failed, "
       "limit_warning, limit_blocked, connection_changed or config_reloaded.",
       {{"--type", "TYPE", "only events of this type (repeat, or separate with commas)", true},
        {"--jid", "JID", "only events about this JID"},
        {"--conversation", "CONVERSATION", "only events of this conversation"}},
       0,
       0,
       &BuildEvents},
      {"audit verify",
       "",
       "Checks the audit log's hash chain. Exit 0 when it is intact, 1 when an entry was "
       "changed, removed or reordered (the first bad entry is printed).",
       {},
       0,
       0,
       &BuildPlain<AuditVerifyCommand>},
      {"audit log",
       "[--limit N]",
       "The audit log's entries, newest first: who called what, on what, with which outcome.",
       {{"--limit", "N", "the newest N (default 100; fetched page by page)"}},
       0,
       0,
       &BuildAuditLog},
      {"reload",
       "",
       "Re-reads the configuration file without dropping the XMPP stream, and says what needs "
       "a restart instead.",
       {},
       0,
       0,
       &BuildPlain<ReloadCommand>},
      {"allowlist show",
       "",
       "The allowed JIDs and domains, and the admin JIDs.",
       {},
       0,
       0,
       &BuildPlain<AllowlistShowCommand>},
      {"allowlist add",
       "JID|DOMAIN...",
       "Allows JIDs (with an '@') and domains (without), at once and persistently. Prefix "
       "jid: or domain: to say which (jid:* is anyone from an allowed domain).",
       {},
       1,
       -1,
       &BuildAllowlistAdd},
      {"allowlist remove",
       "JID|DOMAIN...",
       "Takes JIDs and domains off the allowlist.",
       {},
       1,
       -1,
       &BuildAllowlistRemove},
      {"rooms list",
       "",
       "The rooms Herald is configured for, and whether it is in them.",
       {},
       0,
       0,
       &BuildPlain<RoomsListCommand>},
      {"rooms join",
       "ROOM_JID [--nick NICK] [--activation mention|all]",
       "Joins a room now and keeps it in the persisted room list.",
       {{"--nick", "NICK", "the nickname in the room (default: the server's)"},
        {"--activation", "mention|all", "answer when mentioned, or every message"}},
       1,
       1,
       &BuildRoomsJoin},
      {"rooms leave",
       "ROOM_JID",
       "Leaves a room and drops it from the persisted room list.",
       {},
       1,
       1,
       &BuildRoomsLeave},
      {"pair",
       "",
       "A one-time pairing code (valid 10 minutes): a new person sends it to Herald from their "
       "own address and joins the allowlist.",
       {},
       0,
       0,
       &BuildPlain<PairCommand>},
      {"webhooks dead-letters",
       "",
       "Deliveries of [[webhooks.out]] given up after their attempts (or never sent), the "
       "newest first: id, target, event, attempts, when and why.",
       {{"--limit", "N", "at most N (default 100, at most 1000)"}},
       0,
       0,
       &BuildWebhooksDeadLetters},
      {"webhooks replay",
       "ID",
       "Sends a dead letter again, with its delivery id; it is queued at once and, if it fails "
       "again, kept as a dead letter again.",
       {},
       1,
       1,
       &BuildWebhooksReplay},
      {"schedules list",
       "[--conversation CONVERSATION]",
       "Every chat's and room's schedules, the soonest first: id, conversation, when, next run "
       "(UTC) and the prompt.",
       {{"--conversation", "CONVERSATION",
         "only this chat's or room's (JID, direct:JID, room:JID)"}},
       0,
       0,
       &BuildSchedulesList},
      {"schedules cancel",
       "ID",
       "Cancels a schedule, a person's or the operator's ([[schedules.task]]; it comes back when "
       "the config still names it at the next start).",
       {},
       1,
       1,
       &BuildSchedulesCancel},
      {"version", "", "heraldctl's own version.", {}, 0, 0, &BuildPlain<VersionCommand>},
  };
  return *commands;
}

absl::Span<const GroupSpec> CommandGroups() { return kGroups; }

const CommandSpec* FindCommand(std::string_view path) {
  for (const CommandSpec& spec : Commands()) {
    if (spec.path == path) return &spec;
  }
  return nullptr;
}

bool IsGroup(std::string_view name) {
  for (const GroupSpec& group : kGroups) {
    if (group.name == name) return true;
  }
  return false;
}

bool InGroup(std::string_view path, std::string_view group) {
  return path.size() > group.size() && path.substr(0, group.size()) == group &&
         path[group.size()] == ' ';
}

std::vector<std::string> Subcommands(std::string_view group) {
  std::vector<std::string> words;
  for (const CommandSpec& spec : Commands()) {
    if (InGroup(spec.path, group)) words.emplace_back(spec.path.substr(group.size() + 1));
  }
  return words;
}

std::vector<std::string> TopLevelWords() {
  std::vector<std::string> words = {"help"};
  for (const CommandSpec& spec : Commands()) {
    if (spec.path.find(' ') == std::string_view::npos) words.emplace_back(spec.path);
  }
  for (const GroupSpec& group : kGroups) words.emplace_back(group.name);
  return words;
}

const FlagSpec* FindFlag(absl::Span<const FlagSpec> flags, std::string_view name) {
  for (const FlagSpec& flag : flags) {
    if (flag.name == name) return &flag;
  }
  return nullptr;
}

}  // namespace herald::heraldctl
