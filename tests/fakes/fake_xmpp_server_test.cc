// Proves the fake XMPP server speaks both sides correctly and that its faults do what they
// say, using a raw Asio client: these are tests of the fake, not of Herald's session.
#include "tests/fakes/fake_xmpp_server.h"

#include <openssl/evp.h>
#include <openssl/ssl.h>

#include <array>
#include <chrono>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "asio.hpp"
#include "asio/ssl.hpp"
#include "component/base/absl_string_view.h"
#include "component/xmpp/scram.h"
#include "component/xmpp/stream_parser.h"
#include "component/xmpp/xml_element.h"
#include "gtest/gtest.h"

namespace herald::fakes {
namespace {

using Side = FakeXmppServerOptions::Side;
using xmpp::XmlElement;

constexpr absl::Duration kTimeout = absl::Seconds(10);
constexpr char kStreamsNs[] = "http://etherx.jabber.org/streams";
constexpr char kStreamErrorsNs[] = "urn:ietf:params:xml:ns:xmpp-streams";
constexpr char kTlsNs[] = "urn:ietf:params:xml:ns:xmpp-tls";
constexpr char kSaslNs[] = "urn:ietf:params:xml:ns:xmpp-sasl";
constexpr char kBindNs[] = "urn:ietf:params:xml:ns:xmpp-bind";

std::string Sha1Hex(std::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_Digest(data.data(), data.size(), digest, &length, EVP_sha1(), nullptr);
  return absl::BytesToHexString(absl::string_view(reinterpret_cast<char*>(digest), length));
}

// A blocking XMPP client over Asio where every read has a deadline, so a misbehaving server
// fails the test instead of hanging it.
class RawClient : private xmpp::StreamParser::Handler {
 public:
  RawClient() : parser_(xmpp::StreamLimits{}, this) {}

  asio::error_code Connect(uint16_t port) {
    asio::error_code ec;
    socket_.connect(asio::ip::tcp::endpoint(asio::ip::address_v4::loopback(), port), ec);
    return ec;
  }

  void Write(std::string_view xml) {
    asio::error_code ec;
    if (tls_) {
      asio::write(*tls_, asio::buffer(xml.data(), xml.size()), ec);
    } else {
      asio::write(socket_, asio::buffer(xml.data(), xml.size()), ec);
    }
    ASSERT_FALSE(ec) << ec.message();
  }

  // Sends a stream header and returns the id of the server's, or "" when none came.
  std::string OpenStream(std::string_view content_xmlns, std::string_view to) {
    stream_id_.reset();
    Write(absl::StrCat("<?xml version='1.0'?><stream:stream xmlns='", AbslView(content_xmlns),
                       "' xmlns:stream='", kStreamsNs, "' to='", AbslView(to), "' version='1.0'>"));
    absl::Time deadline = absl::Now() + kTimeout;
    while (!stream_id_.has_value()) {
      if (!ReadMore(deadline - absl::Now())) return "";
    }
    return *stream_id_;
  }

  // The next top-level element from the server, or nullptr when none came in time.
  std::unique_ptr<XmlElement> NextStanza(absl::Duration timeout = kTimeout) {
    absl::Time deadline = absl::Now() + timeout;
    while (stanzas_.empty()) {
      if (!ReadMore(deadline - absl::Now())) return nullptr;
    }
    std::unique_ptr<XmlElement> stanza = std::move(stanzas_.front());
    stanzas_.pop_front();
    return stanza;
  }

  // True once the server closed the connection (stanzas sent before it stay readable).
  bool WaitForClose() {
    absl::Time deadline = absl::Now() + kTimeout;
    while (!peer_closed_) {
      if (!ReadMore(deadline - absl::Now()) && !peer_closed_) return false;
    }
    return true;
  }

