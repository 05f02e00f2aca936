// skills/external/external_skills.h
//
// Loads the manifests of a skills folder ([skills] path) into the registry as ExternalSkills.
// A manifest is any "*.toml" file in the folder, or "skill.toml" in a folder of its own inside
// it (for a skill that ships more files). A bad manifest disables only its own skill: its
// problems are returned, one line each naming the file and the field, for the log and for
// AdminService.GetStatus; every other manifest still loads. A folder that does not exist holds
// no skills (that is not an error). When the runner refuses every run (a layer [skills.sandbox]
// require names is missing: SandboxRunner::available()), every manifest is disabled, each
// with a problem.
//
//   ExternalSkillsLoad load = LoadExternalSkills(config.skills.path, registry, runner);
//   for (const std::string& problem : load.problems) LOG(ERROR) << problem;
//   registry.SetEnabled(WithoutDisabled(config.skills.enabled, load));
#pragma once

#include <string>
#include <vector>

#include "skills/registry.h"
#include "skills/sandbox/sandbox_runner.h"

namespace herald::skills {

struct ExternalSkillsLoad {
  std::vector<std::string> loaded;    // names registered, in file-name order
  std::vector<std::string> disabled;  // names of refused manifests (where the name was readable)
  std::vector<std::string> problems;  // "skills.d/x.toml:7: limits.cpu_seconds must be ..."
};

// Blocking (reads files): call at start-up. `runner` must outlive the registry's skills.
ExternalSkillsLoad LoadExternalSkills(const std::string& folder, SkillRegistry& registry,
                                      sandbox::SandboxRunner& runner);

// `enabled` without the skills the load disabled, so that a broken manifest does not stop
// Herald from starting (SetEnabled refuses unknown names).
std::vector<std::string> WithoutDisabled(const std::vector<std::string>& enabled,
                                         const ExternalSkillsLoad& load);

}  // namespace herald::skills
