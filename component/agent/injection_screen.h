// component/agent/injection_screen.h
//
// InjectionScreen looks at a user's message before the model does (A6) for the phrases of
// prompt-injection attempts: instructions to ignore or reveal the system prompt, role-play
// jailbreaks, fake chat-template or system markers. The text is normalised first (case,
// zero-width and control characters, runs of whitespace), so "IGNORE   previous\u200b
// instructions" is caught. What happens next is the operator's policy ([agent]
// injection_policy):
//
//   refuse  the message never reaches the model; the user gets a short refusal
//   flag    the model gets the message with a warning in its system prompt (default)
//   log     only a log line
//   off     no screening
//
//   InjectionScreen screen(config.agent);
//   ScreenResult r = screen.Check(body);   // r.suspicious, r.phrase
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "component/agent/agent_options.h"

namespace herald::agent {

enum class InjectionPolicy { kRefuse, kFlag, kLog, kOff };

struct ScreenResult {
  bool suspicious = false;
  std::string phrase;  // the rule that matched
};

class InjectionScreen {
 public:
  explicit InjectionScreen(const agent::AgentOptions& agent);

  ScreenResult Check(std::string_view text) const;
  InjectionPolicy policy() const { return policy_; }

  // Lower-cased, zero-width and control characters removed, whitespace runs folded to one
  // space. Exposed for tests.
  static std::string Normalise(std::string_view text);

 private:
  InjectionPolicy policy_;
  std::vector<std::string> phrases_;  // normalised
};

}  // namespace herald::agent
