#include "skills/manifest/manifest.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <system_error>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "component/base/absl_string_view.h"
#include "component/base/file_diagnostics.h"
#include "component/base/toml_binder.h"
#include "skills/json_schema.h"
#include "toml++/toml.h"

namespace herald::skills {
namespace {

using Json = nlohmann::json;

constexpr size_t kMaxNameLength = 64;
constexpr size_t kMaxDescriptionLength = 4096;
constexpr size_t kMaxCategoryLength = 32;
constexpr int kMaxTomlDepth = 32;
constexpr uintmax_t kMaxManifestBytes = 1 << 20;

constexpr std::string_view kFields[] = {"name",   "description",  "executable", "parameters",
                                        "tier",   "capabilities", "approval",   "category",
                                        "limits", "credentials"};
constexpr std::string_view kLimitFields[] = {"cpu_seconds",     "memory_mb",     "max_output_bytes",
                                             "timeout_seconds", "max_processes", "max_open_files",
                                             "max_file_mb"};
constexpr std::string_view kCredentialFields[] = {"name", "description", "where_to_get"};

bool IsSkillName(std::string_view name) {
  if (name.empty() || name.size() > kMaxNameLength) return false;
  for (char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  }
  return true;
}

bool IsEnvironmentName(std::string_view name) {
  if (name.empty() || name.size() > kMaxNameLength || absl::ascii_isdigit(name[0])) return false;
  for (char c : name) {
    if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) return false;
  }
  return name != "PATH" && name != "HOME" && name != "TMPDIR" && name != "LANG";
}

bool IsCategoryName(std::string_view name) {
  if (name.empty() || name.size() > kMaxCategoryLength || !absl::ascii_islower(name[0])) {
    return false;
  }
  for (char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-')) return false;
  }
  return true;
}

absl::StatusOr<Json> TomlToJson(const toml::node& node, const std::string& field, int depth) {
  if (depth > kMaxTomlDepth) {
    return absl::InvalidArgumentError(absl::StrCat(field, " is nested too deeply"));
  }
  if (const auto* table = node.as_table()) {
    Json object = Json::object();
    for (const auto& [key, value] : *table) {
      const std::string name(key.str());
      absl::StatusOr<Json> converted = TomlToJson(value, absl::StrCat(field, ".", name), depth + 1);
      if (!converted.ok()) return converted.status();
      object[name] = *std::move(converted);
    }
    return object;
  }
  if (const auto* array = node.as_array()) {
    Json list = Json::array();
    for (size_t i = 0; i < array->size(); ++i) {
      absl::StatusOr<Json> converted =
          TomlToJson(*array->get(i), absl::StrCat(field, "[", i, "]"), depth + 1);
      if (!converted.ok()) return converted.status();
      list.push_back(*std::move(converted));
    }
    return list;
  }
  if (const auto* text = node.as_string()) return Json(text->get());
  if (const auto* integer = node.as_integer()) return Json(integer->get());
  if (const auto* number = node.as_floating_point()) return Json(number->get());
  if (const auto* boolean = node.as_boolean()) return Json(boolean->get());
  return absl::InvalidArgumentError(
      absl::StrCat(field, " is a date or time, which JSON Schema cannot hold"));
}

class ManifestReader {
 public:
  ManifestReader(const toml::table& document, const std::string& path)
      : path_(path),
        diagnostics_(path),
        b_(diagnostics_),
        root_(base::TomlSection::Root(document)) {
    // A required field that is missing is reported at the document's first line.
    root_.line = document.source().begin.line;
  }

  ManifestParse Read() {
    SkillManifest manifest;
    manifest.source_path = path_;
    RejectUnknownFields(root_, kFields);
    ReadName(manifest);
    ReadDescription(manifest);
    ReadExecutable(manifest);
    ReadParameters(manifest);
    ReadTier(manifest);
    ReadCapabilities(manifest);
    ReadApproval(manifest);
    ReadLimits(manifest.policy.limits);
    ReadCredentials(manifest);

    ManifestParse parse;
    parse.name = name_;
    if (b_.ok()) {
      parse.manifest = std::move(manifest);
    } else {
      parse.problems = diagnostics_.Messages();
    }
    return parse;
  }

