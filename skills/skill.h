// skills/skill.h
//
// A Skill is a tool the model can call: a name, a description and a JSON Schema for its
// arguments (the ToolSpec the provider sends to the model), and an asynchronous Execute. The
// registry validates arguments against the schema before Execute is called, so a skill
// receives arguments of the declared shape. Builtins live in skills/builtin/; external
// skills (manifests, sandbox) and MCP tools (skills/mcp) implement the same interface.
//
//   class CurrentTimeSkill : public Skill { ... };
//   skill->Execute(arguments, context, [](absl::StatusOr<std::string> result) { ... });
#pragma once

#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "component/base/conversation_ref.h"
#include "nlohmann/json.hpp"
#include "providers/provider.h"

namespace herald::skills {

struct SkillContext {
  std::string conversation_id;         // for log lines
  base::ConversationRef conversation;  // whose memory the run may read
};

class Skill {
 public:
  using Done = std::function<void(absl::StatusOr<std::string>)>;

  virtual ~Skill() = default;

  virtual const providers::ToolSpec& spec() const = 0;

  // Where the skill comes from, for listings (SkillService.ListSkills): "builtin", "manifest",
  // "mcp:<server>".
  virtual std::string source() const { return "builtin"; }

  // Runs the skill. Called on the I/O loop; blocking work must go to the worker pool.
  // `done` runs exactly once, on the I/O loop, with the text the model will read, or an
  // error whose message the model may read too (never secrets or internal paths).
  virtual void Execute(const nlohmann::json& arguments, const SkillContext& context, Done done) = 0;
};

}  // namespace herald::skills
