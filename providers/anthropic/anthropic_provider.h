// providers/anthropic/anthropic_provider.h
//
// AnthropicProvider is the LlmProvider for Anthropic's Messages API: it turns each LlmRequest
// into a POST {base_url}/v1/messages (providers/anthropic/wire_format.h), sends it with the
// shared HttpClient (the [llm] timeouts and retries apply: 429, 5xx and 529 are retried with
// backoff, honouring Retry-After), streams text deltas when the request asks to stream, and
// answers with one LlmResponse or an error status as providers/provider.h documents. The API
// key goes only into the x-api-key header: it is removed from every error message.
//
//   auto provider = AnthropicProvider::Create(http.get(), config.llm.anthropic, config.llm);
//   (*provider)->Complete(request, on_text, done);
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "providers/http/http_client.h"
#include "providers/llm_options.h"
#include "providers/provider.h"
#include "providers/wire/http_call.h"

namespace herald::providers {

class AnthropicProvider : public LlmProvider {
 public:
  // Fails when the API key is empty or base_url is not an http(s) URL.
  static absl::StatusOr<std::unique_ptr<AnthropicProvider>> Create(
      HttpClient* http, const HostedProviderOptions& config, const LlmOptions& llm);
  // The same with explicit HTTP settings (tests use short backoffs).
  static absl::StatusOr<std::unique_ptr<AnthropicProvider>> Create(
      HttpClient* http, const HostedProviderOptions& config, const HttpCallOptions& options);

  std::string_view name() const override { return "anthropic"; }
  void Complete(const LlmRequest& request, OnText on_text, Done done) override;

 private:
  AnthropicProvider(HttpClient* http, std::string url, std::string api_key,
                    HttpCallOptions options);

  HttpClient* http_;
  std::string url_;
  std::string api_key_;
  HttpCallOptions options_;
};

}  // namespace herald::providers
