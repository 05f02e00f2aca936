// tools/loadgen/client_load.h
//
// The client side of the load generator: accounts <prefix>1..<prefix>N logged in to a real
// server, each over Herald's own XmppSession in client mode (STARTTLS when the server offers
// it; SASL SCRAM-SHA-256 or SCRAM-SHA-1 with or without TLS, PLAIN only over TLS; resource
// bind; initial presence). A benchmark server on loopback simply offers no STARTTLS.
//
// ClientLoad is the LoadDriver's sink: connection i is sender i; it sends the body to the
// target JID and reports every chat message from the target as a reply to that connection.
// XmppSession drops message bounces (type='error'), so in client mode a bounced request
// shows as a timeout, not an error.
//
// EchoClients is the other end for measuring the server alone: the same logins, and every
// chat message that arrives is sent back, body unchanged, to its sender.
//
//   auto load = ClientLoad::Create(io, accounts, "agent.localhost", "/ping");
//   (*load)->Start([&] { driver.Start(); }, [&](absl::Status why) { ... });
//   (*load)->set_driver(&driver);
//   ...
//   (*load)->Stop([&] { io.stop(); });   // closes every stream politely
#pragma once

#include <asio.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "component/xmpp/jid.h"
#include "component/xmpp/session.h"
#include "tools/loadgen/load_driver.h"

namespace herald::loadgen {

struct ClientAccounts {
  std::string host = "127.0.0.1";
  uint16_t port = 5222;
  std::string domain = "localhost";
  std::string user_prefix = "load";
  int users = 4;
  std::string password;
  std::string resource = "loadgen";
};

// Sessions for <prefix>1..<prefix>N, created but not started; events go to `on_event` with
// the connection's index.
class ClientSessions {
 public:
  using EventSink = std::function<void(int connection, const xmpp::InboundEvent& event)>;

  static absl::StatusOr<std::unique_ptr<ClientSessions>> Create(asio::io_context& io,
                                                                const ClientAccounts& accounts,
                                                                EventSink on_event);

  // Connects every session. `on_all_online` runs once all are online; `on_failed` once when
  // any session stops with an error.
  void Start(std::function<void()> on_all_online, std::function<void(absl::Status)> on_failed);
  // Closes every stream; `on_stopped` runs when all have closed (or after a few seconds).
  void Stop(std::function<void()> on_stopped);

  int size() const { return static_cast<int>(sessions_.size()); }
  xmpp::XmppSession& session(int i) { return *sessions_[i]; }

 private:
  explicit ClientSessions(asio::io_context& io) : stop_timer_(io) {}
  void OnStopped(const absl::Status& status);

  std::vector<std::unique_ptr<xmpp::XmppSession>> sessions_;
  EventSink on_event_;
  std::function<void()> on_all_online_;
  std::function<void(absl::Status)> on_failed_;
  std::function<void()> on_stopped_;
  asio::steady_timer stop_timer_;
  int online_ = 0;
  int stopped_ = 0;
  bool stopping_ = false;
};

class ClientLoad : public LoadSink {
 public:
  static absl::StatusOr<std::unique_ptr<ClientLoad>> Create(asio::io_context& io,
                                                            const ClientAccounts& accounts,
                                                            std::string_view target,
                                                            std::string body);

  void Start(std::function<void()> on_all_online, std::function<void(absl::Status)> on_failed) {
    sessions_->Start(std::move(on_all_online), std::move(on_failed));
  }
  void Stop(std::function<void()> on_stopped) { sessions_->Stop(std::move(on_stopped)); }
  void set_driver(LoadDriver* driver) { driver_ = driver; }
  int connections() const { return sessions_->size(); }

  void Send(int sender) override;
  void Flush() override {}  // each session writes its own queue in batches

 private:
  ClientLoad(xmpp::Jid target, std::string body)
      : target_(std::move(target)), body_(std::move(body)) {}
  void OnEvent(int connection, const xmpp::InboundEvent& event);

  std::unique_ptr<ClientSessions> sessions_;
  xmpp::Jid target_;
  std::string target_bare_;
  std::string body_;
  LoadDriver* driver_ = nullptr;
};

class EchoClients {
 public:
  static absl::StatusOr<std::unique_ptr<EchoClients>> Create(asio::io_context& io,
                                                             const ClientAccounts& accounts);

  void Start(std::function<void()> on_all_online, std::function<void(absl::Status)> on_failed) {
    sessions_->Start(std::move(on_all_online), std::move(on_failed));
  }
  void Stop(std::function<void()> on_stopped) { sessions_->Stop(std::move(on_stopped)); }
  int64_t echoed() const { return echoed_; }

 private:
  EchoClients() = default;
  void OnEvent(int connection, const xmpp::InboundEvent& event);

  std::unique_ptr<ClientSessions> sessions_;
  int64_t echoed_ = 0;
};

}  // namespace herald::loadgen