 private:
  // "unknown field 'limits.cpu' (known: ...); did you mean 'limits.cpu_seconds'?"
  template <size_t N>
  void RejectUnknownFields(const base::TomlSection& section, const std::string_view (&fields)[N]) {
    const std::vector<std::string_view> known(std::begin(fields), std::end(fields));
    const std::string prefix = section.path.empty() ? "" : absl::StrCat(section.path, ".");
    for (const base::UnknownKey& key : b_.UnknownKeys(section, known)) {
      std::string message = absl::StrCat(
          "unknown field '", prefix, AbslView(key.name.substr(0, 64)), "' (known: ",
          absl::StrJoin(known, ", ",
                        [](std::string* out, std::string_view name) { out->append(name); }),
          ")");
      if (!key.nearest.empty()) {
        absl::StrAppend(&message, "; did you mean '", prefix, AbslView(key.nearest), "'?");
      }
      b_.Error(key.node, std::move(message));
    }
  }

  void ReadName(SkillManifest& manifest) {
    std::optional<std::string> name = b_.RequiredString(root_, "name");
    if (!name.has_value()) return;
    if (!IsSkillName(*name)) {
      b_.MustBe(root_, "name", "1 to 64 characters of a-z, 0-9 and '_'");
      return;
    }
    name_ = *name;
    manifest.name = *std::move(name);
  }

  void ReadDescription(SkillManifest& manifest) {
    std::optional<std::string> description = b_.RequiredString(root_, "description");
    if (!description.has_value()) return;
    if (absl::StripAsciiWhitespace(*description).empty() ||
        description->size() > kMaxDescriptionLength) {
      b_.Error(root_, "description",
               "description must be text of 1 to 4096 bytes (the model reads it to decide "
               "when to call the skill)");
      return;
    }
    manifest.description = *std::move(description);
  }

  void ReadExecutable(SkillManifest& manifest) {
    std::optional<std::string> executable = b_.RequiredString(root_, "executable");
    if (!executable.has_value()) return;
    if (executable->empty() || executable->front() == '/' ||
        executable->find('\0') != std::string::npos) {
      b_.MustBe(root_, "executable", "a path relative to the manifest's folder");
      return;
    }
    namespace fs = std::filesystem;
    std::error_code error;
    const fs::path folder = fs::absolute(fs::path(path_), error).parent_path();
    const fs::path full = (folder / *executable).lexically_normal();
    const fs::file_status status = fs::status(full, error);
    const std::string shown = b_.Shown(b_.Node(root_, "executable"));
    if (!fs::exists(status)) {
      b_.Error(root_, "executable", absl::StrCat("executable ", shown, " does not exist"));
      return;
    }
    if (!fs::is_regular_file(status) || ::access(full.c_str(), X_OK) != 0) {
      b_.Error(root_, "executable",
               absl::StrCat("executable ", shown, " is not an executable file (chmod +x?)"));
      return;
    }
    manifest.executable = full.string();
  }

  void ReadParameters(SkillManifest& manifest) {
    const toml::node* node = b_.Node(root_, "parameters");
    if (node == nullptr) {
      manifest.parameters = {{"type", "object"}, {"properties", Json::object()}};
      return;
    }
    Json schema;
    if (const auto* text = node->as_string()) {
      schema = Json::parse(text->get(), nullptr, /*allow_exceptions=*/false);
      if (schema.is_discarded()) {
        b_.Error(node,
                 "parameters is a string but not JSON (write the schema as a TOML "
                 "table, or as a JSON object in a string)");
        return;
      }
    } else if (node->is_table()) {
      absl::StatusOr<Json> converted = TomlToJson(*node, "parameters", 0);
      if (!converted.ok()) {
        b_.Error(node, std::string(converted.status().message()));
        return;
      }
      schema = *std::move(converted);
    } else {
      b_.MustBe(root_, "parameters", "a table (a JSON Schema) or a string of JSON");
      return;
    }
    const auto type = schema.is_object() ? schema.find("type") : schema.end();
    if (type == schema.end() || *type != "object") {
      b_.Error(node, "parameters must be a JSON Schema with type = \"object\"");
      return;
    }
    if (absl::Status status = CheckSchema(schema); !status.ok()) {
      b_.Error(node, absl::StrCat("parameters: ", status.message()));
      return;
    }
    manifest.parameters = std::move(schema);
  }

