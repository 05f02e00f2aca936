#include "component/agent/tool_call.h"

#include <algorithm>
#include <map>
#include <memory>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "component/agent/blocking_work.h"
#include "component/base/utf8.h"
#include "component/memory/memory_store.h"
#include "glog/logging.h"
#include "skills/approvals/approval_rules.h"
#include "skills/approvals/pending_actions.h"
#include "skills/credentials/credential_store.h"
#include "skills/credentials/secret_redactor.h"
#include "skills/external/external_skill.h"

namespace herald::agent {
namespace {

using base::ConversationRef;
using skills::ActionResolution;
using skills::PendingAction;
using Outcome = ActionResolution::Outcome;

constexpr size_t kShownArgumentsBytes = 300;

std::string Shortened(std::string text, size_t limit) {
  if (!base::TruncateUtf8(text, limit)) return text;
  return absl::StrCat(text, "…");
}

std::string Minutes(int seconds) {
  const int minutes = std::max(1, (seconds + 59) / 60);
  return absl::StrCat(minutes, minutes == 1 ? " minute" : " minutes");
}

skills::ApprovalFacts FactsOf(const skills::Skill& skill) {
  skills::ApprovalFacts facts{.skill = skill.spec().name, .category = skill.category()};
  if (const auto* external = dynamic_cast<const skills::ExternalSkill*>(&skill)) {
    facts.manifest_policy = external->manifest().approval;
  }
  return facts;
}

bool InSafeMode(const RuntimeServices& services, const std::string& user) {
  if (user.empty()) return false;
  const std::vector<std::string>& configured = services.turn.approvals.safe_mode_jids;
  return services.safe_mode_jids.contains(user) ||
         std::find(configured.begin(), configured.end(), user) != configured.end();
}

// "{id}" stands for the action's id, which Pause fills in.
std::string ApprovalPrompt(const PendingAction& action, bool in_chat, int timeout_seconds) {
  const std::string id = "{id}";
  const std::string call = absl::StrCat(action.skill, " with ", action.arguments_json);
  if (in_chat) {
    return absl::StrCat("I'd like to run ", call,
                        ". Reply yes or no, or react \xF0\x9F\x91\x8D or \xF0\x9F\x91\x8E "
                        "to this message (or /approve ",
                        id, ", /deny ", id, "). Without an answer within ",
                        Minutes(timeout_seconds), " I won't run it.");
  }
  return absl::StrCat("I'd like to run ", call, "; waiting for an operator to approve it (action ",
                      id, ").");
}

std::string CredentialPrompt(const std::string& skill,
                             const std::vector<skills::CredentialRequirement>& missing,
                             bool in_chat) {
  const std::string id = "{id}";
  std::string text =
      absl::StrCat("To run ", skill, " I need ", missing.size() == 1 ? "a secret" : "secrets",
                   " I don't have yet:");
  for (const skills::CredentialRequirement& requirement : missing) {
    absl::StrAppend(&text, "\n• ", requirement.name);
    if (!requirement.description.empty()) absl::StrAppend(&text, ": ", requirement.description);
    if (!requirement.where_to_get.empty()) {
      absl::StrAppend(&text, " (get one at ", requirement.where_to_get, ")");
    }
  }
  if (!in_chat) {
    absl::StrAppend(&text,
                    "\nSecrets must not be posted here; an operator can provide them (action ", id,
                    ").");
    return text;
  }
  absl::StrAppend(&text,
                  missing.size() == 1
                      ? "\nSend it as your next message."
                      : "\nSend them as your next message, one per line as NAME=value.",
                  " I keep it encrypted for you; it never reaches the model or my memory of "
                  "this chat. /cancel stops.");
  return text;
}

std::string DescribeResolution(const ActionResolution& resolution) {
  std::string text(skills::OutcomeName(resolution.outcome));
  if (!resolution.by.empty() && resolution.outcome != Outcome::kTimedOut) {
    absl::StrAppend(&text, " by ", resolution.by);
  }
  return text;
}

// Opens `action`, announces it (a RunEvent for a program, an event on the bus, a line to the
// person with "{id}" in `prompt` replaced by the action's id), waits for the answer and
// records it (an event and an audit entry).
asio::awaitable<ActionResolution> Pause(const ToolCallTurn& turn, const providers::ToolCall& call,
                                        const PendingAction& action, const absl::Duration& timeout,
                                        const std::string& prompt) {
  RuntimeServices& services = turn.services;
  ActionWaiter waiter(*services.pending_actions, action, timeout);
  const std::string& id = waiter.id();
  const std::string kind(skills::ActionKindName(action.kind));
  std::vector<std::string> names;
  for (const skills::CredentialRequirement& requirement : action.credentials) {
    names.push_back(requirement.name);
  }
  turn.emit(RunEvent{.kind = RunEvent::Kind::kRequiresAction,
                     .text = action.description,
                     .tool = call.name,
                     .action_id = id,
                     .action = action.kind == PendingAction::Kind::kApproval
                                   ? RunEvent::Action::kApproval
                                   : RunEvent::Action::kCredentials,
                     .credential_names = names});
  turn.publish(events::EventType::kActionRequired,
               absl::StrCat(kind, " needed for ", call.name, " (action ", id, ")"),
               {{"action_id", id},
                {"kind", kind},
                {"tool", call.name},
                {"credentials", absl::StrJoin(names, ",")}});
  turn.say(absl::StrReplaceAll(prompt, {{"{id}", id}}));

  trace::Span wait(services.tracer, turn.run_id, absl::StrCat(kind, " wait"), turn.trace_span);
  wait.Set("herald.action.id", id);
  ActionResolution resolution = co_await waiter.Wait();
  const std::string outcome(skills::OutcomeName(resolution.outcome));
  wait.Set("herald.action.outcome", outcome);
  wait.End(absl::OkStatus());
  turn.publish(events::EventType::kActionResolved,
               absl::StrCat(kind, " for ", call.name, " ", DescribeResolution(resolution)),
               {{"action_id", id}, {"kind", kind}, {"outcome", outcome}, {"by", resolution.by}});
  if (services.audit != nullptr) {
    services.audit->Append(ledger::AuditEntry{
        .time = services.clock(),
        .actor = resolution.by.empty() ? "herald" : resolution.by,
        .action = absl::StrCat("skill ", kind),
        .target = absl::StrCat(call.name, " in ", base::ConversationName(turn.ref)),
        .outcome = outcome,
        .detail = absl::StrCat("action ", id, names.empty() ? "" : "; credentials ",
                               absl::StrJoin(names, ","))});
  }
  co_return resolution;
}

}  // namespace

ActionWaiter::ActionWaiter(skills::PendingActions& pending, skills::PendingAction action,
                           absl::Duration timeout) {
  id_ = pending.Open(std::move(action), timeout, [state = state_](ActionResolution resolution) {
    if (state->resume) {
      state->resume(std::move(resolution));
    } else {
      state->resolution = std::move(resolution);
    }
  });
}

asio::awaitable<ActionResolution> ActionWaiter::Wait() {
  // (A named start function: g++ 12 mishandles class temporaries inside a co_await.)
  auto start = [state = state_](std::function<void(ActionResolution)> done) {
    if (state->resolution.has_value()) {
      done(*std::move(state->resolution));
    } else {
      state->resume = std::move(done);
    }
  };
  co_return co_await AwaitCallback<ActionResolution>(std::move(start));
}

std::string CredentialOwnerOf(const ConversationRef& ref) {
  switch (ref.kind) {
    case ConversationRef::Kind::kDirect:
      return ref.address;
    case ConversationRef::Kind::kRoom:
      return absl::StrCat("room:", ref.address);
    case ConversationRef::Kind::kApi:
      return absl::StrCat("api:", ref.address);
  }
  return ref.address;
}

asio::awaitable<providers::ToolResult> RunToolCall(const ToolCallTurn& turn,
                                                   const providers::ToolCall& call) {
  RuntimeServices& services = turn.services;
  providers::ToolResult result{.tool_call_id = call.id, .name = call.name};
  auto refuse = [&result](std::string text) {
    result.content = std::move(text);
    result.is_error = true;
  };

  auto find = [&turn, &services](const std::string& name, const nlohmann::json& arguments) {
    return turn.find_skill ? turn.find_skill(name, arguments)
                           : services.skills.Check(name, arguments);
  };
  absl::StatusOr<skills::Skill*> checked = find(call.name, call.arguments);
  if (!checked.ok()) {
    refuse(std::string(checked.status().message()));
    co_return result;
  }
  skills::Skill* skill = *checked;
  const std::string conversation = base::ConversationName(turn.ref);
  const bool in_chat = !turn.chat_user.empty();
  const TurnOptions& turn_options = services.turn;

  // 2. Approval.
  const bool safe_mode = InSafeMode(services, turn.chat_user);
  if (skills::NeedsApproval(turn_options.approvals, FactsOf(*skill), safe_mode)) {
    if (services.pending_actions == nullptr) {
      refuse(absl::StrCat("Running ", call.name,
                          " needs a person's approval, and no one can be "
                          "asked here; it did not run."));
      co_return result;
    }
    const PendingAction action{
        .kind = PendingAction::Kind::kApproval,
        .conversation = conversation,
        .chat_owner = turn.chat_user,
        .credential_owner = CredentialOwnerOf(turn.ref),
        .run_id = turn.run_id,
        .skill = call.name,
        .arguments_json = Shortened(call.arguments.dump(), kShownArgumentsBytes),
        .description = absl::StrCat("Approve running ", call.name, " with ",
                                    Shortened(call.arguments.dump(), kShownArgumentsBytes),
                                    safe_mode ? " (safe mode)" : "")};
    // (Named, not temporaries: g++ 12 mishandles class temporaries in a co_await.)
    const absl::Duration timeout = absl::Seconds(turn_options.approvals.timeout_seconds);
    const std::string prompt =
        ApprovalPrompt(action, in_chat, turn_options.approvals.timeout_seconds);
    const ActionResolution answer = co_await Pause(turn, call, action, timeout, prompt);
    if (turn.cancelled()) co_return result;
    if (answer.outcome != Outcome::kApproved) {
      if (answer.outcome == Outcome::kTimedOut) {
        refuse(absl::StrCat("No one approved running ", call.name, " within ",
                            Minutes(turn_options.approvals.timeout_seconds),
                            ", so it did not run. Ask the user before trying again."));
      } else {
        refuse(absl::StrCat("The user did not approve running ", call.name, ", so it did not run",
                            answer.reason.empty() ? "" : absl::StrCat(" (", answer.reason, ")"),
                            ". Do not try again unless they ask."));
      }
      co_return result;
    }
    // The registry may have changed while the run waited (a reload, an MCP server's new
    // tool list): look the skill up again rather than trust the old pointer.
    checked = find(call.name, call.arguments);
    if (!checked.ok()) {
      refuse(absl::StrCat(call.name, " is no longer available: ", checked.status().message()));
      co_return result;
    }
    skill = *checked;
  }

  // 3. Credentials.
  std::map<std::string, std::string> secrets;
  // A copy: the skill is looked up again after the pauses below.
  const std::vector<skills::CredentialRequirement> required = skill->credentials();
  if (!required.empty()) {
    const std::string owner = CredentialOwnerOf(turn.ref);
    std::vector<std::string> names;
    for (const skills::CredentialRequirement& requirement : required) {
      names.push_back(requirement.name);
    }
    if (services.credentials != nullptr) {
      skills::CredentialStore* store = services.credentials;
      auto lookup = [store, owner, names] { return store->Get(owner, names); };
      absl::StatusOr<std::map<std::string, std::string>> stored =
          co_await Offload(services.workers.get_executor(), std::move(lookup));
      if (turn.cancelled()) co_return result;
      if (stored.ok()) {
        secrets = *std::move(stored);
      } else {
        LOG(WARNING) << "conversation " << turn.turn_id << ": credentials of " << owner
                     << " unreadable: " << stored.status();
      }
    }
    while (true) {
      std::vector<skills::CredentialRequirement> missing;
      for (const skills::CredentialRequirement& requirement : required) {
        if (!secrets.contains(requirement.name)) missing.push_back(requirement);
      }
      if (missing.empty()) break;
      std::vector<std::string> missing_names;
      for (const auto& requirement : missing) missing_names.push_back(requirement.name);
      if (services.pending_actions == nullptr) {
        refuse(absl::StrCat(call.name, " needs ", absl::StrJoin(missing_names, ", "),
                            ", which no one can be asked for here; it did not run."));
        co_return result;
      }
      const PendingAction action{
          .kind = PendingAction::Kind::kCredentials,
          .conversation = conversation,
          .chat_owner = turn.chat_user,
          .credential_owner = owner,
          .run_id = turn.run_id,
          .skill = call.name,
          .description = absl::StrCat(call.name, " needs ", absl::StrJoin(missing_names, ", ")),
          .credentials = missing};
      const absl::Duration timeout = absl::Seconds(turn_options.credential_timeout_seconds);
      const std::string prompt = CredentialPrompt(call.name, missing, in_chat);
      const ActionResolution answer = co_await Pause(turn, call, action, timeout, prompt);
      if (turn.cancelled()) co_return result;
      if (answer.outcome != Outcome::kProvided) {
        refuse(absl::StrCat(call.name, " needs ", absl::StrJoin(missing_names, ", "), ", which ",
                            answer.outcome == Outcome::kTimedOut ? "was not provided in time"
                                                                 : "the user declined to provide",
                            ", so it did not run."));
        co_return result;
      }
      for (const auto& [name, value] : answer.credentials) secrets[name] = value;
    }
    checked = find(call.name, call.arguments);  // as after the approval
    if (!checked.ok() || (*checked)->credentials().empty()) {
      refuse(absl::StrCat(call.name, " is no longer available."));
      co_return result;
    }
    skill = *checked;
  }

  // 4. The run; 5. nothing of a secret reaches the model.
  const nlohmann::json& arguments = call.arguments;
  const skills::SkillContext& context = turn.skill_context;
  absl::StatusOr<std::string> output = absl::UnknownError("unset");
  if (!secrets.empty()) {
    auto start = [skill, &arguments, &context, secrets](skills::Skill::Done done) mutable {
      skill->ExecuteWithSecrets(arguments, context, std::move(secrets), std::move(done));
    };
    output = co_await AwaitCallback<absl::StatusOr<std::string>>(std::move(start));
  } else {
    auto start = [skill, &arguments, &context](skills::Skill::Done done) {
      skill->Execute(arguments, context, std::move(done));
    };
    output = co_await AwaitCallback<absl::StatusOr<std::string>>(std::move(start));
  }
  if (output.ok()) {
    result.content = skills::RedactSecrets(*output, secrets);
  } else {
    refuse(skills::RedactSecrets(std::string(output.status().message()), secrets));
    LOG(INFO) << "conversation " << turn.turn_id << ": tool " << call.name
              << " failed: " << result.content;
  }
  co_return result;
}

}  // namespace herald::agent
