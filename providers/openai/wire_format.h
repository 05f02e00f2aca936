// providers/openai/wire_format.h
//
// OpenAI-compatible Chat Completions (POST {base_url}/chat/completions) as Herald speaks it —
// OpenAI itself and the servers that copy its API (vLLM, llama.cpp, LM Studio, OpenRouter...):
// the request body and headers for an LlmRequest, the parser of a whole response, the
// incremental decoder of a streamed one (`data:` chunks whose choices[0].delta carries content
// and tool_calls fragments keyed by index, a finish_reason, a last chunk with usage,
// `data: [DONE]`) and the status of an error answer. Pure functions over bytes: OpenAiProvider
// sends them.
//
//   nlohmann::json body = BuildOpenAiRequest(request);
//   absl::StatusOr<LlmResponse> response = ParseOpenAiResponse(http_body);
//   OpenAiStreamDecoder decoder([&](std::string_view delta) { ... });
//
// Mapping: the system prompt is a leading `system` message; an assistant's tool calls are
// `tool_calls` of type function whose arguments are a JSON string; each tool result is a `tool`
// message with its tool_call_id (the API has no error flag, so a failed result's content is
// prefixed with "Error: "). A user message with images has an array as its content: a text
// part (left out when the text is empty), then an image_url part per image whose url is a
// data URL ("data:image/png;base64,..."). Tool-call arguments the model wrote as invalid JSON
// are passed on as a JSON string rather than failing the call, so the agent's schema check
// can tell the model. Usage follows Anthropic's meaning: input_tokens excludes the cached
// prompt tokens (prompt_tokens_details.cached_tokens), which are reported as
// cache_read_input_tokens.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "providers/provider.h"
#include "providers/wire/sse.h"
#include "providers/wire/wire.h"

namespace herald::providers {

inline constexpr std::string_view kOpenAiChatPath = "/chat/completions";

nlohmann::json BuildOpenAiRequest(const LlmRequest& request);

// Authorization (only when there is a key: local servers often need none) and content-type.
std::vector<std::pair<std::string, std::string>> OpenAiHeaders(std::string_view api_key);

// A whole (non-streamed) 2xx body. DataLoss names what was wrong; an error object in the body
// maps as ReportedErrorStatus does.
absl::StatusOr<LlmResponse> ParseOpenAiResponse(std::string_view body);

// The status of a non-2xx answer, with the error type (or code) and message of its body.
absl::Status OpenAiErrorStatus(int http_status, std::string_view body,
                               std::string_view retry_after);

StopReason OpenAiFinishReason(std::string_view finish_reason);

class OpenAiStreamDecoder : public StreamDecoder {
 public:
  explicit OpenAiStreamDecoder(LlmProvider::OnText on_text);

  absl::Status Feed(std::string_view bytes) override;
  absl::StatusOr<LlmResponse> Finish() override;

 private:
  struct PartialCall {
    std::string id;
    std::string name;
    std::string arguments;  // fragments of the JSON string, parsed at the end
  };

  absl::Status OnEvent(const SseEvent& event);
  absl::Status OnToolCallDelta(const nlohmann::json& delta);

  LlmProvider::OnText on_text_;
  SseParser sse_;
  absl::Status status_;
  bool fed_ = false;
  bool done_ = false;  // `data: [DONE]` arrived
  std::string finish_reason_;
  std::string text_;
  std::string refusal_;
  std::map<int64_t, PartialCall> calls_;
  int64_t last_index_ = -1;
  LlmResponse response_;
};

}  // namespace herald::providers
