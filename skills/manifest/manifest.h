// skills/manifest/manifest.h
//
// A skill manifest (SPEC S2) is a TOML file that declares an external skill: what the model
// sees (name, description, JSON Schema parameters), what the sandbox grants it
// (capabilities, limits), how runs are approved, which secrets it needs, and the program
// that implements it. docs/skills.md is the reference; in short:
//
//   name = "word_count"
//   description = "Counts the words of a text."
//   executable = "word_count.py"          # relative to this file's folder
//   tier = "light"                        # optional: heavy | standard | light | vision
//   capabilities = ["network:api.example.org:443", "fs:read:/srv/corpus"]
//   approval = "category"                 # category (default) | never | always
//   category = "external"                 # default "external"
//   [parameters]                          # JSON Schema, as TOML (or parameters = '{...}')
//   type = "object"
//   required = ["text"]
//   properties.text = { type = "string", maxLength = 100000 }
//   [limits]                              # each optional; sandbox_policy.h has the defaults
//   timeout_seconds = 5
//   [[credentials]]
//   name = "EXAMPLE_API_KEY"              # reaches the program as this environment variable
//   description = "the key of your example.org account"
//   where_to_get = "https://example.org/settings/keys"
//
// Parsing reports every problem, each naming the file, the line where known, and the field
// ("skills.d/wc.toml:9: limits.timeout_seconds must be an integer from 1 to 3600; got 0"), so
// that one bad manifest disables only its own skill.
//
//   ManifestParse parse = ReadManifest("skills.d/word_count.toml");
//   if (parse.manifest) { ... } else for (const std::string& p : parse.problems) LOG(ERROR) << p;
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "nlohmann/json.hpp"
#include "skills/sandbox/sandbox_policy.h"
#include "skills/skill.h"

namespace herald::skills {

// Who must agree before a run starts. kCategory: whatever the operator's policy for the
// skill's category says (skills/approvals decides); kNever: runs without asking; kAlways:
// every run is confirmed.
enum class ApprovalPolicy { kCategory, kNever, kAlways };

// A secret the skill needs; it reaches the program as the environment variable `name`.
struct SkillManifest {
  std::string source_path;  // the manifest file, as it was named
  std::string name;
  std::string description;
  nlohmann::json parameters;              // a JSON Schema of "type": "object"
  std::string tier;                       // "" when not set
  std::vector<std::string> capabilities;  // as written, for listings
  ApprovalPolicy approval = ApprovalPolicy::kCategory;
  std::string category = "external";
  std::vector<CredentialRequirement> credentials;
  std::string executable;         // absolute
  sandbox::SandboxPolicy policy;  // limits and the grants of the capabilities
};

struct ManifestParse {
  std::optional<SkillManifest> manifest;  // set when there is no problem
  std::string name;                       // the name field when it could be read, else ""
  std::vector<std::string> problems;
};

// Parses manifest text; `path` names it in messages and anchors the executable's path.
// Checks that the executable exists and is executable.
ManifestParse ParseManifest(std::string_view text, const std::string& path);

// Reads and parses the file at `path`.
ManifestParse ReadManifest(const std::string& path);

std::string_view ApprovalPolicyName(ApprovalPolicy policy);

// Adds what one capability string grants ("network:HOST:PORT", "fs:read:/PATH",
// "fs:write:/PATH") to `policy`; InvalidArgument saying what is wrong otherwise ("has a port
// that is not 1 to 65535"). MCP servers' capabilities ([[skills.mcp]]) use it too.
absl::Status AddCapability(std::string_view text, sandbox::SandboxPolicy& policy);

}  // namespace herald::skills
