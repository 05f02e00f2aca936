// providers/embeddings/embeddings_client.h
//
// EmbeddingsClient turns texts into vectors through an embeddings API, for memory search's
// vector path (M4): an OpenAI-compatible `POST <base_url>/embeddings` or Ollama's
// `POST <host>/api/embed`, one request per batch, through the shared HttpClient (timeouts,
// retries on 429 and 5xx). Everything the server answers is checked: one vector per text, in
// order, all of one length (1 to kMaxDimensions), every number finite; anything else fails the
// batch with a message that names the problem and never the key.
//
//   EmbeddingsClient client(*http, {.provider = "ollama", .model = "nomic-embed-text",
//                                   .base_url = "http://localhost:11434"});
//   client.Embed({"my cat is Biscuit"}, [](absl::StatusOr<Embeddings> vectors) { ... });
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "providers/http/http_client.h"

namespace herald::providers {

struct EmbeddingsOptions {
  std::string provider;  // "openai" (any OpenAI-compatible server) | "ollama"
  std::string model;
  // OpenAI: the API's base URL, e.g. "https://api.openai.com/v1"; Ollama: its host.
  std::string base_url;
  std::string api_key;  // OpenAI's bearer token; a secret, never logged
  // OpenAI: what [llm.openai] says of reaching its server (HostedProviderOptions).
  HttpVersion http_version = HttpVersion::kAuto;
  std::string ca_file;
  absl::Duration timeout = absl::Seconds(30);
  int max_retries = 2;

  friend bool operator==(const EmbeddingsOptions&, const EmbeddingsOptions&) = default;
};

using Embeddings = std::vector<std::vector<float>>;

class EmbeddingsClient {
 public:
  static constexpr size_t kMaxDimensions = 8192;
  // Texts sent in one request; callers split longer lists.
  static constexpr size_t kMaxBatch = 64;

  // `http` must outlive the client.
  EmbeddingsClient(HttpClient& http, EmbeddingsOptions options);

  // The vectors of `texts` (1 to kMaxBatch), in their order; `done` runs once on the I/O
  // loop (at once, before this returns, for a batch of a wrong size). Must be called on the
  // I/O loop.
  void Embed(std::vector<std::string> texts, std::function<void(absl::StatusOr<Embeddings>)> done);

  // "<provider>:<model>": vectors of different models never mix (the cache keys on it).
  std::string model_key() const { return options_.provider + ":" + options_.model; }

 private:
  HttpClient& http_;
  EmbeddingsOptions options_;
};

// The request body and the reading of the answer, for each wire format (exposed for tests).
std::string EmbeddingsRequestBody(const EmbeddingsOptions& options,
                                  const std::vector<std::string>& texts);
absl::StatusOr<Embeddings> ParseEmbeddingsResponse(const EmbeddingsOptions& options,
                                                   std::string_view body, size_t expected);

}  // namespace herald::providers
