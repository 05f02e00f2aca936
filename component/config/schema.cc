#include "component/config/schema.h"

#include <algorithm>
#include <map>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "component/base/edit_distance.h"
#include "component/config/config_keys.h"

namespace herald::config {
namespace {

using K = ValueKind;

std::string_view KindName(ValueKind kind) {
  switch (kind) {
    case K::kString:
      return "string";
    case K::kInteger:
      return "integer";
    case K::kNumber:
      return "number";
    case K::kBoolean:
      return "boolean";
    case K::kStringArray:
      return "array of strings";
    case K::kStringTable:
      return "table of strings";
    case K::kTable:
      return "table";
    case K::kTableArray:
      return "array of tables";
  }
  return "value";
}

std::string_view NodeTypeName(const toml::node& node) {
  switch (node.type()) {
    case toml::node_type::table:
      return "table";
    case toml::node_type::array:
      return node.as_array()->is_array_of_tables() ? "array of tables" : "array";
    case toml::node_type::string:
      return "string";
    case toml::node_type::integer:
      return "integer";
    case toml::node_type::floating_point:
      return "float";
    case toml::node_type::boolean:
      return "boolean";
    case toml::node_type::date:
      return "date";
    case toml::node_type::time:
      return "time";
    case toml::node_type::date_time:
      return "date-time";
    case toml::node_type::none:
      break;
  }
  return "nothing";
}

int64_t LineOf(const toml::node& node) { return node.source().begin.line; }

// `path` names values in messages (rooms[0].jid); `schema_path` is the same without indices and
// names the table header ([[rooms]]).
void CheckTable(const toml::table& table, const TableSchema& schema, const std::string& path,
                const std::string& schema_path, bool array_element,
                base::FileDiagnostics& diagnostics);

void WrongType(const toml::node& node, std::string_view path, std::string_view expected,
               base::FileDiagnostics& diagnostics) {
  diagnostics.Add(LineOf(node),
                  absl::StrCat("wrong type for ", AbslView(path), ": expected ", AbslView(expected),
                               ", got ", AbslView(NodeTypeName(node))));
}

void CheckValue(const toml::node& node, const KeySchema& spec, const std::string& path,
                const std::string& schema_path, base::FileDiagnostics& diagnostics) {
  switch (spec.kind) {
    case K::kString:
      if (!node.is_string()) WrongType(node, path, KindName(spec.kind), diagnostics);
      return;
    case K::kInteger:
      if (!node.is_integer()) WrongType(node, path, KindName(spec.kind), diagnostics);
      return;
    case K::kNumber:
      if (!node.is_number()) WrongType(node, path, KindName(spec.kind), diagnostics);
      return;
    case K::kBoolean:
      if (!node.is_boolean()) WrongType(node, path, KindName(spec.kind), diagnostics);
      return;
    case K::kStringArray: {
      const toml::array* array = node.as_array();
      if (array == nullptr) {
        WrongType(node, path, KindName(spec.kind), diagnostics);
        return;
      }
      for (size_t i = 0; i < array->size(); ++i) {
        const toml::node& element = (*array)[i];
        if (!element.is_string()) {
          WrongType(element, absl::StrCat(path, "[", i, "]"), "string", diagnostics);
        }
      }
      return;
    }
    case K::kStringTable: {
      const toml::table* table = node.as_table();
      if (table == nullptr) {
        WrongType(node, path, KindName(spec.kind), diagnostics);
        return;
      }
      for (auto&& [key, value] : *table) {
        if (!value.is_string()) {
          // The key only: the value may be a secret.
          WrongType(value,
                    absl::StrCat(path, ".", absl::CHexEscape(AbslView(key.str().substr(0, 64)))),
                    "string", diagnostics);
        }
      }
      return;
    }
    case K::kTable: {
      const toml::table* table = node.as_table();
      if (table == nullptr) {
        WrongType(node, path, KindName(spec.kind), diagnostics);
        return;
      }
      CheckTable(*table, *spec.table, path, schema_path, /*array_element=*/false, diagnostics);
      return;
    }
    case K::kTableArray: {
      const toml::array* array = node.as_array();
      if (array == nullptr) {
        WrongType(node, path, absl::StrCat("array of tables ([[", schema_path, "]])"), diagnostics);
        return;
      }
      for (size_t i = 0; i < array->size(); ++i) {
        const toml::node& element = (*array)[i];
        std::string element_path = absl::StrCat(path, "[", i, "]");
        if (const toml::table* table = element.as_table()) {
          CheckTable(*table, *spec.table, element_path, schema_path, /*array_element=*/true,
                     diagnostics);
        } else {
          WrongType(element, element_path, "table", diagnostics);
        }
      }
      return;
    }
  }
}

void ReportUnknown(std::string_view key, const toml::node& node, int64_t line,
                   const TableSchema& schema, const std::string& schema_path, bool array_element,
                   base::FileDiagnostics& diagnostics) {
  // A header such as [agnet] or [[room]] reads best as an unknown table; inside an element of an
  // array of tables a sub-table is still just a key of that element.
  const bool table_array =
      node.is_array() && !node.as_array()->empty() && node.as_array()->is_array_of_tables();
  if ((node.is_table() || table_array) && !array_element) {
    std::vector<std::string_view> tables;
    for (const KeySchema& spec : schema.keys) {
      if (spec.kind == K::kTable || spec.kind == K::kTableArray) tables.push_back(spec.name);
    }
    std::string prefix = schema_path.empty() ? "" : absl::StrCat(schema_path, ".");
    std::string message =
        absl::StrCat("unknown table ", table_array ? "[[" : "[", prefix,
                     absl::CHexEscape(AbslView(key.substr(0, 64))), table_array ? "]]" : "]");
    std::string_view nearest = base::NearestName(key, tables);
    if (!nearest.empty()) {
      const KeySchema* spec = schema.Find(nearest);
      bool is_array = spec->kind == K::kTableArray;
      absl::StrAppend(&message, " (did you mean ", is_array ? "[[" : "[", prefix, AbslView(nearest),
                      is_array ? "]]" : "]", "?)");
    }
    diagnostics.Add(line, std::move(message));
    return;
  }
  std::vector<std::string_view> names;
  for (const KeySchema& spec : schema.keys) names.push_back(spec.name);
  std::string where = schema_path.empty() ? "at top level"
                      : array_element     ? absl::StrCat("in [[", schema_path, "]]")
                                          : absl::StrCat("in [", schema_path, "]");
  std::string message = absl::StrCat("unknown key ", base::QuoteKey(key), " ", where);
  std::string_view nearest = base::NearestName(key, names);
  if (!nearest.empty()) absl::StrAppend(&message, " (did you mean '", AbslView(nearest), "'?)");
  diagnostics.Add(line, std::move(message));
}

void CheckTable(const toml::table& table, const TableSchema& schema, const std::string& path,
                const std::string& schema_path, bool array_element,
                base::FileDiagnostics& diagnostics) {
  for (auto&& [key, node] : table) {
    const KeySchema* spec = schema.Find(key.str());
    int64_t line = key.source().begin.line > 0 ? key.source().begin.line : LineOf(node);
    if (spec == nullptr) {
      ReportUnknown(key.str(), node, line, schema, schema_path, array_element, diagnostics);
      continue;
    }
    auto join = [&](const std::string& prefix) {
      return prefix.empty() ? std::string(spec->name)
                            : absl::StrCat(prefix, ".", AbslView(spec->name));
    };
    CheckValue(node, *spec, join(path), join(schema_path), diagnostics);
  }
}

}  // namespace

const KeySchema* TableSchema::Find(std::string_view name) const {
  for (const KeySchema& key : keys) {
    if (key.name == name) return &key;
  }
  return nullptr;
}

const TableSchema& ConfigSchema() {
  // Built once from the declarations: each key goes into the table its path's prefix names,
  // which is declared before it.
  static const TableSchema* const kRoot = [] {
    std::map<std::string_view, TableSchema*> tables;
    auto* root = new TableSchema();
    tables[""] = root;
    for (const ConfigKey& key : ConfigKeys()) {
      const size_t dot = key.path.rfind('.');
      const std::string_view parent =
          dot == std::string_view::npos ? std::string_view() : key.path.substr(0, dot);
      const std::string_view name =
          dot == std::string_view::npos ? key.path : key.path.substr(dot + 1);
      KeySchema spec{.name = name, .kind = key.kind, .secret = key.secret};
      if (key.kind == K::kTable || key.kind == K::kTableArray) {
        auto* table = new TableSchema();
        tables[key.path] = table;
        spec.table = table;
      }
      tables.at(parent)->keys.push_back(spec);
    }
    return root;
  }();
  return *kRoot;
}

const std::vector<std::string_view>& SecretKeyNames() {
  static const std::vector<std::string_view>* const kNames = [] {
    auto* names = new std::vector<std::string_view>();
    std::vector<const TableSchema*> pending = {&ConfigSchema()};
    while (!pending.empty()) {
      const TableSchema* table = pending.back();
      pending.pop_back();
      for (const KeySchema& key : table->keys) {
        if (key.secret && std::find(names->begin(), names->end(), key.name) == names->end()) {
          names->push_back(key.name);
        }
        if (key.table != nullptr) pending.push_back(key.table);
      }
    }
    return names;
  }();
  return *kNames;
}

void CheckSchema(const toml::table& root, base::FileDiagnostics& diagnostics) {
  CheckTable(root, ConfigSchema(), "", "", /*array_element=*/false, diagnostics);
}

}  // namespace herald::config
