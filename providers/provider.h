// providers/provider.h
//
// The provider-neutral shape of an LLM call, and the interface every provider implements
// (Anthropic Messages, OpenAI-compatible Chat Completions, Ollama /api/chat, scripted). The
// agent builds one LlmRequest per round of its loop; a provider turns it into its own wire
// format, sends it with the shared HttpClient, and answers with one LlmResponse, streaming
// text deltas as they arrive when asked to. A malformed, truncated or unexpected provider
// body is an error for that call only.
//
// A user message may carry images for a vision model (ImagePart): each HTTP provider sends
// them in its own wire format, base64-encoded; the scripted provider ignores them.
//
//   provider->Complete(request,
//       [&](std::string_view delta) { partial += delta; },          // may never be called
//       [&](absl::StatusOr<LlmResponse> response) { ... });        // exactly once
//
// Everything runs on the I/O loop: Complete returns at once and both callbacks are invoked
// on the loop's thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace herald::providers {

// A tool the model may call: its JSON Schema is the skill's parameter schema.
struct ToolSpec {
  std::string name;
  std::string description;
  nlohmann::json parameters;  // a JSON Schema object
};

struct ToolCall {
  std::string id;  // the provider's id, echoed back in the ToolResult
  std::string name;
  nlohmann::json arguments;  // an object (providers that send a string are parsed)
};

struct ToolResult {
  std::string tool_call_id;
  std::string name;
  std::string content;
  bool is_error = false;
};

// An image the user sent, for a vision model. The bytes are shared and immutable: the agent
// builds (and copies) a request in every round of its loop, and an image of a few MiB must not
// be copied each time; only the provider's encoding (base64, once per HTTP call) touches them.
// The media type is not checked here; the model APIs take "image/png", "image/jpeg",
// "image/gif" and "image/webp" (Anthropic and OpenAI refuse others: InvalidArgument). Ollama's
// format has no media type: it reads the bytes.
//
//   message.images.push_back(ImagePart::FromBytes("image/png", std::move(png)));
struct ImagePart {
  // An ImagePart that owns `bytes` (raw, not base64).
  static ImagePart FromBytes(std::string media_type, std::string bytes) {
    return {std::move(media_type), std::make_shared<const std::string>(std::move(bytes))};
  }

  // The raw bytes; empty when `data` is null.
  std::string_view bytes() const { return data ? std::string_view(*data) : std::string_view(); }

  std::string media_type;                   // "image/png", "image/jpeg", "image/gif", "image/webp"
  std::shared_ptr<const std::string> data;  // the raw bytes, not base64; null reads as empty
};

struct LlmMessage {
  enum class Role { kUser, kAssistant, kTool };
  Role role = Role::kUser;
  std::string text;
  std::vector<ToolCall> tool_calls;      // kAssistant: the calls it made
  std::vector<ToolResult> tool_results;  // kTool: the answers to those calls
  std::vector<ImagePart> images;         // kUser: images sent with the text (other roles: unsent)
};

struct LlmRequest {
  std::string model;   // the provider's model name ("claude-sonnet-4-5"), set by the router
  std::string system;  // system prompt (identity, instructions, context)
  std::vector<LlmMessage> messages;
  std::vector<ToolSpec> tools;  // empty: the model must answer with text
  int max_tokens = 1024;
  bool stream = false;
};

struct Usage {
  int64_t input_tokens = 0;
  int64_t output_tokens = 0;
  int64_t cache_creation_input_tokens = 0;
  int64_t cache_read_input_tokens = 0;
};

enum class StopReason { kEndTurn, kToolUse, kMaxTokens, kStopSequence, kOther };

struct LlmResponse {
  std::string text;
  std::vector<ToolCall> tool_calls;
  Usage usage;
  StopReason stop_reason = StopReason::kEndTurn;
  std::string model;     // as reported by the provider
  std::string provider;  // "anthropic", "openai", "ollama", "scripted"
};

class LlmProvider {
 public:
  using OnText = std::function<void(std::string_view delta)>;
  using Done = std::function<void(absl::StatusOr<LlmResponse>)>;

  virtual ~LlmProvider() = default;

  // "anthropic", "openai", "ollama" or "scripted": the prefix of "<provider>:<model>".
  virtual std::string_view name() const = 0;

  // Sends `request`. Errors: Unavailable (transport failure, 5xx, 429 after retries),
  // DeadlineExceeded (timeout), InvalidArgument (4xx: the request was refused),
  // Unauthenticated (401/403), DataLoss (a body that does not parse).
  virtual void Complete(const LlmRequest& request, OnText on_text, Done done) = 0;
};

}  // namespace herald::providers
