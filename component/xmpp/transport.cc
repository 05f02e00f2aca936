#include "component/xmpp/transport.h"

#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <asio/experimental/as_tuple.hpp>
#include <asio/experimental/awaitable_operators.hpp>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"

namespace herald::xmpp {
namespace {

using asio::experimental::as_tuple;
using namespace asio::experimental::awaitable_operators;
constexpr auto kNoThrow = as_tuple(asio::use_awaitable);

std::chrono::steady_clock::duration ToChrono(absl::Duration d) {
  return absl::ToChronoNanoseconds(d);
}

}  // namespace

Transport::Transport(asio::any_io_executor executor)
    : executor_(std::move(executor)), socket_(executor_) {}

Transport::~Transport() { Close(); }

asio::awaitable<absl::Status> Transport::Connect(const std::string& host, uint16_t port,
                                                 absl::Duration timeout) {
  asio::ip::tcp::resolver resolver(executor_);
  asio::error_code resolve_error;
  asio::ip::tcp::resolver::results_type endpoints;
  asio::error_code not_an_address;
  asio::ip::make_address(host, not_an_address);
  if (!not_an_address) {
    // An address needs no lookup: resolved here, at once, without the resolver's thread.
    endpoints = resolver.resolve(
        host, std::to_string(port),
        asio::ip::resolver_base::numeric_host | asio::ip::resolver_base::numeric_service,
        resolve_error);
  } else {
    std::tie(resolve_error, endpoints) =
        co_await resolver.async_resolve(host, std::to_string(port), kNoThrow);
  }
  if (resolve_error) {
    co_return absl::UnavailableError(
        absl::StrCat("cannot resolve ", host, ": ", resolve_error.message()));
  }
  asio::steady_timer deadline(executor_, ToChrono(timeout));
  auto result =
      co_await (asio::async_connect(socket_, endpoints, kNoThrow) || deadline.async_wait(kNoThrow));
  if (result.index() == 1) {
    socket_.close();
    co_return absl::DeadlineExceededError(absl::StrCat("no TCP connection to ", host, ":", port,
                                                       " within ", absl::FormatDuration(timeout)));
  }
  auto [connect_error, endpoint] = std::get<0>(result);
  if (connect_error) {
    co_return absl::UnavailableError(
        absl::StrCat("cannot connect to ", host, ":", port, ": ", connect_error.message()));
  }
  asio::error_code ignored;
  socket_.set_option(asio::ip::tcp::no_delay(true), ignored);
  co_return absl::OkStatus();
}

asio::awaitable<absl::Status> Transport::StartTls(const TlsOptions& options) {
  tls_context_ = std::make_unique<asio::ssl::context>(asio::ssl::context::tls_client);
  tls_context_->set_options(asio::ssl::context::default_workarounds | asio::ssl::context::no_sslv2 |
                            asio::ssl::context::no_sslv3 | asio::ssl::context::no_tlsv1 |
                            asio::ssl::context::no_tlsv1_1);
  asio::error_code error;
  if (options.verify) {
    if (options.ca_file.empty()) {
      tls_context_->set_default_verify_paths(error);
    } else {
      tls_context_->load_verify_file(options.ca_file, error);
    }
    if (error) {
      co_return absl::FailedPreconditionError(
          absl::StrCat("cannot load TLS trust anchors",
                       options.ca_file.empty() ? "" : absl::StrCat(" from ", options.ca_file), ": ",
                       error.message()));
    }
    tls_context_->set_verify_mode(asio::ssl::verify_peer);
    tls_context_->set_verify_callback(asio::ssl::host_name_verification(options.server_name));
  } else {
    tls_context_->set_verify_mode(asio::ssl::verify_none);
  }
  tls_ = std::make_unique<asio::ssl::stream<asio::ip::tcp::socket&>>(socket_, *tls_context_);
  // SNI, so a server hosting several domains presents the right certificate.
  SSL_set_tlsext_host_name(tls_->native_handle(), options.server_name.c_str());
  auto [handshake_error] = co_await tls_->async_handshake(asio::ssl::stream_base::client, kNoThrow);
  if (handshake_error) {
    const long verify_result = SSL_get_verify_result(tls_->native_handle());
    if (verify_result != X509_V_OK) {
      co_return absl::UnauthenticatedError(
          absl::StrCat("the server's TLS certificate for ", options.server_name,
                       " was not accepted: ", X509_verify_cert_error_string(verify_result)));
    }
    co_return absl::UnavailableError(
        absl::StrCat("TLS handshake failed: ", handshake_error.message()));
  }
  co_return absl::OkStatus();
}

asio::awaitable<absl::StatusOr<size_t>> Transport::ReadSome(asio::mutable_buffer buffer) {
  asio::error_code error;
  size_t n = 0;
  if (tls_) {
    std::tie(error, n) = co_await tls_->async_read_some(buffer, kNoThrow);
  } else {
    std::tie(error, n) = co_await socket_.async_read_some(buffer, kNoThrow);
  }
  if (error) {
    if (error == asio::error::eof || error == asio::ssl::error::stream_truncated) {
      co_return absl::UnavailableError("the server closed the connection");
    }
    co_return absl::UnavailableError(absl::StrCat("read failed: ", error.message()));
  }
  co_return n;
}

asio::awaitable<absl::Status> Transport::Write(std::string_view data) {
  asio::error_code error;
  if (tls_) {
    std::tie(error, std::ignore) =
        co_await asio::async_write(*tls_, asio::buffer(data.data(), data.size()), kNoThrow);
  } else {
    std::tie(error, std::ignore) =
        co_await asio::async_write(socket_, asio::buffer(data.data(), data.size()), kNoThrow);
  }
  if (error) co_return absl::UnavailableError(absl::StrCat("write failed: ", error.message()));
  co_return absl::OkStatus();
}

void Transport::Close() {
  asio::error_code ignored;
  socket_.shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
  socket_.close(ignored);
}

bool Transport::is_open() const { return socket_.is_open(); }

}  // namespace herald::xmpp
