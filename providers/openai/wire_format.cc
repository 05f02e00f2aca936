#include "providers/openai/wire_format.h"

#include <algorithm>
#include <exception>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "component/base/absl_string_view.h"

namespace herald::providers {
namespace {

using nlohmann::json;

absl::Status Malformed(std::string_view what) {
  return absl::DataLossError(absl::StrCat("openai response: ", AbslView(what)));
}

// The error an OpenAI-compatible body reports, if any: {"error": {"message", "type", "code"}}
// (OpenAI), {"error": "text"} (some local servers), {"object": "error", "message", "type"}
// (vLLM). The code, when it is a string, says more than the type ("invalid_api_key" against
// "invalid_request_error"), so it is preferred.
bool ErrorFields(const json& body, std::string* type, std::string* message) {
  const json* error = Find(body, "error");
  const json* source = nullptr;
  if (error != nullptr && error->is_object()) {
    source = error;
  } else if (error != nullptr && error->is_string()) {
    *message = error->get<std::string>();
    return true;
  } else if (const std::string* object = FindString(body, "object");
             object != nullptr && *object == "error") {
    source = &body;
  }
  if (source == nullptr) return false;
  if (const std::string* code = FindString(*source, "code")) {
    *type = *code;
  } else if (const std::string* t = FindString(*source, "type")) {
    *type = *t;
  }
  if (const std::string* m = FindString(*source, "message")) *message = *m;
  return true;
}

absl::Status ReadUsage(const json& usage, std::string_view what, Usage* out) {
  int64_t prompt = 0;
  int64_t completion = 0;
  int64_t cached = 0;
  if (absl::Status s = ReadCount(usage, "prompt_tokens", what, &prompt); !s.ok()) return s;
  if (absl::Status s = ReadCount(usage, "completion_tokens", what, &completion); !s.ok()) {
    return s;
  }
  if (const json* details = FindObject(usage, "prompt_tokens_details")) {
    if (absl::Status s = ReadCount(*details, "cached_tokens", what, &cached); !s.ok()) return s;
  }
  cached = std::min(cached, prompt);
  out->input_tokens = prompt - cached;
  out->cache_read_input_tokens = cached;
  out->output_tokens = completion;
  return absl::OkStatus();
}

// Arguments are a JSON string the model wrote; when it is not valid JSON the raw text goes on.
json ParseArguments(const std::string& text) {
  if (text.empty()) return json::object();
  absl::StatusOr<json> parsed = ParseJson(text, "arguments");
  if (!parsed.ok()) return json(text);
  return *std::move(parsed);
}

// Text content as a string, or (some compatible servers) an array of {"type":"text"} parts.
std::string ContentText(const json& content) {
  if (content.is_string()) return content.get<std::string>();
  std::string text;
  if (content.is_array()) {
    for (const json& part : content) {
      if (const std::string* t = FindString(part, "text")) text += *t;
    }
  }
  return text;
}

StopReason FinalStopReason(std::string_view finish_reason, const LlmResponse& response) {
  if (!response.tool_calls.empty() && (finish_reason.empty() || finish_reason == "stop")) {
    return StopReason::kToolUse;  // some compatible servers say "stop" after tool calls
  }
  if (finish_reason.empty()) return StopReason::kEndTurn;
  return OpenAiFinishReason(finish_reason);
}

absl::StatusOr<LlmResponse> ParseResponse(std::string_view body) {
  absl::StatusOr<json> parsed = ParseJson(body, "openai response");
  if (!parsed.ok()) return parsed.status();
  const json& completion = *parsed;
  if (!completion.is_object()) return Malformed("the body is not a JSON object");
  std::string error_type;
  std::string error_message;
  if (ErrorFields(completion, &error_type, &error_message)) {
    return ReportedErrorStatus("openai", error_type, error_message);
  }
  const json* choices = FindArray(completion, "choices");
  if (choices == nullptr || choices->empty()) return Malformed("no choices");
  const json& choice = (*choices)[0];
  const json* message = FindObject(choice, "message");
  if (message == nullptr) return Malformed("choices[0] has no message object");
  LlmResponse response;
  if (const json* content = Find(*message, "content")) {
    if (!content->is_string() && !content->is_null() && !content->is_array()) {
      return Malformed("choices[0].message.content is not text");
    }
    response.text = ContentText(*content);
  }
  if (response.text.empty()) {
    if (const std::string* refusal = FindString(*message, "refusal")) response.text = *refusal;
  }
  if (const json* calls = Find(*message, "tool_calls"); calls != nullptr && !calls->is_null()) {
    if (!calls->is_array()) return Malformed("choices[0].message.tool_calls is not an array");
    if (calls->size() > kMaxToolCalls) return Malformed("too many tool calls");
    for (size_t i = 0; i < calls->size(); ++i) {
      const json& call = (*calls)[i];
      const json* function = FindObject(call, "function");
      const std::string* id = FindString(call, "id");
      const std::string* name = function ? FindString(*function, "name") : nullptr;
      if (name == nullptr || name->empty()) {
        return Malformed(absl::StrCat("tool_calls[", i, "] lacks its function name"));
      }
      const json* arguments = Find(*function, "arguments");
      json parsed_arguments = json::object();
      if (arguments != nullptr && arguments->is_string()) {
        parsed_arguments = ParseArguments(arguments->get<std::string>());
      } else if (arguments != nullptr && arguments->is_object()) {
        parsed_arguments = *arguments;  // a lenient server sent the object itself
      } else if (arguments != nullptr && !arguments->is_null()) {
        return Malformed(absl::StrCat("tool_calls[", i, "].function.arguments is not a string"));
      }
      // Some compatible servers send no id; the result must still be matched to its call.
      std::string call_id = id != nullptr && !id->empty() ? *id : absl::StrCat("call_", i);
      response.tool_calls.push_back(
          ToolCall{std::move(call_id), *name, std::move(parsed_arguments)});
    }
  }
  if (const json* usage = FindObject(completion, "usage")) {
    if (absl::Status s = ReadUsage(*usage, "openai response: usage", &response.usage); !s.ok()) {
      return s;
    }
  }
  if (const std::string* model = FindString(completion, "model")) response.model = *model;
  const std::string* finish = FindString(choice, "finish_reason");
  response.stop_reason = FinalStopReason(finish ? *finish : "", response);
  return response;
}

// A user message's content: its text, or with images an array of a text part (unless the text
// is empty) and one image_url part per image, each a base64 data URL.
json UserContent(const LlmMessage& message) {
  if (message.images.empty()) return message.text;
  json parts = json::array();
  if (!message.text.empty()) parts.push_back({{"type", "text"}, {"text", message.text}});
  for (const ImagePart& image : message.images) {
    std::string url = absl::StrCat("data:", AbslView(image.media_type), ";base64,",
                                   absl::Base64Escape(AbslView(image.bytes())));
    parts.push_back({{"type", "image_url"}, {"image_url", {{"url", std::move(url)}}}});
  }
  return parts;
}

}  // namespace

json BuildOpenAiRequest(const LlmRequest& request) {
  json messages = json::array();
  if (!request.system.empty()) {
    messages.push_back({{"role", "system"}, {"content", request.system}});
  }
  for (const LlmMessage& message : request.messages) {
    switch (message.role) {
      case LlmMessage::Role::kUser:
        messages.push_back({{"role", "user"}, {"content", UserContent(message)}});
        break;
      case LlmMessage::Role::kAssistant: {
        json turn = {{"role", "assistant"}};
        if (message.tool_calls.empty()) {
          turn["content"] = message.text;
        } else {
          turn["content"] = message.text.empty() ? json(nullptr) : json(message.text);
          json calls = json::array();
          for (const ToolCall& call : message.tool_calls) {
            const json& arguments = call.arguments.is_null() ? json::object() : call.arguments;
            calls.push_back({{"id", call.id},
                             {"type", "function"},
                             {"function",
                              {{"name", call.name},
                               {"arguments", arguments.is_string() ? arguments.get<std::string>()
                                                                   : DumpJson(arguments)}}}});
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
               {"tool_call_id", result.tool_call_id},
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
               {"max_tokens", request.max_tokens > 0 ? request.max_tokens : 1},
               {"stream", request.stream}};
  if (request.stream) body["stream_options"] = {{"include_usage", true}};
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

std::vector<std::pair<std::string, std::string>> OpenAiHeaders(std::string_view api_key) {
  std::vector<std::pair<std::string, std::string>> headers;
  if (!api_key.empty()) {
    headers.emplace_back("authorization", absl::StrCat("Bearer ", AbslView(api_key)));
  }
  headers.emplace_back("content-type", "application/json");
  return headers;
}

StopReason OpenAiFinishReason(std::string_view finish_reason) {
  if (finish_reason == "stop") return StopReason::kEndTurn;
  if (finish_reason == "tool_calls" || finish_reason == "function_call") {
    return StopReason::kToolUse;
  }
  if (finish_reason == "length") return StopReason::kMaxTokens;
  return StopReason::kOther;  // content_filter, and what compatible servers invent
}

absl::StatusOr<LlmResponse> ParseOpenAiResponse(std::string_view body) {
  try {
    return ParseResponse(body);
  } catch (const std::exception& e) {  // a bug here must not take the process down
    return absl::DataLossError(absl::StrCat("openai response: unreadable (", e.what(), ")"));
  }
}

absl::Status OpenAiErrorStatus(int http_status, std::string_view body,
                               std::string_view retry_after) {
  std::string type;
  std::string message;
  absl::StatusOr<json> parsed = ParseJson(body, "error body");
  if (!parsed.ok() || !ErrorFields(*parsed, &type, &message)) message = Excerpt(body, 120);
  return HttpErrorStatus("openai", http_status, type, message, retry_after);
}

OpenAiStreamDecoder::OpenAiStreamDecoder(LlmProvider::OnText on_text)
    : on_text_(std::move(on_text)) {}

absl::Status OpenAiStreamDecoder::Feed(std::string_view bytes) {
  if (!status_.ok()) return status_;
  if (!bytes.empty()) fed_ = true;
  try {
    status_ = sse_.Feed(bytes, [this](const SseEvent& event) { return OnEvent(event); });
  } catch (const std::exception& e) {
    status_ = absl::DataLossError(absl::StrCat("openai stream: unreadable (", e.what(), ")"));
  }
  if (!status_.ok() && status_.code() == absl::StatusCode::kDataLoss &&
      !absl::StartsWith(status_.message(), "openai")) {
    status_ = absl::DataLossError(absl::StrCat("openai stream: ", status_.message()));
  }
  return status_;
}

absl::Status OpenAiStreamDecoder::OnEvent(const SseEvent& event) {
  if (done_) return absl::OkStatus();
  if (event.data.find_first_not_of(" \t") == std::string::npos) return absl::OkStatus();
  if (event.data == "[DONE]") {
    done_ = true;
    return absl::OkStatus();
  }
  absl::StatusOr<json> parsed = ParseJson(event.data, "openai stream: a chunk");
  if (!parsed.ok()) return parsed.status();
  const json& chunk = *parsed;
  if (!chunk.is_object()) return absl::DataLossError("openai stream: a chunk is not an object");
  std::string error_type;
  std::string error_message;
  if (ErrorFields(chunk, &error_type, &error_message)) {
    return ReportedErrorStatus("openai", error_type, error_message);
  }
  if (const std::string* model = FindString(chunk, "model")) response_.model = *model;
  if (const json* usage = FindObject(chunk, "usage")) {
    if (absl::Status s = ReadUsage(*usage, "openai stream: usage", &response_.usage); !s.ok()) {
      return s;
    }
  }
  const json* choices = Find(chunk, "choices");
  if (choices == nullptr || choices->is_null()) return absl::OkStatus();
  if (!choices->is_array()) return absl::DataLossError("openai stream: choices is not an array");
  for (const json& choice : *choices) {
    // Herald asks for one choice; another index would be a second answer, not more of this.
    if (const json* index = Find(choice, "index");
        index != nullptr && !(index->is_number_integer() && index->get<int64_t>() == 0)) {
      continue;
    }
    if (const json* delta = FindObject(choice, "delta")) {
      if (const json* content = Find(*delta, "content"); content && !content->is_null()) {
        if (!content->is_string()) {
          return absl::DataLossError("openai stream: delta.content is not text");
        }
        const std::string& text = content->get_ref<const std::string&>();
        if (!text.empty()) {
          text_ += text;
          if (on_text_) on_text_(text);
        }
      }
      if (const std::string* refusal = FindString(*delta, "refusal")) refusal_ += *refusal;
      if (absl::Status s = OnToolCallDelta(*delta); !s.ok()) return s;
    }
    if (const std::string* finish = FindString(choice, "finish_reason")) finish_reason_ = *finish;
  }
  return absl::OkStatus();
}

absl::Status OpenAiStreamDecoder::OnToolCallDelta(const json& delta) {
  const json* calls = Find(delta, "tool_calls");
  if (calls == nullptr || calls->is_null()) return absl::OkStatus();
  if (!calls->is_array()) return absl::DataLossError("openai stream: tool_calls is not an array");
  for (const json& call : *calls) {
    if (!call.is_object())
      return absl::DataLossError("openai stream: a tool call is not an object");
    const std::string* id = FindString(call, "id");
    int64_t index;
    if (const json* i = Find(call, "index"); i != nullptr && i->is_number_integer()) {
      index = i->get<int64_t>();
      if (index < 0) return absl::DataLossError("openai stream: a negative tool call index");
    } else if (id != nullptr || last_index_ < 0) {
      index = last_index_ + 1;  // servers that omit the index start a call with its id
    } else {
      index = last_index_;
    }
    if (!calls_.contains(index) && calls_.size() >= kMaxToolCalls) {
      return absl::DataLossError("openai stream: too many tool calls");
    }
    PartialCall& partial = calls_[index];
    last_index_ = std::max(last_index_, index);
    if (id != nullptr && partial.id.empty()) partial.id = *id;
    if (const json* function = FindObject(call, "function")) {
      if (const std::string* name = FindString(*function, "name"); name && partial.name.empty()) {
        partial.name = *name;
      }
      if (const json* arguments = Find(*function, "arguments")) {
        if (arguments->is_string()) {
          partial.arguments += arguments->get_ref<const std::string&>();
        } else if (arguments->is_object()) {
          partial.arguments += DumpJson(*arguments);
        } else if (!arguments->is_null()) {
          return absl::DataLossError("openai stream: tool call arguments are not a string");
        }
      }
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<LlmResponse> OpenAiStreamDecoder::Finish() {
  if (status_.ok()) {
    try {
      status_ = sse_.Finish([this](const SseEvent& event) { return OnEvent(event); });
    } catch (const std::exception& e) {
      status_ = absl::DataLossError(absl::StrCat("openai stream: unreadable (", e.what(), ")"));
    }
  }
  if (!status_.ok()) return status_;
  if (!fed_) return absl::DataLossError("openai stream: the body is empty");
  if (!done_ && finish_reason_.empty()) {
    return absl::DataLossError("openai stream: ended before finish_reason and [DONE] (truncated)");
  }
  LlmResponse response = response_;
  response.text = text_.empty() ? refusal_ : text_;
  for (const auto& [index, partial] : calls_) {
    if (partial.name.empty()) {
      return absl::DataLossError(
          absl::StrCat("openai stream: tool call ", index, " has no function name"));
    }
    std::string id = partial.id.empty() ? absl::StrCat("call_", index) : partial.id;
    response.tool_calls.push_back(
        ToolCall{std::move(id), partial.name, ParseArguments(partial.arguments)});
  }
  response.stop_reason = FinalStopReason(finish_reason_, response);
  return response;
}

}  // namespace herald::providers