  asio::error_code StartTls(const std::string& ca_file) {
    asio::error_code ec;
    tls_context_.load_verify_file(ca_file, ec);
    if (ec) return ec;
    tls_context_.set_verify_mode(asio::ssl::verify_peer, ec);
    if (ec) return ec;
    tls_ = std::make_unique<asio::ssl::stream<asio::ip::tcp::socket&>>(socket_, tls_context_);
    SSL_set_tlsext_host_name(tls_->native_handle(), "localhost");
    tls_->set_verify_callback(asio::ssl::host_name_verification("localhost"));
    bool done = false;
    tls_->async_handshake(asio::ssl::stream_base::client, [&](asio::error_code e) {
      ec = e;
      done = true;
    });
    RunUntil(done, kTimeout);
    if (!done) return asio::error::timed_out;
    parser_.Reset();
    return ec;
  }

  // The parser is reset when the server starts a new stream (after STARTTLS and SASL).
  void ResetStream() { parser_.Reset(); }
  bool parse_failed() const { return parse_failed_; }

 private:
  void OnStreamOpen(const XmlElement& header, std::string_view) override {
    stream_id_ = std::string(header.Attr("id"));
  }
  void OnStanza(std::unique_ptr<XmlElement> stanza) override {
    stanzas_.push_back(std::move(stanza));
  }
  void OnStreamClose() override {}

  void RunUntil(bool& done, absl::Duration timeout) {
    io_.restart();
    io_.run_for(std::chrono::milliseconds(absl::ToInt64Milliseconds(timeout)));
    if (!done) {
      asio::error_code ignored;
      socket_.cancel(ignored);
      io_.restart();
      io_.run();
    }
  }

  bool ReadMore(absl::Duration timeout) {
    if (peer_closed_ || parse_failed_ || timeout <= absl::ZeroDuration()) return false;
    bool done = false;
    asio::error_code ec;
    size_t n = 0;
    auto handler = [&](asio::error_code e, size_t bytes) {
      ec = e;
      n = bytes;
      done = true;
    };
    if (tls_) {
      tls_->async_read_some(asio::buffer(buffer_), handler);
    } else {
      socket_.async_read_some(asio::buffer(buffer_), handler);
    }
    RunUntil(done, timeout);
    if (!done) return false;
    if (ec) {
      if (ec != asio::error::operation_aborted) peer_closed_ = true;
      return false;
    }
    if (!parser_.Feed(std::string_view(buffer_.data(), n)).ok()) {
      parse_failed_ = true;
      return false;
    }
    return true;
  }

