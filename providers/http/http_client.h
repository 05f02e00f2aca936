// providers/http/http_client.h
//
// HttpClient is Herald's one asynchronous HTTP client: libcurl's multi interface driven by
// the Asio I/O loop (curl's sockets are watched by Asio, curl's timer is an Asio timer), so
// any number of requests are in flight on one thread and a slow provider never delays
// another request. It applies connect and total timeouts, retries 429 and 5xx answers and
// transport failures with exponential backoff and jitter (honouring Retry-After), and can
// stream a response body chunk by chunk (for SSE).
//
//   absl::StatusOr<std::unique_ptr<HttpClient>> http = HttpClient::Create(io);
//   HttpRequest request{.url = "http://127.0.0.1:8080/v1/messages", .body = json};
//   request.headers = {{"content-type", "application/json"}};
//   (*http)->Send(std::move(request), [](absl::StatusOr<HttpResponse> response) { ... });
#pragma once

#include <asio.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace herald::providers {

struct RetryPolicy {
  int max_retries = 2;  // attempts after the first
  absl::Duration initial_backoff = absl::Milliseconds(500);
  absl::Duration max_backoff = absl::Seconds(20);
  // A Retry-After longer than this is not waited for: the call fails instead.
  absl::Duration max_retry_after = absl::Seconds(60);
};

struct HttpRequest {
  std::string method = "POST";
  std::string url;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  absl::Duration connect_timeout = absl::Seconds(10);
  absl::Duration total_timeout = absl::Seconds(120);  // per attempt
  RetryPolicy retry;
  // When set, a 2xx response body is delivered here chunk by chunk as it arrives (on the I/O
  // loop), and HttpResponse::body stays empty. Once a chunk was delivered, the request is
  // no longer retried.
  std::function<void(std::string_view chunk)> on_body_chunk;
};

struct HttpResponse {
  int status = 0;
  std::vector<std::pair<std::string, std::string>> headers;  // names in lower case
  std::string body;
  int attempts = 1;

  // The first header named `name` (lower case), or "".
  std::string_view Header(std::string_view name) const;
};

class HttpClient {
 public:
  using Done = std::function<void(absl::StatusOr<HttpResponse>)>;
  using RequestId = uint64_t;

  // Fails when libcurl cannot be initialised.
  static absl::StatusOr<std::unique_ptr<HttpClient>> Create(asio::io_context& io);
  ~HttpClient();  // cancels what is in flight; their callbacks are not invoked

  // Starts `request`; `done` runs exactly once on the I/O loop: with the final response
  // (any status, after retries), or with Unavailable (transport failure after retries),
  // DeadlineExceeded (timeout) or Cancelled. Must be called on the I/O loop's thread.
  RequestId Send(HttpRequest request, Done done);

  // Cancels a request in flight; its callback runs with Cancelled.
  void Cancel(RequestId id);

  size_t in_flight() const;

 private:
  class Impl;
  explicit HttpClient(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace herald::providers
