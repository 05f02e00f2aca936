#include "providers/embeddings/embeddings_client.h"

#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "providers/wire/http_call.h"
#include "providers/wire/wire.h"

namespace herald::providers {
namespace {

using nlohmann::json;

bool IsOllama(const EmbeddingsOptions& options) { return options.provider == "ollama"; }

// One vector: a non-empty array of finite numbers, at most kMaxDimensions long.
absl::StatusOr<std::vector<float>> ReadVector(const json& value, size_t index) {
  if (!value.is_array() || value.empty() || value.size() > EmbeddingsClient::kMaxDimensions) {
    return absl::DataLossError(absl::StrCat("embedding ", index, " is not an array of 1 to ",
                                            EmbeddingsClient::kMaxDimensions, " numbers"));
  }
  std::vector<float> vector;
  vector.reserve(value.size());
  for (const json& number : value) {
    if (!number.is_number()) {
      return absl::DataLossError(absl::StrCat("embedding ", index, " holds a non-number"));
    }
    const double x = number.get<double>();
    if (!std::isfinite(x) || std::fabs(x) > 3.0e38) {
      return absl::DataLossError(absl::StrCat("embedding ", index, " holds a non-finite number"));
    }
    vector.push_back(static_cast<float>(x));
  }
  return vector;
}

}  // namespace

std::string EmbeddingsRequestBody(const EmbeddingsOptions& options,
                                  const std::vector<std::string>& texts) {
  // Both APIs take {"model", "input": [...]}; invalid UTF-8 is replaced, not refused.
  json body = {{"model", options.model}, {"input", texts}};
  return body.dump(-1, ' ', false, json::error_handler_t::replace);
}

absl::StatusOr<Embeddings> ParseEmbeddingsResponse(const EmbeddingsOptions& options,
                                                   std::string_view body, size_t expected) {
  absl::StatusOr<json> parsed = ParseJson(body, "embeddings response");
  if (!parsed.ok()) return parsed.status();
  Embeddings vectors;
  if (IsOllama(options)) {
    // {"model": ..., "embeddings": [[...], ...]}
    const json* list = FindArray(*parsed, "embeddings");
    if (list == nullptr) return absl::DataLossError("embeddings response: no \"embeddings\" array");
    if (list->size() != expected) {
      return absl::DataLossError(
          absl::StrCat("embeddings response: ", list->size(), " vectors for ", expected, " texts"));
    }
    for (size_t i = 0; i < list->size(); ++i) {
      absl::StatusOr<std::vector<float>> vector = ReadVector((*list)[i], i);
      if (!vector.ok()) return vector.status();
      vectors.push_back(*std::move(vector));
    }
  } else {
    // {"data": [{"index": 0, "embedding": [...]}, ...]}: placed by index, each exactly once.
    const json* data = FindArray(*parsed, "data");
    if (data == nullptr) return absl::DataLossError("embeddings response: no \"data\" array");
    if (data->size() != expected) {
      return absl::DataLossError(
          absl::StrCat("embeddings response: ", data->size(), " vectors for ", expected, " texts"));
    }
    vectors.resize(expected);
    for (size_t i = 0; i < data->size(); ++i) {
      const json& item = (*data)[i];
      const json* index = Find(item, "index");
      size_t at = i;
      if (index != nullptr) {
        if (!index->is_number_unsigned() || index->get<uint64_t>() >= expected) {
          return absl::DataLossError(
              absl::StrCat("embeddings response: item ", i, " has an index out of range"));
        }
        at = index->get<size_t>();
      }
      if (!vectors[at].empty()) {
        return absl::DataLossError(
            absl::StrCat("embeddings response: index ", at, " appears twice"));
      }
      const json* embedding = Find(item, "embedding");
      if (embedding == nullptr) {
        return absl::DataLossError(
            absl::StrCat("embeddings response: item ", i, " has no \"embedding\""));
      }
      absl::StatusOr<std::vector<float>> vector = ReadVector(*embedding, at);
      if (!vector.ok()) return vector.status();
      vectors[at] = *std::move(vector);
    }
  }
  for (const std::vector<float>& vector : vectors) {
    if (vector.size() != vectors.front().size()) {
      return absl::DataLossError("embeddings response: vectors of different lengths");
    }
  }
  return vectors;
}

EmbeddingsClient::EmbeddingsClient(HttpClient& http, EmbeddingsOptions options)
    : http_(http), options_(std::move(options)) {}

void EmbeddingsClient::Embed(std::vector<std::string> texts,
                             std::function<void(absl::StatusOr<Embeddings>)> done) {
  const size_t expected = texts.size();
  if (expected == 0 || expected > kMaxBatch) {
    done(absl::InvalidArgumentError(
        absl::StrCat("embed 1 to ", kMaxBatch, " texts at a time, not ", expected)));
    return;
  }
  HttpRequest request;
  request.url = JoinUrl(options_.base_url, IsOllama(options_) ? "/api/embed" : "/embeddings");
  request.headers = {{"content-type", "application/json"}};
  if (!IsOllama(options_) && !options_.api_key.empty()) {
    request.headers.emplace_back("authorization", "Bearer " + options_.api_key);
  }
  request.body = EmbeddingsRequestBody(options_, texts);
  request.total_timeout = options_.timeout;
  request.http_version = options_.http_version;
  request.ca_file = options_.ca_file;
  request.retry.max_retries = options_.max_retries;
  const std::string provider = IsOllama(options_) ? "ollama embeddings" : "openai embeddings";
  http_.Send(std::move(request), [this, expected, provider,
                                  done = std::move(done)](absl::StatusOr<HttpResponse> response) {
    if (!response.ok()) {
      done(absl::Status(
          response.status().code(),
          Redact(absl::StrCat(provider, ": ", response.status().message()), options_.api_key)));
      return;
    }
    if (response->status < 200 || response->status > 299) {
      std::string type, message;
      absl::StatusOr<json> body = ParseJson(response->body, "error body");
      if (body.ok()) {
        if (const json* error = FindObject(*body, "error")) {
          if (const std::string* text = FindString(*error, "message")) message = *text;
          if (const std::string* text = FindString(*error, "type")) type = *text;
        } else if (const std::string* text = FindString(*body, "error")) {
          message = *text;
        }
      }
      absl::Status status = HttpErrorStatus(provider, response->status, type, message,
                                            response->Header("retry-after"));
      done(absl::Status(status.code(), Redact(std::string(status.message()), options_.api_key)));
      return;
    }
    absl::StatusOr<Embeddings> vectors =
        ParseEmbeddingsResponse(options_, response->body, expected);
    if (!vectors.ok()) {
      done(absl::Status(vectors.status().code(),
                        absl::StrCat(provider, ": ", vectors.status().message())));
      return;
    }
    done(std::move(vectors));
  });
}

}  // namespace herald::providers
