#include "component/config/env_expansion.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace herald::config {
namespace {

bool IsValidVariableName(std::string_view name) {
  if (name.empty() || name.size() > kMaxVariableNameBytes) return false;
  if (absl::ascii_isdigit(static_cast<unsigned char>(name[0]))) return false;
  for (char c : name) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

class DocumentExpander {
 public:
  DocumentExpander(const EnvLookup& env, base::FileDiagnostics& diagnostics)
      : env_(env), diagnostics_(diagnostics) {}

  void Walk(toml::node& node, const std::string& path) {
    if (toml::table* table = node.as_table()) {
      for (auto&& [key, child] : *table) {
        Walk(child,
             path.empty() ? std::string(key.str()) : absl::StrCat(path, ".", AbslView(key.str())));
      }
    } else if (toml::array* array = node.as_array()) {
      for (size_t i = 0; i < array->size(); ++i) {
        Walk((*array)[i], absl::StrCat(path, "[", i, "]"));
      }
    } else if (toml::value<std::string>* value = node.as_string()) {
      Expand(*value, path);
    }
  }

  EnvironmentValues TakeEnvironmentValues() { return std::move(from_environment_); }

 private:
  void Expand(toml::value<std::string>& value, const std::string& path) {
    const int64_t line = value.source().begin.line;
    if (value.get().find('$') == std::string::npos) return;
    absl::StatusOr<Expansion> expansion = ExpandEnvironment(value.get(), env_);
    if (!expansion.ok()) {
      if (absl::IsNotFound(expansion.status())) {
        diagnostics_.Add(line, absl::StrCat(expansion.status().message(), " (used by ", path, ")"));
      } else {
        diagnostics_.Add(
            line, absl::StrCat("invalid ${...} in ", path, ": ", expansion.status().message()));
      }
      return;
    }
    if (!expansion->used_environment) {
      value.get() = std::move(expansion->text);
      return;
    }
    total_bytes_ += expansion->text.size();
    if (total_bytes_ > kMaxExpandedDocumentBytes) {
      if (!reported_total_) {
        diagnostics_.Add(
            line, absl::StrCat("values expanded from the environment exceed ",
                               kMaxExpandedDocumentBytes >> 20, " MiB in total (at ", path, ")"));
        reported_total_ = true;
      }
      return;
    }
    value.get() = std::move(expansion->text);
    from_environment_.insert(&value);
  }

  const EnvLookup& env_;
  base::FileDiagnostics& diagnostics_;
  EnvironmentValues from_environment_;
  size_t total_bytes_ = 0;
  bool reported_total_ = false;
};

}  // namespace

absl::StatusOr<Expansion> ExpandEnvironment(std::string_view text, const EnvLookup& env) {
  Expansion result;
  size_t i = 0;
  while (i < text.size()) {
    size_t dollar = text.find('$', i);
    if (dollar == std::string_view::npos) {
      result.text.append(text.substr(i));
      break;
    }
    result.text.append(text.substr(i, dollar - i));
    std::string_view rest = text.substr(dollar);
    if (rest.substr(0, 3) == "$${") {
      result.text.append("${");
      i = dollar + 3;
    } else if (rest.substr(0, 2) == "${") {
      size_t close = rest.find('}', 2);
      if (close == std::string_view::npos) {
        return absl::InvalidArgumentError(
            "'${' is never closed by '}' (write '$${' for a literal '${')");
      }
      std::string_view name = rest.substr(2, close - 2);
      if (!IsValidVariableName(name)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "variable name ", base::QuoteValue(name),
            " must be ASCII letters, digits and '_', not start with a digit and be at most ",
            kMaxVariableNameBytes, " bytes (write '$${' for a literal '${')"));
      }
      std::optional<std::string> found = env ? env(name) : std::nullopt;
      if (!found.has_value()) {
        return absl::NotFoundError(
            absl::StrCat("environment variable ", AbslView(name), " is not set"));
      }
      result.text.append(*found);
      result.used_environment = true;
      i = dollar + close + 1;
    } else {
      result.text.push_back('$');
      i = dollar + 1;
    }
    if (result.text.size() > kMaxExpandedValueBytes) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the value is longer than ", kMaxExpandedValueBytes >> 20, " MiB after expansion"));
    }
  }
  if (result.text.size() > kMaxExpandedValueBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the value is longer than ", kMaxExpandedValueBytes >> 20, " MiB after expansion"));
  }
  return result;
}

EnvironmentValues ExpandDocument(toml::table& root, const EnvLookup& env,
                                 base::FileDiagnostics& diagnostics) {
  DocumentExpander expander(env, diagnostics);
  expander.Walk(root, "");
  return expander.TakeEnvironmentValues();
}

}  // namespace herald::config
