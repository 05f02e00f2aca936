#include "tests/fakes/fake_http_server.h"

#include <openssl/ssl.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "asio.hpp"
#include "asio/ssl.hpp"
#include "component/base/absl_string_view.h"
#include "tests/fakes/fake_http2_connection.h"
#include "tests/fakes/self_signed_certificate.h"

namespace herald::fakes {
namespace {

using Tcp = asio::ip::tcp;
using TlsStream = asio::ssl::stream<Tcp::socket>;

// A fake still refuses what no test needs, so that a client bug cannot make it eat memory.
constexpr size_t kMaxHeaderBytes = 64 * 1024;
constexpr size_t kMaxBodyBytes = 64 * 1024 * 1024;

std::string_view ReasonPhrase(int status) {
  switch (status) {
    case 100:
      return "Continue";
    case 200:
      return "OK";
    case 201:
      return "Created";
    case 204:
      return "No Content";
    case 301:
      return "Moved Permanently";
    case 302:
      return "Found";
    case 304:
      return "Not Modified";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 408:
      return "Request Timeout";
    case 413:
      return "Content Too Large";
    case 429:
      return "Too Many Requests";
    case 500:
      return "Internal Server Error";
    case 502:
      return "Bad Gateway";
    case 503:
      return "Service Unavailable";
    case 504:
      return "Gateway Timeout";
    default:
      return "Status";
  }
}

bool HasBody(int status, const std::string& method) {
  return method != "HEAD" && status >= 200 && status != 204 && status != 304;
}

std::chrono::steady_clock::duration ToChrono(absl::Duration d) {
  // Clamped so that "now + d" cannot overflow for an infinite duration.
  return absl::ToChronoNanoseconds(std::clamp(d, absl::ZeroDuration(), absl::Hours(24 * 365)));
}

std::string FindHeader(const std::vector<std::pair<std::string, std::string>>& headers,
                       std::string_view name) {
  for (const auto& [key, value] : headers) {
    if (absl::EqualsIgnoreCase(AbslView(key), AbslView(name))) return value;
  }
  return "";
}

// Parses the request line and headers (without the final blank line).
std::optional<FakeHttpRequest> ParseHead(std::string_view head) {
  std::vector<absl::string_view> lines = absl::StrSplit(AbslView(head), "\r\n");
  if (lines.empty()) return std::nullopt;
  std::vector<absl::string_view> parts = absl::StrSplit(lines[0], ' ');
  if (parts.size() != 3 || parts[0].empty() || parts[1].empty() ||
      !absl::StartsWith(parts[2], "HTTP/1.")) {
    return std::nullopt;
  }
  FakeHttpRequest request;
  request.method = std::string(parts[0]);
  request.path = std::string(parts[1]);
  request.version = std::string(parts[2]);
  for (size_t i = 1; i < lines.size(); ++i) {
    const size_t colon = lines[i].find(':');
    if (colon == absl::string_view::npos || colon == 0) return std::nullopt;
    request.headers.emplace_back(
        absl::AsciiStrToLower(lines[i].substr(0, colon)),
        std::string(absl::StripAsciiWhitespace(lines[i].substr(colon + 1))));
  }
  if (parts[2] == "HTTP/1.0" && request.Header("connection").empty()) {
    // An HTTP/1.0 client expects the connection to end with the response.
    request.headers.emplace_back("connection", "close");
  }
  return request;
}

}  // namespace

std::string FakeHttpRequest::Header(std::string_view name) const {
  return FindHeader(headers, name);
}

struct FakeHttpServer::State {
  // Set at start with TLS, and kept until every connection is gone.
  std::unique_ptr<SelfSignedCertificate> certificate;
  std::optional<asio::ssl::context> tls;
  asio::io_context io;
  asio::executor_work_guard<asio::io_context::executor_type> work{io.get_executor()};
  Tcp::acceptor acceptor{io};
  std::thread thread;
  uint16_t port = 0;
  std::atomic<size_t> connections{0};

  mutable std::mutex mu;
  mutable std::condition_variable arrived;
  Handler handler;                        // guarded by mu
  bool keep_requests = true;              // set at start
  std::vector<FakeHttpRequest> requests;  // guarded by mu; kept when keep_requests
  size_t request_count = 0;               // guarded by mu

