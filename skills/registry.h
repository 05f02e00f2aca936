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

  // Fails naming the first unknown skill; the enabled set is unchanged then.
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
  std::vector<std::unique_ptr<Skill>> skills_;
  absl::flat_hash_map<std::string, Skill*> by_name_;
  absl::flat_hash_set<std::string> enabled_;
};

}  // namespace herald::skills
