#include "component/config/schema.h"

#include <algorithm>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "component/base/edit_distance.h"

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
                const std::string& schema_path, bool array_element, Diagnostics& diagnostics);

void WrongType(const toml::node& node, std::string_view path, std::string_view expected,
               Diagnostics& diagnostics) {
  diagnostics.Add(LineOf(node),
                  absl::StrCat("wrong type for ", AbslView(path), ": expected ", AbslView(expected),
                               ", got ", AbslView(NodeTypeName(node))));
}

void CheckValue(const toml::node& node, const KeySchema& spec, const std::string& path,
                const std::string& schema_path, Diagnostics& diagnostics) {
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
                   Diagnostics& diagnostics) {
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
    std::string_view nearest = NearestName(key, tables);
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
  std::string message = absl::StrCat("unknown key ", QuoteKey(key), " ", where);
  std::string_view nearest = NearestName(key, names);
  if (!nearest.empty()) absl::StrAppend(&message, " (did you mean '", AbslView(nearest), "'?)");
  diagnostics.Add(line, std::move(message));
}

void CheckTable(const toml::table& table, const TableSchema& schema, const std::string& path,
                const std::string& schema_path, bool array_element, Diagnostics& diagnostics) {
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
  static const TableSchema* const kRoot = [] {
    auto* server = new TableSchema{{
        {"mode", K::kString},
        {"host", K::kString},
        {"port", K::kInteger},
        {"component_domain", K::kString},
        {"component_secret", K::kString, /*secret=*/true},
        {"jid", K::kString},
        {"password", K::kString, /*secret=*/true},
        {"resource", K::kString},
        {"starttls", K::kString},
        {"tls_verify", K::kBoolean},
        {"tls_ca_file", K::kString},
        {"whitespace_keepalive_seconds", K::kInteger},
        {"ping_interval_seconds", K::kInteger},
        {"ping_timeout_seconds", K::kInteger},
        {"reconnect_initial_ms", K::kInteger},
        {"reconnect_max_ms", K::kInteger},
        {"reconnect_on_permanent_errors", K::kBoolean},
        {"outbound_queue_limit", K::kInteger},
        {"max_stanza_bytes", K::kInteger},
        {"max_outbound_stanza_bytes", K::kInteger},
        {"muc_services", K::kStringArray},
    }};
    auto* agent = new TableSchema{{
        {"name", K::kString},
        {"allowed_jids", K::kStringArray},
        {"allowed_domains", K::kStringArray},
        {"admin_jids", K::kStringArray},
        {"dev_command_jids", K::kStringArray},
        {"unallowed", K::kString},
        {"max_tool_rounds", K::kInteger},
        {"mailbox_limit", K::kInteger},
        {"rate_limit_per_minute", K::kInteger},
        {"session_idle_minutes", K::kInteger},
        {"history_messages", K::kInteger},
        {"carry_over_summary", K::kBoolean},
        {"injection_policy", K::kString},
        {"injection_phrases", K::kStringArray},
    }};
    auto* log = new TableSchema{{{"level", K::kString}}};
    auto* tiers = new TableSchema{{
        {"heavy", K::kString},
        {"standard", K::kString},
        {"light", K::kString},
        {"vision", K::kString},
    }};
    auto* hosted_provider = new TableSchema{{
        {"api_key", K::kString, /*secret=*/true},
        {"base_url", K::kString},
    }};
    auto* ollama = new TableSchema{{{"host", K::kString}}};
    auto* scripted = new TableSchema{{{"rules_file", K::kString}}};
    auto* llm = new TableSchema{{
        {"default", K::kString},
        {"fallback", K::kStringArray},
        {"tiers", K::kTable, false, tiers},
        {"anthropic", K::kTable, false, hosted_provider},
        {"openai", K::kTable, false, hosted_provider},
        {"ollama", K::kTable, false, ollama},
        {"scripted", K::kTable, false, scripted},
        {"max_tokens", K::kInteger},
        {"stream", K::kBoolean},
        {"connect_timeout_seconds", K::kInteger},
        {"request_timeout_seconds", K::kInteger},
        {"max_retries", K::kInteger},
        {"circuit_breaker_failures", K::kInteger},
        {"circuit_breaker_cooldown_seconds", K::kInteger},
    }};
    auto* memory = new TableSchema{{{"path", K::kString}}};
    auto* room = new TableSchema{{
        {"jid", K::kString},
        {"nick", K::kString},
        {"activation", K::kString},
    }};
    auto* price = new TableSchema{{
        {"model", K::kString},
        {"input_per_mtok", K::kNumber},
        {"output_per_mtok", K::kNumber},
    }};
    auto* quota = new TableSchema{{
        {"daily_tokens", K::kInteger},
        {"path", K::kString},
        {"prices", K::kTableArray, false, price},
    }};
    auto* url_fetch = new TableSchema{{
        {"max_bytes", K::kInteger},
        {"max_text_bytes", K::kInteger},
        {"timeout_seconds", K::kInteger},
        {"allowed_content_types", K::kStringArray},
        {"allow_hosts", K::kStringArray},
        {"user_agent", K::kString},
    }};
    auto* web_search = new TableSchema{{
        {"backend", K::kString},
        {"url", K::kString},
        {"api_key", K::kString, /*secret=*/true},
        {"max_results", K::kInteger},
        {"timeout_seconds", K::kInteger},
    }};
    auto* approvals = new TableSchema{{
        {"categories", K::kStringArray},
        {"skills", K::kStringArray},
        {"exempt_skills", K::kStringArray},
        {"safe_mode_jids", K::kStringArray},
        {"timeout_seconds", K::kInteger},
    }};
    auto* mcp_server = new TableSchema{{
        {"name", K::kString},
        {"command", K::kStringArray},
        {"capabilities", K::kStringArray},
        {"environment", K::kStringTable, /*secret=*/true},
        {"url", K::kString},
        {"headers", K::kStringTable, /*secret=*/true},
        {"timeout_seconds", K::kInteger},
        {"memory_mb", K::kInteger},
        {"max_processes", K::kInteger},
        {"enabled", K::kBoolean},
    }};
    auto* sandbox = new TableSchema{{
        {"require", K::kStringArray},
    }};
    auto* skills = new TableSchema{{
        {"enabled", K::kStringArray},
        {"path", K::kString},
        {"sandbox_uid_base", K::kInteger},
        {"sandbox", K::kTable, false, sandbox},
        {"url_fetch", K::kTable, false, url_fetch},
        {"web_search", K::kTable, false, web_search},
        {"mcp", K::kTableArray, false, mcp_server},
        {"approvals", K::kTable, false, approvals},
        {"credential_timeout_seconds", K::kInteger},
        {"credentials_path", K::kString},
        {"credentials_key_file", K::kString},
        {"credentials_previous_key_files", K::kStringArray},
    }};
    auto* token = new TableSchema{{
        {"name", K::kString},
        // A hash, but a careless operator may paste the token itself here.
        {"token_sha256", K::kString, /*secret=*/true},
        {"scopes", K::kStringArray},
    }};
    auto* control = new TableSchema{{
        {"listen", K::kString},
        {"tokens", K::kTableArray, false, token},
        {"tls_cert", K::kString},
        {"tls_key", K::kString},
        {"tls_client_ca", K::kString},
        {"audit_path", K::kString},
        {"state_path", K::kString},
        {"shutdown_grace_seconds", K::kInteger},
        {"subscriber_queue_limit", K::kInteger},
    }};
    return new TableSchema{{
        {"server", K::kTable, false, server},
        {"agent", K::kTable, false, agent},
        {"log", K::kTable, false, log},
        {"llm", K::kTable, false, llm},
        {"memory", K::kTable, false, memory},
        {"rooms", K::kTableArray, false, room},
        {"quota", K::kTable, false, quota},
        {"skills", K::kTable, false, skills},
        {"control", K::kTable, false, control},
    }};
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

void CheckSchema(const toml::table& root, Diagnostics& diagnostics) {
  CheckTable(root, ConfigSchema(), "", "", /*array_element=*/false, diagnostics);
}

std::string_view NearestName(std::string_view unknown, const std::vector<std::string_view>& known) {
  // Names in the file are short; a long unknown name cannot be a typo of one and would only
  // cost time (the distance is quadratic).
  if (unknown.empty() || unknown.size() > 64) return {};
  std::string_view best;
  size_t best_distance = SIZE_MAX;
  for (std::string_view name : known) {
    size_t distance = base::EditDistance(unknown, name);
    if (distance < best_distance) {
      best = name;
      best_distance = distance;
    }
  }
  const size_t longest = std::max(unknown.size(), best.size());
  const size_t allowed = std::max<size_t>(1, std::min<size_t>(3, longest / 3));
  return best_distance <= allowed ? best : std::string_view();
}

}  // namespace herald::config
