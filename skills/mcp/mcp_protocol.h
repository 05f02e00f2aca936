// skills/mcp/mcp_protocol.h
//
// The pieces of the Model Context Protocol (JSON-RPC 2.0) that Herald's MCP client needs, as
// pure functions over untrusted server output: the protocol revisions it speaks, the messages
// it sends, how a tool a server lists becomes a registry tool ("files" + "read_file" ->
// "files__read_file", refusing names and schemas that do not fit), and how a tools/call
// result becomes the text the model reads. Nothing here does I/O; mcp_client.h does.
//
//   absl::StatusOr<nlohmann::json> message = ParseMessage(line);        // caps and JSON checks
//   absl::StatusOr<McpTool> tool = ParseTool("files", listed_tool);     // or why it is refused
//   absl::StatusOr<std::string> text = ToolResultText(call_result);     // isError -> error
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "skills/file_outbox.h"

namespace herald::skills::mcp {

// The revision Herald asks for, then the older ones it accepts when a server answers with one.
inline constexpr const char* kLatestProtocolVersion = "2025-06-18";
inline constexpr const char* kSupportedProtocolVersions[] = {"2025-06-18", "2025-03-26",
                                                             "2024-11-05"};

// One message from a server, at most this long (a stdio line or an HTTP body / SSE event).
inline constexpr size_t kMaxMessageBytes = 4 << 20;
// Tools one server may offer, description and schema sizes: beyond them a tool is refused.
inline constexpr size_t kMaxToolsPerServer = 1000;
inline constexpr size_t kMaxDescriptionBytes = 4096;
inline constexpr size_t kMaxSchemaBytes = 64 << 10;
// tools/list pages followed before the list is taken as complete (a looping cursor).
inline constexpr int kMaxListPages = 100;
// The text of one tools/call result the model reads; longer text is cut with a note.
inline constexpr size_t kMaxResultTextBytes = 256 << 10;

// Server names are [a-z0-9_]{1,32}; registry names are "<server>__<tool>" within 64.
bool IsValidServerName(std::string_view name);

bool IsSupportedProtocolVersion(std::string_view version);

// A tool as Herald registers it.
struct McpTool {
  std::string remote_name;    // as the server names it, for tools/call
  std::string registry_name;  // "<server>__<tool>"
  std::string description;
  nlohmann::json input_schema;  // an object schema
};

// The registry name for a server's tool: the tool's name lower-cased, with every character
// outside [a-z0-9_] made '_'; nullopt when nothing usable remains or the result is longer
// than 64 characters.
std::optional<std::string> RegistryName(std::string_view server, std::string_view tool);

// One element of a tools/list result, or why it is refused (a name that does not map, a
// schema that is not an object schema, sizes past the caps).
absl::StatusOr<McpTool> ParseTool(std::string_view server, const nlohmann::json& tool);

// Parses one message: InvalidArgument for text longer than kMaxMessageBytes, text that is not
// JSON, or JSON that is not a JSON-RPC 2.0 object.
absl::StatusOr<nlohmann::json> ParseMessage(std::string_view text);

nlohmann::json Request(int64_t id, std::string_view method, nlohmann::json params);
nlohmann::json Notification(std::string_view method);
nlohmann::json InitializeParams(std::string_view client_version);

// What the model reads of a tools/call result: the text items joined by newlines, other items
// described briefly ("[image: image/png, 2048 bytes of base64]"), cut at kMaxResultTextBytes.
// With "isError": true, an error (Unknown) carrying that text. With `files`, a successful
// result's images, audio and binary resources (base64 that decodes) go there, to be sent to the
// person (file_outbox.h), and the model reads that they will be, or why not.
absl::StatusOr<std::string> ToolResultText(const nlohmann::json& result,
                                           FileOutbox* files = nullptr);

// A JSON-RPC error object as words: "code -32601: Method not found".
std::string DescribeRpcError(const nlohmann::json& error);

}  // namespace herald::skills::mcp
