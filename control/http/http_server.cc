// control/http/http_server.cc
#include "control/http/http_server.h"

#include <algorithm>
#include <array>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "asio/ssl.hpp"
#include "boost/beast/http/parser.hpp"
#include "boost/beast/http/string_body.hpp"
#include "component/base/absl_string_view.h"
#include "glog/logging.h"

namespace herald::control::http {
namespace bhttp = boost::beast::http;

namespace {

using Parser = bhttp::request_parser<bhttp::string_body>;

// What a request may carry at most when a route says nothing.
constexpr size_t kDefaultMaxBody = 64 * 1024;

absl::StatusOr<asio::ip::tcp::endpoint> ParseListen(const std::string& listen) {
  const size_t colon = listen.rfind(':');
  if (colon == std::string::npos || colon == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("listen address '", listen, "' is not HOST:PORT"));
  }
  std::string host = listen.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  int port = -1;
  if (!absl::SimpleAtoi(listen.substr(colon + 1), &port) || port < 0 || port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("listen address '", listen, "' has no valid port"));
  }
  if (host == "localhost") host = "127.0.0.1";
  asio::error_code ec;
  const asio::ip::address address = asio::ip::make_address(host, ec);
  if (ec) {
    return absl::InvalidArgumentError(
        absl::StrCat("listen address '", listen, "' must be an IP address and a port"));
  }
  return asio::ip::tcp::endpoint(address, static_cast<uint16_t>(port));
}

}  // namespace

std::string_view HttpRequest::Header(std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (key == name) return value;
  }
  return "";
}

bool HttpRequest::FromLoopback() const {
  if (peer.is_v4()) return peer.to_v4().is_loopback();
  if (peer.is_v6()) {
    const asio::ip::address_v6 v6 = peer.to_v6();
    if (v6.is_v4_mapped()) return asio::ip::make_address_v4(asio::ip::v4_mapped, v6).is_loopback();
    return v6.is_loopback();
  }
  return false;
}

std::string_view ReasonPhrase(int status) {
  switch (status) {
    case 100:
      return "Continue";
    case 200:
      return "OK";
    case 201:
      return "Created";
    case 202:
      return "Accepted";
    case 204:
      return "No Content";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";
    case 409:
      return "Conflict";
    case 411:
      return "Length Required";
    case 413:
      return "Content Too Large";
    case 415:
      return "Unsupported Media Type";
    case 429:
      return "Too Many Requests";
    case 431:
      return "Request Header Fields Too Large";
    case 499:
      return "Client Closed Request";
    case 500:
      return "Internal Server Error";
    case 501:
      return "Not Implemented";
    case 503:
      return "Service Unavailable";
    case 504:
      return "Gateway Timeout";
    default:
      return status < 400 ? "OK" : status < 500 ? "Bad Request" : "Internal Server Error";
  }
}

struct RouteEntry {
  std::string path;
  HttpServer::RouteOptions options;
  HttpServer::Handler handler;
  HttpServer::StreamHandler stream_handler;  // instead of `handler`
};

struct HttpServer::State : std::enable_shared_from_this<HttpServer::State> {
  State(asio::io_context& io, HttpServerOptions options)
      : io(io), options(std::move(options)), acceptor(io) {}

  const RouteEntry* Find(std::string_view path) const {
    const RouteEntry* best = nullptr;
    for (const RouteEntry& route : routes) {
      const bool match = route.path.back() == '/' ? path.substr(0, route.path.size()) == route.path
                                                  : path == route.path;
      if (match && (best == nullptr || route.path.size() > best->path.size())) best = &route;
    }
    return best;
  }

  void Accept();

  asio::io_context& io;
  HttpServerOptions options;
  asio::ip::tcp::acceptor acceptor;
  std::optional<asio::ssl::context> tls;
  std::vector<RouteEntry> routes;
  size_t largest_body = kDefaultMaxBody;
  absl::flat_hash_set<std::shared_ptr<Connection>> connections;
  bool stopped = false;
};

