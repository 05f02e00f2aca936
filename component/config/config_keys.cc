#include "component/config/config_keys.h"

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "component/base/absl_string_view.h"
#include "component/config/key_declarations.h"

namespace herald::config {
namespace {

std::vector<ConfigKey> Declare() {
  std::vector<ConfigKey> keys;
  declare::DeclareServerKeys(keys);
  declare::DeclareAgentKeys(keys);
  declare::DeclareLogLlmAndMemoryKeys(keys);
  declare::DeclareRoomKeys(keys);
  declare::DeclareQuotaKeys(keys);
  declare::DeclareStorageKeys(keys);
  declare::DeclareSkillKeys(keys);
  declare::DeclareControlKeys(keys);
  declare::DeclareHttpKeys(keys);
  declare::DeclareTraceKeys(keys);
  declare::DeclareAttachmentKeys(keys);
  declare::DeclareVoiceKeys(keys);
  declare::DeclareWebhookKeys(keys);
  declare::DeclareScheduleKeys(keys);
  declare::DeclareAgentProtocolKeys(keys);
  return keys;
}

}  // namespace

std::string ConfigKey::TypeText() const {
  if (!type.empty()) return std::string(type);
  switch (kind) {
    case ValueKind::kString:
      return secret ? "string, secret" : "string";
    case ValueKind::kInteger:
      if (max == kNoMaximum) return absl::StrCat("integer ≥ ", min);
      return absl::StrCat("integer ", min, "–", max);
    case ValueKind::kNumber:
      return "number";
    case ValueKind::kBoolean:
      return "boolean";
    case ValueKind::kStringArray:
      return "array of strings";
    case ValueKind::kStringTable:
      return secret ? "table of strings, secret" : "table of strings";
    case ValueKind::kTable:
      return "table";
    case ValueKind::kTableArray:
      return "array of tables";
  }
  return "";
}

const std::vector<ConfigKey>& ConfigKeys() {
  static const std::vector<ConfigKey>* const kKeys = new std::vector<ConfigKey>(Declare());
  return *kKeys;
}

const ConfigKey* FindConfigKey(std::string_view path) {
  static const auto* const kByPath = [] {
    auto* by_path = new absl::flat_hash_map<std::string, const ConfigKey*>();
    for (const ConfigKey& key : ConfigKeys()) by_path->emplace(std::string(key.path), &key);
    return by_path;
  }();
  const auto found = kByPath->find(AbslView(path));
  return found == kByPath->end() ? nullptr : found->second;
}

}  // namespace herald::config
