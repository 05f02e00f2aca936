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
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "component/base/conversation_ref.h"
#include "nlohmann/json.hpp"
#include "providers/provider.h"
#include "skills/file_outbox.h"

namespace herald::skills {

// The message a run answers, as memory recorded it just before the run.
struct AnsweredMessage {
  absl::Time time;
  std::string author;  // a bare JID, or a nick in a room
  std::string text;
};

struct SkillContext {
  std::string conversation_id;         // for log lines
  base::ConversationRef conversation;  // whose memory the run may read
  // What the run answers, when it answers a message: a memory search leaves it out of its
  // results (a question is not its own answer).
  std::optional<AnsweredMessage> answering;
  // The person the run answers may add to the shared knowledge folder ([memory]
  // shared_writers, in a 1:1 chat): memory_save's "shared" scope.
  bool may_write_shared_memory = false;
  // Set when another agent started the run (docs/agent-protocol.md): how many agents the
  // request passed through, and when its requester stops waiting. A run that asks yet another
  // agent (the delegate skill) carries both along.
  int hops = 0;
  absl::Time deadline = absl::InfiniteFuture();
  // Where the run's tools put files for the person it answers (file_outbox.h); null when the
  // run cannot send files (a program's run, a delegated one).
  std::shared_ptr<FileOutbox> files;
};

// A secret a skill needs (S8): asked for by name when the run's owner has not stored it.
struct CredentialRequirement {
  std::string name;
  std::string description;   // what it is for, shown to the user who is asked for it
  std::string where_to_get;  // how to obtain one
};

class Skill {
 public:
  using Done = std::function<void(absl::StatusOr<std::string>)>;

  virtual ~Skill() = default;

  virtual const providers::ToolSpec& spec() const = 0;

  // Where the skill comes from, for listings (SkillService.ListSkills): "builtin", "manifest",
  // "mcp:<server>".
  virtual std::string source() const { return "builtin"; }
  // What the approval rules match ([skills.approvals] categories): "builtin", "mcp", a
  // manifest's or a registry tool's own category.
  virtual std::string category() const { return "builtin"; }

  // Runs the skill. Called on the I/O loop; blocking work must go to the worker pool.
  // `done` runs exactly once, on the I/O loop, with the text the model will read, or an
  // error whose message the model may read too (never secrets or internal paths).
  virtual void Execute(const nlohmann::json& arguments, const SkillContext& context, Done done) = 0;

  // The secrets the skill needs (S8). A run asks for the missing ones before it runs, then
  // calls ExecuteWithSecrets instead of Execute; none by default.
  virtual std::vector<CredentialRequirement> credentials() const { return {}; }
  // Runs with the secrets credentials() named (NAME → value). Whatever the skill returns has
  // them redacted by the caller before the model reads it.
  virtual void ExecuteWithSecrets(const nlohmann::json& arguments, const SkillContext& context,
                                  std::map<std::string, std::string> secrets, Done done) {
    (void)secrets;
    Execute(arguments, context, std::move(done));
  }
};

}  // namespace herald::skills
