#include "skills/external/external_skills.h"

#include <algorithm>
#include <filesystem>
#include <memory>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "skills/external/external_skill.h"
#include "skills/manifest/manifest.h"

namespace herald::skills {
namespace {

// The manifest files of `folder`, sorted by path.
std::vector<std::string> ManifestPaths(const std::filesystem::path& folder) {
  namespace fs = std::filesystem;
  std::vector<std::string> paths;
  std::error_code error;
  for (fs::directory_iterator it(folder, error), end; !error && it != end; it.increment(error)) {
    const fs::path& path = it->path();
    if (path.filename().string().starts_with(".")) continue;
    if (it->is_regular_file(error) && path.extension() == ".toml") {
      paths.push_back(path.string());
    } else if (it->is_directory(error) && fs::is_regular_file(path / "skill.toml", error)) {
      paths.push_back((path / "skill.toml").string());
    }
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

}  // namespace

ExternalSkillsLoad LoadExternalSkills(const std::string& folder, SkillRegistry& registry,
                                      sandbox::SandboxRunner& runner) {
  namespace fs = std::filesystem;
  ExternalSkillsLoad load;
  std::error_code error;
  const fs::file_status status = fs::status(folder, error);
  if (!fs::exists(status)) return load;
  if (!fs::is_directory(status)) {
    load.problems.push_back(absl::StrCat(folder, ": [skills] path is not a folder"));
    return load;
  }
  for (const std::string& path : ManifestPaths(folder)) {
    ManifestParse parse = ReadManifest(path);
    if (!parse.manifest.has_value()) {
      if (!parse.name.empty()) load.disabled.push_back(parse.name);
      load.problems.insert(load.problems.end(), parse.problems.begin(), parse.problems.end());
      continue;
    }
    const std::string name = parse.manifest->name;
    if (!runner.available().ok()) {
      // The runner would refuse every run: the skill is disabled, not offered to fail.
      load.disabled.push_back(name);
      load.problems.push_back(absl::StrCat(
          path, ": skill '", name,
          "' is disabled: the skill sandbox lacks a layer [skills.sandbox] require names"));
      continue;
    }
    absl::Status registered =
        registry.Register(std::make_unique<ExternalSkill>(*std::move(parse.manifest), runner));
    if (!registered.ok()) {
      // Most likely a name a builtin or an earlier manifest already has: that one stays.
      load.problems.push_back(absl::StrCat(path, ": name: ", registered.message()));
      continue;
    }
    load.loaded.push_back(name);
  }
  return load;
}

std::vector<std::string> WithoutDisabled(const std::vector<std::string>& enabled,
                                         const ExternalSkillsLoad& load) {
  std::vector<std::string> kept;
  for (const std::string& name : enabled) {
    if (std::find(load.disabled.begin(), load.disabled.end(), name) == load.disabled.end()) {
      kept.push_back(name);
    }
  }
  return kept;
}

}  // namespace herald::skills