  asio::awaitable<void> AcceptLoop();
  asio::awaitable<void> Serve(Tcp::socket socket);
  // Records a complete request (HTTP/1.1 or HTTP/2) and returns the handler's answer.
  FakeHttpResponse Dispatch(const FakeHttpRequest& request);
  // Reads one request from `stream`, `buffer` holding bytes already received; nullopt when
  // the connection ended or the request is malformed (the connection is then closed).
  asio::awaitable<std::optional<FakeHttpRequest>> ReadRequest(FakeHttpStream& stream,
                                                              std::string& buffer);
  // Answers one request; false when the connection must not be reused.
  asio::awaitable<bool> Respond(FakeHttpStream& stream, const FakeHttpRequest& request,
                                const FakeHttpResponse& response);
};

namespace {

// A connection's bytes through an Asio stream: Tcp::socket, or TlsStream over one.
template <typename AsioStream>
class AsioFakeHttpStream final : public FakeHttpStream {
 public:
  template <typename... Args>
  explicit AsioFakeHttpStream(Args&&... args) : stream_(std::forward<Args>(args)...) {}

  asio::awaitable<size_t> ReadSome(asio::mutable_buffer buffer, asio::error_code& ec) override {
    co_return co_await stream_.async_read_some(buffer,
                                               asio::redirect_error(asio::use_awaitable, ec));
  }
  asio::awaitable<void> Write(asio::const_buffer bytes, asio::error_code& ec) override {
    co_await asio::async_write(stream_, bytes, asio::redirect_error(asio::use_awaitable, ec));
  }
  Tcp::socket::lowest_layer_type& tcp() override { return stream_.lowest_layer(); }

  AsioStream& stream() { return stream_; }

 private:
  AsioStream stream_;
};

// ALPN (RFC 7301): "h2" when the client offers it, else "http/1.1" when offered, else none
// (the connection then speaks HTTP/1.1 all the same). `in` is the client's list, each name
// after its length byte.
int SelectAlpn(SSL*, const unsigned char** out, unsigned char* out_length, const unsigned char* in,
               unsigned int in_length, void*) {
  for (const std::string_view wanted : {std::string_view("h2"), std::string_view("http/1.1")}) {
    for (unsigned int at = 0; at < in_length;) {
      const unsigned int length = in[at];
      if (length > in_length - at - 1) break;
      if (std::string_view(reinterpret_cast<const char*>(in + at + 1), length) == wanted) {
        *out = in + at + 1;
        *out_length = static_cast<unsigned char>(length);
        return SSL_TLSEXT_ERR_OK;
      }
      at += 1 + length;
    }
  }
  return SSL_TLSEXT_ERR_NOACK;
}

// TLS 1.2 or later on `certificate`, with SelectAlpn.
absl::StatusOr<asio::ssl::context> MakeTlsContext(const SelfSignedCertificate& certificate) {
  asio::ssl::context context(asio::ssl::context::tls_server);
  if (SSL_CTX_set_min_proto_version(context.native_handle(), TLS1_2_VERSION) != 1) {
    return absl::InternalError("fake HTTP server: cannot require TLS 1.2");
  }
  asio::error_code ec;
  context.use_certificate_chain_file(certificate.certificate_path(), ec);
  if (!ec) context.use_private_key_file(certificate.key_path(), asio::ssl::context::pem, ec);
  if (ec) return absl::InternalError(absl::StrCat("fake HTTP server: TLS setup: ", ec.message()));
  SSL_CTX_set_alpn_select_cb(context.native_handle(), &SelectAlpn, nullptr);
  return context;
}

// Reads until `buffer` holds at least `size` bytes.
asio::awaitable<bool> FillTo(FakeHttpStream& stream, std::string& buffer, size_t size) {
  while (buffer.size() < size) {
    asio::error_code ec;
    const size_t wanted = std::min<size_t>(size - buffer.size(), 64 * 1024);
    const size_t old_size = buffer.size();
    buffer.resize(old_size + wanted);
    const size_t got = co_await stream.ReadSome(asio::buffer(buffer.data() + old_size, wanted), ec);
    buffer.resize(old_size + got);
    if (ec) co_return false;
  }
  co_return true;
}

// Reads until `buffer` contains `delimiter`; returns its offset.
asio::awaitable<std::optional<size_t>> FillUntil(FakeHttpStream& stream, std::string& buffer,
                                                 std::string_view delimiter, size_t max_bytes) {
  size_t searched = 0;
  for (;;) {
    const size_t at = buffer.find(delimiter, searched);
    if (at != std::string::npos) co_return at;
    if (buffer.size() > max_bytes) co_return std::nullopt;
    searched = buffer.size() >= delimiter.size() ? buffer.size() - delimiter.size() + 1 : 0;
    if (!co_await FillTo(stream, buffer, buffer.size() + 1)) co_return std::nullopt;
  }
}

asio::awaitable<void> Sleep(FakeHttpStream& stream, absl::Duration duration) {
  if (duration <= absl::ZeroDuration()) co_return;
  asio::steady_timer timer(stream.executor(), ToChrono(duration));
  asio::error_code ignored;
  co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ignored));
}