// One accepted connection: reads a request, hands it to its route, writes the answer, and
// reads the next one while the client keeps the connection alive.
struct HttpServer::Connection : std::enable_shared_from_this<HttpServer::Connection> {
  Connection(std::shared_ptr<State> state, asio::ip::tcp::socket socket)
      : state(std::move(state)), timer(this->state->io) {
    asio::error_code ec;
    peer = socket.remote_endpoint(ec).address();
    if (this->state->tls.has_value()) {
      tls = std::make_unique<asio::ssl::stream<asio::ip::tcp::socket>>(std::move(socket),
                                                                       *this->state->tls);
    } else {
      plain = std::make_unique<asio::ip::tcp::socket>(std::move(socket));
    }
  }

  asio::ip::tcp::socket& Socket() { return tls ? tls->next_layer() : *plain; }

  void Start() {
    if (!tls) {
      NextRequest();
      return;
    }
    Deadline(state->options.head_timeout);
    tls->async_handshake(asio::ssl::stream_base::server,
                         [self = shared_from_this()](const asio::error_code& ec) {
                           if (ec) {
                             self->Close();
                             return;
                           }
                           self->NextRequest();
                         });
  }

  void Deadline(absl::Duration after) {
    timer.expires_after(absl::ToChronoNanoseconds(after));
    timer.async_wait(
        [weak = weak_from_this(), generation = ++timer_generation](const asio::error_code& ec) {
          auto self = weak.lock();
          if (ec || self == nullptr || self->timer_generation != generation || self->closed) return;
          if (self->parser.has_value() && self->parser->is_header_done() && !self->handling) {
            self->Fail(408, "the request did not arrive in time\n");
          } else if (!self->handling) {
            self->Close();
          }
        });
  }

  void NextRequest() {
    parser.emplace();
    parser->header_limit(static_cast<uint32_t>(state->options.max_head_bytes));
    parser->body_limit(static_cast<uint64_t>(state->largest_body));
    parser->eager(false);
    route = nullptr;
    handling = false;
    Deadline(requests_served == 0 ? state->options.head_timeout : state->options.idle_timeout);
    Parse();
  }

  void Read() {
    auto on_read = [self = shared_from_this()](const asio::error_code& ec, size_t n) {
      if (self->closed) return;
      if (ec) {
        self->Close();  // the client went away (or sent EOF mid-request): nothing to answer
        return;
      }
      self->buffer.append(self->chunk.data(), n);
      self->Parse();
    };
    if (tls) {
      tls->async_read_some(asio::buffer(chunk), std::move(on_read));
    } else {
      plain->async_read_some(asio::buffer(chunk), std::move(on_read));
    }
  }

  void Parse() {
    while (!buffer.empty()) {
      boost::system::error_code ec;
      const size_t used = parser->put(boost::asio::const_buffer(buffer.data(), buffer.size()), ec);
      buffer.erase(0, used);
      if (ec == bhttp::error::need_more) break;
      if (ec == bhttp::error::header_limit) return Fail(431, "the request's head is too large\n");
      if (ec == bhttp::error::body_limit) return Fail(413, "the request's body is too large\n");
      if (ec) return Fail(400, "the request is not valid HTTP/1.1\n");
      if (parser->is_header_done() && route == nullptr && !HeaderDone()) return;
      if (parser->is_done()) return Dispatch();
      if (used == 0) break;
    }
    if (parser->is_header_done() && route == nullptr && !HeaderDone()) return;
    if (parser->is_done()) return Dispatch();
    Read();
  }

  // Checks the head once it is complete; false when the request was refused.
  bool HeaderDone() {
    Deadline(state->options.request_timeout);
    const auto& head = parser->get();
    const std::string target(head.target());
    const size_t question = target.find('?');
    const std::string path = target.substr(0, question);
    route = state->Find(path);
    if (route == nullptr) {
      Fail(404, "no such page\n");
      return false;
    }
    const std::string method(head.method_string());
    const auto& allowed = route->options.methods;
    if (std::find(allowed.begin(), allowed.end(), method) == allowed.end()) {
      Fail(405, "method not allowed\n",
           std::vector<std::pair<std::string, std::string>>{
               {"Allow", absl::StrJoin(allowed, ", ")}});
      return false;
    }
    const size_t max_body = route->options.max_body_bytes;
    if (const auto length = parser->content_length(); length.has_value() && *length > max_body) {
      Fail(413, "the request's body is too large\n");
      return false;
    }
    parser->body_limit(static_cast<uint64_t>(max_body));
    parser->eager(true);
    if (absl::EqualsIgnoreCase(AbslView(std::string_view(head[bhttp::field::expect])),
                               "100-continue")) {
      Write("HTTP/1.1 100 Continue\r\n\r\n", /*then_close=*/false, /*then_next=*/false);
    }
    return true;
  }

