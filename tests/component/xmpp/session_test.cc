// Integration tests of XmppSession against the in-process fake server: both connection
// modes, the IQs every entity answers, reconnects, keepalives and permanent failures.
#include "component/xmpp/session.h"

#include <asio.hpp>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "component/xmpp/namespaces.h"
#include "component/xmpp/session_error.h"
#include "gtest/gtest.h"
#include "tests/fakes/fake_xmpp_server.h"

namespace herald::xmpp {
namespace {

using fakes::FakeXmppServer;
using fakes::FakeXmppServerOptions;

constexpr absl::Duration kWait = absl::Seconds(10);

// Runs one XmppSession on its own I/O thread and records what it reports.
class SessionUnderTest {
 public:
  explicit SessionUnderTest(SessionOptions options) {
    absl::StatusOr<std::unique_ptr<XmppSession>> session = XmppSession::Create(
        io_, std::move(options),
        [this](InboundEvent event) {
          absl::MutexLock lock(&mu_);
          events_.push_back(std::move(event));
        },
        [this](const absl::Status& status) {
          absl::MutexLock lock(&mu_);
          stopped_ = status;
        });
    EXPECT_TRUE(session.ok()) << session.status();
    session_ = *std::move(session);
    asio::post(io_, [this] { session_->Start(); });
    thread_ = std::thread([this] {
      auto guard = asio::make_work_guard(io_);
      io_.run();
    });
  }

  ~SessionUnderTest() {
    asio::post(io_, [this] { session_->Stop(); });
    WaitForStop();
    io_.stop();
    thread_.join();
  }

  void Perform(OutboundAction action) {
    asio::post(io_, [this, action = std::move(action)]() mutable {
      session_->Perform(std::move(action));
    });
  }

  void Stop() {
    asio::post(io_, [this] { session_->Stop(); });
  }

  // The status the session stopped with, once it has.
  std::optional<absl::Status> WaitForStop(absl::Duration timeout = kWait) {
    absl::MutexLock lock(&mu_);
    mu_.AwaitWithTimeout(
        absl::Condition(
            +[](std::optional<absl::Status>* s) { return s->has_value(); }, &stopped_),
        timeout);
    return stopped_;
  }

  // Waits for an event of type T and returns a copy of the first one not yet taken.
  template <typename T>
  std::optional<T> WaitForEvent(absl::Duration timeout = kWait) {
    absl::MutexLock lock(&mu_);
    auto has_event = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      for (const InboundEvent& event : events_) {
        if (std::holds_alternative<T>(event)) return true;
      }
      return false;
    };
    if (!mu_.AwaitWithTimeout(absl::Condition(&has_event), timeout)) return std::nullopt;
    for (auto it = events_.begin(); it != events_.end(); ++it) {
      if (T* event = std::get_if<T>(&*it)) {
        T copy = *event;
        events_.erase(it);
        return copy;
      }
    }
    return std::nullopt;
  }

  int ConnectionsEstablished() {
    std::promise<int> count;
    asio::post(io_, [&] { count.set_value(session_->connections_established()); });
    return count.get_future().get();
  }