enum class Protocol { kHttp1, kHttp2, kClosed };

// Reads until the first bytes either are the HTTP/2 client preface or cannot be: a slow
// HTTP/1.1 client may send fewer bytes than the preface has, so each read is compared as it
// comes. What was read stays in `buffer`.
asio::awaitable<Protocol> Sniff(FakeHttpStream& stream, std::string& buffer) {
  for (;;) {
    const size_t common = std::min(buffer.size(), kHttp2ClientPreface.size());
    if (std::string_view(buffer).substr(0, common) != kHttp2ClientPreface.substr(0, common)) {
      co_return Protocol::kHttp1;
    }
    if (common == kHttp2ClientPreface.size()) co_return Protocol::kHttp2;
    char chunk[4096];
    asio::error_code ec;
    const size_t got = co_await stream.ReadSome(asio::buffer(chunk), ec);
    if (ec) co_return Protocol::kClosed;
    buffer.append(chunk, got);
  }
}

asio::awaitable<bool> WriteAll(FakeHttpStream& stream, std::string_view bytes) {
  asio::error_code ec;
  co_await stream.Write(asio::buffer(bytes.data(), bytes.size()), ec);
  co_return !ec;
}

// What the TLS handshake chose by ALPN.
Protocol NegotiatedProtocol(TlsStream& stream) {
  const unsigned char* name = nullptr;
  unsigned int length = 0;
  SSL_get0_alpn_selected(stream.native_handle(), &name, &length);
  return std::string_view(reinterpret_cast<const char*>(name), length) == "h2" ? Protocol::kHttp2
                                                                               : Protocol::kHttp1;
}

}  // namespace

asio::awaitable<void> FakeHttpServer::State::AcceptLoop() {
  while (acceptor.is_open()) {
    Tcp::socket socket(io);
    asio::error_code ec;
    co_await acceptor.async_accept(socket, asio::redirect_error(asio::use_awaitable, ec));
    if (ec) {
      if (ec == asio::error::operation_aborted || !acceptor.is_open()) co_return;
      continue;
    }
    connections.fetch_add(1);
    asio::co_spawn(io, Serve(std::move(socket)), asio::detached);
  }
}

asio::awaitable<void> FakeHttpServer::State::Serve(Tcp::socket socket) {
  std::shared_ptr<FakeHttpStream> stream;
  std::string buffer;
  Protocol protocol = Protocol::kClosed;
  if (tls.has_value()) {
    auto tls_stream = std::make_shared<AsioFakeHttpStream<TlsStream>>(std::move(socket), *tls);
    asio::error_code ec;
    co_await tls_stream->stream().async_handshake(asio::ssl::stream_base::server,
                                                  asio::redirect_error(asio::use_awaitable, ec));
    if (!ec) protocol = NegotiatedProtocol(tls_stream->stream());
    stream = std::move(tls_stream);
  } else {
    stream = std::make_shared<AsioFakeHttpStream<Tcp::socket>>(std::move(socket));
    protocol = co_await Sniff(*stream, buffer);
  }
  if (protocol == Protocol::kHttp2) {
    // It closes the stream itself, once its last bytes are written.
    co_await ServeFakeHttp2Connection(
        std::move(stream), std::move(buffer),
        FakeHttp2Options{
            .dispatch = [this](const FakeHttpRequest& request) { return Dispatch(request); },
            .max_header_bytes = kMaxHeaderBytes,
            .max_body_bytes = kMaxBodyBytes});
    co_return;
  }
  while (protocol == Protocol::kHttp1) {
    std::optional<FakeHttpRequest> request = co_await ReadRequest(*stream, buffer);
    if (!request.has_value()) break;
    const FakeHttpResponse response = Dispatch(*request);
    const bool keep_alive = co_await Respond(*stream, *request, response);
    if (!keep_alive) break;
  }
  stream->Close();
}

FakeHttpResponse FakeHttpServer::State::Dispatch(const FakeHttpRequest& request) {
  Handler current;
  {
    std::lock_guard<std::mutex> lock(mu);
    ++request_count;
    if (keep_requests) requests.push_back(request);
    current = handler;
  }
  arrived.notify_all();
  if (current) return current(request);
  FakeHttpResponse response;
  response.status = 500;
  response.body = "no handler";
  return response;
}

