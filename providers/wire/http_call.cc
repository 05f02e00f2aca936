#include "providers/wire/http_call.h"

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "component/base/absl_string_view.h"

namespace herald::providers {
namespace {

// A streamed body this small is kept whole too, in case it turns out not to be a stream.
constexpr size_t kKeptStreamBytes = 64 << 10;

// What the body-chunk callback and the completion callback share.
struct StreamState {
  std::unique_ptr<StreamDecoder> decoder;
  absl::Status status;  // the first error of the decoder; later chunks are ignored
  size_t bytes = 0;
  std::string head;  // the first kKeptStreamBytes of the body

  void Take(std::string_view chunk) {
    if (!status.ok()) return;  // the answer already failed: the rest is not read
    bytes += chunk.size();
    if (head.size() < kKeptStreamBytes) {
      head.append(chunk.substr(0, kKeptStreamBytes - head.size()));
    }
    if (bytes > kMaxResponseBytes) {
      status = absl::DataLossError(
          absl::StrCat("streamed response is larger than ", kMaxResponseBytes >> 20, " MiB"));
      return;
    }
    status = decoder->Feed(chunk);
  }
};

}  // namespace

absl::Status WithContext(const absl::Status& status, std::string_view provider,
                         std::string_view secret) {
  std::string message(status.message());
  if (!absl::StartsWith(message, AbslView(provider))) {
    message = absl::StrCat(AbslView(provider), ": ", message);
  }
  return absl::Status(status.code(), Redact(message, secret));
}

HttpCallOptions HttpCallOptionsFrom(const LlmOptions& llm) {
  HttpCallOptions options;
  options.connect_timeout = absl::Seconds(llm.connect_timeout_seconds);
  options.total_timeout = absl::Seconds(llm.request_timeout_seconds);
  options.retry.max_retries = llm.max_retries;
  return options;
}

HttpCallOptions ForProvider(HttpCallOptions options, const HostedProviderOptions& provider) {
  options.http_version = provider.http_version;
  options.ca_file = provider.tls_ca_file;
  return options;
}

bool IsHttpUrl(std::string_view url) {
  const absl::string_view u = AbslView(url);
  return (absl::StartsWithIgnoreCase(u, "http://") && u.size() > 7) ||
         (absl::StartsWithIgnoreCase(u, "https://") && u.size() > 8);
}

std::string JoinUrl(std::string_view base, std::string_view path) {
  while (!base.empty() && base.back() == '/') base.remove_suffix(1);
  while (!path.empty() && path.front() == '/') path.remove_prefix(1);
  return absl::StrCat(AbslView(base), "/", AbslView(path));
}

void SendLlmCall(HttpClient& http, LlmCall call, const HttpCallOptions& options,
                 LlmProvider::OnText on_text, LlmProvider::Done done) {
  HttpRequest request = std::move(call.request);
  request.connect_timeout = options.connect_timeout;
  request.total_timeout = options.total_timeout;
  request.retry = options.retry;
  request.http_version = options.http_version;
  request.ca_file = options.ca_file;
  // Thousands of calls may wait at once, each for an answer of a few KiB.
  request.receive_buffer_bytes = 1024;

  std::shared_ptr<StreamState> stream;
  if (call.make_decoder) {
    if (!on_text) on_text = [](std::string_view) {};
    stream = std::make_shared<StreamState>();
    stream->decoder = call.make_decoder(std::move(on_text));
    request.on_body_chunk = [stream](std::string_view chunk) { stream->Take(chunk); };
  }

  auto finish = [call = std::move(call), stream,
                 done = std::move(done)](absl::StatusOr<HttpResponse> response) {
    const auto fail = [&](const absl::Status& status) {
      done(WithContext(status, call.provider, call.secret));
    };
    if (!response.ok()) {
      // provider.h documents DataLoss for a body Herald cannot take, an oversized one too.
      if (response.status().code() == absl::StatusCode::kResourceExhausted) {
        return fail(absl::DataLossError(response.status().message()));
      }
      return fail(response.status());
    }
    if (response->status < 200 || response->status >= 300) {
      return fail(call.error_status(*response));
    }
    absl::StatusOr<LlmResponse> answer;
    if (stream != nullptr) {
      // Should the client ever hand a streamed body over whole, it is read the same way.
      if (stream->bytes == 0 && !response->body.empty()) stream->Take(response->body);
      if (stream->status.ok()) {
        answer = stream->decoder->Finish();
      } else {
        answer = stream->status;
      }
      // A server that refuses to stream answers with one JSON body (an error object, or the
      // whole answer): read it as such rather than report a broken stream.
      if (!answer.ok() && answer.status().code() == absl::StatusCode::kDataLoss &&
          stream->bytes <= kKeptStreamBytes &&
          absl::StartsWithIgnoreCase(AbslView(response->Header("content-type")),
                                     "application/json")) {
        answer = call.parse_body(stream->head);
      }
    } else {
      answer = call.parse_body(response->body);
    }
    if (!answer.ok()) return fail(answer.status());
    answer->provider = call.provider;
    if (answer->model.empty()) answer->model = call.model;
    done(*std::move(answer));
  };
  http.Send(std::move(request), std::move(finish));
}

}  // namespace herald::providers
