// component/config/toml_binder.h
//
// The config file's binder: Herald's one TOML binder (base/toml_binder.h), with the values
// that came from the environment hidden from every message, since they may hold a secret. It
// runs after CheckSchema, so the types are right; it checks ranges and formats and reports
// each problem with the file's line and the key's dotted path ("server.port must be between 1
// and 65535, got 0").
//
//   Binder b(diagnostics, from_environment);
//   Section server = b.Sub(root, "server");
//   b.Integer(server, "port", 1, 65535, &options.port);
#pragma once

#include "component/base/toml_binder.h"
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
};

}  // namespace herald::config
