// tests/fakes/fake_xmpp_server.h
//
// FakeXmppServer is an in-process XMPP server for integration tests of Herald's XMPP session:
// reconnects, keepalives, the XEP-0114 component handshake and C2S negotiation. It serves one
// side per instance: the component side (`jabber:component:accept`, handshake with a shared
// secret) or the client side (`jabber:client`: STARTTLS on a certificate it generates, SASL
// SCRAM-SHA-256 / SCRAM-SHA-1 / PLAIN, resource binding, an empty roster). It listens on
// 127.0.0.1 on a port the kernel picks, runs on its own thread, and can misbehave on demand:
// drop the connection, send garbage, stall, send a stream error, refuse authentication,
// refuse the component's domain, or stop accepting connections. Given services
// (FakeXmppServerOptions::disco_entities), it answers service discovery for them.
//
//   FakeXmppServerOptions options;
//   options.side = FakeXmppServerOptions::Side::kClient;
//   auto server = FakeXmppServer::Start(options);          // absl::StatusOr<unique_ptr<...>>
//   config.port = (*server)->port();
//   config.ca_file = (*server)->certificate_path();        // trust the generated certificate
//   ... start the session under test ...
//   ASSERT_TRUE((*server)->WaitForAuthenticatedSessions(1, absl::Seconds(10)));
//   (*server)->Send("<message from='alice@localhost/pc' to='bot@localhost' type='chat'>"
//                   "<body>hi</body></message>");
//   auto reply = (*server)->WaitForStanza(
//       [](const xmpp::XmlElement& s) { return s.name() == "message"; }, absl::Seconds(10));
//   (*server)->DropConnection();                            // the session must reconnect
//   ASSERT_TRUE((*server)->WaitForAuthenticatedSessions(2, absl::Seconds(10)));
//
// Every public method is thread-safe; those that touch connections run on the server's
// thread and wait for it. "The current connection" is the newest connection still open.
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
#include "component/xmpp/xml_element.h"

namespace herald::fakes {

struct FakeXmppServerOptions {
  enum class Side { kComponent, kClient };
  Side side = Side::kComponent;
  // Component side: the domain the component claims and the shared secret.
  std::string component_domain = "agent.localhost";
  std::string component_secret = "secret";
  // Client side: the server's domain and the one account it knows. On the component side
  // `domain` is the server's own address (IQs sent to it, e.g. pings, are answered).
  std::string domain = "localhost";
  std::string username = "bot";
  std::string password = "pencil";
  bool offer_starttls = true;
  // Refuse SASL before TLS (only when STARTTLS is offered; without it SASL runs in clear).
  bool require_starttls = true;
  // PLAIN is offered only on a TLS stream, whatever this list says, unless the server is told
  // to misbehave with offer_plain_in_clear (to prove the client refuses it).
  std::vector<std::string> mechanisms = {"SCRAM-SHA-256", "SCRAM-SHA-1", "PLAIN"};
  bool offer_plain_in_clear = false;
  // Answer the client's XEP-0199 pings addressed to the server.
  bool answer_pings = true;
  // Answer a disco#items query to the server (with no items); false leaves it to the test.
  bool answer_disco_items = true;
  // A stanza from the client larger than this ends the stream with policy-violation, as
  // Prosody does (512 KiB for components, 256 KiB for clients).
  size_t max_stanza_bytes = 512 * 1024;
  // The server's services as XEP-0030 shows them, e.g. an XEP-0363 upload service. When the
  // list is not empty, disco#items to the server (if answer_disco_items) lists each entity
  // whose jid is not `domain`, and disco#info to any of them (`domain` included) answers with
  // its identity, features and XEP-0128 form. Empty: disco goes unanswered but for the empty
  // results the server gives any IQ to itself.
  struct DiscoEntity {
    std::string jid;
    std::string category = "store";  // its identity
    std::string type = "file";
    std::vector<std::string> features;
    // The form's FORM_TYPE ("" for no form) and its other fields (var, value).
    std::string form_type;
    std::vector<std::pair<std::string, std::string>> form_fields;
  };
  std::vector<DiscoEntity> disco_entities;
};

class FakeXmppServer {
 public:
  // Listens on 127.0.0.1 with a port picked by the kernel and serves on its own thread.
  // Generates a self-signed certificate for "localhost" (and `domain`) in a temp folder.
  static absl::StatusOr<std::unique_ptr<FakeXmppServer>> Start(FakeXmppServerOptions options);
  ~FakeXmppServer();  // closes everything, joins the thread, removes the temp folder

