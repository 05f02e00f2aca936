// providers/anthropic/wire_format.h
//
// The Anthropic Messages API (POST {base_url}/v1/messages, anthropic-version 2023-06-01) as
// Herald speaks it: the request body and headers for an LlmRequest, the parser of a whole
// response, the incremental decoder of a streamed one (server-sent events: message_start,
// content_block_start / _delta / _stop with text_delta and input_json_delta, message_delta,
// message_stop, ping, error) and the status of an error answer. Pure functions over bytes:
// AnthropicProvider sends them.
//
//   nlohmann::json body = BuildAnthropicRequest(request);
//   absl::StatusOr<LlmResponse> response = ParseAnthropicResponse(http_body);
//   AnthropicStreamDecoder decoder([&](std::string_view delta) { ... });
//   decoder.Feed(chunk); ...; absl::StatusOr<LlmResponse> r = decoder.Finish();
//
// Mapping: the system prompt is the top-level `system`; tool results (LlmMessage kTool) are a
// user turn of `tool_result` blocks (`is_error` when the skill failed) and consecutive turns
// of one role are merged into one message, as the API expects; empty text blocks, which the
// API refuses, are left out. A user message's images are `image` blocks with a base64 source,
// ahead of its text block. Usage keeps Anthropic's meaning: input_tokens excludes the
// cache_creation_ and cache_read_ tokens, which are reported apart.
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

inline constexpr std::string_view kAnthropicVersion = "2023-06-01";
inline constexpr std::string_view kAnthropicMessagesPath = "/v1/messages";

nlohmann::json BuildAnthropicRequest(const LlmRequest& request);

// x-api-key, anthropic-version and content-type.
std::vector<std::pair<std::string, std::string>> AnthropicHeaders(std::string_view api_key);

// A whole (non-streamed) 2xx body. DataLoss names what was wrong; an error object in the body
// maps as ReportedErrorStatus does.
absl::StatusOr<LlmResponse> ParseAnthropicResponse(std::string_view body);

// The status of a non-2xx answer, with the error type and message of its body.
absl::Status AnthropicErrorStatus(int http_status, std::string_view body,
                                  std::string_view retry_after);

StopReason AnthropicStopReason(std::string_view stop_reason);

class AnthropicStreamDecoder : public StreamDecoder {
 public:
  explicit AnthropicStreamDecoder(LlmProvider::OnText on_text);

  absl::Status Feed(std::string_view bytes) override;
  absl::StatusOr<LlmResponse> Finish() override;

 private:
  struct Block {
    enum class Kind { kText, kToolUse, kOther };
    Kind kind = Kind::kOther;
    bool stopped = false;
    std::string text;
    ToolCall call;
    std::string partial_json;  // input_json_delta fragments, parsed at content_block_stop
  };

  absl::Status OnEvent(const SseEvent& event);
  absl::Status OnMessageStart(const nlohmann::json& data);
  absl::Status OnBlockStart(const nlohmann::json& data);
  absl::Status OnBlockDelta(const nlohmann::json& data);
  absl::Status OnBlockStop(const nlohmann::json& data);
  absl::Status OnMessageDelta(const nlohmann::json& data);
  absl::StatusOr<Block*> BlockAt(const nlohmann::json& data, std::string_view event);

  LlmProvider::OnText on_text_;
  SseParser sse_;
  absl::Status status_;
  bool fed_ = false;
  bool started_ = false;
  bool stopped_ = false;
  std::map<int64_t, Block> blocks_;
  std::string stop_reason_;
  LlmResponse response_;
};

}  // namespace herald::providers
