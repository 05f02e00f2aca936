#include "skills/registry.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "component/base/absl_string_view.h"
#include "skills/json_schema.h"

namespace herald::skills {
namespace {

constexpr size_t kMaxNameLength = 64;

bool IsValidName(const std::string& name) {
  if (name.empty() || name.size() > kMaxNameLength) return false;
  for (char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  }
  return true;
}

// What Register and Replace require of a skill: a valid name and an object schema.
absl::Status CheckSkill(const Skill* skill) {
  if (skill == nullptr) return absl::InvalidArgumentError("no skill to register");
  const providers::ToolSpec& spec = skill->spec();
  if (!IsValidName(spec.name)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "skill name '", spec.name, "' must be 1 to 64 characters of a-z, 0-9 and '_'"));
  }
  const nlohmann::json& schema = spec.parameters;
  const auto type = schema.is_object() ? schema.find("type") : schema.end();
  if (!schema.is_object() || type == schema.end() || *type != "object") {
    return absl::InvalidArgumentError(absl::StrCat(
        "skill '", spec.name, "': parameters must be a schema of \"type\": \"object\""));
  }
  if (absl::Status status = CheckSchema(schema); !status.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("skill '", spec.name, "': ", status.message()));
  }
  return absl::OkStatus();
}

bool StartsWith(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

}  // namespace

absl::Status SkillRegistry::Register(std::unique_ptr<Skill> skill) {
  if (absl::Status status = CheckSkill(skill.get()); !status.ok()) return status;
  const providers::ToolSpec& spec = skill->spec();
  if (by_name_.contains(spec.name)) {
    return absl::AlreadyExistsError(absl::StrCat("skill '", spec.name, "' is already registered"));
  }
  by_name_.emplace(spec.name, skill.get());
  skills_.push_back(std::move(skill));
  return absl::OkStatus();
}

absl::Status SkillRegistry::Replace(std::unique_ptr<Skill> skill) {
  if (absl::Status status = CheckSkill(skill.get()); !status.ok()) return status;
  const std::string name = skill->spec().name;
  auto it = by_name_.find(name);
  if (it == by_name_.end()) {
    return absl::NotFoundError(absl::StrCat("unknown skill '", name, "'"));
  }
  for (std::unique_ptr<Skill>& slot : skills_) {
    if (slot.get() == it->second) {
      it->second = skill.get();
      slot = std::move(skill);
      break;
    }
  }
  return absl::OkStatus();
}

absl::Status SkillRegistry::Unregister(std::string_view name) {
  auto it = by_name_.find(AbslView(name));
  if (it == by_name_.end()) {
    return absl::NotFoundError(absl::StrCat("unknown skill '", AbslView(name), "'"));
  }
  Skill* skill = it->second;
  by_name_.erase(it);
  std::erase_if(skills_,
                [skill](const std::unique_ptr<Skill>& slot) { return slot.get() == skill; });
  return absl::OkStatus();
}

void SkillRegistry::ReserveNamespace(std::string prefix) {
  namespaces_.push_back(std::move(prefix));
}

absl::Status SkillRegistry::SetEnabled(const std::vector<std::string>& names) {
  absl::flat_hash_set<std::string> enabled;
  std::vector<std::string> prefixes;
  auto reserved = [this](std::string_view name) {
    for (const std::string& prefix : namespaces_) {
      if (name.size() > prefix.size() && StartsWith(name, prefix)) return true;
    }
    return false;
  };
  for (const std::string& name : names) {
    if (!name.empty() && name.back() == '*') {
      const std::string prefix = name.substr(0, name.size() - 1);
      if (std::find(namespaces_.begin(), namespaces_.end(), prefix) == namespaces_.end()) {
        return absl::NotFoundError(absl::StrCat(
            "'", name, "' names no MCP server (\"<server>__*\" enables a server's tools)"));
      }
      prefixes.push_back(prefix);
      continue;
    }
    if (!by_name_.contains(name) && !reserved(name)) {
      return absl::NotFoundError(absl::StrCat("unknown skill '", name, "'"));
    }
    enabled.insert(name);
  }
  enabled_ = std::move(enabled);
  enabled_prefixes_ = std::move(prefixes);
  return absl::OkStatus();
}

bool SkillRegistry::Enabled(std::string_view name) const {
  if (enabled_.contains(AbslView(name))) return true;
  for (const std::string& prefix : enabled_prefixes_) {
    if (StartsWith(name, prefix)) return true;
  }
  return false;
}

std::vector<providers::ToolSpec> SkillRegistry::EnabledTools() const {
  std::vector<providers::ToolSpec> tools;
  for (const std::unique_ptr<Skill>& skill : skills_) {
    if (Enabled(skill->spec().name)) tools.push_back(skill->spec());
  }
  return tools;
}

absl::StatusOr<Skill*> SkillRegistry::Check(std::string_view name,
                                            const nlohmann::json& arguments) const {
  // The name comes from the model: quote it back, but never at any length.
  const std::string shown(name.substr(0, kMaxNameLength));
  const auto it = by_name_.find(AbslView(name));
  if (it == by_name_.end()) {
    return absl::NotFoundError(absl::StrCat("unknown tool '", shown, "'"));
  }
  if (!Enabled(name)) {
    return absl::PermissionDeniedError(absl::StrCat("tool '", shown, "' is not enabled"));
  }
  if (absl::Status status = ValidateAgainstSchema(it->second->spec().parameters, arguments);
      !status.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("tool '", shown, "': ", status.message()));
  }
  return it->second;
}

std::vector<std::string> SkillRegistry::Names() const {
  std::vector<std::string> names;
  names.reserve(skills_.size());
  for (const std::unique_ptr<Skill>& skill : skills_) names.push_back(skill->spec().name);
  return names;
}

std::vector<const Skill*> SkillRegistry::All() const {
  std::vector<const Skill*> all;
  all.reserve(skills_.size());
  for (const std::unique_ptr<Skill>& skill : skills_) all.push_back(skill.get());
  return all;
}

bool SkillRegistry::IsEnabled(std::string_view name) const { return Enabled(name); }

}  // namespace herald::skills
