#include "providers/ollama/wire_format.h"

#include <exception>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "component/base/absl_string_view.h"

namespace herald::providers {
namespace {

using nlohmann::json;

constexpr size_t kMaxLineBytes = 8 << 20;

absl::Status ErrorOf(const json& object) {
  const json* error = Find(object, "error");
  if (error == nullptr) return absl::OkStatus();
  std::string message;
  if (error->is_string()) {
    message = error->get<std::string>();
  } else if (const std::string* m = FindString(*error, "message")) {
    message = *m;
  } else {
    message = Excerpt(DumpJson(*error), 120);
  }
  return ReportedErrorStatus("ollama", "", message);
}

// Reads one response object (the whole answer, or one NDJSON line of a stream) into
// `response`: its text fragment, tool calls, and, on the last one, usage and done_reason.
absl::Status ReadChunk(const json& chunk, std::string_view what, LlmResponse* response, bool* done,
                       std::string* done_reason, const LlmProvider::OnText& on_text) {
  if (!chunk.is_object()) {
    return absl::DataLossError(absl::StrCat(AbslView(what), " is not a JSON object"));
  }
  if (absl::Status error = ErrorOf(chunk); !error.ok()) return error;
  if (const std::string* model = FindString(chunk, "model")) response->model = *model;
  if (const json* message = Find(chunk, "message"); message != nullptr && !message->is_null()) {
    if (!message->is_object()) {
      return absl::DataLossError(absl::StrCat(AbslView(what), ": message is not an object"));
    }
    if (const json* content = Find(*message, "content"); content && !content->is_null()) {
      if (!content->is_string()) {
        return absl::DataLossError(absl::StrCat(AbslView(what), ": message.content is not text"));
      }
      const std::string& text = content->get_ref<const std::string&>();
      if (!text.empty()) {
        response->text += text;
        if (on_text) on_text(text);
      }
    }
    if (const json* calls = Find(*message, "tool_calls"); calls && !calls->is_null()) {
      if (!calls->is_array()) {
        return absl::DataLossError(
            absl::StrCat(AbslView(what), ": message.tool_calls is not an array"));
      }
      for (const json& call : *calls) {
        const json* function = FindObject(call, "function");
        const std::string* name = function ? FindString(*function, "name") : nullptr;
        if (name == nullptr || name->empty()) {
          return absl::DataLossError(
              absl::StrCat(AbslView(what), ": a tool call has no function name"));
        }
        if (response->tool_calls.size() >= kMaxToolCalls) {
          return absl::DataLossError(absl::StrCat(AbslView(what), ": too many tool calls"));
        }
        json arguments = json::object();
        if (const json* args = Find(*function, "arguments"); args && !args->is_null()) {
          if (args->is_object()) {
            arguments = *args;
          } else if (args->is_string()) {  // some models' templates yield a JSON string
            absl::StatusOr<json> parsed = ParseJson(args->get<std::string>(), "arguments");
            arguments = parsed.ok() ? *std::move(parsed) : *args;
          } else {
            return absl::DataLossError(absl::StrCat(AbslView(what), ": arguments of tool call '",
                                                    Excerpt(*name, 64), "' are not an object"));
          }
        }
        const std::string* id = FindString(call, "id");
        std::string call_id = id != nullptr && !id->empty()
                                  ? *id
                                  : absl::StrCat("call_", response->tool_calls.size());
        response->tool_calls.push_back(ToolCall{std::move(call_id), *name, std::move(arguments)});
      }
    }
  }
  const json* done_field = Find(chunk, "done");
  if (done_field != nullptr && !done_field->is_boolean()) {
    return absl::DataLossError(absl::StrCat(AbslView(what), ": done is not a boolean"));
  }
  if (done_field != nullptr && done_field->get<bool>()) {
    *done = true;
    if (const std::string* reason = FindString(chunk, "done_reason")) *done_reason = *reason;
    if (absl::Status s = ReadCount(chunk, "prompt_eval_count", what, &response->usage.input_tokens);
        !s.ok()) {
      return s;
    }
    if (absl::Status s = ReadCount(chunk, "eval_count", what, &response->usage.output_tokens);
        !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

StopReason FinalStopReason(std::string_view done_reason, const LlmResponse& response) {
  // Ollama says "stop" after tool calls too.
  if (!response.tool_calls.empty() && (done_reason.empty() || done_reason == "stop")) {
    return StopReason::kToolUse;
  }
  if (done_reason.empty()) return StopReason::kEndTurn;
  return OllamaDoneReason(done_reason);
}

absl::StatusOr<LlmResponse> ParseResponse(std::string_view body) {
  absl::StatusOr<json> parsed = ParseJson(body, "ollama response");
  if (!parsed.ok()) return parsed.status();
  LlmResponse response;
  bool done = false;
  std::string done_reason;
  if (absl::Status s =
          ReadChunk(*parsed, "ollama response", &response, &done, &done_reason, nullptr);
      !s.ok()) {
    return s;
  }
  if (!FindObject(*parsed, "message")) {
    return absl::DataLossError("ollama response: no message object");
  }
  if (!done) return absl::DataLossError("ollama response: not marked done (a streamed answer?)");
  response.stop_reason = FinalStopReason(done_reason, response);
  return response;
}

}  // namespace

std::string OllamaChatUrl(std::string_view host) {
  std::string base(host);
  if (!absl::StrContains(base, "://")) base = absl::StrCat("http://", base);
  while (!base.empty() && base.back() == '/') base.pop_back();
  return absl::StrCat(base, "/api/chat");
}

json BuildOllamaRequest(const LlmRequest& request) {
  json messages = json::array();
  if (!request.system.empty()) {
    messages.push_back({{"role", "system"}, {"content", request.system}});
  }
  for (const LlmMessage& message : request.messages) {
    switch (message.role) {
      case LlmMessage::Role::kUser: {
        json turn = {{"role", "user"}, {"content", message.text}};
        if (!message.images.empty()) {
          json images = json::array();
          for (const ImagePart& image : message.images) {
            images.push_back(absl::Base64Escape(AbslView(image.bytes())));
          }
          turn["images"] = std::move(images);
        }
        messages.push_back(std::move(turn));
        break;
      }
      case LlmMessage::Role::kAssistant: {
        json turn = {{"role", "assistant"}, {"content", message.text}};
        if (!message.tool_calls.empty()) {
          json calls = json::array();
          for (const ToolCall& call : message.tool_calls) {
            calls.push_back(
                {{"function",
                  {{"name", call.name},
                   {"arguments", call.arguments.is_object() ? call.arguments : json::object()}}}});
          }
          turn["tool_calls"] = std::move(calls);
        }
        messages.push_back(std::move(turn));
        break;
      }
      case LlmMessage::Role::kTool:
        for (const ToolResult& result : message.tool_results) {
          messages.push_back(
              {{"role", "tool"},
               {"tool_name", result.name},
               {"content", result.is_error ? "Error: " + result.content : result.content}});
        }
        if (!message.text.empty()) {
          messages.push_back({{"role", "user"}, {"content", message.text}});
        }
        break;
    }
  }
  json body = {{"model", request.model},
               {"messages", std::move(messages)},
               {"stream", request.stream},
               {"options", {{"num_predict", request.max_tokens > 0 ? request.max_tokens : 1}}}};
  if (!request.tools.empty()) {
    json tools = json::array();
    for (const ToolSpec& tool : request.tools) {
      json function = {
          {"name", tool.name},
          {"parameters", tool.parameters.is_object()
                             ? tool.parameters
                             : json{{"type", "object"}, {"properties", json::object()}}}};
      if (!tool.description.empty()) function["description"] = tool.description;
      tools.push_back({{"type", "function"}, {"function", std::move(function)}});
    }
    body["tools"] = std::move(tools);
  }
  return body;
}

StopReason OllamaDoneReason(std::string_view done_reason) {
  if (done_reason == "stop") return StopReason::kEndTurn;
  if (done_reason == "length") return StopReason::kMaxTokens;
  return StopReason::kOther;  // load, unload, and what later versions add
}

absl::StatusOr<LlmResponse> ParseOllamaResponse(std::string_view body) {
  try {
    return ParseResponse(body);
  } catch (const std::exception& e) {  // a bug here must not take the process down
    return absl::DataLossError(absl::StrCat("ollama response: unreadable (", e.what(), ")"));
  }
}

absl::Status OllamaErrorStatus(int http_status, std::string_view body,
                               std::string_view retry_after) {
  std::string message;
  absl::StatusOr<json> parsed = ParseJson(body, "error body");
  const json* error = parsed.ok() ? Find(*parsed, "error") : nullptr;
  if (error != nullptr && error->is_string()) {
    message = error->get<std::string>();
  } else {
    message = Excerpt(body, 120);
  }
  return HttpErrorStatus("ollama", http_status, "", message, retry_after);
}

OllamaStreamDecoder::OllamaStreamDecoder(LlmProvider::OnText on_text)
    : on_text_(std::move(on_text)), lines_(kMaxLineBytes, /*cr_ends_line=*/false) {}

absl::Status OllamaStreamDecoder::Feed(std::string_view bytes) {
  if (!status_.ok()) return status_;
  if (!bytes.empty()) fed_ = true;
  try {
    status_ = lines_.Feed(bytes, [this](std::string_view line) { return OnLine(line); });
  } catch (const std::exception& e) {
    status_ = absl::DataLossError(absl::StrCat("ollama stream: unreadable (", e.what(), ")"));
  }
  if (!status_.ok() && status_.code() == absl::StatusCode::kDataLoss &&
      !absl::StartsWith(status_.message(), "ollama")) {
    status_ = absl::DataLossError(absl::StrCat("ollama stream: ", status_.message()));
  }
  return status_;
}

absl::Status OllamaStreamDecoder::OnLine(std::string_view line) {
  if (done_) return absl::OkStatus();
  if (line.find_first_not_of(" \t\r") == std::string_view::npos) return absl::OkStatus();
  absl::StatusOr<json> chunk = ParseJson(line, "ollama stream: a line");
  if (!chunk.ok()) return chunk.status();
  return ReadChunk(*chunk, "ollama stream: a line", &response_, &done_, &done_reason_, on_text_);
}

absl::StatusOr<LlmResponse> OllamaStreamDecoder::Finish() {
  if (status_.ok()) {
    try {
      status_ = lines_.Flush([this](std::string_view line) { return OnLine(line); });
    } catch (const std::exception& e) {
      status_ = absl::DataLossError(absl::StrCat("ollama stream: unreadable (", e.what(), ")"));
    }
  }
  if (!status_.ok()) return status_;
  if (!fed_) return absl::DataLossError("ollama stream: the body is empty");
  if (!done_) return absl::DataLossError("ollama stream: ended before \"done\": true (truncated)");
  LlmResponse response = response_;
  response.stop_reason = FinalStopReason(done_reason_, response);
  return response;
}

}  // namespace herald::providers
