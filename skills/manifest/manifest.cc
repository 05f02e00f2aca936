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
#include "component/base/edit_distance.h"
#include "component/base/file_diagnostics.h"
#include "skills/json_schema.h"
#include "toml++/toml.h"

namespace herald::skills {
namespace {

using Json = nlohmann::json;

constexpr size_t kMaxNameLength = 64;
constexpr size_t kMaxDescriptionLength = 4096;
constexpr size_t kMaxCategoryLength = 32;
constexpr size_t kMaxShownBytes = 60;
constexpr int kMaxTomlDepth = 32;
constexpr uintmax_t kMaxManifestBytes = 1 << 20;

const std::vector<std::string>& KnownFields() {
  static const auto* fields = new std::vector<std::string>{
      "name",         "description", "executable", "parameters", "tier",
      "capabilities", "approval",    "category",   "limits",     "credentials"};
  return *fields;
}

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

// A value from the file, quoted back at bounded length.
std::string Shown(const toml::node& node) {
  std::string shown;
  if (const auto* text = node.as_string()) {
    shown = absl::StrCat("\"", text->get(), "\"");
  } else if (const auto* integer = node.as_integer()) {
    shown = absl::StrCat(integer->get());
  } else if (const auto* number = node.as_floating_point()) {
    shown = absl::StrCat(number->get());
  } else if (const auto* boolean = node.as_boolean()) {
    shown = boolean->get() ? "true" : "false";
  } else if (node.is_table()) {
    shown = "a table";
  } else if (node.is_array()) {
    shown = "an array";
  } else {
    shown = "a date or time";
  }
  if (shown.size() > kMaxShownBytes) {
    size_t cut = kMaxShownBytes;
    while (cut > 0 && (static_cast<unsigned char>(shown[cut]) & 0xC0) == 0x80) --cut;
    shown = shown.substr(0, cut) + "\xE2\x80\xA6";
  }
  return shown;
}

// "unknown field 'NAME' (known: ...)", and the known field it most likely meant.
std::string UnknownField(std::string_view prefix, std::string_view name,
                         const std::vector<std::string>& known) {
  std::string message =
      absl::StrCat("unknown field '", AbslView(prefix), AbslView(name.substr(0, 64)),
                   "' (known: ", absl::StrJoin(known, ", "), ")");
  const std::vector<std::string_view> names(known.begin(), known.end());
  if (std::string_view nearest = base::NearestName(name, names); !nearest.empty()) {
    absl::StrAppend(&message, "; did you mean '", AbslView(prefix), AbslView(nearest), "'?");
  }
  return message;
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
  ManifestReader(const toml::table& root, const std::string& path)
      : root_(root), path_(path), diagnostics_(path) {}

  ManifestParse Read() {
    SkillManifest manifest;
    manifest.source_path = path_;
    for (const auto& [key, value] : root_) {
      const std::string_view name = key.str();
      bool known = false;
      for (const std::string& field : KnownFields()) known = known || field == name;
      if (!known) Problem(&value, UnknownField("", name, KnownFields()));
    }
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
    if (diagnostics_.empty()) {
      parse.manifest = std::move(manifest);
    } else {
      parse.problems = diagnostics_.Messages();
    }
    return parse;
  }

 private:
  // A problem at `node`'s line (or with no line).
  void Problem(const toml::node* node, std::string message) {
    diagnostics_.Add(node != nullptr ? node->source().begin.line : 0, std::move(message));
  }

  // The string at `key` of `table`; a problem when it has another type, or is missing and
  // `required`.
  std::optional<std::string> String(const toml::table& table, std::string_view key,
                                    const std::string& field, bool required) {
    const toml::node* node = table.get(key);
    if (node == nullptr) {
      if (required) Problem(&table, absl::StrCat(field, " is required"));
      return std::nullopt;
    }
    if (!node->is_string()) {
      Problem(node, absl::StrCat(field, " must be a string; got ", Shown(*node)));
      return std::nullopt;
    }
    return node->as_string()->get();
  }

  void ReadName(SkillManifest& manifest) {
    std::optional<std::string> name = String(root_, "name", "name", true);
    if (!name.has_value()) return;
    if (!IsSkillName(*name)) {
      Problem(root_.get("name"),
              absl::StrCat("name must be 1 to 64 characters of a-z, 0-9 and '_'; got ",
                           Shown(*root_.get("name"))));
      return;
    }
    name_ = *name;
    manifest.name = *std::move(name);
  }

  void ReadDescription(SkillManifest& manifest) {
    std::optional<std::string> description = String(root_, "description", "description", true);
    if (!description.has_value()) return;
    if (absl::StripAsciiWhitespace(*description).empty() ||
        description->size() > kMaxDescriptionLength) {
      Problem(root_.get("description"),
              "description must be text of 1 to 4096 bytes (the model reads it to decide "
              "when to call the skill)");
      return;
    }
    manifest.description = *std::move(description);
  }

  void ReadExecutable(SkillManifest& manifest) {
    std::optional<std::string> executable = String(root_, "executable", "executable", true);
    if (!executable.has_value()) return;
    const toml::node* node = root_.get("executable");
    if (executable->empty() || executable->front() == '/' ||
        executable->find('\0') != std::string::npos) {
      Problem(node, absl::StrCat("executable must be a path relative to the manifest's "
                                 "folder; got ",
                                 Shown(*node)));
      return;
    }
    namespace fs = std::filesystem;
    std::error_code error;
    const fs::path folder = fs::absolute(fs::path(path_), error).parent_path();
    const fs::path full = (folder / *executable).lexically_normal();
    const fs::file_status status = fs::status(full, error);
    if (!fs::exists(status)) {
      Problem(node, absl::StrCat("executable ", Shown(*node), " does not exist"));
      return;
    }
    if (!fs::is_regular_file(status) || ::access(full.c_str(), X_OK) != 0) {
      Problem(node,
              absl::StrCat("executable ", Shown(*node), " is not an executable file (chmod +x?)"));
      return;
    }
    manifest.executable = full.string();
  }

  void ReadParameters(SkillManifest& manifest) {
    const toml::node* node = root_.get("parameters");
    if (node == nullptr) {
      manifest.parameters = {{"type", "object"}, {"properties", Json::object()}};
      return;
    }
    Json schema;
    if (const auto* text = node->as_string()) {
      schema = Json::parse(text->get(), nullptr, /*allow_exceptions=*/false);
      if (schema.is_discarded()) {
        Problem(node,
                "parameters is a string but not JSON (write the schema as a TOML "
                "table, or as a JSON object in a string)");
        return;
      }
    } else if (node->is_table()) {
      absl::StatusOr<Json> converted = TomlToJson(*node, "parameters", 0);
      if (!converted.ok()) {
        Problem(node, std::string(converted.status().message()));
        return;
      }
      schema = *std::move(converted);
    } else {
      Problem(node, absl::StrCat("parameters must be a table (a JSON Schema) or a string "
                                 "of JSON; got ",
                                 Shown(*node)));
      return;
    }
    const auto type = schema.is_object() ? schema.find("type") : schema.end();
    if (type == schema.end() || *type != "object") {
      Problem(node, "parameters must be a JSON Schema with type = \"object\"");
      return;
    }
    if (absl::Status status = CheckSchema(schema); !status.ok()) {
      Problem(node, absl::StrCat("parameters: ", status.message()));
      return;
    }
    manifest.parameters = std::move(schema);
  }

  void ReadTier(SkillManifest& manifest) {
    std::optional<std::string> tier = String(root_, "tier", "tier", false);
    if (!tier.has_value()) return;
    if (*tier != "heavy" && *tier != "standard" && *tier != "light" && *tier != "vision") {
      Problem(root_.get("tier"),
              absl::StrCat("tier must be \"heavy\", \"standard\", \"light\" or \"vision\"; "
                           "got ",
                           Shown(*root_.get("tier"))));
      return;
    }
    manifest.tier = *std::move(tier);
  }

  void ReadCapabilities(SkillManifest& manifest) {
    const toml::node* node = root_.get("capabilities");
    if (node == nullptr) return;
    const toml::array* array = node->as_array();
    if (array == nullptr) {
      Problem(node, absl::StrCat("capabilities must be an array of strings; got ", Shown(*node)));
      return;
    }
    for (size_t i = 0; i < array->size(); ++i) {
      const toml::node& element = *array->get(i);
      const std::string field = absl::StrCat("capabilities[", i, "]");
      if (!element.is_string()) {
        Problem(&element, absl::StrCat(field, " must be a string; got ", Shown(element)));
        continue;
      }
      const std::string& text = element.as_string()->get();
      if (absl::Status status = AddCapability(text, manifest.policy); !status.ok()) {
        Problem(&element, absl::StrCat(field, " ", status.message(), "; got ", Shown(element)));
        continue;
      }
      manifest.capabilities.push_back(text);
    }
  }

  void ReadApproval(SkillManifest& manifest) {
    if (std::optional<std::string> approval = String(root_, "approval", "approval", false)) {
      if (*approval == "category") {
        manifest.approval = ApprovalPolicy::kCategory;
      } else if (*approval == "never") {
        manifest.approval = ApprovalPolicy::kNever;
      } else if (*approval == "always") {
        manifest.approval = ApprovalPolicy::kAlways;
      } else {
        Problem(root_.get("approval"),
                absl::StrCat("approval must be \"category\", \"never\" or \"always\"; got ",
                             Shown(*root_.get("approval"))));
      }
    }
    if (std::optional<std::string> category = String(root_, "category", "category", false)) {
      if (!IsCategoryName(*category)) {
        Problem(root_.get("category"),
                absl::StrCat("category must be a word of a-z, 0-9, '_' and '-' (at most "
                             "32, starting with a letter); got ",
                             Shown(*root_.get("category"))));
      } else {
        manifest.category = *std::move(category);
      }
    }
  }

  template <typename T>
  void Limit(const toml::table& limits, std::string_view key, int64_t min, int64_t max, T& out) {
    const toml::node* node = limits.get(key);
    if (node == nullptr) return;
    const std::string field = absl::StrCat("limits.", AbslView(key));
    const auto* integer = node->as_integer();
    if (integer == nullptr || integer->get() < min || integer->get() > max) {
      Problem(node, absl::StrCat(field, " must be an integer from ", min, " to ", max, "; got ",
                                 Shown(*node)));
      return;
    }
    out = static_cast<T>(integer->get());
  }

  void ReadLimits(sandbox::SandboxLimits& limits) {
    const toml::node* node = root_.get("limits");
    if (node == nullptr) return;
    const toml::table* table = node->as_table();
    if (table == nullptr) {
      Problem(node, absl::StrCat("limits must be a table; got ", Shown(*node)));
      return;
    }
    static const auto* const kKeys = new std::vector<std::string>{
        "cpu_seconds",   "memory_mb",      "max_output_bytes", "timeout_seconds",
        "max_processes", "max_open_files", "max_file_mb"};
    for (const auto& [key, value] : *table) {
      bool known = false;
      for (const std::string& name : *kKeys) known = known || name == key.str();
      if (!known) Problem(&value, UnknownField("limits.", key.str(), *kKeys));
    }
    Limit(*table, "cpu_seconds", 1, sandbox::kMaxCpuSeconds, limits.cpu_seconds);
    Limit(*table, "memory_mb", 16, sandbox::kMaxMemoryMb, limits.memory_mb);
    Limit(*table, "max_output_bytes", 1024, sandbox::kMaxOutputBytes, limits.max_output_bytes);
    Limit(*table, "timeout_seconds", 1, sandbox::kMaxTimeoutSeconds, limits.timeout_seconds);
    Limit(*table, "max_processes", 1, sandbox::kMaxProcesses, limits.max_processes);
    Limit(*table, "max_open_files", 8, sandbox::kMaxOpenFiles, limits.max_open_files);
    Limit(*table, "max_file_mb", 0, sandbox::kMaxFileMb, limits.max_file_mb);
  }

  void ReadCredentials(SkillManifest& manifest) {
    const toml::node* node = root_.get("credentials");
    if (node == nullptr) return;
    const toml::array* array = node->as_array();
    if (array == nullptr || !array->is_array_of_tables()) {
      Problem(node,
              "credentials must be [[credentials]] tables with name, description and "
              "where_to_get");
      return;
    }
    for (size_t i = 0; i < array->size(); ++i) {
      const toml::table& table = *array->get(i)->as_table();
      const std::string field = absl::StrCat("credentials[", i, "]");
      for (const auto& [key, value] : table) {
        if (key.str() != "name" && key.str() != "description" && key.str() != "where_to_get") {
          static const auto* const kFields =
              new std::vector<std::string>{"name", "description", "where_to_get"};
          Problem(&value, UnknownField(field + ".", key.str(), *kFields));
        }
      }
      CredentialRequirement credential;
      std::optional<std::string> name = String(table, "name", field + ".name", true);
      std::optional<std::string> description =
          String(table, "description", field + ".description", true);
      std::optional<std::string> where =
          String(table, "where_to_get", field + ".where_to_get", true);
      if (name.has_value() && !IsEnvironmentName(*name)) {
        Problem(table.get("name"),
                absl::StrCat(field,
                             ".name must be an environment variable name of A-Z, 0-9 and "
                             "'_' (not PATH, HOME, TMPDIR or LANG); got ",
                             Shown(*table.get("name"))));
        name.reset();
      }
      for (const CredentialRequirement& earlier : manifest.credentials) {
        if (name.has_value() && earlier.name == *name) {
          Problem(table.get("name"), absl::StrCat(field, ".name '", *name, "' is declared twice"));
          name.reset();
        }
      }
      for (auto* text : {&description, &where}) {
        if (text->has_value() && absl::StripAsciiWhitespace(**text).empty()) {
          Problem(&table,
                  absl::StrCat(field, text == &description ? ".description" : ".where_to_get",
                               " must not be empty"));
          text->reset();
        }
      }
      if (!name.has_value() || !description.has_value() || !where.has_value()) continue;
      manifest.credentials.push_back(
          {.name = *name, .description = *description, .where_to_get = *where});
    }
  }

  const toml::table& root_;
  const std::string& path_;
  base::FileDiagnostics diagnostics_;
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
  toml::table root;
  try {
    root = toml::parse(text, std::string_view(path));
  } catch (const toml::parse_error& error) {
    base::FileDiagnostics diagnostics(path);
    diagnostics.Add(error.source().begin.line,
                    absl::StrCat("not valid TOML: ", base::OneLine(error.description())));
    ManifestParse parse;
    parse.problems = diagnostics.Messages();
    return parse;
  }
  return ManifestReader(root, path).Read();
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