  asio::io_context io_;
  asio::ip::tcp::socket socket_{io_};
  asio::ssl::context tls_context_{asio::ssl::context::tls_client};
  std::unique_ptr<asio::ssl::stream<asio::ip::tcp::socket&>> tls_;
  xmpp::StreamParser parser_;
  std::array<char, 16 * 1024> buffer_;
  std::optional<std::string> stream_id_;
  std::deque<std::unique_ptr<XmlElement>> stanzas_;
  bool peer_closed_ = false;
  bool parse_failed_ = false;
};

std::unique_ptr<FakeXmppServer> StartServer(FakeXmppServerOptions options) {
  absl::StatusOr<std::unique_ptr<FakeXmppServer>> server = FakeXmppServer::Start(options);
  EXPECT_TRUE(server.ok()) << server.status();
  return server.ok() ? *std::move(server) : nullptr;
}

// Opens a component stream and answers the handshake with `secret`; returns the reply.
std::unique_ptr<XmlElement> ComponentHandshake(RawClient& client, const FakeXmppServer& server,
                                               std::string_view secret) {
  EXPECT_FALSE(client.Connect(server.port()));
  std::string id = client.OpenStream("jabber:component:accept", "agent.localhost");
  EXPECT_FALSE(id.empty());
  client.Write(
      absl::StrCat("<handshake>", Sha1Hex(absl::StrCat(id, AbslView(secret))), "</handshake>"));
  return client.NextStanza();
}

bool IsStreamError(const XmlElement* stanza, std::string_view condition) {
  return stanza != nullptr && stanza->name() == "error" && stanza->xmlns() == kStreamsNs &&
         stanza->FindChild(condition, kStreamErrorsNs) != nullptr;
}

TEST(FakeXmppServerTest, AcceptsTheComponentHandshakeMadeWithTheSharedSecret) {
  auto server = StartServer({});
  ASSERT_NE(server, nullptr);
  RawClient client;
  std::unique_ptr<XmlElement> reply = ComponentHandshake(client, *server, "secret");
  ASSERT_NE(reply, nullptr);
  EXPECT_EQ(reply->name(), "handshake");
  EXPECT_TRUE(server->WaitForAuthenticatedSessions(1, kTimeout));
  EXPECT_EQ(server->connections_accepted(), 1);
}

TEST(FakeXmppServerTest, RefusesAComponentHandshakeWithTheWrongSecret) {
  auto server = StartServer({});
  ASSERT_NE(server, nullptr);
  RawClient client;
  std::unique_ptr<XmlElement> reply = ComponentHandshake(client, *server, "wrong");
  EXPECT_TRUE(IsStreamError(reply.get(), "not-authorized"));
  EXPECT_TRUE(client.WaitForClose());
  EXPECT_EQ(server->authenticated_sessions(), 0);
}

TEST(FakeXmppServerTest, RefusesEveryHandshakeWhenToldTo) {
  auto server = StartServer({});
  ASSERT_NE(server, nullptr);
  server->SetRefuseAuthentication(true);
  RawClient client;
  std::unique_ptr<XmlElement> reply = ComponentHandshake(client, *server, "secret");
  EXPECT_TRUE(IsStreamError(reply.get(), "not-authorized"));
  EXPECT_EQ(server->authenticated_sessions(), 0);
}

TEST(FakeXmppServerTest, RefusesTheComponentDomainWithHostUnknownWhenToldTo) {
  auto server = StartServer({});
  ASSERT_NE(server, nullptr);
  server->SetHostUnknown(true);
  RawClient client;
  ASSERT_FALSE(client.Connect(server->port()));
  EXPECT_FALSE(client.OpenStream("jabber:component:accept", "agent.localhost").empty());
  EXPECT_TRUE(IsStreamError(client.NextStanza().get(), "host-unknown"));
  EXPECT_TRUE(client.WaitForClose());
}

TEST(FakeXmppServerTest, NegotiatesStartTlsScramSha256AndBindThenCarriesStanzasBothWays) {
  FakeXmppServerOptions options;
  options.side = Side::kClient;
  auto server = StartServer(options);
  ASSERT_NE(server, nullptr);
  RawClient client;
  ASSERT_FALSE(client.Connect(server->port()));

  ASSERT_FALSE(client.OpenStream("jabber:client", "localhost").empty());
  std::unique_ptr<XmlElement> features = client.NextStanza();
  ASSERT_NE(features, nullptr);
  const XmlElement* starttls = features->FindChild("starttls", kTlsNs);
  ASSERT_NE(starttls, nullptr);
  EXPECT_NE(starttls->FindChild("required"), nullptr);
  EXPECT_EQ(features->FindChild("mechanisms", kSaslNs), nullptr);  // no SASL before TLS
  client.Write("<starttls xmlns='urn:ietf:params:xml:ns:xmpp-tls'/>");
  std::unique_ptr<XmlElement> proceed = client.NextStanza();
  ASSERT_NE(proceed, nullptr);
  EXPECT_EQ(proceed->name(), "proceed");
  ASSERT_FALSE(client.StartTls(server->certificate_path()));

  ASSERT_FALSE(client.OpenStream("jabber:client", "localhost").empty());
  features = client.NextStanza();
  ASSERT_NE(features, nullptr);
  const XmlElement* mechanisms = features->FindChild("mechanisms", kSaslNs);
  ASSERT_NE(mechanisms, nullptr);
  std::vector<std::string> offered;
  for (const xmpp::XmlNode& node : mechanisms->children()) {
    if (node.element != nullptr) offered.push_back(node.element->Text());
  }
  EXPECT_EQ(offered, (std::vector<std::string>{"SCRAM-SHA-256", "SCRAM-SHA-1", "PLAIN"}));

  absl::StatusOr<xmpp::ScramClient> scram =
      xmpp::ScramClient::Create(xmpp::ScramHash::kSha256, "bot", "pencil");
  ASSERT_TRUE(scram.ok()) << scram.status();
  client.Write(absl::StrCat("<auth xmlns='", kSaslNs, "' mechanism='SCRAM-SHA-256'>",
                            absl::Base64Escape(scram->ClientFirstMessage()), "</auth>"));
  std::unique_ptr<XmlElement> challenge = client.NextStanza();
  ASSERT_NE(challenge, nullptr);
  ASSERT_EQ(challenge->name(), "challenge");
  std::string server_first;
  ASSERT_TRUE(absl::Base64Unescape(challenge->Text(), &server_first));
  absl::StatusOr<std::string> client_final = scram->ClientFinalMessage(server_first);
  ASSERT_TRUE(client_final.ok()) << client_final.status();
  client.Write(absl::StrCat("<response xmlns='", kSaslNs, "'>", absl::Base64Escape(*client_final),
                            "</response>"));
  std::unique_ptr<XmlElement> success = client.NextStanza();
  ASSERT_NE(success, nullptr);
  ASSERT_EQ(success->name(), "success");
  std::string server_final;
  ASSERT_TRUE(absl::Base64Unescape(success->Text(), &server_final));
  EXPECT_TRUE(scram->VerifyServerFinal(server_final).ok());

  client.ResetStream();
  ASSERT_FALSE(client.OpenStream("jabber:client", "localhost").empty());
  features = client.NextStanza();
  ASSERT_NE(features, nullptr);
  EXPECT_NE(features->FindChild("bind", kBindNs), nullptr);
  client.Write(
      "<iq type='set' id='b1'><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'>"
      "<resource>herald</resource></bind></iq>");
  std::unique_ptr<XmlElement> bound = client.NextStanza();
  ASSERT_NE(bound, nullptr);
  EXPECT_EQ(bound->Attr("type"), "result");
  const XmlElement* bind = bound->FindChild("bind", kBindNs);
  ASSERT_NE(bind, nullptr);
  EXPECT_EQ(bind->ChildText("jid"), "bot@localhost/herald");
  EXPECT_TRUE(server->WaitForAuthenticatedSessions(1, kTimeout));
  EXPECT_EQ(server->bound_jid(), "bot@localhost/herald");

  client.Write("<iq type='get' id='r1'><query xmlns='jabber:iq:roster'/></iq>");
  std::unique_ptr<XmlElement> roster = client.NextStanza();
  ASSERT_NE(roster, nullptr);
  EXPECT_EQ(roster->Attr("id"), "r1");
  EXPECT_EQ(roster->Attr("type"), "result");
  EXPECT_NE(roster->FindChild("query", "jabber:iq:roster"), nullptr);

  client.Write("<message to='alice@localhost' type='chat'><body>hello</body></message>");
  std::unique_ptr<XmlElement> message =
      server->WaitForStanza([](const XmlElement& s) { return s.name() == "message"; }, kTimeout);
  ASSERT_NE(message, nullptr);
  EXPECT_EQ(message->ChildText("body"), "hello");
  EXPECT_EQ(server->WaitForStanza([](const XmlElement& s) { return s.name() == "message"; },
                                  absl::ZeroDuration()),
            nullptr);  // returned once only

  ASSERT_TRUE(
      server->Send("<message from='alice@localhost/pc' type='chat'><body>hi</body>"
                   "</message>"));
  std::unique_ptr<XmlElement> incoming = client.NextStanza();
  ASSERT_NE(incoming, nullptr);
  EXPECT_EQ(incoming->ChildText("body"), "hi");
}

TEST(FakeXmppServerTest, RefusesSaslInClearTextWhenStartTlsIsRequired) {
  FakeXmppServerOptions options;
  options.side = Side::kClient;
  auto server = StartServer(options);
  ASSERT_NE(server, nullptr);
  RawClient client;
  ASSERT_FALSE(client.Connect(server->port()));
  ASSERT_FALSE(client.OpenStream("jabber:client", "localhost").empty());
  ASSERT_NE(client.NextStanza(), nullptr);  // features
  client.Write(absl::StrCat("<auth xmlns='", kSaslNs, "' mechanism='PLAIN'>",
                            absl::Base64Escape(std::string("\0bot\0pencil", 11)), "</auth>"));
  std::unique_ptr<XmlElement> failure = client.NextStanza();
  ASSERT_NE(failure, nullptr);
  EXPECT_EQ(failure->name(), "failure");
  EXPECT_NE(failure->FindChild("encryption-required"), nullptr);
}

TEST(FakeXmppServerTest, AnswersPingsAndCountsWhitespaceKeepalives) {
  auto server = StartServer({});
  ASSERT_NE(server, nullptr);
  RawClient client;
  ASSERT_NE(ComponentHandshake(client, *server, "secret"), nullptr);
  client.Write(" ");
  EXPECT_TRUE(server->WaitForWhitespaceKeepalives(1, kTimeout));
  client.Write(
      "<iq type='get' id='p1' from='agent.localhost' to='localhost'>"
      "<ping xmlns='urn:xmpp:ping'/></iq>");
  std::unique_ptr<XmlElement> pong = client.NextStanza();
  ASSERT_NE(pong, nullptr);
  EXPECT_EQ(pong->Attr("type"), "result");
  EXPECT_EQ(pong->Attr("id"), "p1");
  EXPECT_EQ(pong->Attr("to"), "agent.localhost");
}

TEST(FakeXmppServerTest, AnswersServiceDiscoveryForTheServicesItIsGiven) {
  FakeXmppServerOptions options;
  options.disco_entities = {{.jid = "upload.localhost",
                             .features = {"urn:xmpp:http:upload:0"},
                             .form_type = "urn:xmpp:http:upload:0",
                             .form_fields = {{"max-file-size", "1024"}}}};
  auto server = StartServer(options);
  ASSERT_NE(server, nullptr);
  RawClient client;
  ASSERT_NE(ComponentHandshake(client, *server, "secret"), nullptr);
  client.Write(
      "<iq type='get' id='i1' from='agent.localhost' to='localhost'>"
      "<query xmlns='http://jabber.org/protocol/disco#items'/></iq>");
  std::unique_ptr<XmlElement> items = client.NextStanza();
  ASSERT_NE(items, nullptr);
  EXPECT_EQ(items->Attr("id"), "i1");
  EXPECT_EQ(items->Attr("to"), "agent.localhost");
  const XmlElement* list = items->FindChild("query", "http://jabber.org/protocol/disco#items");
  ASSERT_NE(list, nullptr);
  const XmlElement* item = list->FindChild("item");
  ASSERT_NE(item, nullptr);
  EXPECT_EQ(item->Attr("jid"), "upload.localhost");

  client.Write(
      "<iq type='get' id='i2' from='agent.localhost' to='upload.localhost'>"
      "<query xmlns='http://jabber.org/protocol/disco#info'/></iq>");
  std::unique_ptr<XmlElement> info = client.NextStanza();
  ASSERT_NE(info, nullptr);
  EXPECT_EQ(info->Attr("id"), "i2");
  EXPECT_EQ(info->Attr("from"), "upload.localhost");
  const XmlElement* query = info->FindChild("query", "http://jabber.org/protocol/disco#info");
  ASSERT_NE(query, nullptr);
  ASSERT_NE(query->FindChild("identity"), nullptr);
  EXPECT_EQ(query->FindChild("identity")->Attr("category"), "store");
  ASSERT_NE(query->FindChild("feature"), nullptr);
  EXPECT_EQ(query->FindChild("feature")->Attr("var"), "urn:xmpp:http:upload:0");
  const XmlElement* form = query->FindChild("x", "jabber:x:data");
  ASSERT_NE(form, nullptr);
  std::vector<std::string> fields;
  for (const xmpp::XmlNode& node : form->children()) {
    if (node.element == nullptr) continue;
    fields.push_back(
        absl::StrCat(AbslView(node.element->Attr("var")), "=", node.element->ChildText("value")));
  }
  EXPECT_EQ(fields,
            (std::vector<std::string>{"FORM_TYPE=urn:xmpp:http:upload:0", "max-file-size=1024"}));
  // The server's own disco#info, which no entity describes, gets the empty result as before.
  client.Write(
      "<iq type='get' id='i3' from='agent.localhost' to='localhost'>"
      "<query xmlns='http://jabber.org/protocol/disco#info'/></iq>");
  std::unique_ptr<XmlElement> own = client.NextStanza();
  ASSERT_NE(own, nullptr);
  EXPECT_EQ(own->Attr("id"), "i3");
  EXPECT_EQ(own->Attr("type"), "result");
  EXPECT_EQ(own->FirstChildElement(), nullptr);
}

TEST(FakeXmppServerTest, StalledConnectionAnswersOnlyOnceResumed) {
  auto server = StartServer({});
  ASSERT_NE(server, nullptr);
  RawClient client;
  ASSERT_NE(ComponentHandshake(client, *server, "secret"), nullptr);
  server->SetStalled(true);
  client.Write("<iq type='get' id='p2' to='localhost'><ping xmlns='urn:xmpp:ping'/></iq>");
  EXPECT_EQ(client.NextStanza(absl::Milliseconds(300)), nullptr);
  server->SetStalled(false);
  std::unique_ptr<XmlElement> pong = client.NextStanza();
  ASSERT_NE(pong, nullptr);
  EXPECT_EQ(pong->Attr("id"), "p2");
}

TEST(FakeXmppServerTest, SendGarbageBreaksTheClientsParser) {
  auto server = StartServer({});
  ASSERT_NE(server, nullptr);
  RawClient client;
  ASSERT_NE(ComponentHandshake(client, *server, "secret"), nullptr);
  server->SendGarbage();
  EXPECT_EQ(client.NextStanza(), nullptr);
  EXPECT_TRUE(client.parse_failed());
}

TEST(FakeXmppServerTest, DropConnectionClosesTheSocket) {
  auto server = StartServer({});
  ASSERT_NE(server, nullptr);
  RawClient client;
  ASSERT_NE(ComponentHandshake(client, *server, "secret"), nullptr);
  server->DropConnection();
  EXPECT_TRUE(client.WaitForClose());
  EXPECT_TRUE(server->WaitForOpenConnections(0, kTimeout));
  EXPECT_FALSE(server->Send("<message/>"));
}

TEST(FakeXmppServerTest, RefusesConnectionsWhileNotAcceptingAndAcceptsAgainOnTheSamePort) {
  auto server = StartServer({});
  ASSERT_NE(server, nullptr);
  uint16_t port = server->port();
  RawClient before;
  ASSERT_NE(ComponentHandshake(before, *server, "secret"), nullptr);

  server->SetAccepting(false);
  RawClient refused;
  EXPECT_EQ(refused.Connect(port), asio::error::connection_refused);
  EXPECT_EQ(server->open_connections(), 1);  // the existing connection stays

  server->SetAccepting(true);
  EXPECT_EQ(server->port(), port);
  RawClient after;
  ASSERT_NE(ComponentHandshake(after, *server, "secret"), nullptr);
  EXPECT_TRUE(server->WaitForAuthenticatedSessions(2, kTimeout));
  EXPECT_EQ(server->connections_accepted(), 2);
}

}  // namespace
}  // namespace herald::fakes
