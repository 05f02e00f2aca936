// component/config/toml_binder.h
//
// The binder reads the values of a parsed config document into option structs. It runs after
// CheckSchema, so the types are right; it checks ranges and formats, reports each problem with
// the file's line and the key's dotted path ("server.port must be between 1 and 65535, got 0")
// to the Diagnostics, and never quotes a value that came from the environment, which may hold
// a secret.
//
//   Binder b(diagnostics, from_environment);
//   Section server = b.Sub(root, "server");
//   b.Integer(server, "port", 1, 65535, &options.port);
#pragma once

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "component/base/absl_string_view.h"
#include "component/base/file_diagnostics.h"
#include "component/config/env_expansion.h"
#include "toml++/toml.h"

namespace herald::config {

// How a value from the environment appears in a message.
inline constexpr std::string_view kNotShown = "a value from the environment (not shown)";

// One table of the document: [server], an element of [[rooms]], ... `table` is null when the
// file does not have it, and then every key takes its default.
struct Section {
  const toml::table* table = nullptr;
  std::string path;  // "server", "rooms[1]": prefixes key names in messages
  int64_t line = 0;  // the header's line, for problems that have no key of their own
};

template <typename E>
struct EnumOption {
  std::string_view name;
  E value;
};

// Reads the values of a document that passed CheckSchema (so types are right) into Config,
// checking ranges and formats and adding every problem to the diagnostics.
class Binder {
 public:
  Binder(base::FileDiagnostics& diagnostics, const EnvironmentValues& from_environment)
      : diagnostics_(diagnostics), from_environment_(from_environment) {}

  Section Sub(const Section& parent, std::string_view key) const {
    Section section;
    section.path = Path(parent, key);
    if (const toml::node* node = Node(parent, key)) {
      section.table = node->as_table();
      section.line = node->source().begin.line;
    }
    return section;
  }

  const toml::node* Node(const Section& section, std::string_view key) const {
    if (section.table == nullptr) return nullptr;
    return section.table->get(key);
  }

  bool Has(const Section& section, std::string_view key) const {
    return Node(section, key) != nullptr;
  }

  static std::string Path(const Section& section, std::string_view key) {
    return section.path.empty() ? std::string(key) : absl::StrCat(section.path, ".", AbslView(key));
  }

  // The line of the key's value, or of its table when the key is absent.
  int64_t Line(const Section& section, std::string_view key) const {
    const toml::node* node = Node(section, key);
    return node != nullptr ? node->source().begin.line : section.line;
  }

  void Error(int64_t line, std::string message) { diagnostics_.Add(line, std::move(message)); }

  void Error(const Section& section, std::string_view key, std::string message) {
    Error(Line(section, key), std::move(message));
  }

  // How a value may appear in a message: quoted, unless it came from the environment (which may
  // hold a secret). Secret keys are never passed here.
  std::string Shown(const toml::node* node) const {
    if (node == nullptr) return "nothing";
    if (from_environment_.contains(node)) return std::string(kNotShown);
    if (const auto* text = node->as_string()) return base::QuoteValue(text->get());
    return "a value of another type";
  }

  bool FromEnvironment(const toml::node* node) const {
    return node != nullptr && from_environment_.contains(node);
  }

  bool String(const Section& section, std::string_view key, std::string* out) {
    const toml::node* node = Node(section, key);
    if (node == nullptr || !node->is_string()) return false;
    *out = node->as_string()->get();
    return true;
  }

  // A string that, when present, must not be empty (an empty one is a mistake, not a default).
  bool NonEmptyString(const Section& section, std::string_view key, std::string* out,
                      std::string_view hint = "") {
    std::string value;
    if (!String(section, key, &value)) return false;
    if (value.empty()) {
      std::string message = absl::StrCat(Path(section, key), " must not be empty");
      if (FromEnvironment(Node(section, key))) {
        absl::StrAppend(&message, " (the environment variable it names is empty)");
      }
      if (!hint.empty()) absl::StrAppend(&message, " ", AbslView(hint));
      Error(section, key, std::move(message));
      return false;
    }
    *out = std::move(value);
    return true;
  }

  bool Bool(const Section& section, std::string_view key, bool* out) {
    const toml::node* node = Node(section, key);
    if (node == nullptr || !node->is_boolean()) return false;
    *out = node->as_boolean()->get();
    return true;
  }

  // Reads an integer in [min, max] when present. False only when it is present and out of
  // range: that is an error and leaves *out unchanged.
  template <typename T>
  bool Integer(const Section& section, std::string_view key, int64_t min, int64_t max, T* out) {
    const toml::node* node = Node(section, key);
    if (node == nullptr || !node->is_integer()) return true;
    int64_t value = node->as_integer()->get();
    if (value < min || value > max) {
      std::string range = max == std::numeric_limits<int64_t>::max()
                              ? absl::StrCat(min, " or more")
                              : absl::StrCat("between ", min, " and ", max);
      Error(section, key, absl::StrCat(Path(section, key), " must be ", range, ", got ", value));
      return false;
    }
    *out = static_cast<T>(value);
    return true;
  }

  template <typename E>
  bool Enum(const Section& section, std::string_view key,
            std::initializer_list<EnumOption<E>> options, E* out) {
    const toml::node* node = Node(section, key);
    if (node == nullptr || !node->is_string()) return false;
    const std::string& value = node->as_string()->get();
    std::vector<std::string> names;
    for (const EnumOption<E>& option : options) {
      if (value == option.name) {
        *out = option.value;
        return true;
      }
      names.push_back(absl::StrCat("\"", AbslView(option.name), "\""));
    }
    Error(section, key,
          absl::StrCat(Path(section, key), " must be one of ", absl::StrJoin(names, ", "), "; got ",
                       Shown(node)));
    return false;
  }

  struct Element {
    std::string value;
    const toml::node* node;
    std::string path;  // "agent.allowed_jids[2]"
  };

  std::vector<Element> StringList(const Section& section, std::string_view key) {
    std::vector<Element> elements;
    const toml::node* node = Node(section, key);
    if (node == nullptr || !node->is_array()) return elements;
    const toml::array& array = *node->as_array();
    for (size_t i = 0; i < array.size(); ++i) {
      const toml::node& element = array[i];
      if (!element.is_string()) continue;
      elements.push_back(Element{element.as_string()->get(), &element,
                                 absl::StrCat(Path(section, key), "[", i, "]")});
    }
    return elements;
  }

  void ElementError(const Element& element, std::string message) {
    Error(element.node->source().begin.line, std::move(message));
  }

 private:
  base::FileDiagnostics& diagnostics_;
  const EnvironmentValues& from_environment_;
};

}  // namespace herald::config
