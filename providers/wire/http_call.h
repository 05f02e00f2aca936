// providers/wire/http_call.h
//
// SendLlmCall runs one call of an HTTP LLM provider over the shared HttpClient, so that the
// Anthropic, OpenAI and Ollama providers differ only in their wire formats: it applies the
// [llm] timeouts and retries, feeds a streamed 2xx body to the provider's StreamDecoder as it
// arrives (text deltas reach `on_text` in order) or parses a whole body, turns a non-2xx answer
// into the provider's error status, names the provider in every error and removes the API key
// from every message.
//
//   LlmCall call{.provider = "anthropic", .model = request.model, .secret = api_key};
//   call.request = ...;                       // url, headers, body
//   call.parse_body = ParseAnthropicResponse;
//   if (request.stream) call.make_decoder = [](LlmProvider::OnText t) { return ...; };
//   call.error_status = AnthropicErrorStatus;
//   SendLlmCall(*http, std::move(call), options, std::move(on_text), std::move(done));
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "providers/http/http_client.h"
#include "providers/llm_options.h"
#include "providers/provider.h"
#include "providers/wire/wire.h"

namespace herald::providers {

// The per-call HTTP settings of every provider, from [llm].
struct HttpCallOptions {
  absl::Duration connect_timeout = absl::Seconds(10);
  absl::Duration total_timeout = absl::Seconds(120);  // per attempt
  RetryPolicy retry;
  // Not from [llm]: each hosted provider sets its own (HostedProviderOptions).
  HttpVersion http_version = HttpVersion::kAuto;
  std::string ca_file;
};

HttpCallOptions HttpCallOptionsFrom(const LlmOptions& llm);

// `options` with what the hosted provider's own section adds (HTTP version, CA file).
HttpCallOptions ForProvider(HttpCallOptions options, const HostedProviderOptions& provider);

struct LlmCall {
  std::string provider;  // "anthropic": set on the response and prefixed to errors
  std::string model;     // the requested model, reported when the answer names none
  std::string secret;    // the API key: replaced by "[redacted]" in every error message
  HttpRequest request;   // url, headers and body; timeouts and retries come from the options
  // Parses a whole 2xx body.
  std::function<absl::StatusOr<LlmResponse>(std::string_view body)> parse_body;
  // When set, the answer is streamed: a decoder built with the call's OnText reads the body.
  std::function<std::unique_ptr<StreamDecoder>(LlmProvider::OnText on_text)> make_decoder;
  // The status of a non-2xx answer (status, body, Retry-After).
  std::function<absl::Status(const HttpResponse& response)> error_status;
};

// Starts `call`; `done` runs exactly once on the I/O loop (never before this returns, as the
// HttpClient promises). Must be called on the I/O loop's thread.
void SendLlmCall(HttpClient& http, LlmCall call, const HttpCallOptions& options,
                 LlmProvider::OnText on_text, LlmProvider::Done done);

// `status` with its message prefixed by `provider` (unless it already starts with it) and every
// occurrence of `secret` replaced by "[redacted]": how every provider error leaves this module.
absl::Status WithContext(const absl::Status& status, std::string_view provider,
                         std::string_view secret);

// True for "http://..." and "https://..." (any case), what a provider's base URL must be.
bool IsHttpUrl(std::string_view url);

// "https://api.anthropic.com/" + "/v1/messages" without a doubled slash.
std::string JoinUrl(std::string_view base, std::string_view path);

}  // namespace herald::providers
