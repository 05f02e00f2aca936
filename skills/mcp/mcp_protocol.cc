#include "skills/mcp/mcp_protocol.h"

#include <algorithm>
#include <memory>
#include <optional>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "component/base/absl_string_view.h"
#include "component/base/utf8.h"
#include "skills/json_schema.h"

namespace herald::skills::mcp {
namespace {

constexpr size_t kMaxRegistryName = 64;
constexpr size_t kMaxServerName = 32;

// At most `limit` bytes of `text`, never cutting a UTF-8 sequence.
std::string CutUtf8(std::string_view text, size_t limit) {
  return std::string(text.substr(0, base::Utf8Boundary(text, limit)));
}

std::string StringField(const nlohmann::json& object, const char* key) {
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// The file an image, audio or binary resource item carries ("data" or "resource.blob": base64,
// with its "mimeType"), for the person; nullopt when it carries none that decodes.
std::optional<OutgoingFile> ItemFile(const nlohmann::json& item) {
  const std::string type = StringField(item, "type");
  const nlohmann::json* holder = &item;
  const char* field = "data";
  if (type == "resource") {
    const auto resource = item.find("resource");
    if (resource == item.end() || !resource->is_object()) return std::nullopt;
    holder = &*resource;
    field = "blob";
  } else if (type != "image" && type != "audio") {
    return std::nullopt;
  }
  const auto data = holder->find(field);
  if (data == holder->end() || !data->is_string()) return std::nullopt;
  std::string bytes;
  if (!absl::Base64Unescape(data->get_ref<const std::string&>(), &bytes) || bytes.empty()) {
    return std::nullopt;
  }
  std::string name = StringField(*holder, "uri");
  const size_t slash = name.find_last_of('/');
  if (slash != std::string::npos) name = name.substr(slash + 1);
  if (name.empty()) name = type == "audio" ? "audio" : (type == "image" ? "image" : "file");
  return OutgoingFile{.name = CutUtf8(name, 100),
                      .media_type = CutUtf8(StringField(*holder, "mimeType"), 100),
                      .bytes = std::make_shared<const std::string>(std::move(bytes))};
}

std::string DescribeItem(const nlohmann::json& item, FileOutbox* files) {
  const std::string type = StringField(item, "type");
  if (files != nullptr) {
    if (std::optional<OutgoingFile> file = ItemFile(item)) {
      const std::string what =
          absl::StrCat("[", type, ": ", file->media_type, ", ", file->bytes->size(), " bytes: ");
      absl::Status kept = files->Add(*std::move(file));
      return kept.ok() ? absl::StrCat(what, "sent to the user as a file after your answer]")
                       : absl::StrCat(what, "not sent: ", kept.message(), "]");
    }
  }
  if (type == "image" || type == "audio") {
    const auto data = item.find("data");
    const size_t size =
        data != item.end() && data->is_string() ? data->get_ref<const std::string&>().size() : 0;
    return absl::StrCat("[", type, ": ", CutUtf8(StringField(item, "mimeType"), 100), ", ", size,
                        " bytes of base64 not shown]");
  }
  if (type == "resource_link") {
    return absl::StrCat("[resource link: ", CutUtf8(StringField(item, "uri"), 2048), "]");
  }
  if (type == "resource") {
    const auto resource = item.find("resource");
    if (resource != item.end() && resource->is_object()) {
      const std::string text = StringField(*resource, "text");
      const std::string uri = StringField(*resource, "uri");
      if (!text.empty()) return absl::StrCat("[resource ", CutUtf8(uri, 2048), "]\n", text);
      return absl::StrCat("[resource ", CutUtf8(uri, 2048), ": binary, not shown]");
    }
  }
  return absl::StrCat("[", type.empty() ? "unknown" : CutUtf8(type, 40), " content not shown]");
}

}  // namespace

bool IsValidServerName(std::string_view name) {
  if (name.empty() || name.size() > kMaxServerName) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
}

bool IsSupportedProtocolVersion(std::string_view version) {
  for (const char* supported : kSupportedProtocolVersions) {
    if (version == supported) return true;
  }
  return false;
}

std::optional<std::string> RegistryName(std::string_view server, std::string_view tool) {
  if (tool.empty() || tool.size() > kMaxRegistryName) return std::nullopt;
  std::string mapped;
  bool meaningful = false;
  for (char c : tool) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    const bool kept = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
    if (kept && c != '_') meaningful = true;
    mapped.push_back(kept ? c : '_');
  }
  if (!meaningful) return std::nullopt;
  std::string name = absl::StrCat(AbslView(server), "__", mapped);
  if (name.size() > kMaxRegistryName) return std::nullopt;
  return name;
}

absl::StatusOr<McpTool> ParseTool(std::string_view server, const nlohmann::json& tool) {
  if (!tool.is_object()) return absl::InvalidArgumentError("a listed tool is not an object");
  const auto name = tool.find("name");
  if (name == tool.end() || !name->is_string()) {
    return absl::InvalidArgumentError("a listed tool has no name");
  }
  McpTool parsed;
  parsed.remote_name = name->get<std::string>();
  const std::string shown(CutUtf8(parsed.remote_name, 80));
  std::optional<std::string> registry_name = RegistryName(server, parsed.remote_name);
  if (!registry_name.has_value()) {
    return absl::InvalidArgumentError(
        absl::StrCat("tool '", shown, "': its name does not make a registry name of at most 64 ",
                     "characters of a-z, 0-9 and '_'"));
  }
  parsed.registry_name = *std::move(registry_name);
  const auto description = tool.find("description");
  if (description != tool.end() && description->is_string()) {
    parsed.description = CutUtf8(description->get_ref<const std::string&>(), kMaxDescriptionBytes);
  }
  if (parsed.description.empty()) {
    parsed.description = StringField(tool, "title");
    if (parsed.description.empty()) parsed.description = parsed.remote_name;
    parsed.description = CutUtf8(parsed.description, kMaxDescriptionBytes);
  }
  const auto schema = tool.find("inputSchema");
  if (schema == tool.end() || !schema->is_object()) {
    return absl::InvalidArgumentError(absl::StrCat("tool '", shown, "': inputSchema is missing"));
  }
  const auto type = schema->find("type");
  if (type == schema->end() || *type != "object") {
    return absl::InvalidArgumentError(
        absl::StrCat("tool '", shown, "': inputSchema is not a schema of \"type\": \"object\""));
  }
  if (schema->dump().size() > kMaxSchemaBytes) {
    return absl::InvalidArgumentError(absl::StrCat("tool '", shown, "': inputSchema is too large"));
  }
  if (absl::Status status = CheckSchema(*schema); !status.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("tool '", shown, "': ", status.message()));
  }
  parsed.input_schema = *schema;
  // Draft markers mean nothing to the validator or the model.
  parsed.input_schema.erase("$schema");
  return parsed;
}