 private:
  asio::io_context io_;
  std::unique_ptr<XmppSession> session_;
  std::thread thread_;
  absl::Mutex mu_;
  std::vector<InboundEvent> events_ ABSL_GUARDED_BY(mu_);
  std::optional<absl::Status> stopped_ ABSL_GUARDED_BY(mu_);
};

SessionOptions ComponentOptions(const FakeXmppServer& server) {
  SessionOptions options;
  options.mode = SessionMode::kComponent;
  options.port = server.port();
  options.component_domain = "agent.localhost";
  options.component_secret = "secret";
  options.server_domain = "localhost";
  options.reconnect_initial = absl::Milliseconds(50);
  options.reconnect_max = absl::Milliseconds(200);
  options.identity = {.category = "component", .type = "generic", .name = "Herald"};
  options.version = "9.9.9";
  return options;
}

SessionOptions ClientOptions(const FakeXmppServer& server) {
  SessionOptions options;
  options.mode = SessionMode::kClient;
  options.port = server.port();
  options.account = Jid::Parse("bot@localhost").value();
  options.password = "pencil";
  options.resource = "herald";
  options.tls_ca_file = server.certificate_path();
  options.reconnect_initial = absl::Milliseconds(50);
  options.reconnect_max = absl::Milliseconds(200);
  options.identity = {.category = "client", .type = "bot", .name = "Herald"};
  options.version = "9.9.9";
  return options;
}

std::unique_ptr<FakeXmppServer> StartServer(FakeXmppServerOptions options = {}) {
  absl::StatusOr<std::unique_ptr<FakeXmppServer>> server = FakeXmppServer::Start(options);
  EXPECT_TRUE(server.ok()) << server.status();
  return *std::move(server);
}

std::unique_ptr<FakeXmppServer> StartClientServer(FakeXmppServerOptions options = {}) {
  options.side = FakeXmppServerOptions::Side::kClient;
  return StartServer(std::move(options));
}

auto IqWithId(std::string id) {
  return [id](const XmlElement& s) { return s.name() == "iq" && s.Attr("id") == id; };
}

auto MessageWithBody(std::string body) {
  return
      [body](const XmlElement& s) { return s.name() == "message" && s.ChildText("body") == body; };
}

// --- Component mode ------------------------------------------------------------------------

TEST(SessionTest, ComponentCompletesTheHandshakeAndGoesOnline) {
  auto server = StartServer();
  SessionUnderTest session(ComponentOptions(*server));
  ASSERT_TRUE(server->WaitForAuthenticatedSessions(1, kWait));
  std::optional<SessionOnline> online = session.WaitForEvent<SessionOnline>();
  ASSERT_TRUE(online.has_value());
  EXPECT_EQ(online->own_jid.ToString(), "agent.localhost");
}

TEST(SessionTest, ComponentAnswersDiscoInfoWithItsIdentityAndFeatures) {
  auto server = StartServer();
  SessionUnderTest session(ComponentOptions(*server));
  ASSERT_TRUE(server->WaitForAuthenticatedSessions(1, kWait));
  server->Send(
      "<iq type='get' id='d1' from='alice@localhost/pc' to='agent.localhost'>"
      "<query xmlns='http://jabber.org/protocol/disco#info'/></iq>");
  auto reply = server->WaitForStanza(IqWithId("d1"), kWait);
  ASSERT_NE(reply, nullptr);
  EXPECT_EQ(reply->Attr("type"), "result");
  EXPECT_EQ(reply->Attr("from"), "agent.localhost");
  EXPECT_EQ(reply->Attr("to"), "alice@localhost/pc");
  const XmlElement* query = reply->FindChild("query", ns::kDiscoInfo);
  ASSERT_NE(query, nullptr);
  const XmlElement* identity = query->FindChild("identity", ns::kDiscoInfo);
  ASSERT_NE(identity, nullptr);
  EXPECT_EQ(identity->Attr("category"), "component");
  EXPECT_EQ(identity->Attr("type"), "generic");
  std::vector<std::string> features;
  for (const XmlNode& node : query->children()) {
    if (node.element && node.element->name() == "feature") {
      features.emplace_back(node.element->Attr("var"));
    }
  }
  EXPECT_NE(std::find(features.begin(), features.end(), ns::kPing), features.end());
  EXPECT_NE(std::find(features.begin(), features.end(), ns::kVersion), features.end());
}

TEST(SessionTest, ComponentAnswersPingVersionAndItemsButRefusesUnknownRequests) {
  auto server = StartServer();
  SessionUnderTest session(ComponentOptions(*server));
  ASSERT_TRUE(server->WaitForAuthenticatedSessions(1, kWait));
  server->Send(
      "<iq type='get' id='p1' from='alice@localhost/pc' to='agent.localhost'>"
      "<ping xmlns='urn:xmpp:ping'/></iq>"
      "<iq type='get' id='v1' from='alice@localhost/pc' to='agent.localhost'>"
      "<query xmlns='jabber:iq:version'/></iq>"
      "<iq type='get' id='i1' from='alice@localhost/pc' to='agent.localhost'>"
      "<query xmlns='http://jabber.org/protocol/disco#items'/></iq>"
      "<iq type='set' id='u1' from='alice@localhost/pc' to='agent.localhost'>"
      "<vcard xmlns='vcard-temp'/></iq>");
  auto ping = server->WaitForStanza(IqWithId("p1"), kWait);
  ASSERT_NE(ping, nullptr);
  EXPECT_EQ(ping->Attr("type"), "result");

  auto version = server->WaitForStanza(IqWithId("v1"), kWait);
  ASSERT_NE(version, nullptr);
  const XmlElement* query = version->FindChild("query", ns::kVersion);
  ASSERT_NE(query, nullptr);
  EXPECT_EQ(query->ChildText("name"), "Herald");
  EXPECT_EQ(query->ChildText("version"), "9.9.9");

  auto items = server->WaitForStanza(IqWithId("i1"), kWait);
  ASSERT_NE(items, nullptr);
  EXPECT_EQ(items->Attr("type"), "result");

  auto unknown = server->WaitForStanza(IqWithId("u1"), kWait);
  ASSERT_NE(unknown, nullptr);
  EXPECT_EQ(unknown->Attr("type"), "error");
  const XmlElement* error = unknown->FindChild("error");
  ASSERT_NE(error, nullptr);
  EXPECT_NE(error->FindChild("service-unavailable", ns::kStanzaErrors), nullptr);
}

TEST(SessionTest, NeverAnswersAnErrorOrAResult) {
  auto server = StartServer();
  SessionUnderTest session(ComponentOptions(*server));
  ASSERT_TRUE(server->WaitForAuthenticatedSessions(1, kWait));
  server->Send(
      "<iq type='error' id='e1' from='alice@localhost/pc' to='agent.localhost'>"
      "<error type='cancel'><item-not-found xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/>"
      "</error></iq>"
      "<iq type='result' id='r1' from='alice@localhost/pc' to='agent.localhost'/>"
      "<message type='error' id='m1' from='alice@localhost/pc' to='agent.localhost'>"
      "<body>bounce</body></message>"
      "<iq type='get' id='after' from='alice@localhost/pc' to='agent.localhost'>"
      "<ping xmlns='urn:xmpp:ping'/></iq>");
  // The ping sent last is answered, so everything before it has been handled.
  ASSERT_NE(server->WaitForStanza(IqWithId("after"), kWait), nullptr);
  EXPECT_EQ(server->WaitForStanza(IqWithId("e1"), absl::ZeroDuration()), nullptr);
  EXPECT_EQ(server->WaitForStanza(IqWithId("r1"), absl::ZeroDuration()), nullptr);
  EXPECT_EQ(server->WaitForStanza([](const XmlElement& s) { return s.name() == "message"; },
                                  absl::ZeroDuration()),
            nullptr);
  EXPECT_FALSE(session.WaitForEvent<ChatMessage>(absl::ZeroDuration()).has_value());
}

TEST(SessionTest, DeliversAChatMessageAndSendsTheReplyFromTheComponentDomain) {
  auto server = StartServer();
  SessionUnderTest session(ComponentOptions(*server));
  ASSERT_TRUE(server->WaitForAuthenticatedSessions(1, kWait));
  server->Send(
      "<message type='chat' id='m1' from='alice@localhost/pc' to='agent.localhost'>"
      "<body>/ping &amp; more</body><thread>t-1</thread></message>");
  std::optional<ChatMessage> message = session.WaitForEvent<ChatMessage>();
  ASSERT_TRUE(message.has_value());
  EXPECT_EQ(message->from.ToString(), "alice@localhost/pc");
  EXPECT_EQ(message->body, "/ping & more");
  EXPECT_EQ(message->thread, "t-1");
  EXPECT_EQ(message->type, "chat");

  session.Perform(SendMessage{.to = message->from, .body = "pong <&>", .thread = "t-1"});
  auto reply = server->WaitForStanza(MessageWithBody("pong <&>"), kWait);
  ASSERT_NE(reply, nullptr);
  EXPECT_EQ(reply->Attr("from"), "agent.localhost");
  EXPECT_EQ(reply->Attr("to"), "alice@localhost/pc");
  EXPECT_EQ(reply->Attr("type"), "chat");
  EXPECT_EQ(reply->ChildText("thread"), "t-1");
}

TEST(SessionTest, IgnoresAMessageWhoseSenderIsNotAValidJid) {
  auto server = StartServer();
  SessionUnderTest session(ComponentOptions(*server));
  ASSERT_TRUE(server->WaitForAuthenticatedSessions(1, kWait));
  server->Send(
      "<message type='chat' from='a@b@c' to='agent.localhost'><body>x</body></message>"
      "<message type='chat' from='alice@localhost/pc' to='agent.localhost'><body>y</body>"
      "</message>");
  std::optional<ChatMessage> message = session.WaitForEvent<ChatMessage>();
  ASSERT_TRUE(message.has_value());
  EXPECT_EQ(message->body, "y");
}

TEST(SessionTest, AWrongSecretStopsForGoodWithTheAuthenticationExitStatus) {
  auto server = StartServer();
  server->SetRefuseAuthentication(true);
  SessionUnderTest session(ComponentOptions(*server));
  std::optional<absl::Status> stopped = session.WaitForStop();
  ASSERT_TRUE(stopped.has_value());
  EXPECT_TRUE(IsPermanent(*stopped));
  EXPECT_EQ(ExitCodeFor(*stopped), kExitAuthentication);
  EXPECT_NE(stopped->message().find("secret"), absl::string_view::npos);
  EXPECT_NE(stopped->message().find("not-authorized"), absl::string_view::npos);
  EXPECT_EQ(server->connections_accepted(), 1);
}

TEST(SessionTest, AnUnknownComponentDomainStopsWithTheHostUnknownExitStatus) {
  auto server = StartServer();
  server->SetHostUnknown(true);
  SessionUnderTest session(ComponentOptions(*server));
  std::optional<absl::Status> stopped = session.WaitForStop();
  ASSERT_TRUE(stopped.has_value());
  EXPECT_EQ(ExitCodeFor(*stopped), kExitHostUnknown);
  EXPECT_NE(stopped->message().find("host-unknown"), absl::string_view::npos);
}

TEST(SessionTest, AConflictStreamErrorStopsWithTheConflictExitStatus) {
  auto server = StartServer();
  SessionUnderTest session(ComponentOptions(*server));
  ASSERT_TRUE(server->WaitForAuthenticatedSessions(1, kWait));
  server->SendStreamError("conflict");
  std::optional<absl::Status> stopped = session.WaitForStop();
  ASSERT_TRUE(stopped.has_value());
  EXPECT_EQ(ExitCodeFor(*stopped), kExitConflict);
}

TEST(SessionTest, ReconnectsAfterTheServerShutsTheStreamDown) {
  auto server = StartServer();
  SessionUnderTest session(ComponentOptions(*server));
  ASSERT_TRUE(server->WaitForAuthenticatedSessions(1, kWait));
  server->SendStreamError("system-shutdown");
  ASSERT_TRUE(server->WaitForAuthenticatedSessions(2, kWait));
  EXPECT_FALSE(session.WaitForStop(absl::ZeroDuration()).has_value());
}

TEST(SessionTest, ReconnectsAfterTheConnectionDrops) {
  auto server = StartServer();
  SessionUnderTest session(ComponentOptions(*server));
  ASSERT_TRUE(server->WaitForAuthenticatedSessions(1, kWait));
  server->DropConnection();
  ASSERT_TRUE(server->WaitForAuthenticatedSessions(2, kWait));
  server->Send(
      "<iq type='get' id='p2' from='alice@localhost/pc' to='agent.localhost'>"
      "<ping xmlns='urn:xmpp:ping'/></iq>");
  EXPECT_NE(server->WaitForStanza(IqWithId("p2"), kWait), nullptr);
}

TEST(SessionTest, ReconnectsAfterTheServerSendsGarbage) {
  auto server = StartServer();
  SessionUnderTest session(ComponentOptions(*server));
  ASSERT_TRUE(server->WaitForAuthenticatedSessions(1, kWait));
  server->SendGarbage();
  ASSERT_TRUE(server->WaitForAuthenticatedSessions(2, kWait));
}

TEST(SessionTest, KeepsRetryingWhileTheServerIsDownAndComesBackByItself) {
  auto server = StartServer();
  SessionUnderTest session(ComponentOptions(*server));
  ASSERT_TRUE(server->WaitForAuthenticatedSessions(1, kWait));
  server->SetAccepting(false);
  server->DropConnection();
  ASSERT_TRUE(server->WaitForOpenConnections(0, kWait));
  absl::SleepFor(absl::Milliseconds(600));  // several refused attempts at 50–200 ms backoff
  server->SetAccepting(true);
  ASSERT_TRUE(server->WaitForAuthenticatedSessions(2, kWait));
}

TEST(SessionTest, StanzasQueuedDuringAnOutageAreSentInOrderAfterTheReconnect) {
  auto server = StartServer();
  SessionUnderTest session(ComponentOptions(*server));
  ASSERT_TRUE(server->WaitForAuthenticatedSessions(1, kWait));
  server->SetAccepting(false);
  server->DropConnection();
  ASSERT_TRUE(server->WaitForOpenConnections(0, kWait));
  const Jid alice = Jid::Parse("alice@localhost").value();
  for (const char* body : {"one", "two", "three"}) {
    session.Perform(SendMessage{.to = alice, .body = body});
  }
  server->SetAccepting(true);
  ASSERT_TRUE(server->WaitForAuthenticatedSessions(2, kWait));
  std::vector<std::string> received;
  for (int i = 0; i < 3; ++i) {
    auto message =
        server->WaitForStanza([](const XmlElement& s) { return s.name() == "message"; }, kWait);
    ASSERT_NE(message, nullptr);
    received.push_back(message->ChildText("body"));
  }
  EXPECT_EQ(received, (std::vector<std::string>{"one", "two", "three"}));
}

TEST(SessionTest, AnUnansweredKeepalivePingForcesAReconnect) {
  auto server = StartServer();
  SessionOptions options = ComponentOptions(*server);
  options.ping_interval = absl::Seconds(1);
  options.ping_timeout = absl::Seconds(1);
  SessionUnderTest session(options);
  ASSERT_TRUE(server->WaitForAuthenticatedSessions(1, kWait));
  ASSERT_TRUE(session.WaitForEvent<SessionOnline>().has_value());
  server->SetStalled(true);
  ASSERT_TRUE(server->WaitForAuthenticatedSessions(2, kWait));
  // The session itself came back online on the new connection.
  ASSERT_TRUE(session.WaitForEvent<SessionOnline>().has_value());
  EXPECT_EQ(session.ConnectionsEstablished(), 2);
}

TEST(SessionTest, SendsKeepalivePingsToTheServerDomain) {
  auto server = StartServer();
  SessionOptions options = ComponentOptions(*server);
  options.ping_interval = absl::Seconds(1);
  SessionUnderTest session(options);
  ASSERT_TRUE(server->WaitForAuthenticatedSessions(1, kWait));
  auto ping = server->WaitForStanza(
      [](const XmlElement& s) {
        return s.name() == "iq" && s.FindChild("ping", ns::kPing) != nullptr;
      },
      kWait);
  ASSERT_NE(ping, nullptr);
  EXPECT_EQ(ping->Attr("to"), "localhost");
  EXPECT_EQ(ping->Attr("from"), "agent.localhost");
  EXPECT_EQ(ping->Attr("type"), "get");
}

TEST(SessionTest, SendsWhitespaceKeepalivesWhenIdle) {
  auto server = StartServer();
  SessionOptions options = ComponentOptions(*server);
  options.whitespace_keepalive = absl::Seconds(1);
  SessionUnderTest session(options);
  ASSERT_TRUE(server->WaitForAuthenticatedSessions(1, kWait));
  EXPECT_TRUE(server->WaitForWhitespaceKeepalives(1, kWait));
}

TEST(SessionTest, StopClosesTheStreamAndReportsOk) {
  auto server = StartServer();
  SessionUnderTest session(ComponentOptions(*server));
  ASSERT_TRUE(session.WaitForEvent<SessionOnline>().has_value());
  session.Perform(SendMessage{.to = Jid::Parse("alice@localhost").value(), .body = "bye"});
  session.Stop();
  std::optional<absl::Status> stopped = session.WaitForStop();
  ASSERT_TRUE(stopped.has_value());
  EXPECT_TRUE(stopped->ok()) << *stopped;
  // What was queued before Stop is flushed, not lost.
  EXPECT_NE(server->WaitForStanza(MessageWithBody("bye"), kWait), nullptr);
  EXPECT_TRUE(server->WaitForOpenConnections(0, kWait));
}

// --- Client mode ---------------------------------------------------------------------------

TEST(SessionTest, ClientNegotiatesStartTlsScramSha256AndBindsItsResource) {
  auto server = StartClientServer();
  SessionUnderTest session(ClientOptions(*server));
  ASSERT_TRUE(server->WaitForAuthenticatedSessions(1, kWait));
  EXPECT_EQ(server->bound_jid(), "bot@localhost/herald");
  std::optional<SessionOnline> online = session.WaitForEvent<SessionOnline>();
  ASSERT_TRUE(online.has_value());
  EXPECT_EQ(online->own_jid.ToString(), "bot@localhost/herald");
}

TEST(SessionTest, ClientFetchesTheRosterThenSendsInitialPresence) {
  auto server = StartClientServer();
  SessionUnderTest session(ClientOptions(*server));
  ASSERT_TRUE(server->WaitForAuthenticatedSessions(1, kWait));
  EXPECT_TRUE(session.WaitForEvent<RosterReceived>().has_value());
  auto presence = server->WaitForStanza(
      [](const XmlElement& s) { return s.name() == "presence" && !s.HasAttr("type"); }, kWait);
  EXPECT_NE(presence, nullptr);
}

TEST(SessionTest, ClientAuthenticatesWithScramSha1WhenThatIsAllTheServerOffers) {
  FakeXmppServerOptions options;
  options.mechanisms = {"SCRAM-SHA-1"};
  auto server = StartClientServer(options);
  SessionUnderTest session(ClientOptions(*server));
  EXPECT_TRUE(server->WaitForAuthenticatedSessions(1, kWait));
}

TEST(SessionTest, ClientUsesPlainOnlyOverTls) {
  FakeXmppServerOptions options;
  options.mechanisms = {"PLAIN"};
  auto server = StartClientServer(options);
  SessionUnderTest session(ClientOptions(*server));
  EXPECT_TRUE(server->WaitForAuthenticatedSessions(1, kWait));
}

TEST(SessionTest, ClientRefusesPlainWithoutTls) {
  FakeXmppServerOptions server_options;
  server_options.mechanisms = {"PLAIN"};
  server_options.offer_plain_in_clear = true;
  server_options.offer_starttls = false;
  server_options.require_starttls = false;
  auto server = StartClientServer(server_options);
  SessionOptions options = ClientOptions(*server);
  options.starttls_required = false;
  SessionUnderTest session(options);
  std::optional<absl::Status> stopped = session.WaitForStop();
  ASSERT_TRUE(stopped.has_value());
  EXPECT_EQ(ExitCodeFor(*stopped), kExitAuthentication);
  EXPECT_NE(stopped->message().find("PLAIN"), absl::string_view::npos);
  EXPECT_EQ(server->authenticated_sessions(), 0);
}

TEST(SessionTest, ClientRefusesAServerWithoutStartTlsWhenTlsIsRequired) {
  FakeXmppServerOptions server_options;
  server_options.offer_starttls = false;
  server_options.require_starttls = false;
  auto server = StartClientServer(server_options);
  SessionUnderTest session(ClientOptions(*server));
  std::optional<absl::Status> stopped = session.WaitForStop();
  ASSERT_TRUE(stopped.has_value());
  EXPECT_EQ(ExitCodeFor(*stopped), kExitTls);
  EXPECT_EQ(server->authenticated_sessions(), 0);
}

TEST(SessionTest, ClientRefusesACertificateItCannotVerify) {
  auto server = StartClientServer();
  SessionOptions options = ClientOptions(*server);
  options.tls_ca_file = "";  // the system trust store does not know the fake's certificate
  SessionUnderTest session(options);
  std::optional<absl::Status> stopped = session.WaitForStop();
  ASSERT_TRUE(stopped.has_value());
  EXPECT_EQ(ExitCodeFor(*stopped), kExitTls);
  EXPECT_NE(stopped->message().find("certificate"), absl::string_view::npos);
  EXPECT_EQ(server->authenticated_sessions(), 0);
}

TEST(SessionTest, ClientStopsForGoodWhenThePasswordIsRefused) {
  auto server = StartClientServer();
  SessionOptions options = ClientOptions(*server);
  options.password = "wrong";
  SessionUnderTest session(options);
  std::optional<absl::Status> stopped = session.WaitForStop();
  ASSERT_TRUE(stopped.has_value());
  EXPECT_EQ(ExitCodeFor(*stopped), kExitAuthentication);
  EXPECT_EQ(server->connections_accepted(), 1);
}

TEST(SessionTest, ClientReportsASubscriptionRequest) {
  auto server = StartClientServer();
  SessionUnderTest session(ClientOptions(*server));
  ASSERT_TRUE(server->WaitForAuthenticatedSessions(1, kWait));
  server->Send("<presence type='subscribe' from='alice@localhost' to='bot@localhost'/>");
  std::optional<SubscriptionRequest> request = session.WaitForEvent<SubscriptionRequest>();
  ASSERT_TRUE(request.has_value());
  EXPECT_EQ(request->from.ToString(), "alice@localhost");
}

TEST(SessionTest, ClientReconnectsAfterTheConnectionDrops) {
  auto server = StartClientServer();
  SessionUnderTest session(ClientOptions(*server));
  ASSERT_TRUE(server->WaitForAuthenticatedSessions(1, kWait));
  server->DropConnection();
  EXPECT_TRUE(server->WaitForAuthenticatedSessions(2, kWait));
}

}  // namespace
}  // namespace herald::xmpp
