// component/config/key_declarations.h
//
// How the config's keys are declared (config_keys.h), for the keys_*.cc units that declare
// them, one unit per group of tables; not for use outside component/config. A key is a Part (a
// table that only holds keys, or a key inside a reload unit) or a reload unit that a reload
// Applies at once or keeps until a Restart:
//
//   Restart("server.port", K::kInteger, [](auto& c) -> auto& { return c.server.port; })
//       .Range(1, 65535)
//       .Doc("`5347`", "the server's component port"),
//
// The field is written `[](auto& c) -> auto& { return c.section.key; }` so that one lambda reads
// a const Config and writes a mutable one.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "component/config/config_keys.h"

namespace herald::config::declare {

using K = ValueKind;

inline constexpr bool kSecret = true;

// A value the reference can show as TOML: a number, a boolean, a string or a list of strings.
template <typename V>
inline constexpr bool kPlainValue =
    std::is_same_v<V, bool> || std::is_integral_v<V> || std::is_same_v<V, std::string> ||
    std::is_same_v<V, std::vector<std::string>>;

// A plain value as TOML in backticks: "`5347`", "`[\"a\"]`".
template <typename V>
std::string TomlValueText(const V& value) {
  if constexpr (std::is_same_v<V, bool>) {
    return value ? "`true`" : "`false`";
  } else if constexpr (std::is_integral_v<V>) {
    return absl::StrCat("`", value, "`");
  } else if constexpr (std::is_same_v<V, std::string>) {
    return absl::StrCat("`\"", value, "\"`");
  } else if constexpr (std::is_same_v<V, std::vector<std::string>>) {
    return absl::StrCat(
        "`[",
        absl::StrJoin(value, ", ",
                      [](std::string* out, const auto& s) { absl::StrAppend(out, "\"", s, "\""); }),
        "]`");
  } else {
    static_assert(kPlainValue<V>);
    return "";
  }
}

inline ConfigKey Part(std::string_view path, ValueKind kind, bool secret = false) {
  return ConfigKey{.path = path, .kind = kind, .secret = secret};
}

// A reload unit; `field` gives the unit's value in a Config (const or not), and `same`
// compares two values of it.
template <typename Field, typename Same = std::equal_to<>>
ConfigKey Unit(std::string_view path, ValueKind kind, OnReload reload, Field field,
               bool secret = false, Same same = {}) {
  ConfigKey key{
      .path = path,
      .kind = kind,
      .secret = secret,
      .reload = reload,
      .same = [field, same](const Config& a, const Config& b) { return same(field(a), field(b)); },
      .keep = [field](const Config& running, Config& fresh) { field(fresh) = field(running); },
  };
  using Value = std::decay_t<decltype(field(std::declval<const Config&>()))>;
  // Never for a secret: the function could be handed a running configuration.
  if constexpr (kPlainValue<Value>) {
    if (!secret) {
      key.value = [field](const Config& config) { return TomlValueText(field(config)); };
    }
  }
  return key;
}

template <typename Field>
ConfigKey Applies(std::string_view path, ValueKind kind, Field field) {
  return Unit(path, kind, OnReload::kApplies, field);
}

template <typename Field>
ConfigKey Restart(std::string_view path, ValueKind kind, Field field, bool secret = false) {
  return Unit(path, kind, OnReload::kRestart, field, secret);
}

// Each appends its tables' keys, a table before its keys.
void DeclareServerKeys(std::vector<ConfigKey>& keys);
void DeclareAgentKeys(std::vector<ConfigKey>& keys);
void DeclareLogLlmAndMemoryKeys(std::vector<ConfigKey>& keys);
void DeclareRoomKeys(std::vector<ConfigKey>& keys);
void DeclareSkillKeys(std::vector<ConfigKey>& keys);
void DeclareQuotaKeys(std::vector<ConfigKey>& keys);
void DeclareStorageKeys(std::vector<ConfigKey>& keys);
void DeclareControlKeys(std::vector<ConfigKey>& keys);
void DeclareHttpKeys(std::vector<ConfigKey>& keys);
void DeclareTraceKeys(std::vector<ConfigKey>& keys);
void DeclareAttachmentKeys(std::vector<ConfigKey>& keys);
void DeclareVoiceKeys(std::vector<ConfigKey>& keys);
void DeclareWebhookKeys(std::vector<ConfigKey>& keys);
void DeclareScheduleKeys(std::vector<ConfigKey>& keys);
void DeclareAgentProtocolKeys(std::vector<ConfigKey>& keys);

}  // namespace herald::config::declare
