#include "providers/ollama/ollama_provider.h"

#include <utility>

#include "providers/ollama/wire_format.h"

namespace herald::providers {

absl::StatusOr<std::unique_ptr<OllamaProvider>> OllamaProvider::Create(HttpClient* http,
                                                                       const OllamaOptions& config,
                                                                       const LlmOptions& llm) {
  return Create(http, config, HttpCallOptionsFrom(llm));
}

absl::StatusOr<std::unique_ptr<OllamaProvider>> OllamaProvider::Create(
    HttpClient* http, const OllamaOptions& config, const HttpCallOptions& options) {
  if (http == nullptr) return absl::InvalidArgumentError("ollama: no HTTP client");
  std::string url = OllamaChatUrl(config.host);
  if (config.host.empty() || !IsHttpUrl(url)) {
    return absl::InvalidArgumentError("host must be host:port or an http:// or https:// URL");
  }
  return std::unique_ptr<OllamaProvider>(new OllamaProvider(http, std::move(url), options));
}

OllamaProvider::OllamaProvider(HttpClient* http, std::string url, HttpCallOptions options)
    : http_(http), url_(std::move(url)), options_(options) {}

void OllamaProvider::Complete(const LlmRequest& request, OnText on_text, Done done) {
  LlmCall call;
  call.provider = "ollama";
  call.model = request.model;
  call.request.url = url_;
  call.request.headers = {{"content-type", "application/json"}};
  call.request.body = DumpJson(BuildOllamaRequest(request));
  call.parse_body = ParseOllamaResponse;
  if (request.stream) {
    call.make_decoder = [](OnText text) {
      return std::make_unique<OllamaStreamDecoder>(std::move(text));
    };
  }
  call.error_status = [](const HttpResponse& response) {
    return OllamaErrorStatus(response.status, response.body, response.Header("retry-after"));
  };
  SendLlmCall(*http_, std::move(call), options_, std::move(on_text), std::move(done));
}

}  // namespace herald::providers
