// tools/loadgen/component_server.h
//
// ComponentServer is the XMPP server side of XEP-0114, reduced to what a benchmark needs to
// measure a component alone: it listens on 127.0.0.1, accepts one component connection,
// checks its handshake (lowercase hex SHA-1 of the stream id followed by the secret), then
// writes message stanzas straight into it from many fake users (u0@localhost/load,
// u1@..., each message pre-built once, many per write) and hands every reply to the
// LoadDriver, matched by the user it is addressed to. Replies are read with StanzaScanner
// (tag boundaries and a few attributes, no tree), so loadgen's own cost per round trip stays
// far below the component's. IQ requests from the component (keepalive pings) get a result.
//
//   auto server = ComponentServer::Listen(io, options);        // port() is known now
//   (*server)->Accept([&] { driver.Start(); }, [&](absl::Status why) { ... });
//   (*server)->set_driver(&driver);                            // Send() feeds the component
//   ...
//   (*server)->Close();                                        // </stream:stream>, then close
//
// Single-threaded: every call on the io_context's thread.
#pragma once

#include <asio.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "tools/loadgen/load_driver.h"
#include "tools/loadgen/stanza_scanner.h"

namespace herald::loadgen {

struct ComponentServerOptions {
  uint16_t port = 0;  // 0: any free port
  std::string secret;
  // The domain the component must ask for; empty: whatever its stream header names.
  std::string component_domain;
  std::string user_domain = "localhost";
  int users = 1000;
  std::string body = "/ping";
};

// The XEP-0114 handshake a component sends for `stream_id` and `secret`.
std::string ComponentHandshakeDigest(std::string_view stream_id, std::string_view secret);

class ComponentServer : public LoadSink {
 public:
  // Binds and listens; fails when the port is taken.
  static absl::StatusOr<std::unique_ptr<ComponentServer>> Listen(
      asio::io_context& io, const ComponentServerOptions& options);
  ~ComponentServer() override;

  uint16_t port() const { return port_; }

  // Waits for one component and negotiates its stream. `on_ready` runs once it is online;
  // `on_failed` runs once if negotiation fails or, later, the stream breaks.
  void Accept(std::function<void()> on_ready, std::function<void(absl::Status)> on_failed);

  void set_driver(LoadDriver* driver) { driver_ = driver; }

  // LoadSink: one message from fake user `sender`; Flush() writes what is buffered.
  void Send(int sender) override;
  void Flush() override;

  // Closes our stream and the connection once what is buffered is written.
  void Close();

  const std::string& component_domain() const { return component_domain_; }
  // The message stanza that user `index` sends (for measuring what parsing it costs).
  const std::string& stanza(int index) const { return stanzas_[index]; }
  int64_t bytes_written() const { return bytes_written_; }
  int64_t bytes_read() const { return bytes_read_; }
  int64_t other_stanzas() const { return other_stanzas_; }

 private:
  ComponentServer(asio::io_context& io, const ComponentServerOptions& options);

  void Read();
  void OnElement(const ScannedElement& element);
  void Negotiate(const ScannedElement& element);
  void OnReply(const ScannedElement& element);
  // The index of fake user `jid` (u<i>@domain[/resource]), or -1.
  int UserIndex(std::string_view jid) const;
  void BuildStanzas();
  void Fail(absl::Status status);
  void WriteRaw(std::string_view xml);

  ComponentServerOptions options_;
  asio::ip::tcp::acceptor acceptor_;
  asio::ip::tcp::socket socket_;
  uint16_t port_ = 0;

  enum class State { kListening, kAwaitingHeader, kAwaitingHandshake, kOnline, kClosed };
  State state_ = State::kListening;
  std::string stream_id_;
  std::string component_domain_;
  std::function<void()> on_ready_;
  std::function<void(absl::Status)> on_failed_;
  LoadDriver* driver_ = nullptr;

  StanzaScanner scanner_;
  std::vector<char> read_buffer_;
  std::vector<std::string> stanzas_;  // by user index
  std::string pending_;               // filled by Send()
  std::string writing_;               // in the kernel's hands
  bool write_in_progress_ = false;
  bool close_after_write_ = false;
  int64_t bytes_written_ = 0;
  int64_t bytes_read_ = 0;
  int64_t other_stanzas_ = 0;
};

}  // namespace herald::loadgen
