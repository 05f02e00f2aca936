// tests/fakes/fake_http_server.h
//
// FakeHttpServer is a small HTTP server for tests of Herald's HTTP client and of the fake LLM
// servers built on it. It listens on 127.0.0.1 (a port the kernel picks) and serves, on that
// one port, either
//   - cleartext (the default): HTTP/1.1, and HTTP/2 with prior knowledge (h2c: a connection
//     that opens with the HTTP/2 client preface is HTTP/2, any other is HTTP/1.1; no
//     `Upgrade: h2c`). Debian's libcurl 7.88.1 cannot reuse an h2c connection, which is why
//     Herald speaks HTTP/2 only over TLS; or
//   - TLS (FakeHttpServerOptions::tls; 1.2 or later) on a self-signed certificate for
//     127.0.0.1 and localhost made at start: HTTP/2 when the client offers "h2" by ALPN,
//     HTTP/1.1 otherwise. A client trusts certificate_path() as its CA file; one that does not
//     fails its handshake, and the connection is closed with nothing recorded.
// It serves on its own thread, records every request, and answers with whatever the handler
// returns: any status and headers, a body sent at once or in chunks (chunked transfer
// encoding in HTTP/1.1, separate DATA frames in HTTP/2: for SSE and NDJSON streaming), after a
// delay, cut off mid-response, or never. HTTP/2 streams are answered independently, so that
// one slow or hanging stream holds back no other on its connection; fake_http2_connection.h
// says how each response feature maps onto HTTP/2. Closing a TLS connection sends no
// close_notify.
//
//   auto server = FakeHttpServer::Start([](const FakeHttpRequest& request) {
//     return FakeHttpResponse{.status = 200, .body = "{}"};
//   }, {.tls = true});
//   std::string url = (*server)->base_url() + "/v1/messages";  // https://127.0.0.1:<port>
//   curl_easy_setopt(easy, CURLOPT_CAINFO, (*server)->certificate_path().c_str());
//   ...
//   EXPECT_EQ((*server)->requests().size(), 1u);
//   EXPECT_EQ((*server)->requests()[0].version, "HTTP/2");
//   EXPECT_EQ((*server)->connection_count(), 1u);  // e.g. many HTTP/2 streams on one
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace herald::fakes {

struct FakeHttpRequest {
  std::string method;
  std::string path;                                          // with the query string
  std::vector<std::pair<std::string, std::string>> headers;  // names in lower case
  std::string body;
  std::string version;  // "HTTP/1.1" or "HTTP/1.0" as the request line said, or "HTTP/2"

  std::string Header(std::string_view name) const;  // "" when absent
};

struct FakeHttpResponse {
  int status = 200;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  // When not empty, the body is these chunks (chunked transfer encoding in HTTP/1.1, a DATA
  // frame each in HTTP/2), one write each, `chunk_interval` apart; `body` is ignored.
  std::vector<std::string> chunks;
  absl::Duration delay = absl::ZeroDuration();  // before the status line or HEADERS
  absl::Duration chunk_interval = absl::ZeroDuration();
  // Send the headers and half the body, then close the connection (HTTP/1.1) or reset the
  // stream with RST_STREAM INTERNAL_ERROR (HTTP/2: the connection's other streams live on).
  bool close_mid_body = false;
  bool hang = false;  // accept the request and never answer
};

struct FakeHttpServerOptions {
  // Speak TLS on a self-signed certificate for 127.0.0.1 made at start: HTTP/2 when the
  // client offers "h2" by ALPN, HTTP/1.1 otherwise. The certificate's PEM is at
  // certificate_path(), which a client trusts as its CA file.
  bool tls = false;
  // Keep a copy of every request for requests(). A load generator that sends millions turns
  // this off: copying each into an ever longer vector (under the lock the handler waits for)
  // would slow the server it measures. request_count() counts them either way.
  bool keep_requests = true;
};

class FakeHttpServer {
 public:
  using Handler = std::function<FakeHttpResponse(const FakeHttpRequest&)>;

  // Cleartext, as Start(handler, {}).
  static absl::StatusOr<std::unique_ptr<FakeHttpServer>> Start(Handler handler);
  // Fails when the port or, with TLS, the certificate cannot be had.
  static absl::StatusOr<std::unique_ptr<FakeHttpServer>> Start(Handler handler,
                                                               FakeHttpServerOptions options);
  ~FakeHttpServer();  // closes every connection, joins the thread, removes the certificate

  uint16_t port() const;
  std::string base_url() const;  // "http://127.0.0.1:<port>", or "https://..." with TLS
  // The certificate's PEM file (in a temp folder removed with the server); "" without TLS.
  std::string certificate_path() const;

  // Every request received so far, in arrival order (thread-safe copies); none without
  // keep_requests.
  std::vector<FakeHttpRequest> requests() const;
  size_t request_count() const;
  // Waits until at least `count` requests have arrived.
  bool WaitForRequests(size_t count, absl::Duration timeout) const;
  // TCP connections accepted so far, whatever they spoke, TLS or not (thread-safe).
  size_t connection_count() const;

  void SetHandler(Handler handler);

  struct State;

 private:
  explicit FakeHttpServer(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace herald::fakes
