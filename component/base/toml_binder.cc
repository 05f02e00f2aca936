#include "component/base/toml_binder.h"

#include <utility>

#include "component/base/edit_distance.h"

namespace herald::base {

std::optional<toml::table> ParseToml(std::string_view text, FileDiagnostics& diagnostics,
                                     const TomlParseOptions& options) {
  try {
    return toml::parse(text);
  } catch (const toml::parse_error& error) {
    const toml::source_position& at = error.source().begin;
    std::string description;
    if (options.line_is_secret && options.line_is_secret(at.line)) {
      description = std::string(options.secret_line_message);
    } else {
      description = absl::StrCat(AbslView(options.prefix), options.escape
                                                               ? options.escape(error.description())
                                                               : OneLine(error.description()));
    }
    diagnostics.Add(at.line, options.show_column ? at.column : 0, std::move(description));
    return std::nullopt;
  }
}

TomlSection TomlBinder::Sub(const TomlSection& parent, std::string_view key) const {
  TomlSection section;
  section.path = Path(parent, key);
  if (const toml::node* node = Node(parent, key)) {
    section.table = node->as_table();
    section.line = node->source().begin.line;
  }
  return section;
}

TomlSection TomlBinder::Element(const TomlSection& parent, std::string_view key,
                                size_t index) const {
  TomlSection section;
  section.path = absl::StrCat(Path(parent, key), "[", index, "]");
  const toml::node* node = Node(parent, key);
  const toml::array* array = node != nullptr ? node->as_array() : nullptr;
  if (array != nullptr && index < array->size()) {
    section.table = array->get(index)->as_table();
    section.line = array->get(index)->source().begin.line;
  }
  return section;
}

std::vector<TomlSection> TomlBinder::Tables(const TomlSection& parent, std::string_view key) const {
  std::vector<TomlSection> tables;
  const toml::node* node = Node(parent, key);
  const toml::array* array = node != nullptr ? node->as_array() : nullptr;
  if (array == nullptr) return tables;
  const std::string path = Path(parent, key);
  for (size_t i = 0; i < array->size(); ++i) {
    const toml::node* element = array->get(i);
    if (element == nullptr || element->as_table() == nullptr) continue;
    tables.push_back(TomlSection{.table = element->as_table(),
                                 .path = absl::StrCat(path, "[", i, "]"),
                                 .line = element->source().begin.line,
                                 .index = i});
  }
  return tables;
}

std::string TomlBinder::Shown(const toml::node* node) const {
  if (node == nullptr) return "nothing";
  if (IsHidden(node)) return std::string(kNotShown);
  if (const auto* text = node->as_string()) return QuoteValue(text->get());
  if (const auto* integer = node->as_integer()) return absl::StrCat(integer->get());
  if (const auto* number = node->as_floating_point()) return absl::StrCat(number->get());
  if (const auto* boolean = node->as_boolean()) return boolean->get() ? "true" : "false";
  if (node->is_table()) return "a table";
  if (node->is_array()) return "an array";
  return "a date or time";
}

void TomlBinder::MustBe(const TomlSection& section, std::string_view key, std::string_view what) {
  Error(section, key,
        absl::StrCat(Subject(section, key), " must be ", AbslView(what), "; got ",
                     Shown(Node(section, key))));
}

bool TomlBinder::String(const TomlSection& section, std::string_view key, std::string* out) {
  const toml::node* node = Node(section, key);
  if (node == nullptr) return false;
  if (!node->is_string()) {
    MustBe(section, key, "a string");
    return false;
  }
  *out = node->as_string()->get();
  return true;
}

std::optional<std::string> TomlBinder::RequiredString(const TomlSection& section,
                                                      std::string_view key) {
  if (!Has(section, key)) {
    Error(section.line, absl::StrCat(Subject(section, key), " is required"));
    return std::nullopt;
  }
  std::string value;
  if (!String(section, key, &value)) return std::nullopt;
  return value;
}

bool TomlBinder::NonEmptyString(const TomlSection& section, std::string_view key, std::string* out,
                                std::string_view hint) {
  std::string value;
  if (!String(section, key, &value)) return false;
  if (value.empty()) {
    std::string message = absl::StrCat(Subject(section, key), " must not be empty");
    if (IsHidden(Node(section, key))) {
      absl::StrAppend(&message, " (the environment variable it names is empty)");
    }
    if (!hint.empty()) absl::StrAppend(&message, " ", AbslView(hint));
    Error(section, key, std::move(message));
    return false;
  }
  *out = std::move(value);
  return true;
}

bool TomlBinder::Bool(const TomlSection& section, std::string_view key, bool* out) {
  const toml::node* node = Node(section, key);
  if (node == nullptr) return false;
  if (!node->is_boolean()) {
    MustBe(section, key, "true or false");
    return false;
  }
  *out = node->as_boolean()->get();
  return true;
}

bool TomlBinder::CheckedInteger(const TomlSection& section, std::string_view key, int64_t min,
                                int64_t max, int64_t* out) {
  const toml::node* node = Node(section, key);
  if (node == nullptr) return true;
  if (!node->is_integer()) {
    MustBe(section, key, "an integer");
    return false;
  }
  const int64_t value = node->as_integer()->get();
  if (value < min || value > max) {
    std::string range = max == std::numeric_limits<int64_t>::max()
                            ? absl::StrCat(min, " or more")
                            : absl::StrCat("between ", min, " and ", max);
    Error(section, key, absl::StrCat(Subject(section, key), " must be ", range, ", got ", value));
    return false;
  }
  *out = value;
  return true;
}

bool TomlBinder::CheckedIntegerFromTo(const TomlSection& section, std::string_view key, int64_t min,
                                      int64_t max, int64_t* out) {
  const toml::node* node = Node(section, key);
  if (node == nullptr) return true;
  const auto* integer = node->as_integer();
  if (integer == nullptr || integer->get() < min || integer->get() > max) {
    MustBe(section, key, absl::StrCat("an integer from ", min, " to ", max));
    return false;
  }
  *out = integer->get();
  return true;
}

void TomlBinder::RejectName(const TomlSection& section, std::string_view key,
                            const std::vector<std::string_view>& names) {
  std::vector<std::string> quoted;
  for (std::string_view name : names) quoted.push_back(absl::StrCat("\"", AbslView(name), "\""));
  Error(section, key,
        absl::StrCat(Subject(section, key), " must be one of ", absl::StrJoin(quoted, ", "),
                     "; got ", Shown(Node(section, key))));
}

std::vector<TomlBinder::StringElement> TomlBinder::StringList(const TomlSection& section,
                                                              std::string_view key) {
  std::vector<StringElement> elements;
  const toml::node* node = Node(section, key);
  if (node == nullptr) return elements;
  const toml::array* array = node->as_array();
  if (array == nullptr) {
    MustBe(section, key, "an array of strings");
    return elements;
  }
  for (size_t i = 0; i < array->size(); ++i) {
    const toml::node& element = (*array)[i];
    std::string path = absl::StrCat(Path(section, key), "[", i, "]");
    if (!element.is_string()) {
      Error(&element, absl::StrCat(path, " must be a string; got ", Shown(&element)));
      continue;
    }
    elements.push_back(StringElement{element.as_string()->get(), &element, std::move(path)});
  }
  return elements;
}

std::vector<TomlBinder::StringElement> TomlBinder::OneOrMoreStrings(const TomlSection& section,
                                                                    std::string_view key) {
  std::vector<StringElement> elements;
  const toml::node* node = Node(section, key);
  if (node == nullptr) return elements;
  if (const auto* text = node->as_string()) {
    elements.push_back(StringElement{text->get(), node, Path(section, key)});
    return elements;
  }
  const toml::array* array = node->as_array();
  if (array == nullptr || array->empty()) {
    Error(section, key,
          absl::StrCat(Subject(section, key),
                       " must be a string or a non-empty array of strings; got ",
                       array != nullptr ? "an empty array" : Shown(node)));
    return elements;
  }
  for (size_t i = 0; i < array->size(); ++i) {
    const toml::node& element = (*array)[i];
    if (!element.is_string()) {
      Error(&element,
            absl::StrCat(Subject(section, key), " must hold strings only; got ", Shown(&element)));
      continue;
    }
    elements.push_back(StringElement{element.as_string()->get(), &element,
                                     absl::StrCat(Path(section, key), "[", i, "]")});
  }
  return elements;
}

std::vector<UnknownKey> TomlBinder::UnknownKeys(const TomlSection& section,
                                                const std::vector<std::string_view>& known) const {
  std::vector<UnknownKey> unknown;
  if (section.table == nullptr) return unknown;
  for (const auto& [key, node] : *section.table) {
    const std::string_view name = key.str();
    bool is_known = false;
    for (std::string_view candidate : known) is_known = is_known || candidate == name;
    if (!is_known) unknown.push_back(UnknownKey{name, &node, NearestName(name, known)});
  }
  return unknown;
}

}  // namespace herald::base
