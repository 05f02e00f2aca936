#include "tools/heraldctl/command_line.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <functional>
#include <map>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "component/base/absl_string_view.h"
#include "component/base/edit_distance.h"
#include "nlohmann/json.hpp"
#include "tools/heraldctl/conversation_argument.h"
#include "tools/heraldctl/enum_names.h"
#include "tools/heraldctl/target.h"

namespace herald::heraldctl {
namespace {

// --- The grammar ---------------------------------------------------------------------------

struct FlagSpec {
  std::string_view name;        // "--limit"
  std::string_view value_name;  // "N"; "" = a switch
  std::string_view help;
  bool repeated = false;
};

// What the generic pass collected for one command, before its builder checks the values.
struct ParsedArguments {
  std::vector<std::string> positional;
  std::map<std::string, std::vector<std::string>, std::less<>> flags;

  bool Has(std::string_view name) const { return flags.find(name) != flags.end(); }
  std::string Value(std::string_view name) const {
    auto found = flags.find(name);
    return found == flags.end() ? std::string() : found->second.back();
  }
  std::vector<std::string> Values(std::string_view name) const {
    auto found = flags.find(name);
    return found == flags.end() ? std::vector<std::string>() : found->second;
  }
};

using Builder = std::function<absl::StatusOr<Command>(const ParsedArguments&)>;

struct CommandSpec {
  std::string_view path;       // "sessions list"
  std::string_view arguments;  // the usage line after the path
  std::string_view summary;
  std::vector<FlagSpec> flags;
  int min_positional = 0;
  int max_positional = 0;  // -1 = any number
  Builder build;
};

struct GroupSpec {
  std::string_view name;
  std::string_view summary;
};

absl::Status UsageError(std::string_view message) {
  return absl::InvalidArgumentError(std::string(message));
}

// --- Value checks shared by the builders ---------------------------------------------------

absl::StatusOr<int64_t> ParsePositive(std::string_view flag, const std::string& text) {
  int64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size() || value < 1) {
    return UsageError(absl::StrCat(AbslView(flag), " needs a whole number of at least 1"));
  }
  return value;
}

absl::StatusOr<int64_t> OptionalLimit(const ParsedArguments& parsed) {
  if (!parsed.Has("--limit")) return 0;
  return ParsePositive("--limit", parsed.Value("--limit"));
}

absl::StatusOr<v1::ConversationKey> ConversationAt(const ParsedArguments& parsed, size_t index) {
  return ParseConversationArgument(parsed.positional[index]);
}

// A command whose one argument is a CONVERSATION (reset, forget, cancel).
template <typename C>
absl::StatusOr<Command> ConversationCommand(const ParsedArguments& parsed) {
  absl::StatusOr<v1::ConversationKey> key = ConversationAt(parsed, 0);
  if (!key.ok()) return key.status();
  return C{*key};
}

absl::StatusOr<v1::UsageWindow> WindowFlag(const ParsedArguments& parsed, bool allow_lifetime) {
  std::string word = parsed.Value("--window");
  std::optional<v1::UsageWindow> window = ParseUsageWindow(word);
  if (!window || (!allow_lifetime && *window == v1::USAGE_WINDOW_LIFETIME)) {
    return UsageError(allow_lifetime ? "--window is day, week, month or lifetime"
                                     : "--window is day, week or month");
  }
  return *window;
}

absl::Status CheckOptionalJid(const ParsedArguments& parsed, std::string_view flag) {
  if (!parsed.Has(flag)) return absl::OkStatus();
  return CheckJidArgument(parsed.Value(flag), flag);
}

absl::Status CheckModel(const ParsedArguments& parsed) {
  if (!parsed.Has("--model")) return absl::OkStatus();
  std::string model = parsed.Value("--model");
  if (model.empty()) return UsageError("--model is empty");
  for (char c : model) {
    unsigned char byte = static_cast<unsigned char>(c);
    if (byte <= 0x20 || byte == 0x7f) {
      return UsageError("--model contains whitespace or a control character");
    }
  }
  return absl::OkStatus();
}

std::string JoinedText(const ParsedArguments& parsed, size_t from) {
  std::vector<std::string> words(parsed.positional.begin() + from, parsed.positional.end());
  return absl::StrJoin(words, " ");
}

// `allowlist add|remove` items: a JID has an '@'; anything else is a domain; "jid:" and
// "domain:" say which explicitly (for "*").
absl::Status SortAllowlistItems(const std::vector<std::string>& items,
                                google::protobuf::RepeatedPtrField<std::string>* jids,
                                google::protobuf::RepeatedPtrField<std::string>* domains) {
  for (const std::string& item : items) {
    std::string_view value = item;
    bool is_jid = value.find('@') != std::string_view::npos;
    if (value.substr(0, 4) == "jid:") {
      value.remove_prefix(4);
      is_jid = true;
    } else if (value.substr(0, 7) == "domain:") {
      value.remove_prefix(7);
      is_jid = false;
    }
    if (absl::Status status = CheckJidArgument(value, is_jid ? "JID" : "DOMAIN"); !status.ok()) {
      return status;
    }
    *(is_jid ? jids : domains)->Add() = std::string(value);
  }
  return absl::OkStatus();
}

std::string Quoted(std::string_view text);

// An action ID or a credential owner: one word of visible characters.
absl::Status CheckWord(std::string_view value, std::string_view what) {
  if (value.empty()) return UsageError(absl::StrCat(AbslView(what), " is empty"));
  for (char c : value) {
    unsigned char byte = static_cast<unsigned char>(c);
    if (byte <= 0x20 || byte == 0x7f) {
      return UsageError(
          absl::StrCat(AbslView(what), " contains whitespace or a control character"));
    }
  }
  return absl::OkStatus();
}

// A credential's name, as Herald stores it: an environment-variable name. NAME=value is
// refused without showing the value: a command line is no place for a secret.
absl::Status CheckCredentialName(std::string_view name) {
  if (size_t equals = name.find('='); equals != std::string_view::npos) {
    return UsageError(absl::StrCat(
        Quoted(name.substr(0, equals)),
        " has a value (NAME=...): give the NAME alone. heraldctl reads each value from stdin "
        "(a prompt without echo on a terminal), because a command line can be read by other "
        "users in ps and is kept in shell history"));
  }
  bool valid = !name.empty() && name.size() <= 64 && !(name[0] >= '0' && name[0] <= '9');
  for (char c : name) {
    valid = valid && ((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_');
  }
  if (!valid) {
    return UsageError(absl::StrCat(Quoted(name),
                                   " is not a credential name: upper-case letters, digits and "
                                   "'_', not starting with a digit, at most 64 (API_KEY)"));
  }
  return absl::OkStatus();
}

// --- The commands --------------------------------------------------------------------------

const FlagSpec kLimitFlag{"--limit", "N", "at most N (default: all, fetched page by page)"};

const std::vector<CommandSpec>& CommandSpecs() {
  static const auto* specs = new std::vector<CommandSpec>{
      {"status",
       "",
       "Version, uptime, XMPP connection state and counters.",
       {},
       0,
       0,
       [](const ParsedArguments&) -> absl::StatusOr<Command> { return StatusCommand{}; }},
      {"sessions list",
       "[--kind direct|room|api] [--limit N]",
       "The conversations Herald keeps: 1:1 chats, rooms and API conversations.",
       {{"--kind", "direct|room|api", "only conversations of this kind"}, kLimitFlag},
       0,
       0,
       [](const ParsedArguments& parsed) -> absl::StatusOr<Command> {
         SessionsListCommand command;
         if (parsed.Has("--kind")) {
           std::optional<v1::ConversationKind> kind = ParseConversationKind(parsed.Value("--kind"));
           if (!kind) return UsageError("--kind is direct, room or api");
           command.kind = *kind;
         }
         absl::StatusOr<int64_t> limit = OptionalLimit(parsed);
         if (!limit.ok()) return limit.status();
         command.limit = *limit;
         return command;
       }},
      {"sessions history",
       "CONVERSATION [--limit N]",
       "The conversation's current session, oldest entry first.",
       {{"--limit", "N", "only the newest N entries (default: all)"}},
       1,
       1,
       [](const ParsedArguments& parsed) -> absl::StatusOr<Command> {
         SessionsHistoryCommand command;
         absl::StatusOr<v1::ConversationKey> key = ConversationAt(parsed, 0);
         if (!key.ok()) return key.status();
         command.conversation = *key;
         absl::StatusOr<int64_t> limit = OptionalLimit(parsed);
         if (!limit.ok()) return limit.status();
         command.limit = *limit;
         return command;
       }},
      {"sessions reset",
       "CONVERSATION",
       "Archives the current session; the next message starts an empty one.",
       {},
       1,
       1,
       ConversationCommand<SessionsResetCommand>},
      {"sessions forget",
       "CONVERSATION",
       "Deletes everything Herald remembers of the conversation.",
       {},
       1,
       1,
       ConversationCommand<SessionsForgetCommand>},
      {"send",
       "JID TEXT",
       "Sends TEXT to JID as the agent (several words are joined with spaces).",
       {},
       2,
       -1,
       [](const ParsedArguments& parsed) -> absl::StatusOr<Command> {
         SendCommand command;
         command.to = parsed.positional[0];
         if (absl::Status status = CheckJidArgument(command.to, "JID"); !status.ok()) {
           return status;
         }
         command.text = JoinedText(parsed, 1);
         if (command.text.empty()) return UsageError("TEXT is empty");
         return command;
       }},
      {"converse",
       "TEXT [--conversation NAME]",
       "One turn of an API conversation: prints the answer as it streams. Exit 0 when the run "
       "completes, 1 when it fails.",
       {{"--conversation", "NAME", "the API conversation to continue (default: heraldctl)"}},
       1,
       -1,
       [](const ParsedArguments& parsed) -> absl::StatusOr<Command> {
         ConverseCommand command;
         if (parsed.Has("--conversation")) {
           absl::StatusOr<std::string> name =
               ParseApiConversationName(parsed.Value("--conversation"));
           if (!name.ok()) return name.status();
           command.conversation = *name;
         }
         command.text = JoinedText(parsed, 0);
         if (command.text.empty()) return UsageError("TEXT is empty");
         return command;
       }},
      {"cancel",
       "CONVERSATION",
       "Cancels the running turn and the queued messages.",
       {},
       1,
       1,
       ConversationCommand<CancelCommand>},
      {"usage",
       "[--jid JID] [--model MODEL] [--window day|week|month|lifetime] [--limit N]",
       "Tokens and estimated cost per JID and model in the current window.",
       {{"--jid", "JID", "only this JID"},
        {"--model", "MODEL", "only this model (\"provider:model\")"},
        {"--window", "day|week|month|lifetime", "the UTC window (default: day)"},
        kLimitFlag},
       0,
       0,
       [](const ParsedArguments& parsed) -> absl::StatusOr<Command> {
         UsageCommand command;
         if (absl::Status status = CheckOptionalJid(parsed, "--jid"); !status.ok()) return status;
         if (absl::Status status = CheckModel(parsed); !status.ok()) return status;
         command.jid = parsed.Value("--jid");
         command.model = parsed.Value("--model");
         if (parsed.Has("--window")) {
           absl::StatusOr<v1::UsageWindow> window = WindowFlag(parsed, /*allow_lifetime=*/true);
           if (!window.ok()) return window.status();
           command.window = *window;
         }
         absl::StatusOr<int64_t> limit = OptionalLimit(parsed);
         if (!limit.ok()) return limit.status();
         command.limit = *limit;
         return command;
       }},
      {"limits list",
       "[--jid JID]",
       "The configured limits; with --jid, every limit that applies to that JID and how much "
       "of it is used.",
       {{"--jid", "JID", "the limits that apply to this JID, with their state"}},
       0,
       0,
       [](const ParsedArguments& parsed) -> absl::StatusOr<Command> {
         if (absl::Status status = CheckOptionalJid(parsed, "--jid"); !status.ok()) return status;
         return LimitsListCommand{parsed.Value("--jid")};
       }},
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
       [](const ParsedArguments& parsed) -> absl::StatusOr<Command> {
         if (!parsed.Has("--jid") && !parsed.Has("--model")) {
           return UsageError("limits set needs --jid JID or --model MODEL (or both)");
         }
         for (std::string_view required : {"--window", "--max-tokens", "--mode"}) {
           if (!parsed.Has(required)) {
             return UsageError(absl::StrCat("limits set needs ", AbslView(required)));
           }
         }
         if (absl::Status status = CheckOptionalJid(parsed, "--jid"); !status.ok()) return status;
         if (absl::Status status = CheckModel(parsed); !status.ok()) return status;
         absl::StatusOr<v1::UsageWindow> window = WindowFlag(parsed, /*allow_lifetime=*/false);
         if (!window.ok()) return window.status();
         absl::StatusOr<int64_t> max_tokens =
             ParsePositive("--max-tokens", parsed.Value("--max-tokens"));
         if (!max_tokens.ok()) return max_tokens.status();
         std::optional<v1::LimitMode> mode = ParseLimitMode(parsed.Value("--mode"));
         if (!mode) return UsageError("--mode is block or warn");
         LimitsSetCommand command;
         command.limit.set_jid(parsed.Value("--jid"));
         command.limit.set_model(parsed.Value("--model"));
         command.limit.set_window(*window);
         command.limit.set_max_tokens(*max_tokens);
         command.limit.set_mode(*mode);
         return command;
       }},
      {"limits remove",
       "(--jid JID | --model MODEL) --window day|week|month",
       "Removes the limit with this JID, model and window.",
       {{"--jid", "JID", "the limit's JID"},
        {"--model", "MODEL", "the limit's model"},
        {"--window", "day|week|month", "the limit's window"}},
       0,
       0,
       [](const ParsedArguments& parsed) -> absl::StatusOr<Command> {
         if (!parsed.Has("--jid") && !parsed.Has("--model")) {
           return UsageError("limits remove needs --jid JID or --model MODEL (or both)");
         }
         if (!parsed.Has("--window")) return UsageError("limits remove needs --window");
         if (absl::Status status = CheckOptionalJid(parsed, "--jid"); !status.ok()) return status;
         if (absl::Status status = CheckModel(parsed); !status.ok()) return status;
         absl::StatusOr<v1::UsageWindow> window = WindowFlag(parsed, /*allow_lifetime=*/false);
         if (!window.ok()) return window.status();
         return LimitsRemoveCommand{parsed.Value("--jid"), parsed.Value("--model"), *window};
       }},
      {"skills list",
       "[--query TEXT] [--limit N]",
       "The skills Herald knows; enabled ones are offered to the model.",
       {{"--query", "TEXT", "only skills whose name or description contains TEXT"}, kLimitFlag},
       0,
       0,
       [](const ParsedArguments& parsed) -> absl::StatusOr<Command> {
         absl::StatusOr<int64_t> limit = OptionalLimit(parsed);
         if (!limit.ok()) return limit.status();
         return SkillsListCommand{parsed.Value("--query"), *limit};
       }},
      {"skills run",
       "NAME [--args JSON] [--conversation CONVERSATION]",
       "Runs an enabled skill and prints its output as it streams. Exit 0 when it succeeds, 1 "
       "when it fails.",
       {{"--args", "JSON", "the arguments, a JSON object (default: {})"},
        {"--conversation", "CONVERSATION", "whose memory the skill may read (default: none)"}},
       1,
       1,
       [](const ParsedArguments& parsed) -> absl::StatusOr<Command> {
         SkillsRunCommand command;
         command.name = parsed.positional[0];
         if (command.name.empty()) return UsageError("NAME is empty");
         if (parsed.Has("--args")) {
           command.arguments_json = parsed.Value("--args");
           nlohmann::json arguments =
               nlohmann::json::parse(command.arguments_json, nullptr, /*allow_exceptions=*/false);
           if (arguments.is_discarded()) return UsageError("--args is not valid JSON");
           if (!arguments.is_object()) return UsageError("--args must be a JSON object ({...})");
         }
         if (parsed.Has("--conversation")) {
           absl::StatusOr<v1::ConversationKey> key =
               ParseConversationArgument(parsed.Value("--conversation"));
           if (!key.ok()) return key.status();
           command.conversation = ConversationLabel(*key);
         }
         return command;
       }},
      {"skills pending",
       "",
       "The runs waiting for a person: approvals to answer with 'skills approve' or 'skills "
       "deny', credentials to give with 'skills credentials'.",
       {},
       0,
       0,
       [](const ParsedArguments&) -> absl::StatusOr<Command> { return SkillsPendingCommand{}; }},
      {"skills approve",
       "ID",
       "Approves the pending action ID: the waiting run goes on with its call.",
       {},
       1,
       1,
       [](const ParsedArguments& parsed) -> absl::StatusOr<Command> {
         if (absl::Status status = CheckWord(parsed.positional[0], "ID"); !status.ok()) {
           return status;
         }
         return SkillsApproveCommand{parsed.positional[0]};
       }},
      {"skills deny",
       "ID [--reason TEXT]",
       "Denies the pending action ID: the run goes on without the call, and the model reads "
       "the reason.",
       {{"--reason", "TEXT", "why, for the model to read (default: none)"}},
       1,
       1,
       [](const ParsedArguments& parsed) -> absl::StatusOr<Command> {
         if (absl::Status status = CheckWord(parsed.positional[0], "ID"); !status.ok()) {
           return status;
         }
         if (parsed.Has("--reason") && parsed.Value("--reason").empty()) {
           return UsageError("--reason is empty");
         }
         return SkillsDenyCommand{parsed.positional[0], parsed.Value("--reason")};
       }},
      {"skills credentials",
       "(--action ID | --owner OWNER) NAME...",
       "Gives the credentials a pending action asks for, or stores an owner's ahead of need. "
       "Each NAME's value is read from stdin, never from the command line: on a terminal a "
       "prompt 'NAME: ' without echo, otherwise one line per NAME. Prints the names stored.",
       {{"--action", "ID", "the pending action the credentials are for"},
        {"--owner", "OWNER", "whose they are: a bare JID or api:NAME (stored for later)"}},
       1,
       -1,
       [](const ParsedArguments& parsed) -> absl::StatusOr<Command> {
         if (parsed.Has("--action") == parsed.Has("--owner")) {
           return UsageError(parsed.Has("--action")
                                 ? "give --action or --owner, not both"
                                 : "skills credentials needs --action ID or --owner OWNER");
         }
         SkillsCredentialsCommand command;
         if (parsed.Has("--action")) {
           command.action_id = parsed.Value("--action");
           if (absl::Status status = CheckWord(command.action_id, "--action"); !status.ok()) {
             return status;
           }
         } else {
           command.owner = parsed.Value("--owner");
           if (absl::Status status = CheckWord(command.owner, "--owner"); !status.ok()) {
             return status;
           }
         }
         std::set<std::string> seen;
         for (const std::string& name : parsed.positional) {
           if (absl::Status status = CheckCredentialName(name); !status.ok()) return status;
           if (!seen.insert(name).second) {
             return UsageError(absl::StrCat(Quoted(name), " is given twice"));
           }
           command.names.push_back(name);
         }
         return command;
       }},
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
       [](const ParsedArguments& parsed) -> absl::StatusOr<Command> {
         EventsCommand command;
         std::set<v1::EventType> seen;
         for (const std::string& value : parsed.Values("--type")) {
           for (absl::string_view word : absl::StrSplit(value, ',', absl::SkipEmpty())) {
             std::string_view type_word(word.data(), word.size());
             std::optional<v1::EventType> type = ParseEventType(type_word);
             if (!type) {
               return UsageError(absl::StrCat("unknown event type '", word,
                                              "' (see 'heraldctl help events' for the types)"));
             }
             if (seen.insert(*type).second) command.types.push_back(*type);
           }
         }
         if (parsed.Has("--type") && command.types.empty()) return UsageError("--type is empty");
         if (absl::Status status = CheckOptionalJid(parsed, "--jid"); !status.ok()) return status;
         command.jid = parsed.Value("--jid");
         if (parsed.Has("--conversation")) {
           absl::StatusOr<v1::ConversationKey> key =
               ParseConversationArgument(parsed.Value("--conversation"));
           if (!key.ok()) return key.status();
           command.conversation = ConversationLabel(*key);
         }
         return command;
       }},
      {"audit verify",
       "",
       "Checks the audit log's hash chain. Exit 0 when it is intact, 1 when an entry was "
       "changed, removed or reordered (the first bad entry is printed).",
       {},
       0,
       0,
       [](const ParsedArguments&) -> absl::StatusOr<Command> { return AuditVerifyCommand{}; }},
      {"reload",
       "",
       "Re-reads the configuration file without dropping the XMPP stream, and says what needs "
       "a restart instead.",
       {},
       0,
       0,
       [](const ParsedArguments&) -> absl::StatusOr<Command> { return ReloadCommand{}; }},
      {"allowlist show",
       "",
       "The allowed JIDs and domains, and the admin JIDs.",
       {},
       0,
       0,
       [](const ParsedArguments&) -> absl::StatusOr<Command> { return AllowlistShowCommand{}; }},
      {"allowlist add",
       "JID|DOMAIN...",
       "Allows JIDs (with an '@') and domains (without), at once and persistently. Prefix "
       "jid: or domain: to say which (jid:* is anyone from an allowed domain).",
       {},
       1,
       -1,
       [](const ParsedArguments& parsed) -> absl::StatusOr<Command> {
         AllowlistUpdateCommand command;
         if (absl::Status status =
                 SortAllowlistItems(parsed.positional, command.request.mutable_add_jids(),
                                    command.request.mutable_add_domains());
             !status.ok()) {
           return status;
         }
         return command;
       }},
      {"allowlist remove",
       "JID|DOMAIN...",
       "Takes JIDs and domains off the allowlist.",
       {},
       1,
       -1,
       [](const ParsedArguments& parsed) -> absl::StatusOr<Command> {
         AllowlistUpdateCommand command;
         if (absl::Status status =
                 SortAllowlistItems(parsed.positional, command.request.mutable_remove_jids(),
                                    command.request.mutable_remove_domains());
             !status.ok()) {
           return status;
         }
         return command;
       }},
      {"rooms list",
       "",
       "The rooms Herald is configured for, and whether it is in them.",
       {},
       0,
       0,
       [](const ParsedArguments&) -> absl::StatusOr<Command> { return RoomsListCommand{}; }},
      {"rooms join",
       "ROOM_JID [--nick NICK] [--activation mention|all]",
       "Joins a room now and keeps it in the persisted room list.",
       {{"--nick", "NICK", "the nickname in the room (default: the server's)"},
        {"--activation", "mention|all", "answer when mentioned, or every message"}},
       1,
       1,
       [](const ParsedArguments& parsed) -> absl::StatusOr<Command> {
         RoomsJoinCommand command;
         if (absl::Status status = CheckJidArgument(parsed.positional[0], "ROOM_JID");
             !status.ok()) {
           return status;
         }
         command.room.set_jid(parsed.positional[0]);
         if (parsed.Has("--nick")) {
           if (parsed.Value("--nick").empty()) return UsageError("--nick is empty");
           command.room.set_nick(parsed.Value("--nick"));
         }
         if (parsed.Has("--activation")) {
           std::string activation = parsed.Value("--activation");
           if (activation != "mention" && activation != "all") {
             return UsageError("--activation is mention or all");
           }
           command.room.set_activation(activation);
         }
         return command;
       }},
      {"rooms leave",
       "ROOM_JID",
       "Leaves a room and drops it from the persisted room list.",
       {},
       1,
       1,
       [](const ParsedArguments& parsed) -> absl::StatusOr<Command> {
         if (absl::Status status = CheckJidArgument(parsed.positional[0], "ROOM_JID");
             !status.ok()) {
           return status;
         }
         return RoomsLeaveCommand{parsed.positional[0]};
       }},
      {"version",
       "",
       "heraldctl's own version.",
       {},
       0,
       0,
       [](const ParsedArguments&) -> absl::StatusOr<Command> { return VersionCommand{}; }},
  };
  return *specs;
}

const std::vector<GroupSpec>& Groups() {
  static const auto* groups = new std::vector<GroupSpec>{
      {"sessions", "conversations and their history"},
      {"limits", "token limits"},
      {"skills", "the skill registry, and runs waiting for a person"},
      {"audit", "the audit log"},
      {"allowlist", "who may talk to Herald"},
      {"rooms", "group chats"},
  };
  return *groups;
}

const std::vector<FlagSpec>& GlobalFlags() {
  static const auto* flags = new std::vector<FlagSpec>{
      {"--target", "ADDR",
       "unix:PATH or HOST:PORT (default: $HERALD_TARGET, else unix:./data/control.sock)"},
      {"--token", "TOKEN",
       "bearer token (default: $HERALD_TOKEN; prefer it or --token-file: other users can "
       "read a command line)"},
      {"--token-file", "FILE", "read the bearer token from FILE"},
      {"--json", "", "print the API's JSON: one object, or one per line for streams"},
      {"--timeout", "SECONDS", "deadline of each call, and of connecting for streams (10)"},
      {"--tls", "", "use TLS (for HOST:PORT)"},
      {"--ca", "FILE", "PEM roots to verify the server with (implies --tls)"},
      {"--cert", "FILE", "client certificate for mTLS, with --key (implies --tls)"},
      {"--key", "FILE", "the client certificate's private key"},
      {"--server-name", "NAME", "the name the server's certificate carries, if not the host"},
      {"--insecure", "", "allow plaintext TCP to an address that is not loopback"},
      {"--help", "", "this help, or a command's with COMMAND --help"},
      {"-h", "", ""},
      {"--version", "", "heraldctl's version"},
  };
  return *flags;
}

const FlagSpec* FindFlag(const std::vector<FlagSpec>& flags, std::string_view name) {
  for (const FlagSpec& flag : flags) {
    if (flag.name == name) return &flag;
  }
  return nullptr;
}

const CommandSpec* FindCommand(std::string_view path) {
  for (const CommandSpec& spec : CommandSpecs()) {
    if (spec.path == path) return &spec;
  }
  return nullptr;
}

bool IsGroup(std::string_view name) {
  for (const GroupSpec& group : Groups()) {
    if (group.name == name) return true;
  }
  return false;
}

// The subcommand words of a group ("list", "history", ...).
std::vector<std::string> Subcommands(std::string_view group) {
  std::vector<std::string> words;
  for (const CommandSpec& spec : CommandSpecs()) {
    std::string_view path = spec.path;
    if (path.size() > group.size() && path.substr(0, group.size()) == group &&
        path[group.size()] == ' ') {
      words.emplace_back(path.substr(group.size() + 1));
    }
  }
  return words;
}

// The first words people type: commands without a group, the groups, and "help".
std::vector<std::string> TopLevelWords() {
  std::vector<std::string> words = {"help"};
  for (const CommandSpec& spec : CommandSpecs()) {
    if (spec.path.find(' ') == std::string_view::npos) words.emplace_back(spec.path);
  }
  for (const GroupSpec& group : Groups()) words.emplace_back(group.name);
  return words;
}

// " (did you mean 'sessions'?)" when a candidate is close; "" otherwise.
std::string DidYouMean(std::string_view typed, const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_distance = std::max<size_t>(2, typed.size() / 3) + 1;
  for (const std::string& candidate : candidates) {
    if (candidate.size() <= 2) continue;  // "-h" is no likely meaning of "-x"
    size_t distance = base::EditDistance(typed, candidate);
    if (distance < best_distance) {
      best_distance = distance;
      best = candidate;
    }
  }
  return best.empty() ? "" : absl::StrCat(" (did you mean '", best, "'?)");
}

// Text from the command line quoted in a message: control characters escaped, long text cut.
std::string Quoted(std::string_view text) {
  std::string quoted = "'";
  size_t shown = 0;
  for (char c : text) {
    if (++shown > 40) {
      quoted += "...";
      break;
    }
    unsigned char byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f) {
      absl::StrAppend(&quoted, "\\x", absl::Hex(byte, absl::kZeroPad2));
    } else {
      quoted += c;
    }
  }
  return quoted + "'";
}

