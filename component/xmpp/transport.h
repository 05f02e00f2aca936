// component/xmpp/transport.h
//
// Transport is one TCP connection to the XMPP server that can be upgraded to TLS in place
// (STARTTLS). Every operation is an Asio coroutine on the session's I/O loop and reports
// failures as absl::Status, never by exception. TLS verifies the server's certificate
// against the system trust store (or `ca_file`) and the expected host name unless
// verification is switched off.
//
//   Transport transport(executor);
//   co_await transport.Connect("127.0.0.1", 5222, absl::Seconds(10));
//   co_await transport.StartTls(TlsOptions{.server_name = "example.org"});
//   absl::StatusOr<size_t> n = co_await transport.ReadSome(asio::buffer(buf));
#pragma once

#include <asio.hpp>
#include <asio/ssl.hpp>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace herald::xmpp {

struct TlsOptions {
  std::string server_name;  // SNI and the name the certificate must carry
  bool verify = true;
  std::string ca_file;  // empty: the system's default trust store
};

class Transport {
 public:
  explicit Transport(asio::any_io_executor executor);
  ~Transport();

  // Coroutine parameters are references to objects the caller keeps alive across the
  // co_await: g++ 12 can destroy a by-value class parameter of a coroutine twice.

  // Resolves `host` and connects to the first address that answers within `timeout`.
  asio::awaitable<absl::Status> Connect(const std::string& host, uint16_t port,
                                        absl::Duration timeout);

  // Performs the TLS handshake over the connected socket. A verification failure is
  // reported as Unauthenticated with the reason OpenSSL gave.
  asio::awaitable<absl::Status> StartTls(const TlsOptions& options);

  // Reads what is available (at least one byte). Unavailable when the peer closed.
  asio::awaitable<absl::StatusOr<size_t>> ReadSome(asio::mutable_buffer buffer);

  // Writes all of `data`, which must stay alive until the write completes.
  asio::awaitable<absl::Status> Write(std::string_view data);

  // Closes the socket; pending reads and writes complete with an error.
  void Close();

  bool is_open() const;
  bool is_tls() const { return tls_ != nullptr; }

 private:
  asio::any_io_executor executor_;
  asio::ip::tcp::socket socket_;
  std::unique_ptr<asio::ssl::context> tls_context_;
  std::unique_ptr<asio::ssl::stream<asio::ip::tcp::socket&>> tls_;
};

}  // namespace herald::xmpp
