// component/config/toml_binder.h
//
// The config file's binder: Herald's one TOML binder (base/toml_binder.h), with the values
// that came from the environment hidden from every message, since they may hold a secret, and
// each integer's range taken from the key's declaration (config_keys.h). It runs after
// CheckSchema, so the types are right; it checks ranges and formats and reports each problem
// with the file's line and the key's dotted path ("server.port must be between 1 and 65535, got
// 0").
//
//   Binder b(diagnostics, from_environment);
//   Section server = b.Sub(root, "server");
//   b.Integer(server, "port", &options.port);   // 1–65535, as declared
#pragma once

#include <string_view>

#include "component/base/toml_binder.h"
#include "component/config/config_keys.h"
#include "component/config/env_expansion.h"

namespace herald::config {

using base::EnumOption;
using base::kNotShown;
using Section = base::TomlSection;

class Binder : public base::TomlBinder {
 public:
  using Element = StringElement;

  Binder(base::FileDiagnostics& diagnostics, const EnvironmentValues& from_environment)
      : TomlBinder(diagnostics, [&from_environment](const toml::node* node) {
          return from_environment.contains(node);
        }) {}

  // Whether the value came from a ${VAR}.
  bool FromEnvironment(const toml::node* node) const { return IsHidden(node); }

  // An integer in its declared range, when present (TomlBinder::Integer says what it returns).
  template <typename T>
  bool Integer(const Section& section, std::string_view key, T* out) {
    const ConfigKey& declared = DeclaredInteger(section, key);
    return TomlBinder::Integer(section, key, declared.min, declared.max, out);
  }

 private:
  // The declaration of an integer key of `section`; a key read here but not declared as an
  // integer is a mistake in Herald, and aborts.
  static const ConfigKey& DeclaredInteger(const Section& section, std::string_view key);
};

}  // namespace herald::config
