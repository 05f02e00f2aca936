// component/config/schema.h
//
// The shape of Herald's config file: which tables and keys exist and what type each value has.
// CheckSchema walks a parsed document against it and reports every unknown key or table (with
// the nearest known name when one is close) and every value of the wrong type, so the code
// that reads values afterwards can rely on the types. The shape is built from the declarations
// in config_keys.h: adding a key to the config means declaring it there and reading it in the
// bind_*.cc unit of its table.
//
//   Diagnostics diagnostics("herald.toml");
//   CheckSchema(document, diagnostics);
//   // herald.toml:12: unknown key 'alowed_jids' in [agent] (did you mean 'allowed_jids'?)
//   // herald.toml:3: wrong type for server.port: expected integer, got string
#pragma once

#include <string_view>
#include <vector>

#include "component/base/file_diagnostics.h"
#include "toml++/toml.h"

namespace herald::config {

enum class ValueKind {
  kString,
  kInteger,
  kNumber,  // an integer or a float
  kBoolean,
  kStringArray,
  kStringTable,  // a table of any keys whose values are strings: { KEY = "value", ... }
  kTable,        // [name] or name = { ... }
  kTableArray,   // [[name]]
};

struct TableSchema;

struct KeySchema {
  std::string_view name;
  ValueKind kind;
  // Never quoted in a message, even when it is malformed.
  bool secret = false;
  // The keys of a kTable or of each element of a kTableArray.
  const TableSchema* table = nullptr;
};

struct TableSchema {
  std::vector<KeySchema> keys;

  const KeySchema* Find(std::string_view name) const;
};

// The whole file.
const TableSchema& ConfigSchema();

// The names of the keys marked secret, anywhere in the schema ("component_secret", "api_key"...).
const std::vector<std::string_view>& SecretKeyNames();

// Adds a problem for each unknown key or table and each value of the wrong type.
void CheckSchema(const toml::table& root, base::FileDiagnostics& diagnostics);

}  // namespace herald::config
