// providers/provider.h
//
// The provider-neutral shape of an LLM call, and the interface every provider implements
// (Anthropic Messages, OpenAI-compatible Chat Completions, Ollama /api/chat, scripted). The
// agent builds one LlmRequest per round of its loop; a provider turns it into its own wire
// format, sends it with the shared HttpClient, and answers with one LlmResponse, streaming
// text deltas as they arrive when asked to. A malformed, truncated or unexpected provider
// body is an error for that call only.
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

struct LlmMessage {
  enum class Role { kUser, kAssistant, kTool };
  Role role = Role::kUser;
  std::string text;
  std::vector<ToolCall> tool_calls;      // kAssistant: the calls it made
  std::vector<ToolResult> tool_results;  // kTool: the answers to those calls
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
