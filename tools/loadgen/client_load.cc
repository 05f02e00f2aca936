#include "tools/loadgen/client_load.h"

#include <iostream>
#include <utility>

#include "absl/strings/str_cat.h"

namespace herald::loadgen {

absl::StatusOr<std::unique_ptr<ClientSessions>> ClientSessions::Create(
    asio::io_context& io, const ClientAccounts& accounts, EventSink on_event) {
  std::unique_ptr<ClientSessions> sessions(new ClientSessions(io));
  sessions->on_event_ = std::move(on_event);
  for (int i = 0; i < accounts.users; ++i) {
    absl::StatusOr<xmpp::Jid> account =
        xmpp::Jid::Parse(absl::StrCat(accounts.user_prefix, i + 1, "@", accounts.domain));
    if (!account.ok()) return account.status();
    xmpp::SessionOptions options;
    options.mode = xmpp::SessionMode::kClient;
    options.host = accounts.host;
    options.port = accounts.port;
    options.server_domain = accounts.domain;
    options.account = *account;
    options.password = accounts.password;
    options.resource = accounts.resource;
    options.starttls_required = false;  // a loopback benchmark server may offer none
    options.tls_verify = false;         // ... or a throwaway certificate
    options.outbound_queue_limit = 1 << 22;
    options.identity = {.category = "client", .type = "bot", .name = "loadgen"};
    ClientSessions* self = sessions.get();
    absl::StatusOr<std::unique_ptr<xmpp::XmppSession>> session = xmpp::XmppSession::Create(
        io, std::move(options),
        [self, i](xmpp::InboundEvent&& event) {
          if (std::holds_alternative<xmpp::SessionOnline>(event)) {
            if (++self->online_ == self->size() && self->on_all_online_) {
              auto ready = std::move(self->on_all_online_);
              self->on_all_online_ = nullptr;
              ready();
            }
            return;
          }
          if (self->on_event_) self->on_event_(i, event);
        },
        [self](const absl::Status& status) { self->OnStopped(status); });
    if (!session.ok()) return session.status();
    sessions->sessions_.push_back(*std::move(session));
  }
  return sessions;
}

void ClientSessions::Start(std::function<void()> on_all_online,
                           std::function<void(absl::Status)> on_failed) {
  on_all_online_ = std::move(on_all_online);
  on_failed_ = std::move(on_failed);
  for (std::unique_ptr<xmpp::XmppSession>& session : sessions_) session->Start();
}

void ClientSessions::Stop(std::function<void()> on_stopped) {
  stopping_ = true;
  on_stopped_ = std::move(on_stopped);
  for (std::unique_ptr<xmpp::XmppSession>& session : sessions_) session->Stop();
  stop_timer_.expires_after(std::chrono::seconds(5));
  stop_timer_.async_wait([this](const asio::error_code& error) {
    if (!error && on_stopped_) std::exchange(on_stopped_, nullptr)();
  });
}

void ClientSessions::OnStopped(const absl::Status& status) {
  ++stopped_;
  if (!status.ok() && !stopping_ && on_failed_) {
    std::exchange(on_failed_, nullptr)(status);
    return;
  }
  if (stopping_ && stopped_ == size() && on_stopped_) {
    stop_timer_.cancel();
    std::exchange(on_stopped_, nullptr)();
  }
}

absl::StatusOr<std::unique_ptr<ClientLoad>> ClientLoad::Create(asio::io_context& io,
                                                               const ClientAccounts& accounts,
                                                               std::string_view target,
                                                               std::string body) {
  absl::StatusOr<xmpp::Jid> target_jid = xmpp::Jid::Parse(target);
  if (!target_jid.ok()) return target_jid.status();
  std::unique_ptr<ClientLoad> load(new ClientLoad(*target_jid, std::move(body)));
  load->target_bare_ = load->target_.BareString();
  ClientLoad* self = load.get();
  absl::StatusOr<std::unique_ptr<ClientSessions>> sessions =
      ClientSessions::Create(io, accounts, [self](int connection, const xmpp::InboundEvent& event) {
        self->OnEvent(connection, event);
      });
  if (!sessions.ok()) return sessions.status();
  load->sessions_ = *std::move(sessions);
  return load;
}

void ClientLoad::Send(int sender) {
  sessions_->session(sender).Perform(xmpp::SendMessage{.to = target_, .body = body_});
}

void ClientLoad::OnEvent(int connection, const xmpp::InboundEvent& event) {
  const auto* message = std::get_if<xmpp::ChatMessage>(&event);
  if (message == nullptr || driver_ == nullptr) return;
  if (message->from.BareString() != target_bare_) return;  // not an answer from the target
  driver_->OnReply(connection);
}

absl::StatusOr<std::unique_ptr<EchoClients>> EchoClients::Create(asio::io_context& io,
                                                                 const ClientAccounts& accounts) {
  std::unique_ptr<EchoClients> echo(new EchoClients());
  EchoClients* self = echo.get();
  absl::StatusOr<std::unique_ptr<ClientSessions>> sessions =
      ClientSessions::Create(io, accounts, [self](int connection, const xmpp::InboundEvent& event) {
        self->OnEvent(connection, event);
      });
  if (!sessions.ok()) return sessions.status();
  echo->sessions_ = *std::move(sessions);
  return echo;
}

void EchoClients::OnEvent(int connection, const xmpp::InboundEvent& event) {
  const auto* message = std::get_if<xmpp::ChatMessage>(&event);
  if (message == nullptr) return;
  ++echoed_;
  sessions_->session(connection)
      .Perform(
          xmpp::SendMessage{.to = message->from, .body = message->body, .type = message->type});
}

}  // namespace herald::loadgen
