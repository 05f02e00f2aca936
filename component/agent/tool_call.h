// component/agent/tool_call.h
//
// One tool call of a turn (A2, S7, S8), from the model's request to the text it reads back:
//
//   1. the registry checks that the tool exists, is enabled and that the arguments fit;
//   2. when the approval rules (skills/approvals) say so, the run pauses for a person's yes:
//      the user in a 1:1 chat ("yes"/"no", "/approve ID"), an operator over SkillService;
//      a refusal or no answer in time means the tool does not run and the model is told so;
//   3. when the skill declares credentials the owner has not stored, the run pauses again
//      and asks for them (each by name, what it is for, where to get it) — in a 1:1 chat or
//      over SkillService.ProvideCredentials — and resumes here when they arrive;
//   4. the skill runs; an external skill gets the credentials in its environment only;
//   5. whatever comes back has every credential value redacted before the model sees it.
//
// Each pause is a RunEvent kRequiresAction for a program following the turn and an
// action_required event on the bus; the answer an action_resolved event and an audit entry.
//
//   ToolCallTurn turn{.services = services_, .ref = ref, ...};
//   providers::ToolResult result = co_await RunToolCall(turn, tool_call);
//   if (turn.cancelled()) co_return;
#pragma once

#include <asio.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "component/agent/conversation.h"
#include "component/agent/run_events.h"
#include "providers/provider.h"
#include "skills/approvals/pending_actions.h"
#include "skills/skill.h"

namespace herald::agent {

// What a tool call needs from the turn that makes it. Everything outlives the call.
struct ToolCallTurn {
  RuntimeServices& services;
  base::ConversationRef ref;  // the conversation (thread left out)
  // The bare JID whose turn it is in a 1:1 chat ("" in a room or an API conversation): who
  // is asked in chat and whose safe mode applies.
  std::string chat_user;
  std::string run_id;
  std::string turn_id;     // for log lines
  std::string trace_span;  // the tool call's span: an approval wait's parent
  skills::SkillContext skill_context;
  // Sends a RunEvent to a program following the turn; says a line to the person (nothing
  // for an API conversation); publishes on the bus; whether the turn was cancelled.
  std::function<void(RunEvent)> emit;
  std::function<void(std::string)> say;
  std::function<void(events::EventType, std::string summary,
                     std::vector<std::pair<std::string, std::string>> attributes)>
      publish;
  std::function<bool()> cancelled;
  // Finds the skill a call names, enabled and with arguments that fit its schema; empty: the
  // skill registry's Check. A run's registry tools over HTTP are skills of the run's own
  // (registry_tools.h). Looked up again after every pause.
  std::function<absl::StatusOr<skills::Skill*>(const std::string& name,
                                               const nlohmann::json& arguments)>
      find_skill;
};

// A pending action a run opens and then waits for: opened first, so that the run can announce
// its id, and awaited after; an answer that comes in between is kept.
//
//   ActionWaiter waiter(*services.pending_actions, action, timeout);
//   say(absl::StrCat("answer /approve ", waiter.id()));
//   skills::ActionResolution answer = co_await waiter.Wait();
class ActionWaiter {
 public:
  ActionWaiter(skills::PendingActions& pending, skills::PendingAction action,
               absl::Duration timeout);
  const std::string& id() const { return id_; }
  // Once only.
  asio::awaitable<skills::ActionResolution> Wait();

 private:
  struct State {
    std::optional<skills::ActionResolution> resolution;
    std::function<void(skills::ActionResolution)> resume;
  };
  std::shared_ptr<State> state_ = std::make_shared<State>();
  std::string id_;
};

// Whose stored credentials a conversation's runs use: the bare JID of a 1:1 chat,
// "room:JID" for a room, "api:NAME" for an API conversation.
std::string CredentialOwnerOf(const base::ConversationRef& ref);

// Runs `call` through the steps above. The result's content is what the model reads.
asio::awaitable<providers::ToolResult> RunToolCall(const ToolCallTurn& turn,
                                                   const providers::ToolCall& call);

}  // namespace herald::agent
