#include "providers/anthropic/wire_format.h"

#include <exception>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "component/base/absl_string_view.h"

namespace herald::providers {
namespace {

using nlohmann::json;

constexpr size_t kMaxBlocks = 1024;

json TextBlock(const std::string& text) { return json{{"type", "text"}, {"text", text}}; }

json ImageBlock(const ImagePart& image) {
  return {{"type", "image"},
          {"source",
           {{"type", "base64"},
            {"media_type", image.media_type},
            {"data", absl::Base64Escape(AbslView(image.bytes()))}}}};
}

// The API wants every tool input to be an object.
json InputObject(const json& arguments) {
  return arguments.is_object() ? arguments : json::object();
}

json ToolSchema(const json& parameters) {
  if (parameters.is_object()) return parameters;
  return json{{"type", "object"}, {"properties", json::object()}};
}

absl::Status ReadUsage(const json& usage, std::string_view what, Usage* out) {
  for (auto [key, field] :
       {std::pair{"input_tokens", &out->input_tokens},
        std::pair{"output_tokens", &out->output_tokens},
        std::pair{"cache_creation_input_tokens", &out->cache_creation_input_tokens},
        std::pair{"cache_read_input_tokens", &out->cache_read_input_tokens}}) {
    if (absl::Status s = ReadCount(usage, key, what, field); !s.ok()) return s;
  }
  return absl::OkStatus();
}

// An {"type":"error","error":{"type":..,"message":..}} object as a status.
absl::Status ErrorObjectStatus(const json& body) {
  const json* error = FindObject(body, "error");
  const std::string* type = error ? FindString(*error, "type") : nullptr;
  const std::string* message = error ? FindString(*error, "message") : nullptr;
  return ReportedErrorStatus("anthropic", type ? *type : "", message ? *message : "");
}

absl::Status Malformed(std::string_view what) {
  return absl::DataLossError(absl::StrCat("anthropic response: ", AbslView(what)));
}

absl::Status ParseBlock(const json& block, size_t index, LlmResponse* response) {
  const std::string* type = FindString(block, "type");
  if (type == nullptr) return Malformed(absl::StrCat("content[", index, "] has no type"));
  if (*type == "text") {
    const std::string* text = FindString(block, "text");
    if (text == nullptr) return Malformed(absl::StrCat("content[", index, "].text is missing"));
    response->text += *text;
  } else if (*type == "tool_use") {
    const std::string* id = FindString(block, "id");
    const std::string* name = FindString(block, "name");
    const json* input = Find(block, "input");
    if (id == nullptr || name == nullptr || id->empty() || name->empty()) {
      return Malformed(absl::StrCat("content[", index, "] tool_use lacks its id or name"));
    }
    if (input != nullptr && !input->is_object() && !input->is_null()) {
      return Malformed(absl::StrCat("content[", index, "].input is not an object"));
    }
    if (response->tool_calls.size() >= kMaxToolCalls) return Malformed("too many tool calls");
    response->tool_calls.push_back(
        ToolCall{*id, *name, input != nullptr && input->is_object() ? *input : json::object()});
  }
  // Other block types (thinking, server tools...) carry nothing Herald uses.
  return absl::OkStatus();
}

StopReason FinalStopReason(std::string_view stop_reason, const LlmResponse& response) {
  if (stop_reason.empty()) {
    return response.tool_calls.empty() ? StopReason::kEndTurn : StopReason::kToolUse;
  }
  return AnthropicStopReason(stop_reason);
}

absl::StatusOr<LlmResponse> ParseResponse(std::string_view body) {
  absl::StatusOr<json> parsed = ParseJson(body, "anthropic response");
  if (!parsed.ok()) return parsed.status();
  const json& message = *parsed;
  if (!message.is_object()) return Malformed("the body is not a JSON object");
  const std::string* type = FindString(message, "type");
  if (type != nullptr && *type == "error") return ErrorObjectStatus(message);
  if (type != nullptr && *type != "message") {
    return Malformed(absl::StrCat("type is '", Excerpt(*type, 40), "', not 'message'"));
  }
  const json* content = FindArray(message, "content");
  if (content == nullptr) return Malformed("no 'content' array");
  LlmResponse response;
  for (size_t i = 0; i < content->size(); ++i) {
    if (absl::Status s = ParseBlock((*content)[i], i, &response); !s.ok()) return s;
  }
  if (const json* usage = FindObject(message, "usage")) {
    if (absl::Status s = ReadUsage(*usage, "anthropic response: usage", &response.usage); !s.ok()) {
      return s;
    }
  }
  if (const std::string* model = FindString(message, "model")) response.model = *model;
  const std::string* stop_reason = FindString(message, "stop_reason");
  response.stop_reason = FinalStopReason(stop_reason ? *stop_reason : "", response);
  return response;
}

}  // namespace

json BuildAnthropicRequest(const LlmRequest& request) {
  json body = json::object();
  body["model"] = request.model;
  body["max_tokens"] = request.max_tokens > 0 ? request.max_tokens : 1;
  if (!request.system.empty()) body["system"] = request.system;
  json messages = json::array();
  for (const LlmMessage& message : request.messages) {
    const char* role = message.role == LlmMessage::Role::kAssistant ? "assistant" : "user";
    json blocks = json::array();
    if (message.role == LlmMessage::Role::kTool) {
      // Tool results lead the user turn that carries them, as the API requires.
      for (const ToolResult& result : message.tool_results) {
        json block = {{"type", "tool_result"}, {"tool_use_id", result.tool_call_id}};
        if (!result.content.empty()) block["content"] = result.content;
        if (result.is_error) block["is_error"] = true;
        blocks.push_back(std::move(block));
      }
    }
    if (message.role == LlmMessage::Role::kUser) {
      // Images before the text they go with, as Anthropic advises.
      for (const ImagePart& image : message.images) blocks.push_back(ImageBlock(image));
    }
    if (!message.text.empty()) blocks.push_back(TextBlock(message.text));
    if (message.role == LlmMessage::Role::kAssistant) {
      for (const ToolCall& call : message.tool_calls) {
        blocks.push_back({{"type", "tool_use"},
                          {"id", call.id},
                          {"name", call.name},
                          {"input", InputObject(call.arguments)}});
      }
    }
    if (blocks.empty()) continue;  // the API refuses a turn without content
    if (!messages.empty() && messages.back()["role"] == role) {
      json& content = messages.back()["content"];
      for (json& block : blocks) content.push_back(std::move(block));
    } else {
      messages.push_back({{"role", role}, {"content", std::move(blocks)}});
    }
  }
  body["messages"] = std::move(messages);
  if (!request.tools.empty()) {
    json tools = json::array();
    for (const ToolSpec& tool : request.tools) {
      json spec = {{"name", tool.name}, {"input_schema", ToolSchema(tool.parameters)}};
      if (!tool.description.empty()) spec["description"] = tool.description;
      tools.push_back(std::move(spec));
    }
    body["tools"] = std::move(tools);
  }
  body["stream"] = request.stream;
  return body;
}

std::vector<std::pair<std::string, std::string>> AnthropicHeaders(std::string_view api_key) {
  return {{"x-api-key", std::string(api_key)},
          {"anthropic-version", std::string(kAnthropicVersion)},
          {"content-type", "application/json"}};
}

StopReason AnthropicStopReason(std::string_view stop_reason) {
  if (stop_reason == "end_turn") return StopReason::kEndTurn;
  if (stop_reason == "tool_use") return StopReason::kToolUse;
  if (stop_reason == "max_tokens") return StopReason::kMaxTokens;
  if (stop_reason == "stop_sequence") return StopReason::kStopSequence;
  return StopReason::kOther;  // pause_turn, refusal, and what later API versions add
}

absl::StatusOr<LlmResponse> ParseAnthropicResponse(std::string_view body) {
  try {
    return ParseResponse(body);
  } catch (const std::exception& e) {  // a bug here must not take the process down
    return absl::DataLossError(absl::StrCat("anthropic response: unreadable (", e.what(), ")"));
  }
}

absl::Status AnthropicErrorStatus(int http_status, std::string_view body,
                                  std::string_view retry_after) {
  std::string type;
  std::string message;
  absl::StatusOr<json> parsed = ParseJson(body, "error body");
  if (parsed.ok()) {
    if (const json* error = FindObject(*parsed, "error")) {
      if (const std::string* t = FindString(*error, "type")) type = *t;
      if (const std::string* m = FindString(*error, "message")) message = *m;
    }
  } else {
    message = Excerpt(body, 120);  // a proxy's HTML page, say
  }
  return HttpErrorStatus("anthropic", http_status, type, message, retry_after);
}

AnthropicStreamDecoder::AnthropicStreamDecoder(LlmProvider::OnText on_text)
    : on_text_(std::move(on_text)) {
  response_.stop_reason = StopReason::kEndTurn;
}

absl::Status AnthropicStreamDecoder::Feed(std::string_view bytes) {
  if (!status_.ok()) return status_;
  if (!bytes.empty()) fed_ = true;
  try {
    status_ = sse_.Feed(bytes, [this](const SseEvent& event) { return OnEvent(event); });
  } catch (const std::exception& e) {
    status_ = absl::DataLossError(absl::StrCat("anthropic stream: unreadable (", e.what(), ")"));
  }
  if (!status_.ok() && status_.code() == absl::StatusCode::kDataLoss &&
      !absl::StartsWith(status_.message(), "anthropic")) {
    status_ = absl::DataLossError(absl::StrCat("anthropic stream: ", status_.message()));
  }
  return status_;
}

absl::Status AnthropicStreamDecoder::OnEvent(const SseEvent& event) {
  if (event.data.find_first_not_of(" \t") == std::string::npos) return absl::OkStatus();
  absl::StatusOr<json> parsed = ParseJson(
      event.data, absl::StrCat("anthropic stream: data of event '", Excerpt(event.type, 40), "'"));
  if (!parsed.ok()) return parsed.status();
  const json& data = *parsed;
  if (!data.is_object()) {
    return absl::DataLossError(absl::StrCat("anthropic stream: data of event '",
                                            Excerpt(event.type, 40), "' is not an object"));
  }
  // The data's own type is authoritative; the SSE event name repeats it.
  const std::string* type_field = FindString(data, "type");
  const std::string type = type_field != nullptr ? *type_field : event.type;
  if (type == "ping") return absl::OkStatus();
  if (type == "error") return ErrorObjectStatus(data);
  if (type == "message_start") return OnMessageStart(data);
  if (stopped_) return absl::OkStatus();  // nothing after message_stop matters
  const bool known = type == "content_block_start" || type == "content_block_delta" ||
                     type == "content_block_stop" || type == "message_delta" ||
                     type == "message_stop";
  if (!known) return absl::OkStatus();  // the API may add event types; they are skipped
  if (!started_) {
    return absl::DataLossError(absl::StrCat("anthropic stream: '", type, "' before message_start"));
  }
  if (type == "content_block_start") return OnBlockStart(data);
  if (type == "content_block_delta") return OnBlockDelta(data);
  if (type == "content_block_stop") return OnBlockStop(data);
  if (type == "message_delta") return OnMessageDelta(data);
  stopped_ = true;  // message_stop
  return absl::OkStatus();
}

absl::Status AnthropicStreamDecoder::OnMessageStart(const json& data) {
  if (started_) return absl::DataLossError("anthropic stream: a second message_start");
  started_ = true;
  const json* message = FindObject(data, "message");
  if (message == nullptr) {
    return absl::DataLossError("anthropic stream: message_start without a message");
  }
  if (const std::string* model = FindString(*message, "model")) response_.model = *model;
  if (const json* usage = FindObject(*message, "usage")) {
    return ReadUsage(*usage, "anthropic stream: message_start usage", &response_.usage);
  }
  return absl::OkStatus();
}

absl::StatusOr<AnthropicStreamDecoder::Block*> AnthropicStreamDecoder::BlockAt(
    const json& data, std::string_view event) {
  const json* index = Find(data, "index");
  if (index == nullptr || !index->is_number_integer() || index->get<int64_t>() < 0) {
    return absl::DataLossError(
        absl::StrCat("anthropic stream: ", AbslView(event), " without a valid index"));
  }
  auto it = blocks_.find(index->get<int64_t>());
  if (it == blocks_.end()) {
    return absl::DataLossError(absl::StrCat("anthropic stream: ", AbslView(event), " for block ",
                                            index->get<int64_t>(), ", which never started"));
  }
  if (it->second.stopped) {
    return absl::DataLossError(absl::StrCat("anthropic stream: ", AbslView(event), " for block ",
                                            it->first, ", which already stopped"));
  }
  return &it->second;
}

absl::Status AnthropicStreamDecoder::OnBlockStart(const json& data) {
  const json* index = Find(data, "index");
  const json* content = FindObject(data, "content_block");
  if (index == nullptr || !index->is_number_integer() || index->get<int64_t>() < 0 ||
      content == nullptr) {
    return absl::DataLossError(
        "anthropic stream: content_block_start without a valid index and content_block");
  }
  if (blocks_.size() >= kMaxBlocks) {
    return absl::DataLossError("anthropic stream: too many content blocks");
  }
  auto [it, inserted] = blocks_.try_emplace(index->get<int64_t>());
  if (!inserted) {
    return absl::DataLossError(
        absl::StrCat("anthropic stream: block ", it->first, " started twice"));
  }
  Block& block = it->second;
  const std::string* type = FindString(*content, "type");
  if (type != nullptr && *type == "text") {
    block.kind = Block::Kind::kText;
    if (const std::string* text = FindString(*content, "text"); text && !text->empty()) {
      block.text = *text;
      if (on_text_) on_text_(*text);
    }
  } else if (type != nullptr && *type == "tool_use") {
    block.kind = Block::Kind::kToolUse;
    const std::string* id = FindString(*content, "id");
    const std::string* name = FindString(*content, "name");
    if (id == nullptr || name == nullptr || id->empty() || name->empty()) {
      return absl::DataLossError(
          absl::StrCat("anthropic stream: tool_use block ", it->first, " lacks its id or name"));
    }
    block.call.id = *id;
    block.call.name = *name;
    const json* input = Find(*content, "input");
    block.call.arguments = input != nullptr && input->is_object() ? *input : json::object();
  }
  return absl::OkStatus();
}

absl::Status AnthropicStreamDecoder::OnBlockDelta(const json& data) {
  absl::StatusOr<Block*> block = BlockAt(data, "content_block_delta");
  if (!block.ok()) return block.status();
  const json* delta = FindObject(data, "delta");
  const std::string* type = delta ? FindString(*delta, "type") : nullptr;
  if (type == nullptr) {
    return absl::DataLossError("anthropic stream: content_block_delta without a typed delta");
  }
  if (*type == "text_delta") {
    const std::string* text = FindString(*delta, "text");
    if (text == nullptr || (*block)->kind != Block::Kind::kText) {
      return absl::DataLossError(
          "anthropic stream: text_delta without text, or for a block that is not text");
    }
    (*block)->text += *text;
    if (!text->empty() && on_text_) on_text_(*text);
  } else if (*type == "input_json_delta") {
    const std::string* partial = FindString(*delta, "partial_json");
    if (partial == nullptr || (*block)->kind != Block::Kind::kToolUse) {
      return absl::DataLossError(
          "anthropic stream: input_json_delta without partial_json, or for a block that is "
          "not tool_use");
    }
    (*block)->partial_json += *partial;
  }
  // thinking_delta, signature_delta, citations_delta: nothing Herald uses.
  return absl::OkStatus();
}

absl::Status AnthropicStreamDecoder::OnBlockStop(const json& data) {
  absl::StatusOr<Block*> block = BlockAt(data, "content_block_stop");
  if (!block.ok()) return block.status();
  Block& b = **block;
  b.stopped = true;
  if (b.kind != Block::Kind::kToolUse || b.partial_json.empty()) return absl::OkStatus();
  absl::StatusOr<json> input = ParseJson(
      b.partial_json,
      absl::StrCat("anthropic stream: input of tool_use '", Excerpt(b.call.name, 64), "'"));
  if (!input.ok()) return input.status();
  if (!input->is_object()) {
    return absl::DataLossError(absl::StrCat("anthropic stream: input of tool_use '",
                                            Excerpt(b.call.name, 64), "' is not an object"));
  }
  b.call.arguments = *std::move(input);
  b.partial_json.clear();
  return absl::OkStatus();
}

absl::Status AnthropicStreamDecoder::OnMessageDelta(const json& data) {
  if (const json* delta = FindObject(data, "delta")) {
    if (const std::string* reason = FindString(*delta, "stop_reason")) stop_reason_ = *reason;
  }
  if (const json* usage = FindObject(data, "usage")) {
    // The counts here are cumulative: they replace those of message_start.
    return ReadUsage(*usage, "anthropic stream: message_delta usage", &response_.usage);
  }
  return absl::OkStatus();
}

absl::StatusOr<LlmResponse> AnthropicStreamDecoder::Finish() {
  if (status_.ok()) {
    try {
      status_ = sse_.Finish([this](const SseEvent& event) { return OnEvent(event); });
    } catch (const std::exception& e) {
      status_ = absl::DataLossError(absl::StrCat("anthropic stream: unreadable (", e.what(), ")"));
    }
  }
  if (!status_.ok()) return status_;
  if (!fed_) return absl::DataLossError("anthropic stream: the body is empty");
  if (!started_) return absl::DataLossError("anthropic stream: ended before message_start");
  if (!stopped_) {
    return absl::DataLossError("anthropic stream: ended before message_stop (truncated)");
  }
  LlmResponse response = response_;
  for (const auto& [index, block] : blocks_) {
    if (!block.stopped) {
      return absl::DataLossError(
          absl::StrCat("anthropic stream: block ", index, " never stopped (truncated)"));
    }
    if (block.kind == Block::Kind::kText) response.text += block.text;
    if (block.kind == Block::Kind::kToolUse) {
      if (response.tool_calls.size() >= kMaxToolCalls) {
        return absl::DataLossError("anthropic stream: too many tool calls");
      }
      response.tool_calls.push_back(block.call);
    }
  }
  response.stop_reason = FinalStopReason(stop_reason_, response);
  return response;
}

}  // namespace herald::providers
