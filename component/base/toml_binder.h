// component/base/toml_binder.h
//
// The one TOML binder of Herald: the config file, a skill's manifest and the scripted
// provider's rules are all read with it. It parses a document (a syntax error becomes a
// problem at its line and column), walks its tables, reads typed values with their ranges and
// allowed names, and reports every problem at the value's line to a FileDiagnostics, so a
// person sees all of them at once as "FILE:LINE: message". Unknown keys come back with the
// nearest known name, for the format's own "did you mean" wording.
//
// A message names a key by its section's `subject` (by default the dotted path:
// "server.port must be between 1 and 65535, got 0"; the scripted rules say "rule 2, 'reply':
// must be a string"). A value the caller marks hidden (one that came from the environment,
// which may hold a secret) is never quoted.
//
//   base::FileDiagnostics diagnostics("skill.toml");
//   std::optional<toml::table> document = base::ParseToml(text, diagnostics);
//   base::TomlBinder b(diagnostics);
//   base::TomlSection root = base::TomlSection::Root(*document);
//   std::optional<std::string> name = b.RequiredString(root, "name");
//   b.Integer(b.Sub(root, "limits"), "timeout_seconds", 1, 3600, &timeout);
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "component/base/absl_string_view.h"
#include "component/base/file_diagnostics.h"
#include "toml++/toml.h"

namespace herald::base {

// How a hidden value appears in a message.
inline constexpr std::string_view kNotShown = "a value from the environment (not shown)";

struct TomlParseOptions {
  // Put before toml++'s description of a syntax error.
  std::string_view prefix = "not valid TOML: ";
  // A line for which the description must not be shown (it would quote a secret); the
  // message then is `secret_line_message`.
  std::function<bool(int64_t line)> line_is_secret;
  std::string_view secret_line_message;
  // Whether the problem names the column as well as the line ("FILE:3:14: ..."); a skill
  // manifest's problems name only the line.
  bool show_column = true;
  // How toml++'s description is made safe to print; empty: OneLine (control bytes escaped).
  std::function<std::string(std::string_view description)> escape;
};

// The document, or nothing when it is not valid TOML (the problem, with its line and column,
// is in `diagnostics`).
std::optional<toml::table> ParseToml(std::string_view text, FileDiagnostics& diagnostics,
                                     const TomlParseOptions& options = {});

// One table of a document: the root, [server], an element of [[rooms]], ... `table` is null
// when the document does not have it, and then every key takes its default.
struct TomlSection {
  const toml::table* table = nullptr;
  std::string path;  // "server", "rooms[1]": prefixes key names in messages
  int64_t line = 0;  // the header's line, for problems that have no key of their own
  size_t index = 0;  // an element of an array of tables: its position there
  // How a message names a key of this section; empty: its dotted path.
  std::function<std::string(std::string_view key)> subject;

  static TomlSection Root(const toml::table& table) { return TomlSection{.table = &table}; }
};

template <typename E>
struct EnumOption {
  std::string_view name;
  E value;
};

// A key of a section that the format does not know, with the known name nearest to it ("" when
// none is close).
struct UnknownKey {
  std::string_view name;
  const toml::node* node;
  std::string_view nearest;
};

class TomlBinder {
 public:
  using Hidden = std::function<bool(const toml::node*)>;

  explicit TomlBinder(FileDiagnostics& diagnostics, Hidden hidden = {})
      : diagnostics_(diagnostics), hidden_(std::move(hidden)) {}

  // The table at `key` of `parent` (its path extends the parent's; `subject` is not inherited).
  TomlSection Sub(const TomlSection& parent, std::string_view key) const;
  // The table that is element `index` of the array of tables `key` ("rooms[1]").
  TomlSection Element(const TomlSection& parent, std::string_view key, size_t index) const;
  // Every table of the array of tables `key` ("rooms[0]", "rooms[1]", ...), in order; an
  // element that is no table is left out (the schema check reports it). None when absent.
  std::vector<TomlSection> Tables(const TomlSection& parent, std::string_view key) const;

  const toml::node* Node(const TomlSection& section, std::string_view key) const {
    return section.table == nullptr ? nullptr : section.table->get(key);
  }
  bool Has(const TomlSection& section, std::string_view key) const {
    return Node(section, key) != nullptr;
  }

  // "server.port"; "port" at the root.
  static std::string Path(const TomlSection& section, std::string_view key) {
    return section.path.empty() ? std::string(key) : absl::StrCat(section.path, ".", AbslView(key));
  }
  // How messages name the key: the section's subject, or its path.
  static std::string Subject(const TomlSection& section, std::string_view key) {
    return section.subject ? section.subject(key) : Path(section, key);
  }

  // The line of the key's value, or of its section when the key is absent.
  int64_t Line(const TomlSection& section, std::string_view key) const {
    const toml::node* node = Node(section, key);
    return node != nullptr ? node->source().begin.line : section.line;
  }

