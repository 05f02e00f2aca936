// component/agent/system_prompt.h
//
// The system prompt of a turn: who the agent is (A5: the conversation's own identity.md →
// the identity chosen with /identity → the global identity.md → the built-in one), a room's
// instructions.md, and, when the injection screen flagged the message, a warning. Loading
// reads memory files, so it runs on the worker pool.
//
// The carried-over context.md is not system text: it was summarised from past messages
// (in a room, from any occupant's), so it goes to the model as quoted, untrusted notes at
// the head of the first user message (CarriedOverNotes), and the system prompt says so.
//
//   absl::StatusOr<PromptParts> parts = LoadPromptParts(store, ref);   // on a worker
//   std::string system = BuildSystemPrompt(*parts, options);
//   first_user_text = CarriedOverNotes(parts->context) + "\n\n" + first_user_text;
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "component/memory/memory_store.h"

namespace herald::agent {

struct PromptParts {
  std::string identity;         // the first identity of the chain that exists
  std::string identity_source;  // "own identity.md", "identity 'pirate'", "global", "built-in"
  std::optional<std::string> room_instructions;
  std::string context;
};

struct PromptOptions {
  std::string agent_name;
  bool in_room = false;
  std::string room;
  bool flagged_injection = false;
  absl::Time now;
};

// Reads the identity chain, room instructions and context of `ref`. Blocking.
absl::StatusOr<PromptParts> LoadPromptParts(const memory::MemoryStore& store,
                                            const base::ConversationRef& ref,
                                            const std::string& agent_name);

std::string BuildSystemPrompt(const PromptParts& parts, const PromptOptions& options);

// `context` as a block of quoted notes ("> " before every line) under a heading that says
// they are data, not instructions.
std::string CarriedOverNotes(std::string_view context);

// The identity used when no identity.md exists anywhere.
std::string BuiltInIdentity(const std::string& agent_name);

}  // namespace herald::agent