  void Dispatch() {
    handling = true;
    timer.cancel();
    auto& head = parser->get();
    HttpRequest request;
    request.method = std::string(head.method_string());
    const std::string target(head.target());
    const size_t question = target.find('?');
    request.path = target.substr(0, question);
    if (question != std::string::npos) request.query = target.substr(question + 1);
    for (const auto& field : head) {
      request.headers.emplace_back(absl::AsciiStrToLower(AbslView(std::string_view(
                                       field.name_string().data(), field.name_string().size()))),
                                   std::string(field.value()));
    }
    request.body = std::move(head.body());
    request.peer = peer;
    request.tls = tls != nullptr;
    keep_alive = parser->keep_alive();
    ++requests_served;
    const RouteEntry* handled = route;
    std::weak_ptr<Connection> weak = weak_from_this();
    if (handled->stream_handler) {
      handled->stream_handler(request, std::make_shared<HttpStream>(weak));
      return;
    }
    handled->handler(request, [weak](HttpResponse response) {
      if (auto self = weak.lock(); self != nullptr) self->Respond(std::move(response));
    });
  }

  void Respond(HttpResponse response) {
    if (closed || !handling) return;
    handling = false;
    on_stream_close = nullptr;
    Answer(std::move(response), !keep_alive);
  }

  // A streamed answer: the head, then chunks, then the last chunk.
  void BeginStream(int status, std::string_view content_type,
                   const std::vector<std::pair<std::string, std::string>>& headers) {
    std::string out = absl::StrCat("HTTP/1.1 ", status, " ", AbslView(ReasonPhrase(status)),
                                   "\r\nContent-Type: ", AbslView(content_type),
                                   "\r\nTransfer-Encoding: chunked\r\nCache-Control: no-store\r\n"
                                   "X-Content-Type-Options: nosniff");
    for (const auto& [name, value] : headers) absl::StrAppend(&out, "\r\n", name, ": ", value);
    absl::StrAppend(&out, "\r\n\r\n");
    Write(std::move(out), /*then_close=*/false, /*then_next=*/false);
  }

  bool SendChunk(std::string_view bytes) {
    if (bytes.empty()) return true;
    if (backlog > state->options.max_stream_backlog) {
      LOG(WARNING) << "herald: an HTTP client fell " << backlog
                   << " bytes behind a streamed answer; closing its connection";
      Close();
      return false;
    }
    Write(absl::StrCat(absl::Hex(bytes.size()), "\r\n", AbslView(bytes), "\r\n"),
          /*then_close=*/false, /*then_next=*/false);
    return true;
  }

  void EndStream() {
    handling = false;
    on_stream_close = nullptr;
    Write("0\r\n\r\n", /*then_close=*/!keep_alive, /*then_next=*/keep_alive);
  }