  void Error(int64_t line, std::string message) { diagnostics_.Add(line, std::move(message)); }
  void Error(const TomlSection& section, std::string_view key, std::string message) {
    Error(Line(section, key), std::move(message));
  }
  void Error(const toml::node* node, std::string message) {
    Error(node != nullptr ? node->source().begin.line : 0, std::move(message));
  }
  bool ok() const { return diagnostics_.empty(); }

  // "SUBJECT must be WHAT; got VALUE", at the key's line: for a value the format refuses
  // ("name must be 1 to 64 characters of a-z, 0-9 and '_'; got \"Echo Skill\"").
  void MustBe(const TomlSection& section, std::string_view key, std::string_view what);

  // How a value may appear in a message: a string quoted and cut (QuoteValue), a number or
  // boolean as written, "a table", "an array"; kNotShown when it is hidden. Secret keys are
  // never passed here.
  std::string Shown(const toml::node* node) const;
  bool IsHidden(const toml::node* node) const {
    return node != nullptr && hidden_ && hidden_(node);
  }

  // ---- Typed values. Each returns what it read; a value of the wrong type is reported as
  // "SUBJECT must be a string; got 7", a missing required one as "SUBJECT is required".

  // The string at `key`, when present and a string.
  bool String(const TomlSection& section, std::string_view key, std::string* out);
  std::optional<std::string> RequiredString(const TomlSection& section, std::string_view key);
  // A string that, when present, must not be empty (an empty one is a mistake, not a
  // default): "SUBJECT must not be empty HINT".
  bool NonEmptyString(const TomlSection& section, std::string_view key, std::string* out,
                      std::string_view hint = "");
  bool Bool(const TomlSection& section, std::string_view key, bool* out);

  // An integer in [min, max] when present: "SUBJECT must be between 1 and 65535, got 0". False
  // only when it is present and wrong, which leaves *out unchanged.
  template <typename T>
  bool Integer(const TomlSection& section, std::string_view key, int64_t min, int64_t max, T* out) {
    int64_t value = 0;
    if (!CheckedInteger(section, key, min, max, &value)) return false;
    if (Has(section, key)) *out = static_cast<T>(value);
    return true;
  }

  // The same, where a value of another type and one out of range get one message: "SUBJECT must
  // be an integer from 1 to 3600; got 0" (a skill manifest's limits).
  template <typename T>
  bool IntegerFromTo(const TomlSection& section, std::string_view key, int64_t min, int64_t max,
                     T* out) {
    int64_t value = 0;
    if (!CheckedIntegerFromTo(section, key, min, max, &value)) return false;
    if (Has(section, key)) *out = static_cast<T>(value);
    return true;
  }

  // One of `options` by name: "SUBJECT must be one of "a", "b"; got "c"".
  template <typename E>
  bool Enum(const TomlSection& section, std::string_view key,
            std::initializer_list<EnumOption<E>> options, E* out) {
    std::string value;
    if (!String(section, key, &value)) return false;
    std::vector<std::string_view> names;
    for (const EnumOption<E>& option : options) {
      if (value == option.name) {
        *out = option.value;
        return true;
      }
      names.push_back(option.name);
    }
    RejectName(section, key, names);
    return false;
  }

  // The strings of the array at `key`, each with its node and path ("agent.allowed_jids[2]");
  // an element of another type is reported and left out.
  struct StringElement {
    std::string value;
    const toml::node* node;
    std::string path;
  };
  std::vector<StringElement> StringList(const TomlSection& section, std::string_view key);
  // A string, or a non-empty array of strings, at `key`: `contains = "hi"` reads as
  // `contains = ["hi"]`. Another value is reported as "SUBJECT must be a string or a non-empty
  // array of strings; got 3", an element of another type as "SUBJECT must hold strings only;
  // got 1" (at the element's line) and left out.
  std::vector<StringElement> OneOrMoreStrings(const TomlSection& section, std::string_view key);
  void ElementError(const StringElement& element, std::string message) {
    Error(element.node, std::move(message));
  }

  // The keys of `section` not among `known`, in the document's order.
  std::vector<UnknownKey> UnknownKeys(const TomlSection& section,
                                      const std::vector<std::string_view>& known) const;

 private:
  bool CheckedInteger(const TomlSection& section, std::string_view key, int64_t min, int64_t max,
                      int64_t* out);
  bool CheckedIntegerFromTo(const TomlSection& section, std::string_view key, int64_t min,
                            int64_t max, int64_t* out);
  void RejectName(const TomlSection& section, std::string_view key,
                  const std::vector<std::string_view>& names);

  FileDiagnostics& diagnostics_;
  Hidden hidden_;
};

}  // namespace herald::base
