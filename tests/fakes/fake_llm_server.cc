#include "tests/fakes/fake_llm_server.h"

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "component/base/absl_string_view.h"
#include "component/base/hex.h"
#include "tests/fakes/fake_embeddings.h"

namespace herald::fakes {
namespace {

using nlohmann::json;
using providers::StopReason;
using providers::Usage;

std::string Dump(const json& value) {
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

json ParseOrNull(std::string_view text) {
  json value = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  return value.is_discarded() ? json(nullptr) : value;
}

const json* Member(const json& value, const char* key) {
  if (!value.is_object()) return nullptr;
  auto it = value.find(key);
  return it == value.end() ? nullptr : &*it;
}

std::string StringMember(const json& value, const char* key) {
  const json* member = Member(value, key);
  return member != nullptr && member->is_string() ? member->get<std::string>() : "";
}

// A content value as text: a string, or the text of an array of {"type":"text"} blocks.
std::string ContentText(const json& content) {
  if (content.is_string()) return content.get<std::string>();
  std::string text;
  if (content.is_array()) {
    for (const json& block : content) {
      if (StringMember(block, "type") == "text") text += StringMember(block, "text");
    }
  }
  return text;
}

json Messages(const RecordedLlmRequest& request) {
  const json* messages = Member(request.body, "messages");
  return messages != nullptr && messages->is_array() ? *messages : json::array();
}

// --- Images in requests ---

absl::Status BadImage(std::string_view where, std::string_view problem) {
  return absl::InvalidArgumentError(absl::StrCat(AbslView(where), ": ", AbslView(problem)));
}

// The media types Anthropic and OpenAI take.
bool IsImageType(std::string_view type) {
  return type == "image/jpeg" || type == "image/png" || type == "image/gif" || type == "image/webp";
}

// Padded standard base64 (RFC 4648 section 4), read as strictly as the real APIs read it.
std::optional<std::string> DecodeBase64(std::string_view text) {
  if (text.empty() || text.size() % 4 != 0) return std::nullopt;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    const bool padding =
        c == '=' && i + 2 >= text.size() && (i + 1 == text.size() || text[i + 1] == '=');
    if (!padding && !absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '+' && c != '/') {
      return std::nullopt;
    }
  }
  std::string bytes;
  if (!absl::Base64Unescape(AbslView(text), &bytes)) return std::nullopt;
  return bytes;
}

absl::Status AddImage(std::string media_type, std::string_view base64, std::string_view where,
                      std::vector<RecordedImage>* images) {
  std::optional<std::string> bytes = DecodeBase64(base64);
  if (!bytes.has_value()) return BadImage(where, "invalid base64 data");
  images->push_back({std::move(media_type), bytes->size(), base::Sha256Hex(*bytes)});
  return absl::OkStatus();
}

// {"type": "image", "source": {"type": "base64", "media_type": ..., "data": ...}}
absl::Status ReadAnthropicImage(const json& block, const std::string& where,
                                std::vector<RecordedImage>* images) {
  const json* source = Member(block, "source");
  if (source == nullptr || !source->is_object()) return BadImage(where, "source: Field required");
  if (StringMember(*source, "type") != "base64") {
    return BadImage(where, "source.type: the fake LLM takes only base64 images");
  }
  const json* media_type = Member(*source, "media_type");
  if (media_type == nullptr || !media_type->is_string()) {
    return BadImage(where, "source.base64.media_type: Field required");
  }
  if (!IsImageType(media_type->get_ref<const std::string&>())) {
    return BadImage(where,
                    "source.base64.media_type: Input should be 'image/jpeg', 'image/png', "
                    "'image/gif' or 'image/webp'");
  }
  const json* data = Member(*source, "data");
  if (data == nullptr || !data->is_string()) {
    return BadImage(where, "source.base64.data: Field required");
  }
  return AddImage(media_type->get<std::string>(), data->get_ref<const std::string&>(),
                  where + ".source.base64.data", images);
}

// {"type": "image_url", "image_url": {"url": "data:<media type>;base64,<data>"}}
absl::Status ReadOpenAiImage(const json& part, const std::string& where,
                             std::vector<RecordedImage>* images) {
  const json* image_url = Member(part, "image_url");
  const json* url = image_url != nullptr ? Member(*image_url, "url") : nullptr;
  if (url == nullptr || !url->is_string()) return BadImage(where, "image_url.url: Field required");
  const std::string_view text = url->get_ref<const std::string&>();
  const size_t marker = text.find(";base64,");
  if (!absl::StartsWith(AbslView(text), "data:") || marker == std::string_view::npos) {
    return BadImage(where, "image_url.url: the fake LLM takes only base64 data URLs");
  }
  std::string media_type(text.substr(5, marker - 5));
  if (!IsImageType(media_type)) {
    return BadImage(where, "Invalid MIME type. Only image types are supported.");
  }
  return AddImage(std::move(media_type), text.substr(marker + 8), where + ".image_url.url", images);
}

// The images of every message, in order, in the format's terms.
absl::StatusOr<std::vector<RecordedImage>> ReadImages(LlmWireFormat format, const json& body) {
  std::vector<RecordedImage> images;
  const json* messages = Member(body, "messages");
  if (messages == nullptr || !messages->is_array()) return images;
  for (size_t i = 0; i < messages->size(); ++i) {
    const json& message = (*messages)[i];
    const std::string where = absl::StrCat("messages.", i);
    if (format == LlmWireFormat::kOllama) {
      const json* list = Member(message, "images");
      if (list == nullptr || list->is_null()) continue;
      if (!list->is_array()) return BadImage(where, "images: an array of base64 strings");
      for (size_t j = 0; j < list->size(); ++j) {
        const std::string at = absl::StrCat(where, ".images.", j);
        if (!(*list)[j].is_string()) return BadImage(at, "not a base64 string");
        if (absl::Status s = AddImage("", (*list)[j].get_ref<const std::string&>(), at, &images);
            !s.ok()) {
          return s;
        }
      }
      continue;
    }
    const json* content = Member(message, "content");
    if (content == nullptr || !content->is_array()) continue;
    for (size_t j = 0; j < content->size(); ++j) {
      const json& part = (*content)[j];
      const std::string type = StringMember(part, "type");
      const std::string at = absl::StrCat(where, ".content.", j);
      absl::Status s;
      if (format == LlmWireFormat::kAnthropic && type == "image") {
        s = ReadAnthropicImage(part, at, &images);
      } else if (format == LlmWireFormat::kOpenAi && type == "image_url") {
        s = ReadOpenAiImage(part, at, &images);
      }
      if (!s.ok()) return s;
    }
  }
  return images;
}

// Splits text into the pieces a model would stream: each word with the space before it.
std::vector<std::string> Pieces(const std::string& text) {
  std::vector<std::string> pieces;
  size_t start = 0;
  for (size_t i = 1; i < text.size(); ++i) {
    if (text[i] == ' ' && text[i - 1] != ' ') {
      pieces.push_back(text.substr(start, i - start));
      start = i;
    }
  }
  if (start < text.size()) pieces.push_back(text.substr(start));
  return pieces;
}

int64_t WordCount(const std::string& text) { return static_cast<int64_t>(Pieces(text).size()); }

// The answer with its defaults filled in.
struct Resolved {
  std::string text;
  std::vector<FakeToolCall> calls;
  Usage usage;
  StopReason stop;
  int sequence;
};

Resolved Resolve(const Answer& answer, int sequence) {
  Resolved r;
  r.text = answer.text;
  r.calls = answer.tool_calls;
  for (FakeToolCall& call : r.calls) {
    if (call.arguments.is_null()) call.arguments = json::object();
  }
  r.usage = answer.usage.value_or(Usage{
      .input_tokens = 10,
      .output_tokens =
          std::max<int64_t>(1, WordCount(r.text) + 5 * static_cast<int64_t>(r.calls.size()))});
  r.stop =
      answer.stop_reason.value_or(r.calls.empty() ? StopReason::kEndTurn : StopReason::kToolUse);
  r.sequence = sequence;
  return r;
}

// --- Anthropic Messages ---

const char* AnthropicStop(StopReason reason) {
  switch (reason) {
    case StopReason::kEndTurn:
      return "end_turn";
    case StopReason::kToolUse:
      return "tool_use";
    case StopReason::kMaxTokens:
      return "max_tokens";
    case StopReason::kStopSequence:
      return "stop_sequence";
    case StopReason::kOther:
      return "refusal";
  }
  return "end_turn";
}

std::string AnthropicToolId(const Resolved& r, size_t i) {
  return absl::StrCat("toolu_fake_", r.sequence, "_", i);
}

json AnthropicUsage(const Usage& usage, bool with_output) {
  json out = {{"input_tokens", usage.input_tokens},
              {"cache_creation_input_tokens", usage.cache_creation_input_tokens},
              {"cache_read_input_tokens", usage.cache_read_input_tokens}};
  out["output_tokens"] = with_output ? usage.output_tokens : 1;
  return out;
}

std::string AnthropicWhole(const Resolved& r, const std::string& model) {
  json content = json::array();
  if (!r.text.empty()) content.push_back({{"type", "text"}, {"text", r.text}});
  for (size_t i = 0; i < r.calls.size(); ++i) {
    content.push_back({{"type", "tool_use"},
                       {"id", AnthropicToolId(r, i)},
                       {"name", r.calls[i].name},
                       {"input", r.calls[i].arguments}});
  }
  return Dump({{"id", absl::StrCat("msg_fake_", r.sequence)},
               {"type", "message"},
               {"role", "assistant"},
               {"model", model},
               {"content", std::move(content)},
               {"stop_reason", AnthropicStop(r.stop)},
               {"stop_sequence", nullptr},
               {"usage", AnthropicUsage(r.usage, true)}});
}

std::string SseEvent(std::string_view type, const json& data) {
  return absl::StrCat("event: ", AbslView(type), "\ndata: ", Dump(data), "\n\n");
}

// The events of a streamed answer; the last `tail` of them are the ones that end it.
std::vector<std::string> AnthropicEvents(const Resolved& r, const std::string& model,
                                         size_t* tail) {
  std::vector<std::string> events;
  events.push_back(SseEvent("message_start", {{"type", "message_start"},
                                              {"message",
                                               {{"id", absl::StrCat("msg_fake_", r.sequence)},
                                                {"type", "message"},
                                                {"role", "assistant"},
                                                {"model", model},
                                                {"content", json::array()},
                                                {"stop_reason", nullptr},
                                                {"stop_sequence", nullptr},
                                                {"usage", AnthropicUsage(r.usage, false)}}}}));
  int index = 0;
  if (!r.text.empty()) {
    events.push_back(
        SseEvent("content_block_start", {{"type", "content_block_start"},
                                         {"index", index},
                                         {"content_block", {{"type", "text"}, {"text", ""}}}}));
    events.push_back(SseEvent("ping", {{"type", "ping"}}));
    for (const std::string& piece : Pieces(r.text)) {
      events.push_back(
          SseEvent("content_block_delta", {{"type", "content_block_delta"},
                                           {"index", index},
                                           {"delta", {{"type", "text_delta"}, {"text", piece}}}}));
    }
    events.push_back(
        SseEvent("content_block_stop", {{"type", "content_block_stop"}, {"index", index}}));
    ++index;
  }
  for (size_t i = 0; i < r.calls.size(); ++i, ++index) {
    events.push_back(SseEvent("content_block_start", {{"type", "content_block_start"},
                                                      {"index", index},
                                                      {"content_block",
                                                       {{"type", "tool_use"},
                                                        {"id", AnthropicToolId(r, i)},
                                                        {"name", r.calls[i].name},
                                                        {"input", json::object()}}}}));
    // The input arrives as fragments of its JSON text, the first one empty as the API does.
    const std::string input = Dump(r.calls[i].arguments);
    const size_t half = input.size() / 2;
    for (const std::string& fragment : {std::string(), input.substr(0, half), input.substr(half)}) {
      events.push_back(
          SseEvent("content_block_delta",
                   {{"type", "content_block_delta"},
                    {"index", index},
                    {"delta", {{"type", "input_json_delta"}, {"partial_json", fragment}}}}));
    }
    events.push_back(
        SseEvent("content_block_stop", {{"type", "content_block_stop"}, {"index", index}}));
  }
  events.push_back(
      SseEvent("message_delta",
               {{"type", "message_delta"},
                {"delta", {{"stop_reason", AnthropicStop(r.stop)}, {"stop_sequence", nullptr}}},
                {"usage", {{"output_tokens", r.usage.output_tokens}}}}));
  events.push_back(SseEvent("message_stop", {{"type", "message_stop"}}));
  *tail = 2;
  return events;
}

std::string AnthropicErrorType(int status) {
  switch (status) {
    case 400:
      return "invalid_request_error";
    case 401:
      return "authentication_error";
    case 403:
      return "permission_error";
    case 404:
      return "not_found_error";
    case 413:
      return "request_too_large";
    case 429:
      return "rate_limit_error";
    case 529:
      return "overloaded_error";
    default:
      return "api_error";
  }
}

// --- OpenAI Chat Completions ---

const char* OpenAiFinish(StopReason reason) {
  switch (reason) {
    case StopReason::kEndTurn:
    case StopReason::kStopSequence:
      return "stop";
    case StopReason::kToolUse:
      return "tool_calls";
    case StopReason::kMaxTokens:
      return "length";
    case StopReason::kOther:
      return "content_filter";
  }
  return "stop";
}

std::string OpenAiCallId(const Resolved& r, size_t i) {
  return absl::StrCat("call_fake_", r.sequence, "_", i);
}

json OpenAiUsage(const Usage& usage) {
  const int64_t prompt = usage.input_tokens + usage.cache_read_input_tokens;
  return {{"prompt_tokens", prompt},
          {"completion_tokens", usage.output_tokens},
          {"total_tokens", prompt + usage.output_tokens},
          {"prompt_tokens_details", {{"cached_tokens", usage.cache_read_input_tokens}}}};
}

std::string OpenAiWhole(const Resolved& r, const std::string& model) {
  json message = {{"role", "assistant"},
                  {"content", r.text.empty() && !r.calls.empty() ? json(nullptr) : json(r.text)},
                  {"refusal", nullptr}};
  if (!r.calls.empty()) {
    json calls = json::array();
    for (size_t i = 0; i < r.calls.size(); ++i) {
      calls.push_back(
          {{"id", OpenAiCallId(r, i)},
           {"type", "function"},
           {"function", {{"name", r.calls[i].name}, {"arguments", Dump(r.calls[i].arguments)}}}});
    }
    message["tool_calls"] = std::move(calls);
  }
  return Dump({{"id", absl::StrCat("chatcmpl-fake-", r.sequence)},
               {"object", "chat.completion"},
               {"created", 1700000000},
               {"model", model},
               {"choices",
                {{{"index", 0},
                  {"message", std::move(message)},
                  {"logprobs", nullptr},
                  {"finish_reason", OpenAiFinish(r.stop)}}}},
               {"usage", OpenAiUsage(r.usage)}});
}

std::vector<std::string> OpenAiEvents(const Resolved& r, const RecordedLlmRequest& request,
                                      size_t* tail) {
  const std::string id = absl::StrCat("chatcmpl-fake-", r.sequence);
  auto chunk = [&](json delta, json finish) {
    json data = {
        {"id", id},
        {"object", "chat.completion.chunk"},
        {"created", 1700000000},
        {"model", request.model},
        {"choices", {{{"index", 0}, {"delta", std::move(delta)}, {"finish_reason", finish}}}}};
    return absl::StrCat("data: ", Dump(data), "\n\n");
  };
  std::vector<std::string> events;
  events.push_back(chunk({{"role", "assistant"}, {"content", ""}, {"refusal", nullptr}}, nullptr));
  for (const std::string& piece : Pieces(r.text)) {
    events.push_back(chunk({{"content", piece}}, nullptr));
  }
  for (size_t i = 0; i < r.calls.size(); ++i) {
    events.push_back(chunk({{"tool_calls",
                             {{{"index", i},
                               {"id", OpenAiCallId(r, i)},
                               {"type", "function"},
                               {"function", {{"name", r.calls[i].name}, {"arguments", ""}}}}}}},
                           nullptr));
    const std::string arguments = Dump(r.calls[i].arguments);
    const size_t half = arguments.size() / 2;
    for (const std::string& fragment : {arguments.substr(0, half), arguments.substr(half)}) {
      events.push_back(chunk(
          {{"tool_calls", {{{"index", i}, {"function", {{"arguments", fragment}}}}}}}, nullptr));
    }
  }
  events.push_back(chunk(json::object(), OpenAiFinish(r.stop)));
  *tail = 2;
  // As OpenAI does, usage comes only when the request asked for it.
  const json* options = Member(request.body, "stream_options");
  const json* include = options != nullptr ? Member(*options, "include_usage") : nullptr;
  if (include != nullptr && include->is_boolean() && include->get<bool>()) {
    json data = {{"id", id},
                 {"object", "chat.completion.chunk"},
                 {"created", 1700000000},
                 {"model", request.model},
                 {"choices", json::array()},
                 {"usage", OpenAiUsage(r.usage)}};
    events.push_back(absl::StrCat("data: ", Dump(data), "\n\n"));
    *tail = 3;
  }
  events.push_back("data: [DONE]\n\n");
  return events;
}

// --- Ollama /api/chat ---

const char* OllamaDone(StopReason reason) {
  return reason == StopReason::kMaxTokens ? "length" : "stop";
}

json OllamaToolCalls(const Resolved& r) {
  json calls = json::array();
  for (size_t i = 0; i < r.calls.size(); ++i) {
    calls.push_back(
        {{"function",
          {{"index", i}, {"name", r.calls[i].name}, {"arguments", r.calls[i].arguments}}}});
  }
  return calls;
}

json OllamaFinal(const Resolved& r, const std::string& model, json message) {
  return {{"model", model},
          {"created_at", "2025-01-01T00:00:00.000000Z"},
          {"message", std::move(message)},
          {"done_reason", OllamaDone(r.stop)},
          {"done", true},
          {"total_duration", 1000000},
          {"load_duration", 1000},
          {"prompt_eval_count", r.usage.input_tokens},
          {"prompt_eval_duration", 1000},
          {"eval_count", r.usage.output_tokens},
          {"eval_duration", 1000}};
}

std::string OllamaWhole(const Resolved& r, const std::string& model) {
  json message = {{"role", "assistant"}, {"content", r.text}};
  if (!r.calls.empty()) message["tool_calls"] = OllamaToolCalls(r);
  return Dump(OllamaFinal(r, model, std::move(message)));
}

std::vector<std::string> OllamaLines(const Resolved& r, const std::string& model, size_t* tail) {
  auto line = [&](json message) {
    return Dump({{"model", model},
                 {"created_at", "2025-01-01T00:00:00.000000Z"},
                 {"message", std::move(message)},
                 {"done", false}}) +
           "\n";
  };
  std::vector<std::string> lines;
  for (const std::string& piece : Pieces(r.text)) {
    lines.push_back(line({{"role", "assistant"}, {"content", piece}}));
  }
  if (!r.calls.empty()) {
    lines.push_back(
        line({{"role", "assistant"}, {"content", ""}, {"tool_calls", OllamaToolCalls(r)}}));
  }
  lines.push_back(Dump(OllamaFinal(r, model, {{"role", "assistant"}, {"content", ""}})) + "\n");
  *tail = 1;
  return lines;
}

}  // namespace

// --- Answer ---

Answer Answer::Text(std::string text) {
  Answer answer;
  answer.text = std::move(text);
  return answer;
}

Answer Answer::ToolCall(std::string name, nlohmann::json arguments) {
  return ToolCalls({FakeToolCall{std::move(name), std::move(arguments)}});
}

Answer Answer::ToolCalls(std::vector<FakeToolCall> calls) {
  Answer answer;
  answer.tool_calls = std::move(calls);
  return answer;
}

Answer Answer::Error(int status, std::string message) {
  Answer answer;
  answer.kind = Kind::kError;
  answer.status = status;
  answer.error_message =
      message.empty() ? absl::StrCat("fake LLM error ", status) : std::move(message);
  return answer;
}

Answer Answer::RateLimited(absl::Duration retry_after) {
  return Error(429, "Rate limited by the fake LLM").WithRetryAfter(retry_after);
}

Answer Answer::Malformed(std::string body) {
  Answer answer;
  answer.kind = Kind::kRaw;
  answer.raw_body = std::move(body);
  return answer;
}

Answer Answer::Hang() {
  Answer answer;
  answer.kind = Kind::kHang;
  return answer;
}

Answer Answer::WithText(std::string text) const {
  Answer answer = *this;
  answer.text = std::move(text);
  return answer;
}

Answer Answer::WithDelay(absl::Duration delay) const {
  Answer answer = *this;
  answer.delay = delay;
  return answer;
}

Answer Answer::WithChunkInterval(absl::Duration interval) const {
  Answer answer = *this;
  answer.chunk_interval = interval;
  return answer;
}

Answer Answer::WithUsage(providers::Usage usage) const {
  Answer answer = *this;
  answer.usage = usage;
  return answer;
}

Answer Answer::WithStopReason(providers::StopReason reason) const {
  Answer answer = *this;
  answer.stop_reason = reason;
  return answer;
}

Answer Answer::WithRetryAfter(absl::Duration retry_after) const {
  Answer answer = *this;
  answer.retry_after = retry_after;
  return answer;
}

Answer Answer::Truncated() const {
  Answer answer = *this;
  answer.truncated = true;
  return answer;
}

Answer Answer::Disconnected() const {
  Answer answer = *this;
  answer.disconnect = true;
  return answer;
}

Answer Answer::IgnoringStream() const {
  Answer answer = *this;
  answer.ignore_stream = true;
  return answer;
}

// --- RecordedLlmRequest ---

std::string RecordedLlmRequest::System() const {
  if (format == LlmWireFormat::kAnthropic) {
    const json* system = Member(body, "system");
    return system != nullptr ? ContentText(*system) : "";
  }
  for (const json& message : Messages(*this)) {
    const std::string role = StringMember(message, "role");
    if (role == "system" || role == "developer") {
      const json* content = Member(message, "content");
      return content != nullptr ? ContentText(*content) : "";
    }
  }
  return "";
}

size_t RecordedLlmRequest::MessageCount() const {
  const json messages = Messages(*this);
  return std::count_if(messages.begin(), messages.end(), [](const json& message) {
    const std::string role = StringMember(message, "role");
    return role != "system" && role != "developer";
  });
}

std::string RecordedLlmRequest::LastUserText() const {
  const json messages = Messages(*this);
  for (auto it = messages.rbegin(); it != messages.rend(); ++it) {
    if (StringMember(*it, "role") != "user") continue;
    const json* content = Member(*it, "content");
    return content != nullptr ? ContentText(*content) : "";
  }
  return "";
}

std::optional<std::string> RecordedLlmRequest::LastToolResult() const {
  const json messages = Messages(*this);
  if (messages.empty()) return std::nullopt;
  const json& last = messages.back();
  if (format == LlmWireFormat::kAnthropic) {
    const json* content = Member(last, "content");
    if (StringMember(last, "role") != "user" || content == nullptr || !content->is_array()) {
      return std::nullopt;
    }
    std::optional<std::string> result;
    for (const json& block : *content) {
      if (StringMember(block, "type") != "tool_result") continue;
      const json* value = Member(block, "content");
      result = value != nullptr ? ContentText(*value) : "";
    }
    return result;
  }
  if (StringMember(last, "role") != "tool") return std::nullopt;
  const json* content = Member(last, "content");
  return content != nullptr ? ContentText(*content) : "";
}

std::vector<std::string> RecordedLlmRequest::ToolNames() const {
  std::vector<std::string> names;
  const json* tools = Member(body, "tools");
  if (tools == nullptr || !tools->is_array()) return names;
  for (const json& tool : *tools) {
    const json* function = Member(tool, "function");
    names.push_back(StringMember(function != nullptr ? *function : tool, "name"));
  }
  return names;
}

// --- FakeLlmServer ---

struct FakeLlmServer::State {
  explicit State(LlmWireFormat f) : format(f) {}

