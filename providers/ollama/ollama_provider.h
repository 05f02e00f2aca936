// providers/ollama/ollama_provider.h
//
// OllamaProvider is the LlmProvider for a local or remote Ollama server's /api/chat: it turns
// each LlmRequest into a POST {host}/api/chat (providers/ollama/wire_format.h), sends it with
// the shared HttpClient (the [llm] timeouts and retries apply), streams text deltas (NDJSON)
// when the request asks to stream, and answers with one LlmResponse or an error status as
// providers/provider.h documents. Ollama needs no key.
//
//   auto provider = OllamaProvider::Create(http.get(), config.llm.ollama, config.llm);
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

class OllamaProvider : public LlmProvider {
 public:
  // Fails when host is empty or names a scheme other than http(s). A host without a scheme
  // ("localhost:11434") means http://.
  static absl::StatusOr<std::unique_ptr<OllamaProvider>> Create(HttpClient* http,
                                                                const OllamaOptions& config,
                                                                const LlmOptions& llm);
  // The same with explicit HTTP settings (tests use short backoffs).
  static absl::StatusOr<std::unique_ptr<OllamaProvider>> Create(HttpClient* http,
                                                                const OllamaOptions& config,
                                                                const HttpCallOptions& options);

  std::string_view name() const override { return "ollama"; }
  void Complete(const LlmRequest& request, OnText on_text, Done done) override;

 private:
  OllamaProvider(HttpClient* http, std::string url, HttpCallOptions options);

  HttpClient* http_;
  std::string url_;
  HttpCallOptions options_;
};

}  // namespace herald::providers
