// control/http/http_server.h
//
// Herald's one HTTP listener (SPEC §11 `[http] listen`): /metrics, and the webhooks, the
// HTTP/JSON API and the console as they come. HTTP/1.1 on the I/O loop — no thread per
// connection — with Boost.Beast's parser reading what arrives (the request line, headers and
// body are the hostile part, so a well-kept parser reads them, not Herald), and TLS through
// Asio's OpenSSL stream when a certificate is configured.
//
// Every connection is bounded: the head must arrive within `head_timeout` and be at most
// `max_head_bytes` (431 otherwise), a body at most the route's `max_body_bytes` (413), the
// whole request within `request_timeout` (408), at most `max_connections` at once (more are
// closed at accept), an idle keep-alive connection closed after `idle_timeout`. One request
// is answered before the next is read.
//
//   auto server = HttpServer::Start(io, {.listen = "127.0.0.1:8080"});
//   (*server)->Route("/metrics", {.methods = {"GET"}},
//                    [](const HttpRequest& request, HttpServer::Respond respond) {
//                      respond({.status = 200, .content_type = "text/plain", .body = "..."});
//                    });
//   uint16_t port = (*server)->port();
//
// A route may also answer as it goes (server-sent events): RouteStream's handler gets an
// HttpStream, begins it with a head, sends chunks (chunked transfer encoding) and ends it.
// A client that stops reading is cut off once `max_stream_backlog` bytes wait for it.
#pragma once

#include <asio.hpp>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace herald::control::http {

struct HttpRequest {
  std::string method;  // "GET", "POST", ...
  std::string path;    // the target's path, percent-encoding kept
  std::string query;   // after '?', or ""
  std::vector<std::pair<std::string, std::string>> headers;  // names in lower case
  std::string body;
  asio::ip::address peer;  // who connected
  bool tls = false;

  std::string_view Header(std::string_view name) const;  // the first; "" when absent
  bool FromLoopback() const;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  // Besides the ones set here; Cache-Control (no-store) and X-Content-Type-Options (nosniff)
  // are sent unless given here.
  std::vector<std::pair<std::string, std::string>> headers;
};

struct HttpServerOptions {
  std::string listen;  // "HOST:PORT" ("127.0.0.1:8080", "[::1]:0"); port 0 picks one
  // PEM files; both set: TLS on every connection.
  std::string tls_cert;
  std::string tls_key;
  size_t max_connections = 256;
  size_t max_head_bytes = 16 * 1024;
  absl::Duration head_timeout = absl::Seconds(10);
  absl::Duration request_timeout = absl::Seconds(30);
  absl::Duration idle_timeout = absl::Seconds(30);
  size_t max_stream_backlog = 1024 * 1024;
};

class HttpStream;

class HttpServer {
 public:
  using Respond = std::function<void(HttpResponse)>;
  // Called on the I/O loop; `respond` must be called exactly once, on the loop (later is
  // fine: the connection waits, and a respond after the connection closed is dropped).
  using Handler = std::function<void(const HttpRequest& request, Respond respond)>;
  // Called on the loop; the stream must be answered (Respond, or Begin ... End) or dropped
  // when it is no longer open.
  using StreamHandler =
      std::function<void(const HttpRequest& request, std::shared_ptr<HttpStream> stream)>;

  struct RouteOptions {
    std::vector<std::string> methods = {"GET"};  // anything else: 405 with Allow
    size_t max_body_bytes = 0;                   // past it: 413
  };

  // Listens and accepts on `io`. Fails naming the address when it is not "HOST:PORT", the
  // port is taken, or the TLS files cannot be read.
  static absl::StatusOr<std::unique_ptr<HttpServer>> Start(asio::io_context& io,
                                                           HttpServerOptions options);
  ~HttpServer();  // stops accepting and closes every connection (on the loop's thread)
  // Takes no new connection; the open ones go on (on the loop's thread). For shutting down:
  // streams in progress still get their last events.
  void StopAccepting();

  // `path` exactly, or every path under it when it ends in '/' ("/webhooks/"). The longest
  // match wins. Routes are added before requests arrive or on the loop.
  void Route(std::string path, RouteOptions options, Handler handler);
  // The same, for a route that may stream its answer.
  void RouteStream(std::string path, RouteOptions options, StreamHandler handler);

  uint16_t port() const;
  size_t connection_count() const;

  struct Connection;
  struct State;

 private:
  explicit HttpServer(std::shared_ptr<State> state) : state_(std::move(state)) {}
  std::shared_ptr<State> state_;
};

// One streamed answer. Used on the loop only; after the client has gone every call does
// nothing and open() is false.
class HttpStream {
 public:
  // A whole answer instead of a stream (only before Begin).
  void Respond(HttpResponse response);
  // Writes the head: `status`, `content_type`, chunked transfer encoding.
  void Begin(int status, std::string content_type,
             std::vector<std::pair<std::string, std::string>> headers = {});
  // One chunk; false (and the connection closed) when the client is `max_stream_backlog`
  // bytes behind or gone.
  bool Send(std::string_view bytes);
  // The last chunk; the connection then serves the client's next request.
  void End();
  bool open() const;
  bool begun() const { return begun_; }
  // Runs once, on the loop, when the connection closes before End (the client left, or was
  // too slow).
  void OnClose(std::function<void()> on_close);

  explicit HttpStream(std::weak_ptr<HttpServer::Connection> connection)
      : connection_(std::move(connection)) {}

 private:
  std::weak_ptr<HttpServer::Connection> connection_;
  bool begun_ = false;
  bool ended_ = false;
};

// "200 OK", "404 Not Found", ...: the reason phrases Herald sends.
std::string_view ReasonPhrase(int status);

}  // namespace herald::control::http