  void Answer(const HttpResponse& response, bool then_close) {
    std::string out =
        absl::StrCat("HTTP/1.1 ", response.status, " ", AbslView(ReasonPhrase(response.status)),
                     "\r\nContent-Type: ", response.content_type);
    // A 304 has no body, and says nothing of the length of the one the client keeps.
    if (response.status != 304) absl::StrAppend(&out, "\r\nContent-Length: ", response.body.size());
    // Not stored by caches and never sniffed, unless the route says otherwise.
    auto has = [&response](std::string_view name) {
      return std::any_of(response.headers.begin(), response.headers.end(),
                         [name](const auto& header) {
                           return absl::EqualsIgnoreCase(AbslView(header.first), AbslView(name));
                         });
    };
    if (!has("Cache-Control")) absl::StrAppend(&out, "\r\nCache-Control: no-store");
    if (!has("X-Content-Type-Options"))
      absl::StrAppend(&out, "\r\nX-Content-Type-Options: nosniff");
    for (const auto& [name, value] : response.headers) {
      absl::StrAppend(&out, "\r\n", name, ": ", value);
    }
    absl::StrAppend(&out, then_close ? "\r\nConnection: close" : "", "\r\n\r\n", response.body);
    Write(std::move(out), then_close, /*then_next=*/!then_close);
  }

  void Fail(int status, std::string body,
            std::vector<std::pair<std::string, std::string>> headers = {}) {
    handling = true;
    timer.cancel();
    Answer(HttpResponse{.status = status, .body = std::move(body), .headers = std::move(headers)},
           /*then_close=*/true);
  }

  // Writes are queued so that a 100 Continue and the answer never interleave.
  void Write(std::string bytes, bool then_close, bool then_next) {
    backlog += bytes.size();
    outbox.push_back({std::move(bytes), then_close, then_next});
    if (outbox.size() == 1) WriteFront();
  }

  void WriteFront() {
    auto on_written = [self = shared_from_this()](const asio::error_code& ec, size_t) {
      if (self->closed) return;
      const Pending done = std::move(self->outbox.front());
      self->outbox.erase(self->outbox.begin());
      self->backlog -= done.bytes.size();
      if (ec || done.then_close) {
        self->Close();
        return;
      }
      if (!self->outbox.empty()) {
        self->WriteFront();
      } else if (done.then_next) {
        self->NextRequest();
      }
    };
    const asio::const_buffer bytes = asio::buffer(outbox.front().bytes);
    if (tls) {
      asio::async_write(*tls, bytes, std::move(on_written));
    } else {
      asio::async_write(*plain, bytes, std::move(on_written));
    }
  }

  void Close() {
    if (closed) return;
    closed = true;
    timer.cancel();
    asio::error_code ignored;
    Socket().shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
    Socket().close(ignored);
    auto self = shared_from_this();  // the set may hold the last reference
    state->connections.erase(self);
    if (std::function<void()> on_close = std::exchange(on_stream_close, nullptr)) on_close();
  }

  struct Pending {
    std::string bytes;
    bool then_close = false;
    bool then_next = false;
  };

  std::shared_ptr<State> state;
  std::unique_ptr<asio::ip::tcp::socket> plain;
  std::unique_ptr<asio::ssl::stream<asio::ip::tcp::socket>> tls;
  asio::ip::address peer;
  asio::steady_timer timer;
  uint64_t timer_generation = 0;
  std::array<char, 8192> chunk;
  std::string buffer;  // received, not yet parsed
  std::optional<Parser> parser;
  const RouteEntry* route = nullptr;
  std::vector<Pending> outbox;
  size_t backlog = 0;  // bytes in `outbox`
  std::function<void()> on_stream_close;
  bool handling = false;
  bool keep_alive = false;
  bool closed = false;
  uint64_t requests_served = 0;
};

void HttpServer::State::Accept() {
  acceptor.async_accept(
      [self = shared_from_this()](const asio::error_code& ec, asio::ip::tcp::socket socket) {
        if (self->stopped) return;
        if (!ec) {
          if (self->connections.size() >= self->options.max_connections) {
            asio::error_code ignored;
            socket.close(ignored);  // over the bound: no answer is cheaper than one
          } else {
            auto connection = std::make_shared<Connection>(self, std::move(socket));
            self->connections.insert(connection);
            connection->Start();
          }
        } else if (ec == asio::error::operation_aborted) {
          return;
        }
        self->Accept();
      });
}