asio::awaitable<std::optional<FakeHttpRequest>> FakeHttpServer::State::ReadRequest(
    FakeHttpStream& stream, std::string& buffer) {
  std::optional<size_t> head_end = co_await FillUntil(stream, buffer, "\r\n\r\n", kMaxHeaderBytes);
  if (!head_end.has_value()) co_return std::nullopt;
  std::optional<FakeHttpRequest> request = ParseHead(std::string_view(buffer).substr(0, *head_end));
  buffer.erase(0, *head_end + 4);
  if (!request.has_value()) co_return std::nullopt;

  if (absl::EqualsIgnoreCase(AbslView(request->Header("expect")), "100-continue")) {
    if (!co_await WriteAll(stream, "HTTP/1.1 100 Continue\r\n\r\n")) co_return std::nullopt;
  }

  if (absl::EqualsIgnoreCase(AbslView(request->Header("transfer-encoding")), "chunked")) {
    for (;;) {
      std::optional<size_t> line_end = co_await FillUntil(stream, buffer, "\r\n", 1024);
      if (!line_end.has_value()) co_return std::nullopt;
      // Chunk extensions (";name=value") are allowed and ignored.
      absl::string_view size_text = AbslView(std::string_view(buffer).substr(0, *line_end));
      size_text = size_text.substr(0, size_text.find(';'));
      size_t size = 0;
      if (!absl::SimpleHexAtoi(absl::StripAsciiWhitespace(size_text), &size) ||
          size > kMaxBodyBytes - request->body.size()) {
        co_return std::nullopt;
      }
      buffer.erase(0, *line_end + 2);
      if (size == 0) {
        // Trailers, if any, end with an empty line.
        for (;;) {
          std::optional<size_t> trailer_end = co_await FillUntil(stream, buffer, "\r\n", 8192);
          if (!trailer_end.has_value()) co_return std::nullopt;
          buffer.erase(0, *trailer_end + 2);
          if (*trailer_end == 0) break;
        }
        break;
      }
      if (!co_await FillTo(stream, buffer, size + 2)) co_return std::nullopt;
      if (buffer.compare(size, 2, "\r\n") != 0) co_return std::nullopt;
      request->body.append(buffer, 0, size);
      buffer.erase(0, size + 2);
    }
  } else if (std::string length_text = request->Header("content-length"); !length_text.empty()) {
    size_t length = 0;
    if (!absl::SimpleAtoi(AbslView(length_text), &length) || length > kMaxBodyBytes) {
      co_return std::nullopt;
    }
    if (!co_await FillTo(stream, buffer, length)) co_return std::nullopt;
    request->body = buffer.substr(0, length);
    buffer.erase(0, length);
  }
  co_return request;
}

asio::awaitable<bool> FakeHttpServer::State::Respond(FakeHttpStream& stream,
                                                     const FakeHttpRequest& request,
                                                     const FakeHttpResponse& response) {
  if (response.hang) {
    // Keep the connection open, reading (and dropping) whatever comes, until the client
    // gives up or the server stops.
    char sink[4096];
    for (;;) {
      asio::error_code ec;
      co_await stream.ReadSome(asio::buffer(sink), ec);
      if (ec) co_return false;
    }
  }
  co_await Sleep(stream, response.delay);

  const bool body_allowed = HasBody(response.status, request.method);
  const bool chunked = body_allowed && !response.chunks.empty();
  bool close_after =
      absl::EqualsIgnoreCase(AbslView(request.Header("connection")), "close") ||
      absl::EqualsIgnoreCase(AbslView(FindHeader(response.headers, "connection")), "close") ||
      response.close_mid_body;

  std::string head = absl::StrCat("HTTP/1.1 ", response.status, " ",
                                  AbslView(ReasonPhrase(response.status)), "\r\n");
  for (const auto& [name, value] : response.headers) {
    absl::StrAppend(&head, name, ": ", value, "\r\n");
  }
  if (chunked) {
    if (FindHeader(response.headers, "transfer-encoding").empty()) {
      head += "Transfer-Encoding: chunked\r\n";
    }
  } else if (body_allowed && FindHeader(response.headers, "content-length").empty()) {
    absl::StrAppend(&head, "Content-Length: ", response.body.size(), "\r\n");
  }
  if (close_after && FindHeader(response.headers, "connection").empty()) {
    head += "Connection: close\r\n";
  }
  head += "\r\n";

  if (!body_allowed) {
    co_return co_await WriteAll(stream, head) && !close_after;
  }
  if (!chunked) {
    if (response.close_mid_body) {
      // Content-Length announces the whole body; only half of it comes.
      head.append(response.body, 0, response.body.size() / 2);
      co_await WriteAll(stream, head);
      co_return false;
    }
    head += response.body;
    co_return co_await WriteAll(stream, head) && !close_after;
  }

  if (!co_await WriteAll(stream, head)) co_return false;
  // Cut off mid-body: the first half of the chunks (at least one), never the final chunk.
  const size_t count =
      response.close_mid_body ? (response.chunks.size() + 1) / 2 : response.chunks.size();
  for (size_t i = 0; i < count; ++i) {
    if (i > 0) co_await Sleep(stream, response.chunk_interval);
    const std::string& chunk = response.chunks[i];
    // An empty chunk would end the body early, so it is skipped.
    if (chunk.empty()) continue;
    std::string frame = absl::StrCat(absl::Hex(chunk.size()), "\r\n", chunk, "\r\n");
    if (!co_await WriteAll(stream, frame)) co_return false;
  }
  if (response.close_mid_body) co_return false;
  co_return co_await WriteAll(stream, "0\r\n\r\n") && !close_after;
}

