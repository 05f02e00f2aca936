#include "providers/openai/openai_provider.h"

#include <utility>

#include "providers/openai/wire_format.h"

namespace herald::providers {

absl::StatusOr<std::unique_ptr<OpenAiProvider>> OpenAiProvider::Create(
    HttpClient* http, const HostedProviderOptions& config, const LlmOptions& llm) {
  return Create(http, config, HttpCallOptionsFrom(llm));
}

absl::StatusOr<std::unique_ptr<OpenAiProvider>> OpenAiProvider::Create(
    HttpClient* http, const HostedProviderOptions& config, const HttpCallOptions& options) {
  if (http == nullptr) return absl::InvalidArgumentError("openai: no HTTP client");
  if (!IsHttpUrl(config.base_url)) {
    return absl::InvalidArgumentError("base_url must start with http:// or https://");
  }
  return std::unique_ptr<OpenAiProvider>(
      new OpenAiProvider(http, JoinUrl(config.base_url, kOpenAiChatPath), config.api_key,
                         ForProvider(options, config)));
}

OpenAiProvider::OpenAiProvider(HttpClient* http, std::string url, std::string api_key,
                               HttpCallOptions options)
    : http_(http), url_(std::move(url)), api_key_(std::move(api_key)), options_(options) {}

void OpenAiProvider::Complete(const LlmRequest& request, OnText on_text, Done done) {
  LlmCall call;
  call.provider = "openai";
  call.model = request.model;
  call.secret = api_key_;
  call.request.url = url_;
  call.request.headers = OpenAiHeaders(api_key_);
  call.request.body = DumpJson(BuildOpenAiRequest(request));
  call.parse_body = ParseOpenAiResponse;
  if (request.stream) {
    call.make_decoder = [](OnText text) {
      return std::make_unique<OpenAiStreamDecoder>(std::move(text));
    };
  }
  call.error_status = [](const HttpResponse& response) {
    return OpenAiErrorStatus(response.status, response.body, response.Header("retry-after"));
  };
  SendLlmCall(*http_, std::move(call), options_, std::move(on_text), std::move(done));
}

}  // namespace herald::providers