  FakeHttpResponse Serve(const FakeHttpRequest& http);
  RecordedLlmRequest Record(const FakeHttpRequest& http) const;
  std::optional<FakeHttpResponse> Refusal(const RecordedLlmRequest& request,
                                          const absl::Status& images) const;
  FakeHttpResponse Render(const Answer& answer, const RecordedLlmRequest& request, int sequence);
  FakeHttpResponse ErrorResponse(int status, const std::string& message,
                                 std::optional<absl::Duration> retry_after) const;
  std::string ExpectedPath() const;

  const LlmWireFormat format;
  mutable std::mutex mu;
  mutable std::condition_variable arrived;
  std::deque<Answer> script;
  Handler handler;
  Answer default_answer = Answer::Text(kDefaultText);
  std::string api_key;
  bool keep_requests = true;                 // FakeHttpServerOptions::keep_requests, set at start
  std::vector<RecordedLlmRequest> requests;  // kept when keep_requests
  size_t request_count = 0;
  int answered = 0;
  std::vector<RecordedLlmRequest> embedding_requests;
  size_t embedded_texts = 0;
  int embeddings_failure = 0;
  std::function<void(const RecordedLlmRequest&)> embeddings_observer;

  // The path of embeddings requests in this format; "" when it has none.
  std::string EmbeddingsPath() const {
    return format == LlmWireFormat::kOpenAi   ? "/v1/embeddings"
           : format == LlmWireFormat::kOllama ? "/api/embed"
                                              : "";
  }
  FakeHttpResponse ServeEmbeddings(const FakeHttpRequest& http);