  FakeXmppServer(const FakeXmppServer&) = delete;
  FakeXmppServer& operator=(const FakeXmppServer&) = delete;

  uint16_t port() const;
  // PEM file of the certificate presented on STARTTLS (a client verifies against it).
  const std::string& certificate_path() const;

  // Sessions that completed authentication (handshake accepted, or SASL + bind done), counted
  // since Start.
  int authenticated_sessions() const;
  int connections_accepted() const;
  bool WaitForAuthenticatedSessions(int count, absl::Duration timeout);
  // Waits until connections_accepted() >= count.
  bool WaitForConnections(int count, absl::Duration timeout);
  // Connections currently open (closed by either side are not counted).
  int open_connections() const;
  // Waits until open_connections() == count (e.g. 0 after the client disconnected).
  bool WaitForOpenConnections(int count, absl::Duration timeout);
  // The full JID bound by the newest client-side session ("bot@localhost/herald"), or "".
  std::string bound_jid() const;

  // Sends raw XML to the current authenticated session (the newest). Returns false if none.
  bool Send(std::string xml);
  // Waits for a stanza from the client (after authentication) for which `match` is true;
  // stanzas already received count. nullptr on timeout. Each stanza is returned at most once.
  // Every stanza is kept, including the IQs the server answered itself (pings, roster).
  // `match` runs on the caller's thread under the server's lock: it must not call the server.
  std::unique_ptr<xmpp::XmlElement> WaitForStanza(
      const std::function<bool(const xmpp::XmlElement&)>& match, absl::Duration timeout);
  // Number of whitespace-only keepalive writes received from the client so far.
  int whitespace_keepalives() const;
  // Waits until whitespace_keepalives() >= count.
  bool WaitForWhitespaceKeepalives(int count, absl::Duration timeout);

  // Faults. Each acts on the current connection; without one it does nothing.
  void DropConnection();  // abrupt close of the current connection
  void SendGarbage();     // bytes that are not XML: "<<<\x01"
  // Stalled connections read nothing and write nothing (Send included; held until unstalled)
  // but keep TCP open. SetStalled(true) freezes the connections open now; a connection
  // accepted later is served normally, so a client that gives up and reconnects gets through.
  // SetStalled(false) resumes the frozen ones.
  void SetStalled(bool stalled);
  // <stream:error><condition/></stream:error></stream:stream>, then close. A condition that
  // is not a plain element name becomes "undefined-condition".
  void SendStreamError(std::string_view condition);
  // Refuse every following authentication: handshake → <stream:error><not-authorized/>;
  // SASL → <failure><not-authorized/></failure>.
  void SetRefuseAuthentication(bool refuse);
  // Refuse the component's domain with <host-unknown/> (component side; on the client side
  // the server's domain is refused the same way).
  void SetHostUnknown(bool unknown);
  // Stop accepting new TCP connections (existing ones stay) / accept again. While not
  // accepting, connection attempts are refused: the listening socket is closed, and re-opened
  // on the same port when accepting again.
  void SetAccepting(bool accepting);

  struct State;  // the server's innards, shared with its connections (fake_xmpp_server.cc)

 private:
  explicit FakeXmppServer(std::unique_ptr<State> state);

  std::unique_ptr<State> state_;
};

}  // namespace herald::fakes
