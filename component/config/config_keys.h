// component/config/config_keys.h
//
// Every key of Herald's config file, declared once: where it sits, its TOML type, whether its
// value is a secret, and what a reload does with it (applies it at once, or keeps the running
// value until a restart). The schema check (schema.h) is built from this table, a reload
// (control/config_reload.h) compares and keeps values through it instead of field by field,
// and the reload table of docs/configuration.md is generated from it
// (`bazel run //tools/config:config_reference`; a test keeps the page current).
//
// A key is a *reload unit* when a reload compares it as a whole: a leaf of an ordinary table
// ("server.port"), or a table or array of tables whose keys belong together ("llm.anthropic",
// "rooms"); the keys inside a unit have no reload of their own.
//
//   for (const ConfigKey& key : ConfigKeys()) {
//     if (key.IsReloadUnit() && !key.same(running, fresh)) changed.push_back(key.path);
//   }
#pragma once

#include <functional>
#include <string_view>
#include <vector>

#include "component/config/config.h"
#include "component/config/schema.h"

namespace herald::config {

enum class OnReload {
  kNone,     // a container table ([server]) or a key inside a reload unit
  kApplies,  // a reload puts the new value in force
  kRestart,  // the running value stays until Herald restarts
};

struct ConfigKey {
  // Dotted, without indices: "server.port", "rooms.jid" (a key of each [[rooms]] element).
  std::string_view path;
  ValueKind kind;
  bool secret = false;
  OnReload reload = OnReload::kNone;
  // Reload units only: whether two loaded configurations agree on the key, and giving `fresh`
  // the value `running` has.
  std::function<bool(const Config& running, const Config& fresh)> same;
  std::function<void(const Config& running, Config& fresh)> keep;

  bool IsReloadUnit() const { return reload != OnReload::kNone; }
};

// In the order of the file's sections; a table comes before its keys.
const std::vector<ConfigKey>& ConfigKeys();

}  // namespace herald::config
