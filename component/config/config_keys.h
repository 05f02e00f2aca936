// component/config/config_keys.h
//
// Every key of Herald's config file, declared once: where it sits, its TOML type, its range
// (integers), whether its value is a secret, its default and meaning for the reference, and what
// a reload does with it (applies it at once, or keeps the running value until a restart). The
// declarations drive everything else: the schema check (schema.h) is built from them, the binder
// takes each integer's range from them (toml_binder.h), a reload (control/config_reload.h)
// compares and keeps values through them instead of field by field, and the key tables and the
// reload table of docs/configuration.md are generated from them
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

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
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

  // Integers: the values the binder accepts.
  int64_t min = 0;
  int64_t max = 0;
  // For the reference: the type when more than the kind says ("string, a domain"; empty: made
  // from the kind and range), the default as written there ("`5347`", "— (required)") and what
  // the key does.
  std::string_view type;
  std::string_view default_text;
  std::string_view meaning;
  // Reload units of a plain value (a number, a boolean, a string or a list of strings) that is
  // not a secret: its value in `config` as TOML in backticks ("`5347`", "`[]`"), so a test can
  // hold the declared default to the struct's.
  std::function<std::string(const Config& config)> value;

  bool IsReloadUnit() const { return reload != OnReload::kNone; }
  bool IsTable() const { return kind == ValueKind::kTable || kind == ValueKind::kTableArray; }
  // The type as the reference shows it: "integer 1–65535", "string, secret", ...
  std::string TypeText() const;

  // Used where the keys are declared: Restart(...).Range(1, 65535).Doc("`5347`", "...").
  ConfigKey Range(int64_t lowest, int64_t highest) && {
    min = lowest;
    max = highest;
    return std::move(*this);
  }
  ConfigKey Type(std::string_view text) && {
    type = text;
    return std::move(*this);
  }
  ConfigKey Doc(std::string_view default_as_written, std::string_view what_it_does) && {
    default_text = default_as_written;
    meaning = what_it_does;
    return std::move(*this);
  }
};

// An integer key without an upper bound.
inline constexpr int64_t kNoMaximum = std::numeric_limits<int64_t>::max();

// In the order of the file's sections; a table comes before its keys.
const std::vector<ConfigKey>& ConfigKeys();

// The declaration at `path` ("server.port", "rooms.jid"; indices are left out), or null.
const ConfigKey* FindConfigKey(std::string_view path);

}  // namespace herald::config
