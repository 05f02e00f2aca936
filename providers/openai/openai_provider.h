// providers/openai/openai_provider.h
//
// OpenAiProvider is the LlmProvider for OpenAI-compatible Chat Completions servers (OpenAI,
// vLLM, llama.cpp, OpenRouter...): it turns each LlmRequest into a POST
// {base_url}/chat/completions (providers/openai/wire_format.h), sends it with the shared
// HttpClient (the [llm] timeouts and retries apply: 429 and 5xx are retried with backoff,
// honouring Retry-After), streams text deltas when the request asks to stream, and answers
// with one LlmResponse or an error status as providers/provider.h documents. The API key goes
// only into the Authorization header (none is sent when it is empty, for local servers) and is
// removed from every error message.
//
//   auto provider = OpenAiProvider::Create(http.get(), config.llm.openai, config.llm);
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

class OpenAiProvider : public LlmProvider {
 public:
  // Fails when base_url is not an http(s) URL. An empty API key is allowed.
  static absl::StatusOr<std::unique_ptr<OpenAiProvider>> Create(HttpClient* http,
                                                                const HostedProviderOptions& config,
                                                                const LlmOptions& llm);
  // The same with explicit HTTP settings (tests use short backoffs).
  static absl::StatusOr<std::unique_ptr<OpenAiProvider>> Create(HttpClient* http,
                                                                const HostedProviderOptions& config,
                                                                const HttpCallOptions& options);

  std::string_view name() const override { return "openai"; }
  void Complete(const LlmRequest& request, OnText on_text, Done done) override;

 private:
  OpenAiProvider(HttpClient* http, std::string url, std::string api_key, HttpCallOptions options);

  HttpClient* http_;
  std::string url_;
  std::string api_key_;
  HttpCallOptions options_;
};

}  // namespace herald::providers
