#include "component/agent/admin_commands.h"

#include <algorithm>
#include <functional>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "component/agent/blocking_work.h"
#include "component/ledger/audit_log.h"

namespace herald::agent {
namespace {

constexpr const char* kAllowlistUsage = "Usage: /allowlist [add|remove <jid or domain>]";
constexpr const char* kRoomsUsage = "Usage: /rooms [join <room> [mention|all] | leave <room>]";

std::string ListOrNone(const std::vector<std::string>& entries) {
  return entries.empty() ? "(none)" : absl::StrJoin(entries, ", ");
}

std::string AllowlistText(const AgentOptions& options) {
  std::string text =
      absl::StrCat("Who may talk to Herald:\n  JIDs: ", ListOrNone(options.allowed_jids),
                   "\n  domains: ", ListOrNone(options.allowed_domains));
  const bool any_jid = std::find(options.allowed_jids.begin(), options.allowed_jids.end(), "*") !=
                       options.allowed_jids.end();
  if (!any_jid && !options.allowed_domains.empty()) {
    absl::StrAppend(&text, " (they count only with \"*\" among the JIDs)");
  }
  absl::StrAppend(&text, "\n  admins: ", ListOrNone(options.admin_jids),
                  "\nChange it with /allowlist add|remove <jid or domain>.");
  return text;
}

std::string RoomsText(const std::vector<RoomStatus>& rooms) {
  if (rooms.empty()) return "Herald is in no room. Join one with /rooms join <room> [mention|all].";
  std::string text = "Rooms:";
  for (const RoomStatus& room : rooms) {
    absl::StrAppend(&text, "\n  ", room.jid, ": ", room.joined ? "joined" : "joining", " as ",
                    room.nick, ", answers ", room.activation == "all" ? "everything" : "mentions");
  }
  absl::StrAppend(&text,
                  "\nChange them with /rooms join <room> [mention|all] or /rooms leave "
                  "<room>.");
  return text;
}

// Puts `edit` in force through the control plane. A plain function returning the awaitable
// (not a coroutine): its by-value parameter is safe from g++ 12's coroutine-parameter bug.
auto PutEditInForce(RuntimeServices& services, RuntimeEdit edit) {
  auto start = [&services, edit = std::move(edit)](std::function<void(absl::Status)> done) mutable {
    services.edits.apply(std::move(edit), std::move(done));
  };
  return AwaitCallback<absl::Status>(std::move(start));
}

// The audit entry of an admin's change, whatever its outcome.
void AuditEdit(RuntimeServices& services, const CommandContext& context,
               const absl::Status& outcome) {
  if (services.audit == nullptr) return;
  services.audit->Append(ledger::AuditEntry{.time = services.clock(),
                                            .actor = absl::StrCat("chat:", context.message.author),
                                            .action = absl::StrCat("/", context.command.name),
                                            .target = context.command.args,
                                            .outcome = absl::StatusCodeToString(outcome.code())});
}

std::vector<std::string> Words(const std::string& args) {
  return absl::StrSplit(args, absl::ByAnyChar(" \t\n"), absl::SkipEmpty());
}

}  // namespace

asio::awaitable<std::string> AllowlistCommand(const CommandContext& context) {
  RuntimeServices& services = context.services;
  const std::vector<std::string> words = Words(context.command.args);
  if (words.empty()) co_return AllowlistText(services.options);
  const std::string verb = absl::AsciiStrToLower(words[0]);
  if ((verb != "add" && verb != "remove") || words.size() != 2) co_return kAllowlistUsage;
  if (!services.edits.apply) co_return "The allowlist cannot be changed from chat here.";
  const std::string& entry = words[1];
  RuntimeEdit edit{.kind = verb == "add" ? RuntimeEdit::Kind::kAllow : RuntimeEdit::Kind::kDisallow,
                   .entry = entry};
  absl::Status changed = co_await PutEditInForce(services, std::move(edit));
  AuditEdit(services, context, changed);
  if (!changed.ok()) co_return absl::StrCat("The allowlist is unchanged: ", changed.message());
  co_return absl::StrCat(verb == "add" ? "Added " : "Removed ", entry,
                         verb == "add" ? " to" : " from", " the allowlist.\n",
                         AllowlistText(services.options));
}

asio::awaitable<std::string> PairCommand(const CommandContext& context) {
  RuntimeServices& services = context.services;
  if (!services.edits.apply)
    co_return "Pairing needs the control plane, which is not running here.";
  const std::string code = services.pairing.Create(services.clock());
  if (services.audit != nullptr) {
    services.audit->Append(
        ledger::AuditEntry{.time = services.clock(),
                           .actor = absl::StrCat("chat:", context.message.author),
                           .action = "/pair",
                           .outcome = code.empty() ? "INTERNAL" : "OK"});
  }
  if (code.empty()) co_return "No code could be made (no randomness); try again.";
  co_return absl::StrCat("Pairing code: ", code,
                         "\nValid for 10 minutes, once. The new person sends it to me from their "
                         "own address and is added to the allowlist.");
}

asio::awaitable<std::string> RoomsCommand(const CommandContext& context) {
  RuntimeServices& services = context.services;
  const std::vector<std::string> words = Words(context.command.args);
  if (words.empty()) {
    if (!services.edits.rooms) co_return "The rooms are not known here.";
    co_return RoomsText(services.edits.rooms());
  }
  const std::string verb = absl::AsciiStrToLower(words[0]);
  const bool join = verb == "join" && (words.size() == 2 || words.size() == 3);
  const bool leave = verb == "leave" && words.size() == 2;
  if (!join && !leave) co_return kRoomsUsage;
  if (!services.edits.apply) co_return "Rooms cannot be joined or left from chat here.";
  const std::string& room = words[1];
  const std::string activation = words.size() == 3 ? absl::AsciiStrToLower(words[2]) : "";
  RuntimeEdit edit{.kind = join ? RuntimeEdit::Kind::kJoinRoom : RuntimeEdit::Kind::kLeaveRoom,
                   .entry = room,
                   .activation = activation};
  absl::Status changed = co_await PutEditInForce(services, std::move(edit));
  AuditEdit(services, context, changed);
  if (!changed.ok()) {
    co_return absl::StrCat("Could not ", verb, " ", room, ": ", changed.message());
  }
  if (leave) co_return absl::StrCat("Left ", room, ".");
  co_return absl::StrCat("Joining ", room, "; it answers ",
                         activation == "all" ? "everything" : "mentions",
                         " there. /rooms shows when it is in.");
}

}  // namespace herald::agent
