#include "component/agent/pending_answers.h"

#include <algorithm>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "component/agent/blocking_work.h"
#include "component/agent/plan.h"
#include "component/base/absl_string_view.h"
#include "component/ledger/audit_log.h"
#include "glog/logging.h"
#include "skills/approvals/pending_actions.h"
#include "skills/credentials/credential_store.h"

namespace herald::agent {
namespace {

using Outcome = skills::ActionResolution::Outcome;

// The secrets a 1:1 message provides for a credentials request: with one secret asked, the
// whole message (or NAME=value); with several, one NAME=value line each. The error is what
// to tell the person instead; it never repeats what they sent.
absl::StatusOr<std::map<std::string, std::string>> ParseCredentialAnswer(
    const skills::PendingAction& action, std::string_view body) {
  constexpr size_t kMaxValueBytes = 8192;
  std::vector<std::string> asked;
  for (const skills::CredentialRequirement& requirement : action.credentials) {
    asked.push_back(requirement.name);
  }
  auto is_asked = [&asked](absl::string_view name) {
    return std::find(asked.begin(), asked.end(), name) != asked.end();
  };
  std::map<std::string, std::string> values;
  absl::string_view text = absl::StripAsciiWhitespace(AbslView(body));
  const size_t equals = text.find('=');
  const bool named = equals != absl::string_view::npos &&
                     is_asked(absl::StripAsciiWhitespace(text.substr(0, equals)));
  if (asked.size() == 1 && !named) {
    values[asked[0]] = std::string(text);
  } else {
    for (absl::string_view line : absl::StrSplit(text, '\n')) {
      line = absl::StripAsciiWhitespace(line);
      if (line.empty()) continue;
      const size_t at = line.find('=');
      const absl::string_view name =
          at == absl::string_view::npos ? line : absl::StripAsciiWhitespace(line.substr(0, at));
      if (at == absl::string_view::npos || !is_asked(name)) {
        return absl::InvalidArgumentError(
            absl::StrCat("Please send one line per secret as NAME=value, for ",
                         absl::StrJoin(asked, ", "), ". (Nothing was stored.)"));
      }
      values[std::string(name)] = std::string(absl::StripAsciiWhitespace(line.substr(at + 1)));
    }
  }
  for (const auto& [name, value] : values) {
    if (value.empty() || value.size() > kMaxValueBytes || value.find('\0') != std::string::npos) {
      return absl::InvalidArgumentError(absl::StrCat("The value for ", name, " must be 1 to ",
                                                     kMaxValueBytes,
                                                     " bytes of text. (Nothing was stored.)"));
    }
  }
  return values;
}

// "yes" → true, "no" → false, anything else → nullopt.
std::optional<bool> YesOrNo(std::string_view body) {
  const std::string word = absl::AsciiStrToLower(absl::StripAsciiWhitespace(AbslView(body)));
  static constexpr std::string_view kYes[] = {"yes", "y", "ok", "okay", "approve", "sure", "yes."};
  static constexpr std::string_view kNo[] = {"no", "n", "deny", "don't", "dont", "no."};
  for (std::string_view yes : kYes) {
    if (word == yes) return true;
  }
  for (std::string_view no : kNo) {
    if (word == no) return false;
  }
  return std::nullopt;
}

// Stores the secrets for the action's credential owner, records that in the audit log, and
// lets the waiting run go on with them.
asio::awaitable<void> StoreCredentials(RuntimeServices& services, std::string action_id,
                                       IncomingMessage message,
                                       std::map<std::string, std::string> values) {
  std::vector<std::string> names;
  for (const auto& [name, value] : values) names.push_back(name);
  const skills::PendingAction* action = services.pending_actions->Find(action_id);
  if (action == nullptr) {
    SayTo(services, message,
          "That request is no longer waiting (it was answered or timed out); nothing "
          "was stored.");
    co_return;
  }
  const std::string owner = action->credential_owner;
  bool stored = false;
  if (services.credentials != nullptr) {
    skills::CredentialStore* store = services.credentials;
    auto work = [store, owner, values]() -> absl::Status {
      for (const auto& [name, value] : values) {
        absl::Status put = store->Put(owner, name, value);
        if (!put.ok()) return put;
      }
      return absl::OkStatus();
    };
    absl::Status put = co_await Offload(services.workers.get_executor(), std::move(work));
    if (!put.ok()) LOG(WARNING) << "credentials of " << owner << " not stored: " << put;
    stored = put.ok();
  }
  if (stored && services.audit != nullptr) {
    services.audit->Append(ledger::AuditEntry{.time = services.clock(),
                                              .actor = absl::StrCat("chat:", message.author),
                                              .action = "store credentials",
                                              .target = owner,
                                              .outcome = "OK",
                                              .detail = absl::StrJoin(names, ",")});
  }
  absl::Status resolved = services.pending_actions->Resolve(
      action_id,
      {.outcome = Outcome::kProvided, .by = message.author, .credentials = std::move(values)});
  if (!resolved.ok()) {
    SayTo(services, message,
          stored ? "Stored, but that request is no longer waiting."
                 : "That request is no longer waiting; nothing was stored.");
    co_return;
  }
  SayTo(services, message,
        stored ? absl::StrCat("Thanks, I stored ", absl::StrJoin(names, ", "),
                              " encrypted for you. Carrying on.")
               : absl::StrCat("Thanks. I can't keep secrets here (no credential key is "
                              "configured), so I'll use it for this run only."));
}

// /approve (approve true) or /deny.
std::string Resolve(const CommandContext& context, bool approve) {
  RuntimeServices& services = context.services;
  const IncomingMessage& message = context.message;
  if (services.pending_actions == nullptr) return "Nothing is waiting for an answer.";
  std::vector<std::string> words = absl::StrSplit(context.command.args, absl::MaxSplits(' ', 1));
  const std::string id = words.empty() ? "" : absl::AsciiStrToLower(words[0]);
  const skills::PendingAction* action = services.pending_actions->Find(id);
  const bool admin = context.policy.IsAdmin(message.reply_to);
  if (id.empty() || action == nullptr || (action->chat_owner != message.author && !admin)) {
    return absl::StrCat("Nothing with the id '", id, "' is waiting for your answer.");
  }
  if (approve && action->kind == skills::PendingAction::Kind::kPlanChoice) {
    return "That request asks which plan to run: reply with its number, or /deny it.";
  }
  if (approve && action->kind != skills::PendingAction::Kind::kApproval) {
    return "That request asks for credentials, not an approval; send them, or /deny it.";
  }
  const std::string skill = action->skill;
  const std::string by =
      action->chat_owner == message.author ? message.author : absl::StrCat("chat:", message.author);
  absl::Status resolved = services.pending_actions->Resolve(
      id, {.outcome = approve ? Outcome::kApproved : Outcome::kDenied,
           .by = by,
           .reason = words.size() > 1 ? words[1] : ""});
  if (!resolved.ok()) return std::string(resolved.message());
  return approve ? absl::StrCat("OK, running ", skill, ".")
                 : absl::StrCat("OK, I won't run ", skill, ".");
}

}  // namespace

bool AnswerPendingAction(RuntimeServices& services, const IncomingMessage& message) {
  if (services.pending_actions == nullptr) return false;
  const skills::PendingAction* action = services.pending_actions->ForChat(message.author);
  if (action == nullptr) return false;
  if (action->kind == skills::PendingAction::Kind::kPlanChoice) {
    if (ParseSlashCommand(message.body).has_value()) return false;  // /cancel stops the run
    std::optional<PlanChoice> choice = ParsePlanChoice(message.body, action->plan_count);
    if (!choice.has_value()) {
      SayTo(services, message,
            absl::StrCat("Reply with a plan's number (1 to ", action->plan_count,
                         "), \"1 step 2: <new text>\" to change a step first, or \"cancel\"."));
      return true;
    }
    const int plan = choice->plan;
    absl::Status resolved = services.pending_actions->Resolve(
        action->id, {.outcome = plan == 0 ? Outcome::kDenied : Outcome::kChosen,
                     .by = message.author,
                     .plan = plan,
                     .step_edits = std::move(choice->step_edits)});
    if (!resolved.ok()) SayTo(services, message, std::string(resolved.message()));
    return true;
  }
  if (action->kind == skills::PendingAction::Kind::kApproval) {
    std::optional<bool> yes = YesOrNo(message.body);
    if (!yes.has_value()) return false;  // an ordinary message; it waits its turn
    const std::string skill = action->skill;
    absl::Status resolved = services.pending_actions->Resolve(
        action->id,
        {.outcome = *yes ? Outcome::kApproved : Outcome::kDenied, .by = message.author});
    if (resolved.ok()) {
      SayTo(services, message,
            *yes ? absl::StrCat("OK, running ", skill, ".")
                 : absl::StrCat("OK, I won't run ", skill, "."));
    }
    return true;
  }
  // A credentials request takes the next message that is not a command (/cancel stops).
  if (ParseSlashCommand(message.body).has_value()) return false;
  absl::StatusOr<std::map<std::string, std::string>> values =
      ParseCredentialAnswer(*action, message.body);
  if (!values.ok()) {
    SayTo(services, message, std::string(values.status().message()));
    return true;
  }
  LOG(INFO) << "credentials for action " << action->id << " received in chat from "
            << message.author;
  asio::co_spawn(services.io, StoreCredentials(services, action->id, message, *std::move(values)),
                 asio::detached);
  return true;
}

asio::awaitable<std::string> ApproveCommand(const CommandContext& context) {
  co_return Resolve(context, /*approve=*/true);
}

asio::awaitable<std::string> DenyCommand(const CommandContext& context) {
  co_return Resolve(context, /*approve=*/false);
}

std::string PendingCommand(const CommandContext& context) {
  const skills::PendingActions* pending = context.services.pending_actions;
  if (pending == nullptr || pending->size() == 0) return "Nothing is waiting for an answer.";
  const absl::Time now = context.services.clock();
  std::string text = "Waiting for an answer:";
  for (const skills::PendingAction& action : pending->List()) {
    const bool approval = action.kind == skills::PendingAction::Kind::kApproval;
    const bool plan = action.kind == skills::PendingAction::Kind::kPlanChoice;
    absl::StrAppend(&text, "\n  ", action.id, "  ",
                    plan       ? "choose a plan for "
                    : approval ? "approve "
                               : "credentials for ",
                    action.skill, " in ", action.conversation, " (",
                    absl::FormatDuration(absl::Trunc(action.expires - now, absl::Seconds(1))),
                    " left): ", action.description);
  }
  absl::StrAppend(&text, "\nAnswer with /approve ID or /deny ID [reason].");
  return text;
}

asio::awaitable<std::string> SafeModeCommand(const CommandContext& context) {
  RuntimeServices& services = context.services;
  const std::string& author = context.message.author;
  const std::string mode = absl::AsciiStrToLower(context.command.args);
  const std::vector<std::string>& configured = services.turn.approvals.safe_mode_jids;
  const bool by_config =
      std::find(configured.begin(), configured.end(), author) != configured.end();
  if (mode == "on") {
    services.safe_mode_jids.insert(author);
  } else if (mode == "off") {
    if (by_config)
      co_return "Safe mode is set for you in the configuration; an operator can lift it.";
    services.safe_mode_jids.erase(author);
  } else if (!mode.empty()) {
    co_return "Usage: /safemode [on|off]";
  }
  const bool on = by_config || services.safe_mode_jids.contains(author);
  co_return on ? "Safe mode is on: I ask before every tool I run for you."
               : "Safe mode is off: I ask only where the operator's rules say so.";
}

}  // namespace herald::agent