  std::string transcript = kDefaultFakeTranscript;
  std::deque<Answer> media_script;
  std::vector<RecordedMediaRequest> media_requests;
  std::function<void(const RecordedMediaRequest&)> media_observer;
  FakeHttpResponse ServeMediaRequest(const FakeHttpRequest& http);
};

FakeHttpResponse FakeLlmServer::State::ServeMediaRequest(const FakeHttpRequest& http) {
  MediaSettings settings;
  std::optional<Answer> scripted;
  std::function<void(const RecordedMediaRequest&)> observer;
  {
    std::lock_guard<std::mutex> lock(mu);
    settings.api_key = api_key;
    settings.transcript = transcript;
    if (!media_script.empty()) {
      scripted = std::move(media_script.front());
      media_script.pop_front();
    }
    observer = media_observer;
  }
  if (scripted.has_value()) settings.scripted = &*scripted;
  RecordedMediaRequest record;
  FakeHttpResponse response = ServeMedia(http, settings, &record);
  {
    std::lock_guard<std::mutex> lock(mu);
    media_requests.push_back(record);
  }
  arrived.notify_all();
  if (observer) observer(record);
  return response;
}

FakeHttpResponse FakeLlmServer::State::ServeEmbeddings(const FakeHttpRequest& http) {
  RecordedLlmRequest request = Record(http);
  int failure;
  std::function<void(const RecordedLlmRequest&)> observer;
  {
    std::lock_guard<std::mutex> lock(mu);
    embedding_requests.push_back(request);
    failure = embeddings_failure;
    observer = embeddings_observer;
  }
  arrived.notify_all();
  if (observer) observer(request);
  if (failure != 0) return ErrorResponse(failure, "embeddings are failing", std::nullopt);
  if (http.method != "POST") return ErrorResponse(405, "use POST", std::nullopt);
  if (request.model.empty()) return ErrorResponse(400, "model: field required", std::nullopt);
  const json* input = Member(request.body, "input");
  if (input == nullptr || !input->is_array() || input->empty()) {
    return ErrorResponse(400, "input: a non-empty array of strings is required", std::nullopt);
  }
  json vectors = json::array();
  for (const json& text : *input) {
    if (!text.is_string()) return ErrorResponse(400, "input: strings only", std::nullopt);
    vectors.push_back(FakeEmbedding(text.get<std::string>()));
  }
  {
    std::lock_guard<std::mutex> lock(mu);
    embedded_texts += vectors.size();
  }
  FakeHttpResponse response;
  response.status = 200;
  response.headers.emplace_back("content-type", "application/json");
  if (format == LlmWireFormat::kOllama) {
    response.body = Dump({{"model", request.model}, {"embeddings", vectors}});
  } else {
    json data = json::array();
    for (size_t i = 0; i < vectors.size(); ++i) {
      data.push_back({{"object", "embedding"}, {"index", i}, {"embedding", vectors[i]}});
    }
    response.body = Dump({{"object", "list"},
                          {"data", data},
                          {"model", request.model},
                          {"usage", {{"prompt_tokens", 1}, {"total_tokens", 1}}}});
  }
  return response;
}

std::string FakeLlmServer::State::ExpectedPath() const {
  switch (format) {
    case LlmWireFormat::kAnthropic:
      return "/v1/messages";
    case LlmWireFormat::kOpenAi:
      return "/v1/chat/completions";
    case LlmWireFormat::kOllama:
      return "/api/chat";
  }
  return "/";
}

RecordedLlmRequest FakeLlmServer::State::Record(const FakeHttpRequest& http) const {
  RecordedLlmRequest request;
  request.format = format;
  request.http = http;
  request.body = ParseOrNull(http.body);
  request.model = StringMember(request.body, "model");
  const json* stream = Member(request.body, "stream");
  if (stream != nullptr && stream->is_boolean()) {
    request.stream = stream->get<bool>();
  } else {
    request.stream = format == LlmWireFormat::kOllama;  // Ollama's default
  }
  return request;
}

FakeHttpResponse FakeLlmServer::State::ErrorResponse(
    int status, const std::string& message, std::optional<absl::Duration> retry_after) const {
  FakeHttpResponse response;
  response.status = status;
  response.headers.emplace_back("content-type", "application/json");
  switch (format) {
    case LlmWireFormat::kAnthropic:
      response.body =
          Dump({{"type", "error"},
                {"error", {{"type", AnthropicErrorType(status)}, {"message", message}}}});
      break;
    case LlmWireFormat::kOpenAi:
      response.body = Dump(OpenAiErrorJson(status, message));
      break;
    case LlmWireFormat::kOllama:
      response.body = Dump({{"error", message}});
      break;
  }
  if (retry_after.has_value()) {
    const int64_t seconds = static_cast<int64_t>(std::ceil(absl::ToDoubleSeconds(*retry_after)));
    response.headers.emplace_back("retry-after", absl::StrCat(std::max<int64_t>(0, seconds)));
  }
  return response;
}

std::optional<FakeHttpResponse> FakeLlmServer::State::Refusal(const RecordedLlmRequest& request,
                                                              const absl::Status& images) const {
  if (request.http.method != "POST" || request.http.path != ExpectedPath()) {
    return ErrorResponse(404,
                         absl::StrCat("no route for ", request.http.method, " ", request.http.path),
                         std::nullopt);
  }
  std::string key;
  {
    std::lock_guard<std::mutex> lock(mu);
    key = api_key;
  }
  if (!key.empty()) {
    const std::string sent = format == LlmWireFormat::kAnthropic ? request.Header("x-api-key")
                                                                 : request.Header("authorization");
    const std::string expected =
        format == LlmWireFormat::kAnthropic ? key : absl::StrCat("Bearer ", key);
    if (sent != expected) return ErrorResponse(401, "invalid API key", std::nullopt);
  }
  if (!request.body.is_object()) {
    return ErrorResponse(400, "the request body is not a JSON object", std::nullopt);
  }
  if (request.model.empty()) return ErrorResponse(400, "model: field required", std::nullopt);
  const json* messages = Member(request.body, "messages");
  if (messages == nullptr || !messages->is_array()) {
    return ErrorResponse(400, "messages: field required", std::nullopt);
  }
  if (format == LlmWireFormat::kAnthropic) {
    if (request.Header("anthropic-version").empty()) {
      return ErrorResponse(400, "anthropic-version: header is required", std::nullopt);
    }
    const json* max_tokens = Member(request.body, "max_tokens");
    if (max_tokens == nullptr || !max_tokens->is_number_integer()) {
      return ErrorResponse(400, "max_tokens: field required", std::nullopt);
    }
    if (messages->empty()) {
      return ErrorResponse(400, "messages: at least one message is required", std::nullopt);
    }
  }
  if (!images.ok()) return ErrorResponse(400, std::string(images.message()), std::nullopt);
  return std::nullopt;
}

FakeHttpResponse FakeLlmServer::State::Render(const Answer& answer,
                                              const RecordedLlmRequest& request, int sequence) {
  FakeHttpResponse response;
  response.delay = answer.delay;
  response.chunk_interval = answer.chunk_interval;
  response.close_mid_body = answer.disconnect;
  if (answer.kind == Answer::Kind::kHang) {
    response.hang = true;
    return response;
  }
  if (answer.kind == Answer::Kind::kError) {
    FakeHttpResponse error = ErrorResponse(answer.status, answer.error_message, answer.retry_after);
    error.delay = answer.delay;
    return error;
  }
  const bool stream = request.stream && !answer.ignore_stream;
  const char* stream_type =
      format == LlmWireFormat::kOllama ? "application/x-ndjson" : "text/event-stream";
  response.headers.emplace_back("content-type", stream ? stream_type : "application/json");
  if (answer.kind == Answer::Kind::kRaw) {
    if (stream) {
      response.chunks = {answer.raw_body};
    } else {
      response.body = answer.raw_body;
    }
    return response;
  }
  const Resolved r = Resolve(answer, sequence);
  if (!stream) {
    switch (format) {
      case LlmWireFormat::kAnthropic:
        response.body = AnthropicWhole(r, request.model);
        break;
      case LlmWireFormat::kOpenAi:
        response.body = OpenAiWhole(r, request.model);
        break;
      case LlmWireFormat::kOllama:
        response.body = OllamaWhole(r, request.model);
        break;
    }
    if (answer.truncated) response.body.resize(response.body.size() / 2);
    return response;
  }
  size_t tail = 0;
  switch (format) {
    case LlmWireFormat::kAnthropic:
      response.chunks = AnthropicEvents(r, request.model, &tail);
      break;
    case LlmWireFormat::kOpenAi:
      response.chunks = OpenAiEvents(r, request, &tail);
      break;
    case LlmWireFormat::kOllama:
      response.chunks = OllamaLines(r, request.model, &tail);
      break;
  }
  if (answer.truncated) response.chunks.resize(response.chunks.size() - tail);
  if (format == LlmWireFormat::kAnthropic || format == LlmWireFormat::kOpenAi) {
    response.headers.emplace_back("cache-control", "no-cache");
  }
  return response;
}

FakeHttpResponse FakeLlmServer::State::Serve(const FakeHttpRequest& http) {
  if (format == LlmWireFormat::kOpenAi && IsMediaPath(http.path)) return ServeMediaRequest(http);
  if (!EmbeddingsPath().empty() && http.path == EmbeddingsPath()) return ServeEmbeddings(http);
  RecordedLlmRequest request = Record(http);
  absl::StatusOr<std::vector<RecordedImage>> images = ReadImages(format, request.body);
  if (images.ok()) request.images = *std::move(images);
  {
    std::lock_guard<std::mutex> lock(mu);
    ++request_count;
    if (keep_requests) requests.push_back(request);
  }
  arrived.notify_all();
  if (std::optional<FakeHttpResponse> refusal = Refusal(request, images.status())) {
    return *refusal;
  }

  std::optional<Answer> answer;
  Handler current_handler;
  int sequence;
  {
    std::lock_guard<std::mutex> lock(mu);
    sequence = ++answered;
    if (!script.empty()) {
      answer = std::move(script.front());
      script.pop_front();
    } else if (handler) {
      current_handler = handler;
    } else {
      answer = default_answer;
    }
  }
  if (!answer.has_value()) answer = current_handler(request);
  return Render(*answer, request, sequence);
}

absl::StatusOr<std::unique_ptr<FakeLlmServer>> FakeLlmServer::Start(Format format) {
  return Start(format, FakeHttpServerOptions{});
}

absl::StatusOr<std::unique_ptr<FakeLlmServer>> FakeLlmServer::Start(
    Format format, FakeHttpServerOptions http_options) {
  auto state = std::make_unique<State>(format);
  state->keep_requests = http_options.keep_requests;
  State* raw = state.get();
  absl::StatusOr<std::unique_ptr<FakeHttpServer>> http = FakeHttpServer::Start(
      [raw](const FakeHttpRequest& request) { return raw->Serve(request); }, http_options);
  if (!http.ok()) return http.status();
  return std::unique_ptr<FakeLlmServer>(new FakeLlmServer(std::move(state), *std::move(http)));
}

FakeLlmServer::FakeLlmServer(std::unique_ptr<State> state, std::unique_ptr<FakeHttpServer> http)
    : state_(std::move(state)), http_(std::move(http)) {}

FakeLlmServer::~FakeLlmServer() { http_.reset(); }

FakeLlmServer::Format FakeLlmServer::format() const { return state_->format; }

uint16_t FakeLlmServer::port() const { return http_->port(); }

std::string FakeLlmServer::base_url() const {
  return state_->format == Format::kOpenAi ? http_->base_url() + "/v1" : http_->base_url();
}

std::string FakeLlmServer::certificate_path() const { return http_->certificate_path(); }

size_t FakeLlmServer::connection_count() const { return http_->connection_count(); }

void FakeLlmServer::Enqueue(Answer answer) {
  std::lock_guard<std::mutex> lock(state_->mu);
  state_->script.push_back(std::move(answer));
}

void FakeLlmServer::SetHandler(Handler handler) {
  std::lock_guard<std::mutex> lock(state_->mu);
  state_->handler = std::move(handler);
}

void FakeLlmServer::SetDefaultAnswer(Answer answer) {
  std::lock_guard<std::mutex> lock(state_->mu);
  state_->default_answer = std::move(answer);
}

void FakeLlmServer::RequireApiKey(std::string key) {
  std::lock_guard<std::mutex> lock(state_->mu);
  state_->api_key = std::move(key);
}

size_t FakeLlmServer::pending_answers() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->script.size();
}

