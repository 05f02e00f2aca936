#include "skills/json_schema.h"

#include <cmath>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "component/base/absl_string_view.h"
#include "component/base/utf8.h"

namespace herald::skills {
namespace {

using Json = nlohmann::json;

constexpr size_t kMaxShownBytes = 60;  // of a value or a name echoed in a message

const std::vector<std::string_view>& TypeNames() {
  static const auto* names = new std::vector<std::string_view>{
      "object", "array", "string", "integer", "number", "boolean", "null"};
  return *names;
}

bool IsTypeName(const Json& name) {
  if (!name.is_string()) return false;
  for (std::string_view known : TypeNames()) {
    if (name.get_ref<const std::string&>() == known) return true;
  }
  return false;
}

bool IsIntegral(const Json& value) {
  if (value.is_number_integer() || value.is_number_unsigned()) return true;
  if (!value.is_number_float()) return false;
  const double d = value.get<double>();
  return std::isfinite(d) && std::floor(d) == d;
}

// The JSON Schema type of a value, as the model would call it.
std::string_view TypeOf(const Json& value) {
  switch (value.type()) {
    case Json::value_t::object:
      return "object";
    case Json::value_t::array:
      return "array";
    case Json::value_t::string:
      return "string";
    case Json::value_t::boolean:
      return "boolean";
    case Json::value_t::null:
      return "null";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
      return "integer";
    default:
      return "number";
  }
}

bool HasType(const Json& value, std::string_view type) {
  if (type == "integer") return IsIntegral(value);
  if (type == "number") return value.is_number();
  return TypeOf(value) == type;
}

std::string Cut(std::string text) {
  if (!base::TruncateUtf8(text, kMaxShownBytes)) return text;
  return text + "\xE2\x80\xA6";
}

std::string Show(const Json& value) {
  return Cut(value.dump(-1, ' ', false, Json::error_handler_t::replace));
}

size_t CodePoints(const std::string& text) {
  size_t count = 0;
  for (unsigned char c : text) count += (c & 0xC0) != 0x80;
  return count;
}

std::string Plural(uint64_t n, std::string_view word) {
  return absl::StrCat(n, " ", AbslView(word), n == 1 ? "" : "s");
}

bool IsCount(const Json& value) { return IsIntegral(value) && value.get<double>() >= 0; }

bool IsSchema(const Json& value) { return value.is_object() || value.is_boolean(); }

absl::Status SchemaError(std::string_view keyword, std::string_view expected) {
  return absl::InvalidArgumentError(
      absl::StrCat("schema keyword '", AbslView(keyword), "' must be ", AbslView(expected)));
}

absl::Status Check(const Json& schema, int depth) {
  if (depth > kMaxSchemaDepth) {
    return absl::InvalidArgumentError(
        absl::StrCat("schema nested deeper than ", kMaxSchemaDepth, " levels"));
  }
  if (schema.is_boolean()) return absl::OkStatus();
  if (!schema.is_object()) return absl::InvalidArgumentError("a schema must be an object");
  if (auto it = schema.find("type"); it != schema.end()) {
    bool ok = IsTypeName(*it);
    if (it->is_array() && !it->empty()) {
      ok = true;
      for (const Json& name : *it) ok = ok && IsTypeName(name);
    }
    if (!ok) {
      return SchemaError("type",
                         "one of object, array, string, integer, number, boolean, null, or a "
                         "non-empty array of them");
    }
  }
  if (auto it = schema.find("properties"); it != schema.end()) {
    if (!it->is_object()) return SchemaError("properties", "an object of schemas");
    for (const auto& [name, property] : it->items()) {
      absl::Status status = Check(property, depth + 1);
      if (!status.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat("property '", Cut(name), "': ", status.message()));
      }
    }
  }
  if (auto it = schema.find("required"); it != schema.end()) {
    if (!it->is_array()) return SchemaError("required", "an array of names");
    for (const Json& name : *it) {
      if (!name.is_string()) return SchemaError("required", "an array of names");
    }
  }
  if (auto it = schema.find("enum"); it != schema.end() && (!it->is_array() || it->empty())) {
    return SchemaError("enum", "a non-empty array");
  }
  for (const char* keyword : {"minimum", "maximum"}) {
    if (auto it = schema.find(keyword); it != schema.end() && !it->is_number()) {
      return SchemaError(keyword, "a number");
    }
  }
  for (const char* keyword : {"minLength", "maxLength", "minItems", "maxItems"}) {
    if (auto it = schema.find(keyword); it != schema.end() && !IsCount(*it)) {
      return SchemaError(keyword, "a non-negative integer");
    }
  }
  // "items" as an array is the tuple form of older drafts: outside the subset, ignored.
  if (auto it = schema.find("items"); it != schema.end() && !it->is_array()) {
    if (!IsSchema(*it)) return SchemaError("items", "a schema");
    absl::Status status = Check(*it, depth + 1);
    if (!status.ok()) return status;
  }
  if (auto it = schema.find("additionalProperties"); it != schema.end()) {
    if (!IsSchema(*it)) return SchemaError("additionalProperties", "a boolean or a schema");
    absl::Status status = Check(*it, depth + 1);
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

class Validator {
 public:
  absl::Status Validate(const Json& schema, const Json& value, const std::string& path, int depth) {
    if (depth > kMaxSchemaDepth) {
      return absl::InvalidArgumentError(
          absl::StrCat("schema nested deeper than ", kMaxSchemaDepth, " levels"));
    }
    if (schema.is_boolean()) {
      if (schema.get<bool>()) return absl::OkStatus();
      return Error(path, "is not allowed");
    }
    if (!schema.is_object()) return absl::OkStatus();  // CheckSchema refuses these

    if (auto it = schema.find("type"); it != schema.end()) {
      std::vector<std::string> expected;
      bool matches = false;
      if (it->is_string()) {
        expected.push_back(it->get<std::string>());
      } else if (it->is_array()) {
        for (const Json& name : *it) {
          if (name.is_string()) expected.push_back(name.get<std::string>());
        }
      }
      for (const std::string& type : expected) matches = matches || HasType(value, type);
      if (!expected.empty() && !matches) {
        return Error(path, absl::StrCat("expected ", absl::StrJoin(expected, " or "), ", got ",
                                        AbslView(TypeOf(value))));
      }
    }

    if (auto it = schema.find("enum"); it != schema.end() && it->is_array()) {
      bool found = false;
      for (const Json& allowed : *it) found = found || allowed == value;
      if (!found) {
        std::vector<std::string> shown;
        for (const Json& allowed : *it) shown.push_back(Show(allowed));
        return Error(path, absl::StrCat("expected one of ", absl::StrJoin(shown, ", "), "; got ",
                                        Show(value)));
      }
    }

    if (value.is_number()) {
      if (auto it = schema.find("minimum");
          it != schema.end() && it->is_number() && Less(value, *it)) {
        return Error(path, absl::StrCat("must be at least ", Show(*it), ", got ", Show(value)));
      }
      if (auto it = schema.find("maximum");
          it != schema.end() && it->is_number() && Less(*it, value)) {
        return Error(path, absl::StrCat("must be at most ", Show(*it), ", got ", Show(value)));
      }
    }

    if (value.is_string()) {
      const size_t length = CodePoints(value.get_ref<const std::string&>());
      if (auto it = schema.find("minLength");
          it != schema.end() && IsCount(*it) && length < it->get<double>()) {
        return Error(path,
                     absl::StrCat("must have at least ", Plural(it->get<uint64_t>(), "character"),
                                  ", got ", length));
      }
      if (auto it = schema.find("maxLength");
          it != schema.end() && IsCount(*it) && length > it->get<double>()) {
        return Error(path,
                     absl::StrCat("must have at most ", Plural(it->get<uint64_t>(), "character"),
                                  ", got ", length));
      }
    }

    if (value.is_array()) {
      if (auto it = schema.find("minItems");
          it != schema.end() && IsCount(*it) && value.size() < it->get<double>()) {
        return Error(path, absl::StrCat("must have at least ", Plural(it->get<uint64_t>(), "item"),
                                        ", got ", value.size()));
      }
      if (auto it = schema.find("maxItems");
          it != schema.end() && IsCount(*it) && value.size() > it->get<double>()) {
        return Error(path, absl::StrCat("must have at most ", Plural(it->get<uint64_t>(), "item"),
                                        ", got ", value.size()));
      }
      if (auto it = schema.find("items"); it != schema.end() && IsSchema(*it)) {
        for (size_t i = 0; i < value.size(); ++i) {
          absl::Status status = Validate(*it, value[i], absl::StrCat(path, "[", i, "]"), depth + 1);
          if (!status.ok()) return status;
        }
      }
    }

    if (value.is_object()) {
      absl::Status status = ValidateObject(schema, value, path, depth);
      if (!status.ok()) return status;
    }
    return absl::OkStatus();
  }

 private:
  static bool Less(const Json& a, const Json& b) {
    // Exact for integers (a double cannot hold every int64), by value otherwise.
    if (a.is_number_integer() && b.is_number_integer()) return a.get<int64_t>() < b.get<int64_t>();
    if (a.is_number_unsigned() && b.is_number_unsigned()) {
      return a.get<uint64_t>() < b.get<uint64_t>();
    }
    return a.get<double>() < b.get<double>();
  }

  static std::string Child(const std::string& path, const std::string& name) {
    return path.empty() ? Cut(name) : absl::StrCat(path, ".", Cut(name));
  }

  static absl::Status Error(const std::string& path, std::string_view problem) {
    if (path.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("arguments: ", AbslView(problem)));
    }
    return absl::InvalidArgumentError(absl::StrCat("argument '", path, "': ", AbslView(problem)));
  }

  absl::Status ValidateObject(const Json& schema, const Json& value, const std::string& path,
                              int depth) {
    if (auto it = schema.find("required"); it != schema.end() && it->is_array()) {
      for (const Json& name : *it) {
        if (name.is_string() && !value.contains(name.get_ref<const std::string&>())) {
          return absl::InvalidArgumentError(absl::StrCat(
              "missing required argument '", Child(path, name.get<std::string>()), "'"));
        }
      }
    }
    const Json* properties = nullptr;
    if (auto it = schema.find("properties"); it != schema.end() && it->is_object()) {
      properties = &*it;
    }
    const Json* additional = nullptr;
    if (auto it = schema.find("additionalProperties"); it != schema.end() && IsSchema(*it)) {
      additional = &*it;
    }
    for (const auto& [name, item] : value.items()) {
      const Json* property_schema = nullptr;
      if (properties != nullptr) {
        if (auto it = properties->find(name); it != properties->end()) property_schema = &*it;
      }
      if (property_schema == nullptr && additional != nullptr && additional->is_boolean() &&
          !additional->get<bool>()) {
        std::vector<std::string> known;
        if (properties != nullptr) {
          for (const auto& [known_name, unused] : properties->items()) known.push_back(known_name);
        }
        return absl::InvalidArgumentError(absl::StrCat(
            "unexpected argument '", Child(path, name), "'",
            known.empty() ? " (none are expected)"
                          : absl::StrCat(" (expected: ", absl::StrJoin(known, ", "), ")")));
      }
      if (property_schema == nullptr) property_schema = additional;
      if (property_schema == nullptr) continue;
      absl::Status status = Validate(*property_schema, item, Child(path, name), depth + 1);
      if (!status.ok()) return status;
    }
    return absl::OkStatus();
  }
};

}  // namespace

absl::Status CheckSchema(const nlohmann::json& schema) { return Check(schema, 0); }

absl::Status ValidateAgainstSchema(const nlohmann::json& schema, const nlohmann::json& value) {
  try {
    return Validator().Validate(schema, value, "", 0);
  } catch (const nlohmann::json::exception& e) {
    // Not expected (every access is type-checked first); never let it cross the boundary.
    return absl::InvalidArgumentError(absl::StrCat("arguments could not be checked: ", e.what()));
  }
}

}  // namespace herald::skills