absl::StatusOr<std::unique_ptr<FakeHttpServer>> FakeHttpServer::Start(Handler handler) {
  return Start(std::move(handler), FakeHttpServerOptions{});
}

absl::StatusOr<std::unique_ptr<FakeHttpServer>> FakeHttpServer::Start(
    Handler handler, FakeHttpServerOptions options) {
  auto state = std::make_unique<State>();
  state->handler = std::move(handler);
  state->keep_requests = options.keep_requests;
  if (options.tls) {
    absl::StatusOr<std::unique_ptr<SelfSignedCertificate>> certificate =
        SelfSignedCertificate::Create({"127.0.0.1", "localhost"});
    if (!certificate.ok()) return certificate.status();
    state->certificate = *std::move(certificate);
    absl::StatusOr<asio::ssl::context> context = MakeTlsContext(*state->certificate);
    if (!context.ok()) return context.status();
    state->tls.emplace(*std::move(context));
  }
  asio::error_code ec;
  const Tcp::endpoint endpoint(asio::ip::make_address_v4("127.0.0.1"), 0);
  state->acceptor.open(endpoint.protocol(), ec);
  if (!ec) state->acceptor.set_option(Tcp::acceptor::reuse_address(true), ec);
  if (!ec) state->acceptor.bind(endpoint, ec);
  if (!ec) state->acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return absl::UnavailableError(absl::StrCat("fake HTTP server: ", ec.message()));
  state->port = state->acceptor.local_endpoint().port();
  State* raw = state.get();
  asio::co_spawn(raw->io, raw->AcceptLoop(), asio::detached);
  raw->thread = std::thread([raw] { raw->io.run(); });
  return std::unique_ptr<FakeHttpServer>(new FakeHttpServer(std::move(state)));
}

FakeHttpServer::FakeHttpServer(std::unique_ptr<State> state) : state_(std::move(state)) {}

FakeHttpServer::~FakeHttpServer() {
  // Stopping the loop and then destroying the io_context destroys every pending coroutine,
  // which closes every socket and timer it holds.
  state_->work.reset();
  state_->io.stop();
  if (state_->thread.joinable()) state_->thread.join();
}

uint16_t FakeHttpServer::port() const { return state_->port; }

std::string FakeHttpServer::base_url() const {
  return absl::StrCat(state_->tls.has_value() ? "https" : "http", "://127.0.0.1:", state_->port);
}

std::string FakeHttpServer::certificate_path() const {
  return state_->certificate != nullptr ? state_->certificate->certificate_path() : "";
}

std::vector<FakeHttpRequest> FakeHttpServer::requests() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->requests;
}

size_t FakeHttpServer::request_count() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->request_count;
}

bool FakeHttpServer::WaitForRequests(size_t count, absl::Duration timeout) const {
  std::unique_lock<std::mutex> lock(state_->mu);
  return state_->arrived.wait_for(lock, ToChrono(timeout),
                                  [&] { return state_->request_count >= count; });
}

size_t FakeHttpServer::connection_count() const { return state_->connections.load(); }

void FakeHttpServer::SetHandler(Handler handler) {
  std::lock_guard<std::mutex> lock(state_->mu);
  state_->handler = std::move(handler);
}

}  // namespace herald::fakes
