// skills/tool_search/tool_definition.cc
#include "skills/tool_search/tool_definition.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "component/base/absl_string_view.h"
#include "skills/json_schema.h"
#include "skills/tool_search/url_template.h"

namespace herald::skills {
namespace {

using Json = nlohmann::json;

absl::Status FieldError(absl::string_view field, absl::string_view problem) {
  return absl::InvalidArgumentError(absl::StrCat(field, ": ", problem));
}

bool HasControlBytes(std::string_view text) {
  return std::any_of(text.begin(), text.end(),
                     [](char c) { return static_cast<unsigned char>(c) < 0x20 && c != '\t'; });
}

// A string field: present when `required`, a string, at most `limit` bytes, one line.
absl::Status ReadText(const Json& object, const std::string& field, bool required, size_t limit,
                      std::string* out) {
  auto value = object.find(field);
  if (value == object.end() || value->is_null()) {
    return required ? FieldError(field, "missing") : absl::OkStatus();
  }
  if (!value->is_string()) return FieldError(field, "must be a string");
  const auto& text = value->get_ref<const std::string&>();
  if (required && text.empty()) return FieldError(field, "must not be empty");
  if (text.size() > limit) return FieldError(field, absl::StrCat("longer than ", limit, " bytes"));
  if (HasControlBytes(text)) return FieldError(field, "must not contain control characters");
  *out = text;
  return absl::OkStatus();
}

bool IsEnvName(std::string_view name) {
  if (name.empty() || name.size() > 128 || absl::ascii_isdigit(name[0])) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return absl::ascii_isupper(c) || absl::ascii_isdigit(c) || c == '_';
  });
}

absl::Status ReadRequiredEnv(const Json& object, ToolDefinition* tool) {
  auto list = object.find("required_env");
  if (list == object.end() || list->is_null()) return absl::OkStatus();
  if (!list->is_array()) return FieldError("required_env", "must be an array");
  for (size_t i = 0; i < list->size(); ++i) {
    const std::string field = absl::StrCat("required_env[", i, "]");
    const Json& entry = (*list)[i];
    if (!entry.is_object()) return FieldError(field, "must be an object {name, description, url}");
    CredentialRequirement need;
    if (auto s = ReadText(entry, "name", true, 128, &need.name); !s.ok()) {
      return FieldError(field, s.message());
    }
    if (!IsEnvName(need.name)) {
      return FieldError(field, "name must be an environment variable name like API_KEY");
    }
    if (auto s = ReadText(entry, "description", false, 1024, &need.description); !s.ok()) {
      return FieldError(field, s.message());
    }
    if (auto s = ReadText(entry, "url", false, 2048, &need.where_to_get); !s.ok()) {
      return FieldError(field, s.message());
    }
    tool->required_env.push_back(std::move(need));
  }
  return absl::OkStatus();
}

bool IsHeaderName(std::string_view name) {
  static constexpr std::string_view kSpecials = "!#$%&'*+-.^_`|~";
  return !name.empty() && name.size() <= 64 && std::all_of(name.begin(), name.end(), [](char c) {
    return absl::ascii_isalnum(c) || kSpecials.find(c) != std::string_view::npos;
  });
}

// Headers the HTTP client sets itself, or that would change how the request is framed or
// routed: not a registry line's to choose.
bool IsReservedHeader(std::string_view name) {
  static constexpr std::string_view kReserved[] = {"host",
                                                   "content-length",
                                                   "transfer-encoding",
                                                   "connection",
                                                   "keep-alive",
                                                   "upgrade",
                                                   "te",
                                                   "trailer",
                                                   "expect",
                                                   "proxy-authorization",
                                                   "proxy-connection",
                                                   "user-agent"};
  const std::string lower = absl::AsciiStrToLower(AbslView(name));
  return std::find(std::begin(kReserved), std::end(kReserved), lower) != std::end(kReserved);
}

