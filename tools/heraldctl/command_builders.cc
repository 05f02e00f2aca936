#include "tools/heraldctl/command_builders.h"

#include <charconv>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "component/base/absl_string_view.h"
#include "nlohmann/json.hpp"
#include "tools/heraldctl/argument_checks.h"
#include "tools/heraldctl/conversation_argument.h"
#include "tools/heraldctl/enum_names.h"

namespace herald::heraldctl {
namespace {

// --- Value checks shared by the builders ---------------------------------------------------

absl::StatusOr<int64_t> ParsePositive(std::string_view flag, const std::string& text) {
  int64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size() || value < 1) {
    return UsageError(absl::StrCat(AbslView(flag), " needs a whole number of at least 1"));
  }
  return value;
}

// --limit N into `limit`; 0 (all) when it is absent.
absl::Status ReadLimit(const ParsedArguments& parsed, int64_t* limit) {
  if (!parsed.Has("--limit")) return absl::OkStatus();
  absl::StatusOr<int64_t> value = ParsePositive("--limit", parsed.Value("--limit"));
  if (!value.ok()) return value.status();
  *limit = *value;
  return absl::OkStatus();
}

// --conversation CONVERSATION into `label` ("direct:JID"), the form the server reads; left as it
// is when the flag is absent.
absl::Status ReadConversationLabel(const ParsedArguments& parsed, std::string* label) {
  if (!parsed.Has("--conversation")) return absl::OkStatus();
  absl::StatusOr<v1::ConversationKey> key =
      ParseConversationArgument(parsed.Value("--conversation"));
  if (!key.ok()) return key.status();
  *label = ConversationLabel(*key);
  return absl::OkStatus();
}

// A command whose one argument is a CONVERSATION (reset, forget, cancel).
template <typename C>
absl::StatusOr<Command> BuildConversationCommand(const ParsedArguments& parsed) {
  absl::StatusOr<v1::ConversationKey> key = ParseConversationArgument(parsed.positional[0]);
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

// A model is "provider:model": one word.
absl::Status CheckOptionalModel(const ParsedArguments& parsed) {
  if (!parsed.Has("--model")) return absl::OkStatus();
  return CheckWord(parsed.Value("--model"), "--model");
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

absl::StatusOr<Command> BuildAllowlistUpdate(const ParsedArguments& parsed, bool add) {
  AllowlistUpdateCommand command;
  v1::UpdateAllowlistRequest& request = command.request;
  if (absl::Status status = SortAllowlistItems(
          parsed.positional, add ? request.mutable_add_jids() : request.mutable_remove_jids(),
          add ? request.mutable_add_domains() : request.mutable_remove_domains());
      !status.ok()) {
    return status;
  }
  return command;
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

}  // namespace

// --- SessionService ------------------------------------------------------------------------

absl::StatusOr<Command> BuildSessionsList(const ParsedArguments& parsed) {
  SessionsListCommand command;
  if (parsed.Has("--kind")) {
    std::optional<v1::ConversationKind> kind = ParseConversationKind(parsed.Value("--kind"));
    if (!kind) return UsageError("--kind is direct, room or api");
    command.kind = *kind;
  }
  if (parsed.Has("--query")) {
    command.query = parsed.Value("--query");
    if (command.query.empty()) return UsageError("--query is empty");
    if (command.query.size() > 256) return UsageError("--query is at most 256 bytes");
  }
  if (absl::Status status = ReadLimit(parsed, &command.limit); !status.ok()) return status;
  return command;
}

absl::StatusOr<Command> BuildSessionsHistory(const ParsedArguments& parsed) {
  SessionsHistoryCommand command;
  absl::StatusOr<v1::ConversationKey> key = ParseConversationArgument(parsed.positional[0]);
  if (!key.ok()) return key.status();
  command.conversation = *key;
  if (absl::Status status = ReadLimit(parsed, &command.limit); !status.ok()) return status;
  return command;
}

absl::StatusOr<Command> BuildSessionsReset(const ParsedArguments& parsed) {
  return BuildConversationCommand<SessionsResetCommand>(parsed);
}

absl::StatusOr<Command> BuildSessionsForget(const ParsedArguments& parsed) {
  return BuildConversationCommand<SessionsForgetCommand>(parsed);
}

absl::StatusOr<Command> BuildMemoryExport(const ParsedArguments& parsed) {
  MemoryExportCommand command;
  absl::StatusOr<v1::ConversationKey> key = ParseConversationArgument(parsed.positional[0]);
  if (!key.ok()) return key.status();
  command.conversation = *key;
  command.folder = parsed.positional[1];
  if (command.folder.empty()) return UsageError("memory export needs a folder to write into");
  return command;
}

absl::StatusOr<Command> BuildSend(const ParsedArguments& parsed) {
  SendCommand command;
  command.to = parsed.positional[0];
  if (absl::Status status = CheckJidArgument(command.to, "JID"); !status.ok()) return status;
  command.text = JoinedText(parsed, 1);
  if (command.text.empty()) return UsageError("TEXT is empty");
  return command;
}

absl::StatusOr<Command> BuildConverse(const ParsedArguments& parsed) {
  ConverseCommand command;
  if (parsed.Has("--conversation")) {
    absl::StatusOr<std::string> name = ParseApiConversationName(parsed.Value("--conversation"));
    if (!name.ok()) return name.status();
    command.conversation = *name;
  }
  command.text = JoinedText(parsed, 0);
  if (command.text.empty()) return UsageError("TEXT is empty");
  return command;
}

absl::StatusOr<Command> BuildCancel(const ParsedArguments& parsed) {
  return BuildConversationCommand<CancelCommand>(parsed);
}

// --- QuotaService --------------------------------------------------------------------------

absl::StatusOr<Command> BuildUsage(const ParsedArguments& parsed) {
  UsageCommand command;
  if (absl::Status status = CheckOptionalJid(parsed, "--jid"); !status.ok()) return status;
  if (absl::Status status = CheckOptionalModel(parsed); !status.ok()) return status;
  command.jid = parsed.Value("--jid");
  command.model = parsed.Value("--model");
  if (parsed.Has("--window")) {
    absl::StatusOr<v1::UsageWindow> window = WindowFlag(parsed, /*allow_lifetime=*/true);
    if (!window.ok()) return window.status();
    command.window = *window;
  }
  if (absl::Status status = ReadLimit(parsed, &command.limit); !status.ok()) return status;
  return command;
}

absl::StatusOr<Command> BuildLimitsList(const ParsedArguments& parsed) {
  if (absl::Status status = CheckOptionalJid(parsed, "--jid"); !status.ok()) return status;
  return LimitsListCommand{parsed.Value("--jid")};
}

absl::StatusOr<Command> BuildLimitsSet(const ParsedArguments& parsed) {
  if (!parsed.Has("--jid") && !parsed.Has("--model")) {
    return UsageError("limits set needs --jid JID or --model MODEL (or both)");
  }
  for (std::string_view required : {"--window", "--max-tokens", "--mode"}) {
    if (!parsed.Has(required)) {
      return UsageError(absl::StrCat("limits set needs ", AbslView(required)));
    }
  }
  if (absl::Status status = CheckOptionalJid(parsed, "--jid"); !status.ok()) return status;
  if (absl::Status status = CheckOptionalModel(parsed); !status.ok()) return status;
  absl::StatusOr<v1::UsageWindow> window = WindowFlag(parsed, /*allow_lifetime=*/false);
  if (!window.ok()) return window.status();
  absl::StatusOr<int64_t> max_tokens = ParsePositive("--max-tokens", parsed.Value("--max-tokens"));
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
}

absl::StatusOr<Command> BuildLimitsRemove(const ParsedArguments& parsed) {
  if (!parsed.Has("--jid") && !parsed.Has("--model")) {
    return UsageError("limits remove needs --jid JID or --model MODEL (or both)");
  }
  if (!parsed.Has("--window")) return UsageError("limits remove needs --window");
  if (absl::Status status = CheckOptionalJid(parsed, "--jid"); !status.ok()) return status;
  if (absl::Status status = CheckOptionalModel(parsed); !status.ok()) return status;
  absl::StatusOr<v1::UsageWindow> window = WindowFlag(parsed, /*allow_lifetime=*/false);
  if (!window.ok()) return window.status();
  return LimitsRemoveCommand{parsed.Value("--jid"), parsed.Value("--model"), *window};
}

// --- SkillService --------------------------------------------------------------------------

absl::StatusOr<Command> BuildToolsImport(const ParsedArguments& parsed) {
  ToolsImportCommand command;
  command.path = parsed.positional[0];
  if (command.path.empty()) return UsageError("FILE is empty");
  return command;
}

absl::StatusOr<Command> BuildToolsSearch(const ParsedArguments& parsed) {
  ToolsSearchCommand command;
  command.query = absl::StrJoin(parsed.positional, " ");
  if (parsed.Has("--k")) {
    absl::StatusOr<int64_t> k = ParsePositive("--k", parsed.Value("--k"));
    if (!k.ok()) return k.status();
    if (*k > 100) return UsageError("--k must be from 1 to 100");
    command.k = *k;
  }
  return command;
}

absl::StatusOr<Command> BuildSkillsList(const ParsedArguments& parsed) {
  SkillsListCommand command;
  if (absl::Status status = ReadLimit(parsed, &command.limit); !status.ok()) return status;
  command.query = parsed.Value("--query");
  return command;
}

absl::StatusOr<Command> BuildSkillsRun(const ParsedArguments& parsed) {
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
  if (absl::Status status = ReadConversationLabel(parsed, &command.conversation); !status.ok()) {
    return status;
  }
  return command;
}

absl::StatusOr<Command> BuildSkillsApprove(const ParsedArguments& parsed) {
  if (absl::Status status = CheckWord(parsed.positional[0], "ID"); !status.ok()) return status;
  return SkillsApproveCommand{parsed.positional[0]};
}

absl::StatusOr<Command> BuildSkillsDeny(const ParsedArguments& parsed) {
  if (absl::Status status = CheckWord(parsed.positional[0], "ID"); !status.ok()) return status;
  if (parsed.Has("--reason") && parsed.Value("--reason").empty()) {
    return UsageError("--reason is empty");
  }
  return SkillsDenyCommand{parsed.positional[0], parsed.Value("--reason")};
}

absl::StatusOr<Command> BuildSkillsChoose(const ParsedArguments& parsed) {
  if (absl::Status status = CheckWord(parsed.positional[0], "ID"); !status.ok()) return status;
  SkillsChooseCommand command{.action_id = parsed.positional[0]};
  if (!absl::SimpleAtoi(parsed.positional[1], &command.plan) || command.plan < 1) {
    return UsageError(
        absl::StrCat("PLAN must be a plan's number (1, 2, ...), not '", parsed.positional[1], "'"));
  }
  for (size_t i = 2; i < parsed.positional.size(); ++i) {
    const std::string& edit = parsed.positional[i];
    const size_t equals = edit.find('=');
    int step = 0;
    if (equals == std::string::npos || !absl::SimpleAtoi(edit.substr(0, equals), &step) ||
        step < 1 || equals + 1 == edit.size()) {
      return UsageError(
          absl::StrCat("a step change is STEP=TEXT (e.g. '2=compare prices'), not '", edit, "'"));
    }
    command.step_edits[step] = edit.substr(equals + 1);
  }
  return command;
}

absl::StatusOr<Command> BuildSkillsCredentials(const ParsedArguments& parsed) {
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
    if (absl::Status status = CheckWord(command.owner, "--owner"); !status.ok()) return status;
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
}

// --- AdminService --------------------------------------------------------------------------

absl::StatusOr<Command> BuildTraces(const ParsedArguments& parsed) {
  TracesCommand command;
  if (absl::Status status = ReadLimit(parsed, &command.limit); !status.ok()) return status;
  if (command.limit > 1000) return UsageError("--limit is at most 1000");
  if (absl::Status status = ReadConversationLabel(parsed, &command.conversation); !status.ok()) {
    return status;
  }
  return command;
}

absl::StatusOr<Command> BuildTrace(const ParsedArguments& parsed) {
  if (absl::Status status = CheckWord(parsed.positional[0], "ID"); !status.ok()) return status;
  return TraceCommand{parsed.positional[0]};
}

absl::StatusOr<Command> BuildEvents(const ParsedArguments& parsed) {
  EventsCommand command;
  std::set<v1::EventType> seen;
  for (const std::string& value : parsed.Values("--type")) {
    for (absl::string_view word : absl::StrSplit(value, ',', absl::SkipEmpty())) {
      std::optional<v1::EventType> type =
          ParseEventType(std::string_view(word.data(), word.size()));
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
  if (absl::Status status = ReadConversationLabel(parsed, &command.conversation); !status.ok()) {
    return status;
  }
  return command;
}

absl::StatusOr<Command> BuildAuditLog(const ParsedArguments& parsed) {
  AuditLogCommand command;
  if (absl::Status status = ReadLimit(parsed, &command.limit); !status.ok()) return status;
  return command;
}

absl::StatusOr<Command> BuildAllowlistAdd(const ParsedArguments& parsed) {
  return BuildAllowlistUpdate(parsed, /*add=*/true);
}

absl::StatusOr<Command> BuildAllowlistRemove(const ParsedArguments& parsed) {
  return BuildAllowlistUpdate(parsed, /*add=*/false);
}

absl::StatusOr<Command> BuildRoomsJoin(const ParsedArguments& parsed) {
  RoomsJoinCommand command;
  if (absl::Status status = CheckJidArgument(parsed.positional[0], "ROOM_JID"); !status.ok()) {
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
}

absl::StatusOr<Command> BuildRoomsLeave(const ParsedArguments& parsed) {
  if (absl::Status status = CheckJidArgument(parsed.positional[0], "ROOM_JID"); !status.ok()) {
    return status;
  }
  return RoomsLeaveCommand{parsed.positional[0]};
}

absl::StatusOr<Command> BuildWebhooksDeadLetters(const ParsedArguments& parsed) {
  WebhooksDeadLettersCommand command;
  if (absl::Status status = ReadLimit(parsed, &command.limit); !status.ok()) return status;
  if (command.limit > 1000) return UsageError("--limit is at most 1000");
  return command;
}

absl::StatusOr<Command> BuildWebhooksReplay(const ParsedArguments& parsed) {
  return WebhooksReplayCommand{parsed.positional[0]};
}

absl::StatusOr<Command> BuildSchedulesList(const ParsedArguments& parsed) {
  SchedulesListCommand command;
  if (absl::Status status = ReadConversationLabel(parsed, &command.conversation); !status.ok()) {
    return status;
  }
  if (command.conversation.rfind("api:", 0) == 0) {
    return UsageError(
        "--conversation is a chat or a room: schedules belong to no API conversation");
  }
  return command;
}

absl::StatusOr<Command> BuildSchedulesCancel(const ParsedArguments& parsed) {
  absl::StatusOr<int64_t> id = ParsePositive("ID", parsed.positional[0]);
  if (!id.ok()) return id.status();
  return SchedulesCancelCommand{*id};
}

}  // namespace herald::heraldctl