std::vector<RecordedLlmRequest> FakeLlmServer::requests() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->requests;
}

std::vector<RecordedLlmRequest> FakeLlmServer::embedding_requests() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->embedding_requests;
}

size_t FakeLlmServer::embedded_texts() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->embedded_texts;
}

void FakeLlmServer::OnEmbeddings(std::function<void(const RecordedLlmRequest&)> observer) {
  std::lock_guard<std::mutex> lock(state_->mu);
  state_->embeddings_observer = std::move(observer);
}

void FakeLlmServer::FailEmbeddings(int status) {
  std::lock_guard<std::mutex> lock(state_->mu);
  state_->embeddings_failure = status;
}

size_t FakeLlmServer::request_count() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->request_count;
}

bool FakeLlmServer::WaitForRequests(size_t count, absl::Duration timeout) const {
  std::unique_lock<std::mutex> lock(state_->mu);
  return state_->arrived.wait_for(lock, absl::ToChronoNanoseconds(timeout),
                                  [&] { return state_->request_count >= count; });
}

void FakeLlmServer::SetTranscript(std::string text) {
  std::lock_guard<std::mutex> lock(state_->mu);
  state_->transcript = std::move(text);
}

void FakeLlmServer::EnqueueMedia(Answer answer) {
  std::lock_guard<std::mutex> lock(state_->mu);
  state_->media_script.push_back(std::move(answer));
}

std::vector<RecordedMediaRequest> FakeLlmServer::media_requests() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->media_requests;
}

void FakeLlmServer::OnMedia(std::function<void(const RecordedMediaRequest&)> observer) {
  std::lock_guard<std::mutex> lock(state_->mu);
  state_->media_observer = std::move(observer);
}

FakeLlmServer::Handler FakeLlmServer::Echo() {
  return [](const RecordedLlmRequest& request) {
    if (std::optional<std::string> result = request.LastToolResult()) {
      return Answer::Text("tool said: " + *result);
    }
    return Answer::Text("echo: " + request.LastUserText());
  };
}

FakeLlmServer::Handler FakeLlmServer::ToolLoop(std::string tool, nlohmann::json arguments) {
  return [tool = std::move(tool),
          arguments = std::move(arguments)](const RecordedLlmRequest& request) {
    if (std::optional<std::string> result = request.LastToolResult()) {
      return Answer::Text("tool said: " + *result);
    }
    return Answer::ToolCall(tool, arguments);
  };
}

}  // namespace herald::fakes
