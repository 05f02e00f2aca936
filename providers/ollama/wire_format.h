// providers/ollama/wire_format.h
//
// Ollama's native chat API (POST {host}/api/chat) as Herald speaks it: the request body for an
// LlmRequest, the parser of a whole response, the incremental decoder of a streamed one
// (NDJSON: one JSON object per line, message.content fragments, tool calls whole, a last line
// with `"done": true`, the usage counts and done_reason) and the status of an error answer.
// Pure functions over bytes: OllamaProvider sends them.
//
//   nlohmann::json body = BuildOllamaRequest(request);
//   absl::StatusOr<LlmResponse> response = ParseOllamaResponse(http_body);
//   OllamaStreamDecoder decoder([&](std::string_view delta) { ... });
//
// Mapping: the system prompt is a leading `system` message; an assistant's tool calls carry
// their arguments as an object; each tool result is a `tool` message with its tool_name (the
// API has no error flag, so a failed result's content is prefixed with "Error: "); a user
// message's images are its `images`, plain base64 strings (no data: prefix; the format has no
// media type, Ollama reads the bytes); max_tokens is options.num_predict; `stream` is always
// sent, since Ollama streams when it is absent. Ollama gives tool calls no id: Herald numbers
// them ("call_0", "call_1"...) so results can be matched. Usage: prompt_eval_count is
// input_tokens, eval_count output_tokens.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "providers/provider.h"
#include "providers/wire/sse.h"
#include "providers/wire/wire.h"

namespace herald::providers {

// "{host}/api/chat"; a host without a scheme ("localhost:11434", as OLLAMA_HOST is often set)
// gets "http://".
std::string OllamaChatUrl(std::string_view host);

nlohmann::json BuildOllamaRequest(const LlmRequest& request);

// A whole (non-streamed) 2xx body. DataLoss names what was wrong; {"error": ...} in the body
// is Unavailable.
absl::StatusOr<LlmResponse> ParseOllamaResponse(std::string_view body);

// The status of a non-2xx answer, with the error text of its body.
absl::Status OllamaErrorStatus(int http_status, std::string_view body,
                               std::string_view retry_after);

StopReason OllamaDoneReason(std::string_view done_reason);

class OllamaStreamDecoder : public StreamDecoder {
 public:
  explicit OllamaStreamDecoder(LlmProvider::OnText on_text);

  absl::Status Feed(std::string_view bytes) override;
  absl::StatusOr<LlmResponse> Finish() override;

 private:
  absl::Status OnLine(std::string_view line);

  LlmProvider::OnText on_text_;
  LineSplitter lines_;
  absl::Status status_;
  bool fed_ = false;
  bool done_ = false;
  std::string done_reason_;
  LlmResponse response_;
};

}  // namespace herald::providers
