#include "providers/anthropic/anthropic_provider.h"

#include <utility>

#include "providers/anthropic/wire_format.h"

namespace herald::providers {

absl::StatusOr<std::unique_ptr<AnthropicProvider>> AnthropicProvider::Create(
    HttpClient* http, const HostedProviderOptions& config, const LlmOptions& llm) {
  return Create(http, config, HttpCallOptionsFrom(llm));
}

absl::StatusOr<std::unique_ptr<AnthropicProvider>> AnthropicProvider::Create(
    HttpClient* http, const HostedProviderOptions& config, const HttpCallOptions& options) {
  if (http == nullptr) return absl::InvalidArgumentError("anthropic: no HTTP client");
  if (config.api_key.empty()) {
    return absl::InvalidArgumentError("api_key is empty");
  }
  if (!IsHttpUrl(config.base_url)) {
    return absl::InvalidArgumentError("base_url must start with http:// or https://");
  }
  return std::unique_ptr<AnthropicProvider>(
      new AnthropicProvider(http, JoinUrl(config.base_url, kAnthropicMessagesPath), config.api_key,
                            ForProvider(options, config)));
}

AnthropicProvider::AnthropicProvider(HttpClient* http, std::string url, std::string api_key,
                                     HttpCallOptions options)
    : http_(http), url_(std::move(url)), api_key_(std::move(api_key)), options_(options) {}

void AnthropicProvider::Complete(const LlmRequest& request, OnText on_text, Done done) {
  LlmCall call;
  call.provider = "anthropic";
  call.model = request.model;
  call.secret = api_key_;
  call.request.url = url_;
  call.request.headers = AnthropicHeaders(api_key_);
  call.request.body = DumpJson(BuildAnthropicRequest(request));
  call.parse_body = ParseAnthropicResponse;
  if (request.stream) {
    call.make_decoder = [](OnText text) {
      return std::make_unique<AnthropicStreamDecoder>(std::move(text));
    };
  }
  call.error_status = [](const HttpResponse& response) {
    return AnthropicErrorStatus(response.status, response.body, response.Header("retry-after"));
  };
  SendLlmCall(*http_, std::move(call), options_, std::move(on_text), std::move(done));
}

}  // namespace herald::providers
