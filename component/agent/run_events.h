// component/agent/run_events.h
//
// What one turn of a conversation reports while it runs, for a caller that wants to follow
// it: SessionService.Converse streams these to a program (C3). The sink is called on the I/O
// loop, in order; the last event of a turn is always kCompleted or kFailed, exactly once.
//
//   agent.Converse("nightly", "summarise the day", [](const RunEvent& event) {
//     if (event.kind == RunEvent::Kind::kTextDelta) std::cout << event.text;
//   });
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/time/time.h"

namespace herald::agent {

struct RunEvent {
  enum class Kind {
    kStarted,
    kTextDelta,       // text: a piece of the answer as the model streams it
    kToolStarted,     // call_id, tool, arguments_json
    kToolCompleted,   // call_id, tool, text (the output the model reads)
    kToolFailed,      // call_id, tool, text (the error the model reads)
    kRequiresAction,  // action_id, action, text (what is asked), tool, credential_names
    kPlanProposed,    // action_id (ChoosePlan takes it), text (the plans as a person reads
                      // them), arguments_json (the plans as JSON: plan.h)
    kStepStarted,     // step, text (what the step does)
    kStepCompleted,   // step, text (its result)
    kStepFailed,      // step, text (why)
    kCompleted,       // text (the whole answer), model, tokens, tool_rounds
    kFailed,          // failure, text (a message safe to show)
  };
  enum class Failure { kNone, kProvider, kLimit, kCancelled, kInternal, kRefused };
  enum class Action { kNone, kApproval, kCredentials, kPlanChoice };

  Kind kind = Kind::kStarted;
  absl::Time time;
  std::string run_id;
  std::string text;
  std::string call_id;
  std::string tool;
  std::string arguments_json;
  std::string model;
  int64_t input_tokens = 0;
  int64_t output_tokens = 0;
  int tool_rounds = 0;
  Failure failure = Failure::kNone;
  // kRequiresAction: what the run waits for (SkillService.Approve / Deny / ProvideCredentials).
  std::string action_id;
  Action action = Action::kNone;
  std::vector<std::string> credential_names;  // kCredentials: the missing secrets' names
  // The plan step an event belongs to (1-based; tool events of a plan's step carry it too).
  int step = 0;
};

using RunSink = std::function<void(const RunEvent& event)>;

}  // namespace herald::agent