  void ReadTier(SkillManifest& manifest) {
    std::string tier;
    if (!b_.String(root_, "tier", &tier)) return;
    if (tier != "heavy" && tier != "standard" && tier != "light" && tier != "vision") {
      b_.MustBe(root_, "tier", "\"heavy\", \"standard\", \"light\" or \"vision\"");
      return;
    }
    manifest.tier = std::move(tier);
  }

  void ReadCapabilities(SkillManifest& manifest) {
    for (const base::TomlBinder::StringElement& element : b_.StringList(root_, "capabilities")) {
      if (absl::Status status = AddCapability(element.value, manifest.policy); !status.ok()) {
        b_.ElementError(element, absl::StrCat(element.path, " ", status.message(), "; got ",
                                              b_.Shown(element.node)));
        continue;
      }
      manifest.capabilities.push_back(element.value);
    }
  }

  void ReadApproval(SkillManifest& manifest) {
    if (std::string approval; b_.String(root_, "approval", &approval)) {
      if (approval == "category") {
        manifest.approval = ApprovalPolicy::kCategory;
      } else if (approval == "never") {
        manifest.approval = ApprovalPolicy::kNever;
      } else if (approval == "always") {
        manifest.approval = ApprovalPolicy::kAlways;
      } else {
        b_.MustBe(root_, "approval", "\"category\", \"never\" or \"always\"");
      }
    }
    if (std::string category; b_.String(root_, "category", &category)) {
      if (!IsCategoryName(category)) {
        b_.MustBe(root_, "category",
                  "a word of a-z, 0-9, '_' and '-' (at most 32, starting with a letter)");
      } else {
        manifest.category = std::move(category);
      }
    }
  }

  void ReadLimits(sandbox::SandboxLimits& limits) {
    const base::TomlSection section = b_.Sub(root_, "limits");
    if (b_.Has(root_, "limits") && section.table == nullptr) {
      b_.MustBe(root_, "limits", "a table");
      return;
    }
    RejectUnknownFields(section, kLimitFields);
    b_.IntegerFromTo(section, "cpu_seconds", 1, sandbox::kMaxCpuSeconds, &limits.cpu_seconds);
    b_.IntegerFromTo(section, "memory_mb", 16, sandbox::kMaxMemoryMb, &limits.memory_mb);
    b_.IntegerFromTo(section, "max_output_bytes", 1024, sandbox::kMaxOutputBytes,
                     &limits.max_output_bytes);
    b_.IntegerFromTo(section, "timeout_seconds", 1, sandbox::kMaxTimeoutSeconds,
                     &limits.timeout_seconds);
    b_.IntegerFromTo(section, "max_processes", 1, sandbox::kMaxProcesses, &limits.max_processes);
    b_.IntegerFromTo(section, "max_open_files", 8, sandbox::kMaxOpenFiles, &limits.max_open_files);
    b_.IntegerFromTo(section, "max_file_mb", 0, sandbox::kMaxFileMb, &limits.max_file_mb);
  }

  void ReadCredentials(SkillManifest& manifest) {
    const toml::node* node = b_.Node(root_, "credentials");
    if (node == nullptr) return;
    const toml::array* array = node->as_array();
    if (array == nullptr || !array->is_array_of_tables()) {
      b_.Error(node,
               "credentials must be [[credentials]] tables with name, description and "
               "where_to_get");
      return;
    }
    for (size_t i = 0; i < array->size(); ++i) {
      const base::TomlSection section = b_.Element(root_, "credentials", i);
      RejectUnknownFields(section, kCredentialFields);
      std::optional<std::string> name = b_.RequiredString(section, "name");
      std::optional<std::string> description = b_.RequiredString(section, "description");
      std::optional<std::string> where = b_.RequiredString(section, "where_to_get");
      if (name.has_value() && !IsEnvironmentName(*name)) {
        b_.MustBe(section, "name",
                  "an environment variable name of A-Z, 0-9 and '_' (not PATH, HOME, TMPDIR or "
                  "LANG)");
        name.reset();
      }
      for (const CredentialRequirement& earlier : manifest.credentials) {
        if (name.has_value() && earlier.name == *name) {
          b_.Error(section, "name",
                   absl::StrCat(base::TomlBinder::Path(section, "name"), " '", *name,
                                "' is declared twice"));
          name.reset();
        }
      }
      for (auto* text : {&description, &where}) {
        if (text->has_value() && absl::StripAsciiWhitespace(**text).empty()) {
          const std::string_view key = text == &description ? "description" : "where_to_get";
          b_.Error(section.line,
                   absl::StrCat(base::TomlBinder::Path(section, key), " must not be empty"));
          text->reset();
        }
      }
      if (!name.has_value() || !description.has_value() || !where.has_value()) continue;
      manifest.credentials.push_back(
          {.name = *name, .description = *description, .where_to_get = *where});
    }
  }

