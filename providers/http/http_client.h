// providers/http/http_client.h
//
// HttpClient is Herald's one asynchronous HTTP client: libcurl's multi interface driven by
// the Asio I/O loop (curl's sockets are watched by Asio, curl's timer is an Asio timer), so
// any number of requests are in flight on one thread and a slow provider never delays
// another request. Requests to one server share connections: over HTTP/2 (HttpVersion) many
// go at once on one connection, a new request waiting for a connection being opened rather
// than opening its own; over HTTP/1.1 each request in flight holds a connection. It applies
// connect and total timeouts, retries 429 and 5xx answers and transport failures with
// exponential backoff and jitter (honouring Retry-After), and can stream a response body
// chunk by chunk (for SSE). It never follows redirects. For fetching what a model asked for
// (url_fetch), a request can be pinned to one checked address, cut off at a size limit, and
// stopped early when its content type is not wanted.
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
#include "providers/http/http_version.h"

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
  HttpVersion http_version = HttpVersion::kAuto;
  // A PEM file of the CAs that TLS trusts instead of the system's; "" = the system's.
  std::string ca_file;
  // When set, a 2xx response body is delivered here chunk by chunk as it arrives (on the I/O
  // loop), and HttpResponse::body stays empty. Once a chunk was delivered, the request is
  // no longer retried.
  std::function<void(std::string_view chunk)> on_body_chunk;
  // How much of the response is read from the connection at a time over HTTP/1.1, in bytes
  // (libcurl's receive buffer, held for the request's whole life; at least 1024); 0 = 16 KiB.
  // A caller with many requests waiting at once for answers of a few KiB (a model's) asks for
  // 1024: about 3 KiB less resident per waiting request. A large body still arrives whole, in
  // more reads. A request that may travel over HTTP/2 (MayMultiplex in curl_transfer.cc)
  // keeps 16 KiB whatever is asked: with less, a stream whose DATA frame (up to 16 KiB) did
  // not fit the buffer stalled (docs/architecture.md, "HTTP client").
  size_t receive_buffer_bytes = 0;

  // The most body bytes held (not streamed); 0 = the client's own limit (16 MiB). Past it the
  // request fails with ResourceExhausted, or, with `truncate_body`, ends there and the
  // response carries the first `max_body_bytes` bytes with `body_truncated` set.
  size_t max_body_bytes = 0;
  bool truncate_body = false;
  // When not empty, a 2xx response that has a Content-Type whose media type (lower case,
  // without parameters) is none of these ("type/subtype" or "type/*") is not read: it is
  // delivered with the body read so far (usually none) and `body_truncated` set. A response
  // without a Content-Type is read. The caller checks the type itself.
  std::vector<std::string> accepted_content_types;
  // An IP address ("93.184.215.14", "2606:2800::1"). When set, the connection goes to this
  // address (and the URL's port) whatever DNS says of the URL's host, on a fresh connection
  // that is not kept for reuse and not through any proxy; a socket to any other address is
  // refused. TLS still verifies the certificate against the URL's host. The caller resolved
  // and checked the address (url_fetch's SSRF guard), so DNS cannot swap it afterwards.
  // Such a request never shares its connection, whatever its HTTP version.
  std::string connect_to_address;
};

struct HttpResponse {
  int status = 0;
  std::vector<std::pair<std::string, std::string>> headers;  // names in lower case
  std::string body;
  int attempts = 1;
  // The body was not read to its end: HttpRequest::max_body_bytes was reached with
  // truncate_body, or the content type was not among accepted_content_types.
  bool body_truncated = false;

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
