// skills/registry.h
//
// SkillRegistry holds every skill Herald knows and decides which reach the model: only
// those named in [skills] enabled (S1). Before a call runs, Check confirms that the tool
// exists, is enabled, and that its arguments satisfy its JSON Schema (json_schema.h), with a
// message the model can act on when they do not.
//
//   SkillRegistry registry;
//   registry.Register(std::make_unique<CurrentTimeSkill>());
//   registry.SetEnabled({"current_time"});
//   std::vector<providers::ToolSpec> tools = registry.EnabledTools();
//   absl::StatusOr<Skill*> skill = registry.Check("current_time", arguments);
//
// Tools that come and go at run time (an MCP server's, skills/mcp) live under a namespace
// ("files__"): ReserveNamespace lets [skills] enabled name them before they are registered,
// exactly ("files__read") or all at once ("files__*"); Replace and Unregister follow the
// server's list. A skill handed out by Check may be unregistered afterwards: skills whose
// calls outlive them must not touch `this` in their callbacks.
//
//   registry.ReserveNamespace("files__");
//   registry.SetEnabled({"current_time", "files__*"});
//   registry.Register(std::make_unique<McpToolSkill>(...));   // "files__read": enabled
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "providers/provider.h"
#include "skills/skill.h"

namespace herald::skills {

class SkillRegistry {
 public:
  // Fails on a duplicate or malformed name (names are [a-z0-9_]{1,64}) or a schema that is
  // not an object schema.
  absl::Status Register(std::unique_ptr<Skill> skill);

  // Replaces the skill of the same name (keeping its place and whether it is enabled), with
  // Register's checks. NotFound when there is none.
  absl::Status Replace(std::unique_ptr<Skill> skill);

  // Forgets a skill. NotFound when there is none.
  absl::Status Unregister(std::string_view name);

  // Names starting with `prefix` (a valid name followed by "__") may be enabled before they
  // exist, and "<prefix>*" enables every one of them, now and later.
  void ReserveNamespace(std::string prefix);

  // Fails naming the first unknown skill (a name neither registered nor in a reserved
  // namespace, or a "*" pattern of no reserved namespace); the enabled set is unchanged then.
  absl::Status SetEnabled(const std::vector<std::string>& names);

  // The tools the model is offered, in registration order.
  std::vector<providers::ToolSpec> EnabledTools() const;

  // The skill to run for a call of `name` with `arguments`: NotFound (unknown),
  // PermissionDenied (not enabled), InvalidArgument (arguments do not fit the schema).
  absl::StatusOr<Skill*> Check(std::string_view name, const nlohmann::json& arguments) const;

  std::vector<std::string> Names() const;

  // Every registered skill in registration order (SkillService.ListSkills), and whether a
  // name is in the enabled set.
  std::vector<const Skill*> All() const;
  bool IsEnabled(std::string_view name) const;

 private:
  bool Enabled(std::string_view name) const;

  std::vector<std::unique_ptr<Skill>> skills_;
  absl::flat_hash_map<std::string, Skill*> by_name_;
  absl::flat_hash_set<std::string> enabled_;
  std::vector<std::string> namespaces_;        // reserved prefixes ("files__")
  std::vector<std::string> enabled_prefixes_;  // from "files__*"
};

}  // namespace herald::skills
