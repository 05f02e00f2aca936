// tests/fakes/fake_http2_connection.h
//
// The inside of FakeHttpServer, shared by its HTTP/1.1 and HTTP/2 sides: FakeHttpStream, the
// bytes of one connection whether in cleartext or over TLS, and ServeFakeHttp2Connection.
//
// ServeFakeHttp2Connection serves one HTTP/2 connection (RFC 9113) for FakeHttpServer, which
// hands it every cleartext connection that opens with the HTTP/2 client connection preface
// ("prior knowledge") and every TLS connection that chose "h2" by ALPN. It drives nghttp2's
// server session from the server's one Asio thread without blocking: one coroutine reads and
// feeds nghttp2, one writes whatever nghttp2 has to send (one write in flight at a time), and
// each request stream is answered by a coroutine of its own, so that a delayed or hanging
// stream never holds back another stream on the same connection.
//
// A request is complete when its stream ends (END_STREAM on HEADERS or DATA). It is then
// handed to `dispatch` (which records it and returns the handler's answer) with version
// "HTTP/2", the method and path from `:method` and `:path`, the other pseudo-headers left
// out, and a `host` header from `:authority` when none came. Every FakeHttpResponse feature
// works per stream:
//   - the body goes with content-length (none for HEAD, 1xx, 204 and 304); header names are
//     sent in lower case, and the connection-specific ones HTTP/2 forbids (connection,
//     keep-alive, proxy-connection, transfer-encoding, upgrade) are dropped;
//   - chunks go as separate DATA frames, `chunk_interval` apart, each flushed as it comes;
//   - `delay` holds back the response headers (a timer for that stream, not a sleep);
//   - `close_mid_body` sends the headers and half the body (or the first half of the chunks)
//     and then resets that stream with RST_STREAM INTERNAL_ERROR: unlike HTTP/1.1, the
//     connection and its other streams live on;
//   - `hang` never answers that stream; the connection goes on serving the others.
//
// The server's SETTINGS allow 128 concurrent streams with a 16 MiB stream window, and the
// connection window is widened, so that request bodies up to `max_body_bytes` flow. A stream
// whose header block is over `max_header_bytes` or whose body is over `max_body_bytes` is
// reset with RST_STREAM ENHANCE_YOUR_CALM, is not recorded, and the connection lives on. A
// protocol error ends the connection (nghttp2 sends GOAWAY first). Not supported: upgrade
// from HTTP/1.1 (`Upgrade: h2c`), server push, trailers in responses (request trailers are
// read and dropped), priorities beyond nghttp2's defaults.
//
//   // In FakeHttpServer's connection coroutine, once `received` starts with the preface (or,
//   // over TLS, once ALPN chose "h2", with nothing received yet):
//   co_await ServeFakeHttp2Connection(stream, std::move(received), options);
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "asio.hpp"
#include "tests/fakes/fake_http_server.h"

namespace herald::fakes {

// The bytes of one connection: a TCP socket, or TLS over one (FakeHttpServer makes both). One
// read and one write may be in flight at once, as on an Asio socket or ssl::stream, all on
// the server's one thread.
class FakeHttpStream {
 public:
  virtual ~FakeHttpStream() = default;

  // Reads some bytes into `buffer`; `ec` is set on an error, the end of the stream included.
  // (Awaited at once, so `ec` outlives the call.)
  virtual asio::awaitable<size_t> ReadSome(asio::mutable_buffer buffer, asio::error_code& ec) = 0;
  // Writes all of `bytes`, or sets `ec`.
  virtual asio::awaitable<void> Write(asio::const_buffer bytes, asio::error_code& ec) = 0;
  // The TCP socket underneath.
  virtual asio::ip::tcp::socket::lowest_layer_type& tcp() = 0;

  // Ends the TCP connection at once (over TLS, without close_notify); pending reads and
  // writes end with an error. Closing twice is harmless.
  void Close() {
    asio::error_code ignored;
    tcp().shutdown(asio::socket_base::shutdown_both, ignored);
    tcp().close(ignored);
  }
  asio::any_io_executor executor() { return tcp().get_executor(); }
};

// The 24 bytes an HTTP/2 client sends first (RFC 9113 §3.4).
inline constexpr std::string_view kHttp2ClientPreface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

struct FakeHttp2Options {
  // Records a complete request and returns the answer; called on the connection's thread.
  std::function<FakeHttpResponse(const FakeHttpRequest&)> dispatch;
  size_t max_header_bytes = 64 * 1024;       // names and values of one header block
  size_t max_body_bytes = 64 * 1024 * 1024;  // one request body
};

// Serves the connection until the client closes it, either side ends it with an error, or the
// io_context is destroyed. `received` holds the bytes already read from `stream` (in
// cleartext, at least the preface; nghttp2 checks the preface either way). It returns once
// reading stops; the stream is closed when the last response bytes were written (or could
// not be), never before.
asio::awaitable<void> ServeFakeHttp2Connection(std::shared_ptr<FakeHttpStream> stream,
                                               std::string received, FakeHttp2Options options);

}  // namespace herald::fakes