absl::Status UnknownFlagError(std::string_view name, const CommandSpec* spec) {
  std::vector<std::string> candidates;
  for (const FlagSpec& flag : GlobalFlags()) candidates.emplace_back(flag.name);
  if (spec != nullptr) {
    for (const FlagSpec& flag : spec->flags) candidates.emplace_back(flag.name);
  }
  std::string hint = DidYouMean(name, candidates);
  if (spec == nullptr) {
    if (hint.empty()) {
      // Perhaps a command's flag given before the command.
      for (const CommandSpec& any : CommandSpecs()) {
        if (FindFlag(any.flags, name) != nullptr) {
          hint = absl::StrCat(" (", AbslView(name),
                              " belongs to a command: put it after the "
                              "command's name)");
          break;
        }
      }
    }
    return UsageError(
        absl::StrCat("unknown flag ", Quoted(name), hint, "; see 'heraldctl --help'"));
  }
  return UsageError(absl::StrCat("unknown flag ", Quoted(name), " for '", AbslView(spec->path), "'",
                                 hint, "; see 'heraldctl ", AbslView(spec->path), " --help'"));
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

// A bearer token goes into a header: visible ASCII only. The message never shows it.
absl::Status CheckToken(std::string_view token, std::string_view source) {
  if (token.empty()) return UsageError(absl::StrCat(AbslView(source), " is empty"));
  for (char c : token) {
    unsigned char byte = static_cast<unsigned char>(c);
    if (byte <= 0x20 || byte >= 0x7f) {
      return UsageError(absl::StrCat("the token from ", AbslView(source),
                                     " has characters a header cannot carry (spaces, control "
                                     "characters or non-ASCII)"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<absl::Duration> ParseTimeout(const std::string& text) {
  char* end = nullptr;
  double seconds = text.empty() ? 0 : std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !(seconds > 0) || seconds > 86400) {
    return UsageError("--timeout needs a number of seconds greater than 0 (at most 86400)");
  }
  return absl::Seconds(seconds);
}

// --- Help texts ----------------------------------------------------------------------------

constexpr size_t kHelpWidth = 96;

// `text` filled into lines of at most kHelpWidth, each after `indent` spaces; the first line's
// indent is already printed when `first_indented` is false.
std::string Wrapped(std::string_view text, size_t indent, bool first_indented = true) {
  std::string wrapped = first_indented ? std::string(indent, ' ') : "";
  size_t column = indent;
  bool line_empty = true;
  for (absl::string_view word : absl::StrSplit(AbslView(text), ' ', absl::SkipEmpty())) {
    if (!line_empty && column + 1 + word.size() > kHelpWidth) {
      absl::StrAppend(&wrapped, "\n", std::string(indent, ' '));
      column = indent;
      line_empty = true;
    }
    if (!line_empty) {
      wrapped += ' ';
      ++column;
    }
    absl::StrAppend(&wrapped, word);
    column += word.size();
    line_empty = false;
  }
  return wrapped + "\n";
}

bool MentionsConversation(const CommandSpec& spec) {
  return spec.arguments.find("CONVERSATION") != std::string_view::npos;
}

std::string UsageLine(const CommandSpec& spec) {
  return spec.arguments.empty() ? std::string(spec.path)
                                : absl::StrCat(AbslView(spec.path), " ", AbslView(spec.arguments));
}

// "  --kind direct|room|api   only conversations of this kind" lines, aligned.
std::string FlagLines(const std::vector<FlagSpec>& flags) {
  std::vector<std::pair<std::string, std::string_view>> lines;
  size_t width = 0;
  for (const FlagSpec& flag : flags) {
    if (flag.help.empty()) continue;
    std::string left = flag.value_name.empty()
                           ? std::string(flag.name)
                           : absl::StrCat(AbslView(flag.name), " ", AbslView(flag.value_name));
    if (flag.name == "--help") left = "--help, -h";
    width = std::max(width, left.size());
    lines.emplace_back(std::move(left), flag.help);
  }
  std::string text;
  for (const auto& [left, help] : lines) {
    absl::StrAppend(&text, "  ", left, std::string(width - left.size() + 3, ' '),
                    Wrapped(help, width + 5, /*first_indented=*/false));
  }
  return text;
}

std::string CommandList(std::string_view group) {
  std::string text;
  for (const CommandSpec& spec : CommandSpecs()) {
    std::string_view path = spec.path;
    if (!group.empty() && (path.substr(0, group.size()) != group || path.size() == group.size() ||
                           path[group.size()] != ' ')) {
      continue;
    }
    absl::StrAppend(&text, "  ", UsageLine(spec), "\n", Wrapped(spec.summary, 6));
  }
  return text;
}

constexpr char kExitCodes[] =
    "Exit codes:\n"
    "  0  ok\n"
    "  1  the call ran and reports a negative result (audit chain broken, run or skill failed)\n"
    "  2  usage error (bad flags or arguments, unreadable --ca/--cert/--key/--token-file)\n"
    "  3  cannot connect, UNAVAILABLE, DEADLINE_EXCEEDED\n"
    "  4  UNAUTHENTICATED, PERMISSION_DENIED\n"
    "  5  NOT_FOUND\n"
    "  6  INVALID_ARGUMENT, FAILED_PRECONDITION, RESOURCE_EXHAUSTED, OUT_OF_RANGE, "
    "ALREADY_EXISTS\n"
    "  7  any other server error\n"
    "  130  interrupted (Ctrl-C); 'events' exits 0 when interrupted\n";

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

std::string OverviewHelp() {
  return absl::StrCat(
      "heraldctl: the admin CLI of Herald's gRPC control plane\n"
      "\n"
      "usage: heraldctl [GLOBAL FLAGS] COMMAND [ARGUMENTS] [FLAGS]\n"
      "\n"
      "Commands:\n",
      CommandList(""),
      "  help [COMMAND]\n"
      "      This text, or a command's flags.\n"
      "\n"
      "CONVERSATION is a bare JID (a 1:1 chat), direct:JID, room:JID or api:NAME.\n"
      "\n"
      "Global flags (before or after the command):\n",
      FlagLines(GlobalFlags()),
      "\n"
      "Output is a table for people; --json prints the API's JSON for scripts. Errors go to\n"
      "stderr as 'heraldctl: CODE: message'.\n"
      "\n",
      kExitCodes);
}

absl::StatusOr<std::string> HelpFor(std::string_view topic) {
  if (topic.empty() || topic == "help") return OverviewHelp();
  if (const CommandSpec* spec = FindCommand(topic); spec != nullptr) {
    std::string text =
        absl::StrCat("usage: heraldctl ", UsageLine(*spec), "\n\n", Wrapped(spec->summary, 0));
    if (!spec->flags.empty()) absl::StrAppend(&text, "\nFlags:\n", FlagLines(spec->flags));
    if (MentionsConversation(*spec)) {
      absl::StrAppend(&text,
                      "\nCONVERSATION is a bare JID (a 1:1 chat), direct:JID, room:JID or "
                      "api:NAME.\n");
    }
    absl::StrAppend(&text, "\nGlobal flags and exit codes: 'heraldctl --help'.\n");
    return text;
  }
  if (IsGroup(topic)) {
    return absl::StrCat("usage: heraldctl ", AbslView(topic), " SUBCOMMAND\n\nSubcommands:\n",
                        CommandList(topic), "\nGlobal flags and exit codes: 'heraldctl --help'.\n");
  }
  return absl::NotFoundError(absl::StrCat("no help for ", Quoted(topic)));
}

absl::StatusOr<Invocation> ParseCommandLine(const std::vector<std::string>& args,
                                            const Environment& environment) {
  Invocation invocation;
  GlobalOptions& options = invocation.options;
  std::optional<std::string> target_flag;
  std::optional<std::string> token_flag;
  bool help = false;
  bool version = false;
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
      const FlagSpec* flag = FindFlag(GlobalFlags(), name);
      bool global = flag != nullptr;
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
      if (!global) {
        if (!flag->repeated && parsed.Has(name)) {
          return UsageError(absl::StrCat(name, " is given twice"));
        }
        parsed.flags[name].push_back(std::move(value));
        continue;
      }
      // Global flags: the last one given wins, so that an alias can be overridden.
      if (name == "--target") {
        target_flag = value;
      } else if (name == "--token") {
        token_flag = value;
      } else if (name == "--token-file") {
        options.connection.token_file = value;
      } else if (name == "--json") {
        options.json = true;
      } else if (name == "--timeout") {
        absl::StatusOr<absl::Duration> timeout = ParseTimeout(value);
        if (!timeout.ok()) return timeout.status();
        options.timeout = *timeout;
      } else if (name == "--tls") {
        options.connection.tls = true;
      } else if (name == "--ca") {
        options.connection.ca_file = value;
      } else if (name == "--cert") {
        options.connection.cert_file = value;
      } else if (name == "--key") {
        options.connection.key_file = value;
      } else if (name == "--server-name") {
        options.connection.server_name = value;
      } else if (name == "--insecure") {
        options.connection.insecure = true;
      } else if (name == "--help" || name == "-h") {
        help = true;
      } else if (name == "--version") {
        version = true;
      }
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

  if (help || help_command) {
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
  if (version) {
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
  if (std::holds_alternative<VersionCommand>(invocation.command)) return invocation;

  // Where to connect and with what.
  ConnectionOptions& connection = options.connection;
  if (target_flag) {
    connection.target = *target_flag;
  } else if (environment.target) {
    connection.target = *environment.target;
  }
  absl::StatusOr<Target> target = ParseTarget(connection.target);
  if (!target.ok()) {
    if (!target_flag && environment.target) {
      return UsageError(absl::StrCat("HERALD_TARGET: ", target.status().message()));
    }
    return target.status();
  }
  if (token_flag && !connection.token_file.empty()) {
    return UsageError("give --token or --token-file, not both");
  }
  if (token_flag) {
    if (absl::Status status = CheckToken(*token_flag, "--token"); !status.ok()) return status;
    connection.token = *token_flag;
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
  return invocation;
}

}  // namespace herald::heraldctl