absl::Status ReadHeaders(const Json& e, ToolExecutor* executor) {
  auto headers = e.find("headers");
  if (headers == e.end() || headers->is_null()) return absl::OkStatus();
  if (!headers->is_object() || headers->size() > 32) {
    return FieldError("executor", "headers must be an object of at most 32 name: value pairs");
  }
  for (const auto& [name, value] : headers->items()) {
    if (!IsHeaderName(name)) {
      return FieldError("executor",
                        absl::StrCat("'", name.substr(0, 64), "' is not a header name"));
    }
    if (IsReservedHeader(name)) {
      return FieldError("executor", absl::StrCat("the ", name, " header is Herald's to set"));
    }
    if (!value.is_string() || value.get_ref<const std::string&>().size() > 4096 ||
        HasControlBytes(value.get_ref<const std::string&>())) {
      return FieldError("executor", absl::StrCat("header ", name,
                                                 " must be a string of at most 4096 bytes "
                                                 "without control characters"));
    }
    executor->headers.emplace_back(name, value.get<std::string>());
  }
  return absl::OkStatus();
}

// The executor's templates name only the arguments the schema lists and the credentials the
// tool asks for: anything else could never be filled in.
absl::Status CheckHttpTemplates(const ToolDefinition& tool) {
  const ToolExecutor& e = tool.executor;
  const Json* properties = nullptr;
  if (auto found = tool.input_schema.find("properties");
      found != tool.input_schema.end() && found->is_object()) {
    properties = &*found;
  }
  auto check = [&](const std::string& where, std::string_view text) -> absl::Status {
    absl::StatusOr<std::vector<TemplatePart>> parts = ParseUrlTemplate(text);
    if (!parts.ok())
      return FieldError("executor", absl::StrCat(where, ": ", parts.status().message()));
    for (const TemplatePart& part : *parts) {
      if (part.kind == TemplatePart::Kind::kArgument &&
          (properties == nullptr || !properties->contains(part.text))) {
        return FieldError("executor", absl::StrCat(where, ": {", part.text,
                                                   "} is not a property of input_schema"));
      }
      if (part.kind == TemplatePart::Kind::kSecret &&
          std::none_of(tool.required_env.begin(), tool.required_env.end(),
                       [&](const CredentialRequirement& need) { return need.name == part.text; })) {
        return FieldError(
            "executor", absl::StrCat(where, ": ${", part.text, "} is not listed in required_env"));
      }
    }
    return absl::OkStatus();
  };
  if (absl::Status s = check("url", e.url); !s.ok()) return s;
  for (const auto& [name, value] : e.headers) {
    if (absl::Status s = check(absl::StrCat("header ", name), value); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status ReadExecutor(const Json& object, ToolExecutor* executor) {
  auto found = object.find("executor");
  if (found == object.end()) return FieldError("executor", "missing");
  if (!found->is_object()) return FieldError("executor", "must be an object");
  const Json& e = *found;
  std::string type;
  for (const char* key : {"type", "kind"}) {
    if (auto s = ReadText(e, key, false, 16, &type); !s.ok())
      return FieldError("executor", s.message());
    if (!type.empty()) break;
  }
  if (type.empty()) {  // left out: the fields say which
    type = e.contains("url")      ? "http"
           : e.contains("server") ? "mcp"
           : e.contains("skill")  ? "skill"
                                  : "";
  }
  if (type == "mcp") {
    executor->kind = ToolExecutor::Kind::kMcp;
    if (auto s = ReadText(e, "server", true, 128, &executor->server); !s.ok()) {
      return FieldError("executor", s.message());
    }
    if (auto s = ReadText(e, "tool", true, 256, &executor->tool); !s.ok()) {
      return FieldError("executor", s.message());
    }
    return absl::OkStatus();
  }
  if (type == "skill") {
    executor->kind = ToolExecutor::Kind::kSkill;
    if (auto s = ReadText(e, "skill", true, 128, &executor->skill); !s.ok()) {
      return FieldError("executor", s.message());
    }
    return absl::OkStatus();
  }
  if (type == "http") {
    executor->kind = ToolExecutor::Kind::kHttp;
    if (auto s = ReadText(e, "url", true, 2048, &executor->url); !s.ok()) {
      return FieldError("executor", s.message());
    }
    if (!absl::StartsWithIgnoreCase(executor->url, "https://") &&
        !absl::StartsWithIgnoreCase(executor->url, "http://")) {
      return FieldError("executor", "url must start with https:// or http://");
    }
    if (auto s = ReadText(e, "method", false, 8, &executor->method); !s.ok()) {
      return FieldError("executor", s.message());
    }
    absl::AsciiStrToUpper(&executor->method);
    if (executor->method.empty()) executor->method = "GET";
    static constexpr std::string_view kMethods[] = {"GET", "POST", "PUT", "PATCH", "DELETE"};
    if (std::find(std::begin(kMethods), std::end(kMethods), executor->method) ==
        std::end(kMethods)) {
      return FieldError("executor", "method must be GET, POST, PUT, PATCH or DELETE");
    }
    return ReadHeaders(e, executor);
  }
  return FieldError("executor", "type must be mcp, skill or http");
}

}  // namespace

absl::StatusOr<ToolDefinition> ParseToolDefinition(std::string_view line) {
  if (line.size() > kMaxToolLineBytes) {
    return absl::InvalidArgumentError(absl::StrCat("longer than ", kMaxToolLineBytes, " bytes"));
  }
  const Json object = Json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (object.is_discarded()) return absl::InvalidArgumentError("not valid JSON");
  if (!object.is_object()) return absl::InvalidArgumentError("not a JSON object");
  ToolDefinition tool;
  if (auto s = ReadText(object, "id", true, kMaxToolIdBytes, &tool.id); !s.ok()) return s;
  if (auto s = ReadText(object, "name", true, kMaxToolNameBytes, &tool.name); !s.ok()) return s;
  if (auto s = ReadText(object, "description", true, kMaxToolDescriptionBytes, &tool.description);
      !s.ok()) {
    return s;
  }
  if (auto s = ReadText(object, "category", false, 64, &tool.category); !s.ok()) return s;
  auto schema = object.find("input_schema");
  if (schema == object.end()) return FieldError("input_schema", "missing");
  if (!schema->is_object() || schema->value("type", "") != "object") {
    return FieldError("input_schema", "must be a JSON Schema object with \"type\": \"object\"");
  }
  if (auto s = CheckSchema(*schema); !s.ok()) return FieldError("input_schema", s.message());
  tool.input_schema = *schema;
  if (auto tags = object.find("tags"); tags != object.end() && !tags->is_null()) {
    if (!tags->is_array() || tags->size() > 64) {
      return FieldError("tags", "must be an array of at most 64 strings");
    }
    for (const Json& tag : *tags) {
      if (!tag.is_string() || tag.get_ref<const std::string&>().size() > 64 ||
          HasControlBytes(tag.get_ref<const std::string&>())) {
        return FieldError("tags", "each tag must be a string of at most 64 bytes");
      }
      tool.tags.push_back(tag.get<std::string>());
    }
  }
  if (auto s = ReadRequiredEnv(object, &tool); !s.ok()) return s;
  if (auto s = ReadExecutor(object, &tool.executor); !s.ok()) return s;
  if (tool.executor.kind == ToolExecutor::Kind::kHttp) {
    if (auto s = CheckHttpTemplates(tool); !s.ok()) return s;
  }
  return tool;
}

std::string_view ExecutorKindName(ToolExecutor::Kind kind) {
  switch (kind) {
    case ToolExecutor::Kind::kMcp:
      return "mcp";
    case ToolExecutor::Kind::kSkill:
      return "skill";
    case ToolExecutor::Kind::kHttp:
      return "http";
  }
  return "skill";
}

nlohmann::json ToolDefinitionToJson(const ToolDefinition& tool) {
  Json out = {{"id", tool.id},
              {"name", tool.name},
              {"description", tool.description},
              {"input_schema", tool.input_schema}};
  if (!tool.tags.empty()) out["tags"] = tool.tags;
  if (!tool.category.empty()) out["category"] = tool.category;
  if (!tool.required_env.empty()) {
    Json needs = Json::array();
    for (const CredentialRequirement& need : tool.required_env) {
      needs.push_back(
          {{"name", need.name}, {"description", need.description}, {"url", need.where_to_get}});
    }
    out["required_env"] = std::move(needs);
  }
  const ToolExecutor& e = tool.executor;
  Json executor = {{"type", ExecutorKindName(e.kind)}};
  switch (e.kind) {
    case ToolExecutor::Kind::kMcp:
      executor["server"] = e.server;
      executor["tool"] = e.tool;
      break;
    case ToolExecutor::Kind::kSkill:
      executor["skill"] = e.skill;
      break;
    case ToolExecutor::Kind::kHttp:
      executor["method"] = e.method;
      executor["url"] = e.url;
      if (!e.headers.empty()) {
        Json headers = Json::object();
        for (const auto& [name, value] : e.headers) headers[name] = value;
        executor["headers"] = std::move(headers);
      }
      break;
  }
  out["executor"] = std::move(executor);
  return out;
}

}  // namespace herald::skills