  const std::string& path_;
  base::FileDiagnostics diagnostics_;
  base::TomlBinder b_;
  base::TomlSection root_;
  std::string name_;
};

}  // namespace

std::string_view ApprovalPolicyName(ApprovalPolicy policy) {
  switch (policy) {
    case ApprovalPolicy::kCategory:
      return "category";
    case ApprovalPolicy::kNever:
      return "never";
    case ApprovalPolicy::kAlways:
      return "always";
  }
  return "category";
}

absl::Status AddCapability(std::string_view text, sandbox::SandboxPolicy& policy) {
  constexpr const char* kForms =
      "must be \"network:HOST:PORT\", \"fs:read:/PATH\" or \"fs:write:/PATH\"";
  const std::string_view view = text;
  if (view.substr(0, 8) == "network:") {
    const std::string_view rest = view.substr(8);
    const size_t colon = rest.rfind(':');
    if (colon == std::string_view::npos || colon == 0) return absl::InvalidArgumentError(kForms);
    std::string_view host = rest.substr(0, colon);
    if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
      host = host.substr(1, host.size() - 2);  // [::1]
    }
    uint32_t port = 0;
    if (!absl::SimpleAtoi(AbslView(rest.substr(colon + 1)), &port) || port < 1 || port > 65535) {
      return absl::InvalidArgumentError("has a port that is not 1 to 65535");
    }
    for (char c : host) {
      if (static_cast<unsigned char>(c) <= 0x20 || c == '/' || c == '@') {
        return absl::InvalidArgumentError("has a host that is not a name or an address");
      }
    }
    if (host.empty() || host.size() > 253) {
      return absl::InvalidArgumentError("has a host that is not a name or an address");
    }
    policy.network.push_back({.host = std::string(host), .port = static_cast<uint16_t>(port)});
    return absl::OkStatus();
  }
  const bool read = view.substr(0, 8) == "fs:read:";
  const bool write = view.substr(0, 9) == "fs:write:";
  if (!read && !write) return absl::InvalidArgumentError(kForms);
  const std::string path(view.substr(read ? 8 : 9));
  if (path.empty() || path.front() != '/' || path.find('\0') != std::string::npos) {
    return absl::InvalidArgumentError("needs an absolute path");
  }
  std::string normal = std::filesystem::path(path).lexically_normal().string();
  if (normal.size() > 1 && normal.back() == '/') normal.pop_back();
  (read ? policy.read_paths : policy.write_paths).push_back(std::move(normal));
  return absl::OkStatus();
}

ManifestParse ParseManifest(std::string_view text, const std::string& path) {
  base::FileDiagnostics diagnostics(path);
  std::optional<toml::table> document = base::ParseToml(text, diagnostics, {.show_column = false});
  if (!document.has_value()) {
    ManifestParse parse;
    parse.problems = diagnostics.Messages();
    return parse;
  }
  return ManifestReader(*document, path).Read();
}

ManifestParse ReadManifest(const std::string& path) {
  std::error_code error;
  const uintmax_t size = std::filesystem::file_size(path, error);
  std::ifstream file(path, std::ios::binary);
  if (error || !file.is_open()) {
    ManifestParse parse;
    parse.problems.push_back(absl::StrCat(path, ": cannot be read"));
    return parse;
  }
  if (size > kMaxManifestBytes) {
    ManifestParse parse;
    parse.problems.push_back(absl::StrCat(path, ": larger than 1 MiB; a manifest is a few lines"));
    return parse;
  }
  std::ostringstream text;
  text << file.rdbuf();
  return ParseManifest(text.str(), path);
}

}  // namespace herald::skills