absl::StatusOr<std::unique_ptr<HttpServer>> HttpServer::Start(asio::io_context& io,
                                                              HttpServerOptions options) {
  absl::StatusOr<asio::ip::tcp::endpoint> endpoint = ParseListen(options.listen);
  if (!endpoint.ok()) return endpoint.status();
  auto state = std::make_shared<State>(io, std::move(options));
  if (!state->options.tls_cert.empty() || !state->options.tls_key.empty()) {
    asio::ssl::context tls(asio::ssl::context::tls_server);
    tls.set_options(asio::ssl::context::default_workarounds | asio::ssl::context::no_sslv2 |
                    asio::ssl::context::no_sslv3 | asio::ssl::context::no_tlsv1 |
                    asio::ssl::context::no_tlsv1_1);
    asio::error_code ec;
    tls.use_certificate_chain_file(state->options.tls_cert, ec);
    if (ec) {
      return absl::InvalidArgumentError(absl::StrCat("cannot read the TLS certificate ",
                                                     state->options.tls_cert, ": ", ec.message()));
    }
    tls.use_private_key_file(state->options.tls_key, asio::ssl::context::pem, ec);
    if (ec) {
      return absl::InvalidArgumentError(
          absl::StrCat("cannot read the TLS key ", state->options.tls_key, ": ", ec.message()));
    }
    state->tls.emplace(std::move(tls));
  }
  asio::error_code ec;
  state->acceptor.open(endpoint->protocol(), ec);
  if (!ec) state->acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) state->acceptor.bind(*endpoint, ec);
  if (!ec) state->acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return absl::UnavailableError(
        absl::StrCat("cannot listen on ", state->options.listen, ": ", ec.message()));
  }
  state->Accept();
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(state)));
}

void HttpServer::StopAccepting() {
  asio::error_code ignored;
  state_->acceptor.close(ignored);
}

HttpServer::~HttpServer() {
  state_->stopped = true;
  asio::error_code ignored;
  state_->acceptor.close(ignored);
  // Close() erases from the set: close a copy.
  const auto connections = state_->connections;
  for (const auto& connection : connections) connection->Close();
}

void HttpServer::Route(std::string path, RouteOptions options, Handler handler) {
  if (options.max_body_bytes == 0 &&
      std::find(options.methods.begin(), options.methods.end(), "GET") == options.methods.end()) {
    options.max_body_bytes = kDefaultMaxBody;
  }
  state_->largest_body = std::max(state_->largest_body, options.max_body_bytes);
  state_->routes.push_back({std::move(path), std::move(options), std::move(handler), nullptr});
}

void HttpServer::RouteStream(std::string path, RouteOptions options, StreamHandler handler) {
  Route(std::move(path), std::move(options), nullptr);
  state_->routes.back().stream_handler = std::move(handler);
}

void HttpStream::Respond(HttpResponse response) {
  if (begun_ || ended_) return;
  ended_ = true;
  if (auto connection = connection_.lock()) connection->Respond(std::move(response));
}

void HttpStream::Begin(int status, std::string content_type,
                       std::vector<std::pair<std::string, std::string>> headers) {
  if (begun_ || ended_) return;
  begun_ = true;
  if (auto connection = connection_.lock(); connection != nullptr && !connection->closed) {
    connection->BeginStream(status, content_type, headers);
  }
}

bool HttpStream::Send(std::string_view bytes) {
  if (!begun_ || ended_) return false;
  auto connection = connection_.lock();
  return connection != nullptr && !connection->closed && connection->SendChunk(bytes);
}

void HttpStream::End() {
  if (!begun_ || ended_) return;
  ended_ = true;
  if (auto connection = connection_.lock(); connection != nullptr && !connection->closed) {
    connection->EndStream();
  }
}

bool HttpStream::open() const {
  if (ended_) return false;
  auto connection = connection_.lock();
  return connection != nullptr && !connection->closed;
}

void HttpStream::OnClose(std::function<void()> on_close) {
  auto connection = connection_.lock();
  if (connection == nullptr || connection->closed) {
    on_close();
    return;
  }
  connection->on_stream_close = std::move(on_close);
}

uint16_t HttpServer::port() const {
  asio::error_code ec;
  return state_->acceptor.local_endpoint(ec).port();
}

size_t HttpServer::connection_count() const { return state_->connections.size(); }

}  // namespace herald::control::http