absl::StatusOr<nlohmann::json> ParseMessage(std::string_view text) {
  if (text.size() > kMaxMessageBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("a message of more than ", kMaxMessageBytes, " bytes"));
  }
  nlohmann::json message = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (message.is_discarded()) return absl::InvalidArgumentError("a message that is not JSON");
  if (!message.is_object()) {
    return absl::InvalidArgumentError("a message that is not a JSON-RPC object");
  }
  const auto version = message.find("jsonrpc");
  if (version == message.end() || *version != "2.0") {
    return absl::InvalidArgumentError("a message that is not JSON-RPC 2.0");
  }
  return message;
}

nlohmann::json Request(int64_t id, std::string_view method, nlohmann::json params) {
  nlohmann::json request = {{"jsonrpc", "2.0"}, {"id", id}, {"method", std::string(method)}};
  if (!params.is_null()) request["params"] = std::move(params);
  return request;
}

nlohmann::json Notification(std::string_view method) {
  return {{"jsonrpc", "2.0"}, {"method", std::string(method)}};
}

nlohmann::json InitializeParams(std::string_view client_version) {
  return {{"protocolVersion", kLatestProtocolVersion},
          {"capabilities", nlohmann::json::object()},
          {"clientInfo", {{"name", "herald"}, {"version", std::string(client_version)}}}};
}

absl::StatusOr<std::string> ToolResultText(const nlohmann::json& result, FileOutbox* files) {
  if (!result.is_object()) return absl::InvalidArgumentError("the tool result is not an object");
  const auto is_error = result.find("isError");
  const bool failed = is_error != result.end() && is_error->is_boolean() && is_error->get<bool>();
  if (failed) files = nullptr;  // a failed call sends nothing
  std::vector<std::string> parts;
  const auto content = result.find("content");
  if (content != result.end() && content->is_array()) {
    for (const nlohmann::json& item : *content) {
      if (!item.is_object()) continue;
      if (StringField(item, "type") == "text") {
        parts.push_back(StringField(item, "text"));
      } else {
        parts.push_back(DescribeItem(item, files));
      }
    }
  }
  if (parts.empty()) {
    const auto structured = result.find("structuredContent");
    if (structured != result.end() && !structured->is_null()) parts.push_back(structured->dump());
  }
  std::string text = absl::StrJoin(parts, "\n");
  if (text.size() > kMaxResultTextBytes) {
    text = absl::StrCat(CutUtf8(text, kMaxResultTextBytes), "\n[cut: the result was ", text.size(),
                        " bytes]");
  }
  if (failed) {
    return absl::UnknownError(text.empty() ? "the tool failed without saying why" : text);
  }
  return text;
}

std::string DescribeRpcError(const nlohmann::json& error) {
  if (!error.is_object()) return "an error without details";
  const auto code = error.find("code");
  std::string text = code != error.end() && code->is_number_integer()
                         ? absl::StrCat("code ", code->get<int64_t>())
                         : "error";
  const std::string message = StringField(error, "message");
  if (!message.empty()) absl::StrAppend(&text, ": ", CutUtf8(message, 1024));
  return text;
}

}  // namespace herald::skills::mcp
