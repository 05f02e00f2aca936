// component/config/env_expansion.h
//
// `${VAR}` expansion for config values. It runs on string values after TOML parsing, never on
// the raw text, so an environment value is taken literally: quotes, newlines or `${` inside it
// cannot change the document's structure or trigger another expansion. `$${` is a literal `${`;
// a `$` not followed by `{` is kept as it is.
//
//   absl::StatusOr<Expansion> expanded = ExpandEnvironment("${HERALD_SECRET}", lookup);
//   expanded->text;                 // the variable's value
//   expanded->used_environment;     // true: never echo this value in a message
//
//   Diagnostics diagnostics("herald.toml");
//   EnvExpansionResult result = ExpandDocument(table, lookup, diagnostics);  // in place
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "component/base/file_diagnostics.h"
#include "toml++/toml.h"

namespace herald::config {

// Looks up an environment variable; nullopt when it is not set (the same type as in config.h).
using EnvLookup = std::function<std::optional<std::string>(std::string_view name)>;

// One value after expansion may not exceed this, nor may all of a document's values together
// exceed kMaxExpandedDocumentBytes: a small file that references a large variable many times
// must not exhaust memory.
inline constexpr size_t kMaxExpandedValueBytes = 1 << 20;
inline constexpr size_t kMaxExpandedDocumentBytes = 8 << 20;

// Variable names are ASCII letters, digits and '_', not starting with a digit, at most this long.
inline constexpr size_t kMaxVariableNameBytes = 255;

struct Expansion {
  std::string text;
  bool used_environment = false;  // at least one ${VAR} was substituted
};

// Errors: NotFound "environment variable NAME is not set"; InvalidArgument for bad `${` syntax
// or an over-long result (the message describes the problem, without the value).
absl::StatusOr<Expansion> ExpandEnvironment(std::string_view text, const EnvLookup& env);

// The string nodes whose value came (at least partly) from the environment. Messages that
// would quote a value must not quote these: an environment variable may hold a secret.
using EnvironmentValues = absl::flat_hash_set<const toml::node*>;

// Expands every string value of `root` in place, in arrays and arrays of tables too. Each
// problem is added to `diagnostics` with the value's line and its key
// ("environment variable HERALD_SECRET is not set (used by server.component_secret)").
EnvironmentValues ExpandDocument(toml::table& root, const EnvLookup& env,
                                 base::FileDiagnostics& diagnostics);

}  // namespace herald::config
