// Integration tests of XmppSession against the in-process fake server: both connection
// modes, the IQs every entity answers, reconnects, keepalives and permanent failures.
#include "component/xmpp/session.h"

#include <algorithm>
#include <asio.hpp>
#include <filesystem>
#include <future>
#include <iterator>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "component/base/mutex.h"
#include "component/xmpp/namespaces.h"
#include "component/xmpp/session_error.h"
#include "component/xmpp/xml_writer.h"
#include "gmock/gmock.h"
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
        [this](InboundEvent&& event) {
          base::MutexLock lock(&mu_);
          events_.push_back(std::move(event));
        },
        [this](const absl::Status& status) {
          base::MutexLock lock(&mu_);
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

  // Performs them all in one turn of the loop, so the writer cannot drain in between.
  void PerformAll(std::vector<OutboundAction> actions) {
    asio::post(io_, [this, actions = std::move(actions)]() mutable {
      for (OutboundAction& action : actions) session_->Perform(std::move(action));
    });
  }

  void Stop() {
    asio::post(io_, [this] { session_->Stop(); });
  }

  // The status the session stopped with, once it has.
  std::optional<absl::Status> WaitForStop(absl::Duration timeout = kWait) {
    base::MutexLock lock(&mu_);
    mu_.AwaitWithTimeout(
        [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stopped_.has_value(); }, timeout);
    return stopped_;
  }

  // Waits for an event of type T and returns a copy of the first one not yet taken.
  template <typename T>
  std::optional<T> WaitForEvent(absl::Duration timeout = kWait) {
    base::MutexLock lock(&mu_);
    auto has_event = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      for (const InboundEvent& event : events_) {
        if (std::holds_alternative<T>(event)) return true;
      }
      return false;
    };
    if (!mu_.AwaitWithTimeout(has_event, timeout)) return std::nullopt;
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

  ConnectionState State() {
    std::promise<ConnectionState> state;
    asio::post(io_, [&] { state.set_value(session_->state()); });
    return state.get_future().get();
  }

  // Waits until the session itself has noticed that its stream is gone.
  bool WaitUntilOffline(absl::Duration timeout = kWait) {
    const absl::Time deadline = absl::Now() + timeout;
    while (State() == ConnectionState::kOnline) {
      if (absl::Now() >= deadline) return false;
      absl::SleepFor(absl::Milliseconds(5));
    }
    return true;
  }

 private:
  asio::io_context io_;
  std::unique_ptr<XmppSession> session_;
  std::thread thread_;
  base::Mutex mu_;
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

size_t ThreadCount() {
  return static_cast<size_t>(std::distance(std::filesystem::directory_iterator("/proc/self/task"),
                                           std::filesystem::directory_iterator()));
}

TEST(SessionTest, AnAddressIsConnectedToWithoutALookup) {
  auto server = StartServer();
  const size_t before = ThreadCount();
  SessionUnderTest session(ComponentOptions(*server));  // host 127.0.0.1
  ASSERT_TRUE(session.WaitForEvent<SessionOnline>().has_value());
  // The test's I/O thread; no resolver's thread (Asio starts one for its first lookup).
  EXPECT_EQ(ThreadCount(), before + 1);
}

TEST(SessionTest, AHostNameIsLookedUp) {
  auto server = StartServer();
  SessionOptions options = ComponentOptions(*server);
  options.host = "localhost";
  SessionUnderTest session(options);
  EXPECT_TRUE(session.WaitForEvent<SessionOnline>().has_value());
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
  EXPECT_TRUE(base::IsPermanent(*stopped));
  EXPECT_EQ(base::ExitCodeFor(*stopped), base::kExitAuthentication);
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
  EXPECT_EQ(base::ExitCodeFor(*stopped), base::kExitHostUnknown);
  EXPECT_NE(stopped->message().find("host-unknown"), absl::string_view::npos);
}

TEST(SessionTest, AConflictStreamErrorStopsWithTheConflictExitStatus) {
  auto server = StartServer();
  SessionUnderTest session(ComponentOptions(*server));
  ASSERT_TRUE(server->WaitForAuthenticatedSessions(1, kWait));
  server->SendStreamError("conflict");
  std::optional<absl::Status> stopped = session.WaitForStop();
  ASSERT_TRUE(stopped.has_value());
  EXPECT_EQ(base::ExitCodeFor(*stopped), base::kExitConflict);
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
  // The fake counts the handshake as done when it answers; the session is online only once it
  // has read that answer.
  ASSERT_TRUE(session.WaitForEvent<SessionOnline>().has_value());
  server->SetAccepting(false);
  server->DropConnection();
  ASSERT_TRUE(server->WaitForOpenConnections(0, kWait));
  // Until the session sees the drop, a stanza can still go into the dead socket (no XEP-0198);
  // what is queued once it knows must survive.
  ASSERT_TRUE(session.WaitUntilOffline());
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

TEST(SessionTest, ABurstLargerThanTheOutboundQueueLimitIsDeliveredWhileOnline) {
  // The limit bounds what an outage piles up; online, a burst of replies (thousands of
  // conversations answered at once) must not lose any.
  auto server = StartServer();
  SessionOptions options = ComponentOptions(*server);
  options.outbound_queue_limit = 5;
  SessionUnderTest session(options);
  ASSERT_TRUE(session.WaitForEvent<SessionOnline>().has_value());
  std::vector<OutboundAction> burst;
  for (int i = 0; i < 50; ++i) {
    burst.push_back(SendMessage{.to = Jid::Parse("alice@localhost").value(),
                                .body = absl::StrCat("reply ", i)});
  }
  session.PerformAll(std::move(burst));
  // They are written in order: once the last is in, every earlier one is too, or lost.
  ASSERT_NE(server->WaitForStanza(MessageWithBody("reply 49"), kWait), nullptr);
  for (int i = 0; i < 49; ++i) {
    EXPECT_NE(
        server->WaitForStanza(MessageWithBody(absl::StrCat("reply ", i)), absl::ZeroDuration()),
        nullptr)
        << "reply " << i << " was lost";
  }
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
  EXPECT_EQ(base::ExitCodeFor(*stopped), base::kExitAuthentication);
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
  EXPECT_EQ(base::ExitCodeFor(*stopped), base::kExitTls);
  EXPECT_EQ(server->authenticated_sessions(), 0);
}

TEST(SessionTest, ClientRefusesACertificateItCannotVerify) {
  auto server = StartClientServer();
  SessionOptions options = ClientOptions(*server);
  options.tls_ca_file = "";  // the system trust store does not know the fake's certificate
  SessionUnderTest session(options);
  std::optional<absl::Status> stopped = session.WaitForStop();
  ASSERT_TRUE(stopped.has_value());
  EXPECT_EQ(base::ExitCodeFor(*stopped), base::kExitTls);
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
  EXPECT_EQ(base::ExitCodeFor(*stopped), base::kExitAuthentication);
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

// --- Rooms (XEP-0045), chat states (XEP-0085), self-ping (XEP-0410), raw stanzas ---------

constexpr char kRoom[] = "lobby@conference.localhost";
constexpr char kChatStatesNs[] = "http://jabber.org/protocol/chatstates";
constexpr char kMucNs[] = "http://jabber.org/protocol/muc";

Jid RoomJid() { return Jid::Parse(kRoom).value(); }
Jid Occupant(std::string_view nick) { return RoomJid().WithResource(nick); }

auto PresenceTo(std::string to) {
  return [to](const XmlElement& s) { return s.name() == "presence" && s.Attr("to") == to; };
}

auto PingTo(std::string to) {
  return [to](const XmlElement& s) {
    return s.name() == "iq" && s.Attr("to") == to && s.FindChild("ping", ns::kPing) != nullptr;
  };
}

// Starts a component session, waits until it is online and has asked to join the lobby as
// "herald", and returns that join presence.
std::unique_ptr<XmlElement> JoinLobby(FakeXmppServer& server, SessionUnderTest& session) {
  EXPECT_TRUE(session.WaitForEvent<SessionOnline>().has_value());
  session.Perform(JoinRoom{.room = RoomJid(), .nick = "herald"});
  return server.WaitForStanza(PresenceTo("lobby@conference.localhost/herald"), kWait);
}

TEST(SessionTest, AdvertisesChatStatesAndMucInDiscoInfo) {
  auto server = StartServer();
  SessionUnderTest session(ComponentOptions(*server));
  ASSERT_TRUE(server->WaitForAuthenticatedSessions(1, kWait));
  server->Send(
      "<iq type='get' id='d2' from='alice@localhost/pc' to='agent.localhost'>"
      "<query xmlns='http://jabber.org/protocol/disco#info'/></iq>");
  auto reply = server->WaitForStanza(IqWithId("d2"), kWait);
  ASSERT_NE(reply, nullptr);
  const XmlElement* query = reply->FindChild("query", ns::kDiscoInfo);
  ASSERT_NE(query, nullptr);
  std::vector<std::string> features;
  for (const XmlNode& node : query->children()) {
    if (node.element && node.element->name() == "feature") {
      features.emplace_back(node.element->Attr("var"));
    }
  }
  EXPECT_NE(std::find(features.begin(), features.end(), kChatStatesNs), features.end());
  EXPECT_NE(std::find(features.begin(), features.end(), kMucNs), features.end());
}

TEST(SessionTest, JoinsARoomWithoutHistoryAndLeavesWithUnavailablePresence) {
  auto server = StartServer();
  SessionUnderTest session(ComponentOptions(*server));
  ASSERT_TRUE(session.WaitForEvent<SessionOnline>().has_value());
  session.Perform(JoinRoom{.room = RoomJid(), .nick = "Herald Bot", .password = "s3cret & <x>"});
  auto join = server->WaitForStanza(PresenceTo("lobby@conference.localhost/Herald Bot"), kWait);
  ASSERT_NE(join, nullptr);
  EXPECT_FALSE(join->HasAttr("type"));
  EXPECT_EQ(join->Attr("from"), "agent.localhost");
  const XmlElement* x = join->FindChild("x", kMucNs);
  ASSERT_NE(x, nullptr);
  const XmlElement* history = x->FindChild("history", kMucNs);
  ASSERT_NE(history, nullptr);
  EXPECT_EQ(history->Attr("maxchars"), "0");
  EXPECT_EQ(x->ChildText("password"), "s3cret & <x>");

  session.Perform(JoinRoom{.room = RoomJid(), .nick = "Herald Bot", .leave = true});
  auto leave = server->WaitForStanza(PresenceTo("lobby@conference.localhost/Herald Bot"), kWait);
  ASSERT_NE(leave, nullptr);
  EXPECT_EQ(leave->Attr("type"), "unavailable");
  EXPECT_EQ(leave->FindChild("x", kMucNs), nullptr);
}

TEST(SessionTest, RefusesToJoinWithANickThatIsNotAValidResource) {
  auto server = StartServer();
  SessionUnderTest session(ComponentOptions(*server));
  ASSERT_TRUE(session.WaitForEvent<SessionOnline>().has_value());
  session.Perform(JoinRoom{.room = RoomJid(), .nick = ""});
  session.Perform(JoinRoom{.room = Jid::Parse("conference.localhost").value(), .nick = "h"});
  session.Perform(SendPresence{.to = Jid::Parse("alice@localhost").value(), .type = "probe"});
  // The probe was performed last; nothing before it went out.
  ASSERT_NE(server->WaitForStanza(PresenceTo("alice@localhost"), kWait), nullptr);
  EXPECT_EQ(server->WaitForStanza([](const XmlElement& s) { return s.name() == "presence"; },
                                  absl::ZeroDuration()),
            nullptr);
}

TEST(SessionTest, ReportsOwnAndOtherOccupantsPresenceWithStatusCodes) {
  auto server = StartServer();
  SessionUnderTest session(ComponentOptions(*server));
  ASSERT_NE(JoinLobby(*server, session), nullptr);
  server->Send(
      "<presence from='lobby@conference.localhost/alice' to='agent.localhost'>"
      "<x xmlns='http://jabber.org/protocol/muc#user'>"
      "<item affiliation='member' role='participant'/></x></presence>"
      "<presence from='lobby@conference.localhost/herald' to='agent.localhost'>"
      "<x xmlns='http://jabber.org/protocol/muc#user'>"
      "<item affiliation='none' role='participant'/>"
      "<status code='110'/><status code='201'/><status code='bogus'/></x></presence>");
  std::optional<RoomPresence> alice = session.WaitForEvent<RoomPresence>();
  ASSERT_TRUE(alice.has_value());
  EXPECT_EQ(alice->room.ToString(), kRoom);
  EXPECT_EQ(alice->nick, "alice");
  EXPECT_TRUE(alice->available);
  EXPECT_FALSE(alice->self);
  EXPECT_TRUE(alice->status_codes.empty());

  std::optional<RoomPresence> self = session.WaitForEvent<RoomPresence>();
  ASSERT_TRUE(self.has_value());
  EXPECT_EQ(self->nick, "herald");
  EXPECT_TRUE(self->available);
  EXPECT_TRUE(self->self);
  EXPECT_EQ(self->status_codes, (std::vector<int>{110, 201}));
  EXPECT_TRUE(self->error_condition.empty());
}

TEST(SessionTest, ReportsAKickAsUnavailableSelfPresenceWithStatus307) {
  auto server = StartServer();
  SessionUnderTest session(ComponentOptions(*server));
  ASSERT_NE(JoinLobby(*server, session), nullptr);
  server->Send(
      "<presence type='unavailable' from='lobby@conference.localhost/herald' "
      "to='agent.localhost'><x xmlns='http://jabber.org/protocol/muc#user'>"
      "<item affiliation='none' role='none'><reason>spam</reason></item>"
      "<status code='307'/><status code='110'/></x></presence>");
  std::optional<RoomPresence> kicked = session.WaitForEvent<RoomPresence>();
  ASSERT_TRUE(kicked.has_value());
  EXPECT_FALSE(kicked->available);
  EXPECT_TRUE(kicked->self);
  EXPECT_EQ(kicked->status_codes, (std::vector<int>{307, 110}));
}

TEST(SessionTest, ReportsTheConditionOfAnErrorPresenceFromAJoinedRoomOnly) {
  auto server = StartServer();
  SessionUnderTest session(ComponentOptions(*server));
  ASSERT_NE(JoinLobby(*server, session), nullptr);
  server->Send(
      "<presence type='error' from='other@conference.localhost/herald' to='agent.localhost'>"
      "<error type='cancel'><conflict xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></error>"
      "</presence>"
      "<presence type='error' from='lobby@conference.localhost/herald' to='agent.localhost'>"
      "<x xmlns='http://jabber.org/protocol/muc'/>"
      "<error type='cancel'><conflict xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></error>"
      "</presence>");
  std::optional<RoomPresence> refused = session.WaitForEvent<RoomPresence>();
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(refused->room.ToString(), kRoom);
  EXPECT_EQ(refused->nick, "herald");
  EXPECT_FALSE(refused->available);
  EXPECT_EQ(refused->error_condition, "conflict");
  // The error from a room Herald never asked to join was not reported.
  EXPECT_FALSE(session.WaitForEvent<RoomPresence>(absl::ZeroDuration()).has_value());
}

TEST(SessionTest, DeliversGroupchatMessagesAndMarksReplayedHistoryAsDelayed) {
  auto server = StartServer();
  SessionUnderTest session(ComponentOptions(*server));
  ASSERT_NE(JoinLobby(*server, session), nullptr);
  server->Send(
      "<message type='groupchat' id='old' from='lobby@conference.localhost/bob' "
      "to='agent.localhost'><body>yesterday</body>"
      "<delay xmlns='urn:xmpp:delay' from='lobby@conference.localhost' "
      "stamp='2024-01-01T00:00:00Z'/></message>"
      "<message type='groupchat' from='lobby@conference.localhost' to='agent.localhost'>"
      "<subject>Welcome</subject><body>The room is now open</body></message>"
      "<message type='groupchat' from='lobby@conference.localhost/bob' to='agent.localhost'>"
      "<active xmlns='http://jabber.org/protocol/chatstates'/></message>"
      "<message type='groupchat' id='g1' from='lobby@conference.localhost/bob' "
      "to='agent.localhost'><body>herald: hello</body><thread>t9</thread></message>");
  std::optional<GroupMessage> history = session.WaitForEvent<GroupMessage>();
  ASSERT_TRUE(history.has_value());
  EXPECT_EQ(history->body, "yesterday");
  EXPECT_TRUE(history->delayed);

  std::optional<GroupMessage> live = session.WaitForEvent<GroupMessage>();
  ASSERT_TRUE(live.has_value());
  EXPECT_EQ(live->room.ToString(), kRoom);
  EXPECT_EQ(live->nick, "bob");
  EXPECT_EQ(live->id, "g1");
  EXPECT_EQ(live->body, "herald: hello");
  EXPECT_EQ(live->thread, "t9");
  EXPECT_FALSE(live->delayed);
  // The room's own announcement and the bodyless chat state were not delivered, nor was a
  // groupchat message mistaken for a 1:1 chat.
  EXPECT_FALSE(session.WaitForEvent<GroupMessage>(absl::ZeroDuration()).has_value());
  EXPECT_FALSE(session.WaitForEvent<ChatMessage>(absl::ZeroDuration()).has_value());
}

TEST(SessionTest, ReportsAMediatedInvitationWithTheInviterNamedByTheRoom) {
  auto server = StartServer();
  SessionOptions options = ComponentOptions(*server);
  options.muc_services = {"conference.localhost"};
  SessionUnderTest session(options);
  ASSERT_TRUE(server->WaitForAuthenticatedSessions(1, kWait));
  server->Send(
      "<message from='lobby@conference.localhost' to='agent.localhost'>"
      "<x xmlns='http://jabber.org/protocol/muc#user'>"
      "<invite from='Alice@localhost/pc'><reason>come &amp; help</reason></invite>"
      "<password>pw</password></x><body>alice invites you</body></message>");
  std::optional<RoomInvite> invite = session.WaitForEvent<RoomInvite>();
  ASSERT_TRUE(invite.has_value());
  EXPECT_EQ(invite->room.ToString(), kRoom);
  EXPECT_EQ(invite->inviter.ToString(), "alice@localhost");
  EXPECT_EQ(invite->password, "pw");
  EXPECT_EQ(invite->reason, "come & help");
  // The invitation's body is not a chat message.
  EXPECT_FALSE(session.WaitForEvent<ChatMessage>(absl::ZeroDuration()).has_value());
}

TEST(SessionTest, ReportsADirectInvitationWithTheSenderAsInviter) {
  auto server = StartServer();
  SessionUnderTest session(ComponentOptions(*server));
  ASSERT_TRUE(server->WaitForAuthenticatedSessions(1, kWait));
  server->Send(
      "<message from='alice@localhost/pc' to='agent.localhost'>"
      "<x xmlns='jabber:x:conference' jid='not a room'/></message>"
      "<message from='alice@localhost/pc' to='agent.localhost'>"
      "<x xmlns='jabber:x:conference' jid='Lobby@conference.localhost' password='pw' "
      "reason='standup'/></message>");
  std::optional<RoomInvite> invite = session.WaitForEvent<RoomInvite>();
  ASSERT_TRUE(invite.has_value());
  EXPECT_EQ(invite->room.ToString(), kRoom);
  EXPECT_EQ(invite->inviter.ToString(), "alice@localhost");
  EXPECT_EQ(invite->password, "pw");
  EXPECT_EQ(invite->reason, "standup");
  EXPECT_FALSE(session.WaitForEvent<RoomInvite>(absl::ZeroDuration()).has_value());
}

TEST(SessionTest, SendsChatStatesInsideAMessageAndAlone) {
  auto server = StartServer();
  SessionUnderTest session(ComponentOptions(*server));
  ASSERT_NE(JoinLobby(*server, session), nullptr);
  const Jid alice = Jid::Parse("alice@localhost/pc").value();
  session.Perform(SendChatState{.to = alice, .state = "composing"});
  session.Perform(SendMessage{.to = alice, .body = "answer", .chat_state = "active"});
  session.Perform(SendChatState{.to = RoomJid(), .state = "paused"});
  session.Perform(SendChatState{.to = alice, .state = "dancing"});
  session.Perform(SendMessage{.to = alice, .body = "last"});

  auto composing = server->WaitForStanza(
      [](const XmlElement& s) {
        return s.name() == "message" && s.Attr("to") == "alice@localhost/pc";
      },
      kWait);
  ASSERT_NE(composing, nullptr);
  EXPECT_EQ(composing->Attr("type"), "chat");
  EXPECT_EQ(composing->FindChild("body"), nullptr);
  EXPECT_NE(composing->FindChild("composing", kChatStatesNs), nullptr);
  EXPECT_NE(composing->FindChild("no-store", "urn:xmpp:hints"), nullptr);

  auto answer = server->WaitForStanza(MessageWithBody("answer"), kWait);
  ASSERT_NE(answer, nullptr);
  EXPECT_NE(answer->FindChild("active", kChatStatesNs), nullptr);

  auto paused = server->WaitForStanza(
      [](const XmlElement& s) { return s.name() == "message" && s.Attr("to") == kRoom; }, kWait);
  ASSERT_NE(paused, nullptr);
  EXPECT_EQ(paused->Attr("type"), "groupchat");
  EXPECT_NE(paused->FindChild("paused", kChatStatesNs), nullptr);

  auto last = server->WaitForStanza(MessageWithBody("last"), kWait);
  ASSERT_NE(last, nullptr);
  EXPECT_EQ(last->FindChildByNamespace(kChatStatesNs), nullptr);
  // "dancing" is no chat state: nothing went out for it.
  EXPECT_EQ(server->WaitForStanza([](const XmlElement& s) { return s.name() == "message"; },
                                  absl::ZeroDuration()),
            nullptr);
}

TEST(SessionTest, ASelfPingAnsweredWithAResultMeansJoined) {
  auto server = StartServer();
  SessionUnderTest session(ComponentOptions(*server));
  ASSERT_NE(JoinLobby(*server, session), nullptr);
  session.Perform(SelfPing{.occupant = Occupant("herald")});
  auto ping = server->WaitForStanza(PingTo("lobby@conference.localhost/herald"), kWait);
  ASSERT_NE(ping, nullptr);
  EXPECT_EQ(ping->Attr("type"), "get");
  EXPECT_EQ(ping->Attr("from"), "agent.localhost");
  const std::string id(ping->Attr("id"));
  // An answer from anyone but the occupant does not settle it.
  server->Send("<iq type='result' id='" + id +
               "' from='lobby@conference.localhost/mallory' to='agent.localhost'/>");
  server->Send("<iq type='result' id='" + id +
               "' from='lobby@conference.localhost/herald' to='agent.localhost'/>");
  std::optional<SelfPingResult> result = session.WaitForEvent<SelfPingResult>();
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->occupant, Occupant("herald"));
  EXPECT_TRUE(result->joined);
  EXPECT_TRUE(result->condition.empty());
  EXPECT_FALSE(session.WaitForEvent<SelfPingResult>(absl::ZeroDuration()).has_value());
}

TEST(SessionTest, ASelfPingErrorFromTheOccupantsClientStillMeansJoined) {
  auto server = StartServer();
  SessionUnderTest session(ComponentOptions(*server));
  ASSERT_NE(JoinLobby(*server, session), nullptr);
  session.Perform(SelfPing{.occupant = Occupant("herald")});
  auto ping = server->WaitForStanza(PingTo("lobby@conference.localhost/herald"), kWait);
  ASSERT_NE(ping, nullptr);
  server->Send("<iq type='error' id='" + std::string(ping->Attr("id")) +
               "' from='lobby@conference.localhost/herald' to='agent.localhost'>"
               "<error type='cancel'><service-unavailable "
               "xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></error></iq>");
  std::optional<SelfPingResult> result = session.WaitForEvent<SelfPingResult>();
  ASSERT_TRUE(result.has_value());
  EXPECT_TRUE(result->joined);
  EXPECT_EQ(result->condition, "service-unavailable");
}

TEST(SessionTest, ASelfPingRefusedByTheRoomMeansNotJoined) {
  auto server = StartServer();
  SessionUnderTest session(ComponentOptions(*server));
  ASSERT_NE(JoinLobby(*server, session), nullptr);
  session.Perform(SelfPing{.occupant = Occupant("herald")});
  auto ping = server->WaitForStanza(PingTo("lobby@conference.localhost/herald"), kWait);
  ASSERT_NE(ping, nullptr);
  server->Send("<iq type='error' id='" + std::string(ping->Attr("id")) +
               "' from='lobby@conference.localhost/herald' to='agent.localhost'>"
               "<error type='cancel'><not-acceptable "
               "xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></error></iq>");
  std::optional<SelfPingResult> result = session.WaitForEvent<SelfPingResult>();
  ASSERT_TRUE(result.has_value());
  EXPECT_FALSE(result->joined);
  EXPECT_EQ(result->condition, "not-acceptable");
}

TEST(SessionTest, AnUnansweredSelfPingTimesOutAsNotJoined) {
  auto server = StartServer();
  SessionOptions options = ComponentOptions(*server);
  options.self_ping_timeout = absl::Milliseconds(300);
  SessionUnderTest session(options);
  ASSERT_NE(JoinLobby(*server, session), nullptr);
  session.Perform(SelfPing{.occupant = Occupant("herald")});
  ASSERT_NE(server->WaitForStanza(PingTo("lobby@conference.localhost/herald"), kWait), nullptr);
  std::optional<SelfPingResult> result = session.WaitForEvent<SelfPingResult>();
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->occupant, Occupant("herald"));
  EXPECT_FALSE(result->joined);
  EXPECT_EQ(result->condition, "timeout");
}

TEST(SessionTest, PendingSelfPingsFailWhenTheConnectionDrops) {
  auto server = StartServer();
  SessionUnderTest session(ComponentOptions(*server));
  ASSERT_NE(JoinLobby(*server, session), nullptr);
  session.Perform(SelfPing{.occupant = Occupant("herald")});
  ASSERT_NE(server->WaitForStanza(PingTo("lobby@conference.localhost/herald"), kWait), nullptr);
  server->DropConnection();
  std::optional<SelfPingResult> result = session.WaitForEvent<SelfPingResult>();
  ASSERT_TRUE(result.has_value());
  EXPECT_FALSE(result->joined);
  EXPECT_EQ(result->condition, "disconnected");
}

TEST(SessionTest, ASelfPingWhileOfflineFailsAtOnce) {
  auto server = StartServer();
  SessionUnderTest session(ComponentOptions(*server));
  ASSERT_TRUE(session.WaitForEvent<SessionOnline>().has_value());
  server->SetAccepting(false);
  server->DropConnection();
  ASSERT_TRUE(server->WaitForOpenConnections(0, kWait));
  // The drop may not have been noticed yet; once it has, the ping fails without being queued.
  std::optional<SelfPingResult> result;
  const absl::Time deadline = absl::Now() + kWait;
  while (absl::Now() < deadline) {
    session.Perform(SelfPing{.occupant = Occupant("herald")});
    result = session.WaitForEvent<SelfPingResult>(absl::Milliseconds(500));
    if (result.has_value()) break;
  }
  ASSERT_TRUE(result.has_value());
  EXPECT_FALSE(result->joined);
  EXPECT_EQ(result->condition, "disconnected");
}

TEST(SessionTest, WritesAValidRawStanzaAsItIsAndDropsAnInvalidOne) {
  auto server = StartServer();
  SessionUnderTest session(ComponentOptions(*server));
  ASSERT_TRUE(session.WaitForEvent<SessionOnline>().has_value());
  session.Perform(SendRawStanza{.xml = "<message to='alice@localhost'><body>raw</body></message>"
                                       "</stream:stream>"});
  session.Perform(SendRawStanza{.xml = "<message from='agent.localhost' to='alice@localhost' "
                                       "id='r1'><body>raw ok</body></message>"});
  auto raw = server->WaitForStanza(MessageWithBody("raw ok"), kWait);
  ASSERT_NE(raw, nullptr);
  EXPECT_EQ(raw->Attr("id"), "r1");
  EXPECT_EQ(server->WaitForStanza(MessageWithBody("raw"), absl::ZeroDuration()), nullptr);
  // The stream survived: the session still answers.
  server->Send(
      "<iq type='get' id='p9' from='alice@localhost/pc' to='agent.localhost'>"
      "<ping xmlns='urn:xmpp:ping'/></iq>");
  EXPECT_NE(server->WaitForStanza(IqWithId("p9"), kWait), nullptr);
  EXPECT_EQ(session.ConnectionsEstablished(), 1);
}

// --- Invitations relayed by rooms: only from trusted MUC services (issue 16, finding 1) ----

constexpr char kForgedInvite[] =
    "<message from='trap@muc.evil.example' to='agent.localhost'>"
    "<x xmlns='http://jabber.org/protocol/muc#user'>"
    "<invite from='alice@localhost/pc'><reason>forged</reason></invite></x></message>";
constexpr char kGenuineInvite[] =
    "<message from='lobby@conference.localhost' to='agent.localhost'>"
    "<x xmlns='http://jabber.org/protocol/muc#user'>"
    "<invite from='alice@localhost/pc'><reason>genuine</reason></invite></x></message>";

auto DiscoQueryTo(std::string to, std::string xmlns) {
  return [to, xmlns](const XmlElement& s) {
    return s.name() == "iq" && s.Attr("type") == "get" && s.Attr("to") == to &&
           s.FindChild("query", xmlns) != nullptr;
  };
}

TEST(SessionTest, IgnoresAnInvitationRelayedByAServiceItDoesNotTrust) {
  auto server = StartServer();
  SessionOptions options = ComponentOptions(*server);
  options.muc_services = {"conference.localhost"};
  SessionUnderTest session(options);
  ASSERT_TRUE(session.WaitForEvent<SessionOnline>().has_value());
  // A hostile server's room names an allowed user as the inviter: not believed.
  server->Send(kForgedInvite);
  server->Send(kGenuineInvite);
  std::optional<RoomInvite> invite = session.WaitForEvent<RoomInvite>();
  ASSERT_TRUE(invite.has_value());
  EXPECT_EQ(invite->room.ToString(), kRoom);
  EXPECT_EQ(invite->reason, "genuine");
  // Both went through the session in order, so the forged one had its chance already.
  EXPECT_FALSE(session.WaitForEvent<RoomInvite>(absl::ZeroDuration()).has_value());
  // A direct invitation names its own sender, whom the server stamped: that one counts.
  server->Send(
      "<message from='alice@localhost/pc' to='agent.localhost'>"
      "<x xmlns='jabber:x:conference' jid='trap@muc.evil.example'/></message>");
  invite = session.WaitForEvent<RoomInvite>();
  ASSERT_TRUE(invite.has_value());
  EXPECT_EQ(invite->room.ToString(), "trap@muc.evil.example");
  EXPECT_EQ(invite->inviter.ToString(), "alice@localhost");
}

TEST(SessionTest, TrustsTheMucServicesTheServerAnnouncesAndHoldsInvitationsUntilThen) {
  auto server = StartServer({.answer_disco_items = false});
  SessionUnderTest session(ComponentOptions(*server));
  auto items = server->WaitForStanza(DiscoQueryTo("localhost", ns::kDiscoItems), kWait);
  ASSERT_NE(items, nullptr);
  // Invitations that come before the answer wait for it.
  server->Send(kForgedInvite);
  server->Send(kGenuineInvite);
  server->Send(absl::StrCat("<iq type='result' from='localhost' to='agent.localhost' id='",
                            std::string(items->Attr("id")), "'>",
                            "<query xmlns='http://jabber.org/protocol/disco#items'>",
                            "<item jid='conference.localhost'/><item jid='pubsub.localhost'/>",
                            "<item jid='localhost' node='announce'/></query></iq>"));
  auto conference =
      server->WaitForStanza(DiscoQueryTo("conference.localhost", ns::kDiscoInfo), kWait);
  auto pubsub = server->WaitForStanza(DiscoQueryTo("pubsub.localhost", ns::kDiscoInfo), kWait);
  ASSERT_NE(conference, nullptr);
  ASSERT_NE(pubsub, nullptr);
  // An answer from anyone but the entity asked settles nothing.
  server->Send(absl::StrCat("<iq type='result' from='muc.evil.example' to='agent.localhost' id='",
                            std::string(pubsub->Attr("id")),
                            "'><query xmlns='http://jabber.org/protocol/disco#info'>"
                            "<identity category='conference' type='text'/></query></iq>"));
  server->Send(absl::StrCat("<iq type='result' from='pubsub.localhost' to='agent.localhost' id='",
                            std::string(pubsub->Attr("id")),
                            "'><query xmlns='http://jabber.org/protocol/disco#info'>"
                            "<identity category='pubsub' type='service'/></query></iq>"));
  EXPECT_FALSE(session.WaitForEvent<RoomInvite>(absl::ZeroDuration()).has_value());
  server->Send(
      absl::StrCat("<iq type='result' from='conference.localhost' to='agent.localhost' id='",
                   std::string(conference->Attr("id")),
                   "'><query xmlns='http://jabber.org/protocol/disco#info'>"
                   "<identity category='conference' type='text' name='Rooms'/>"
                   "<feature var='http://jabber.org/protocol/muc'/></query></iq>"));
  std::optional<RoomInvite> invite = session.WaitForEvent<RoomInvite>();
  ASSERT_TRUE(invite.has_value());
  EXPECT_EQ(invite->reason, "genuine");
  // Held invitations are replayed in one go once discovery settles.
  EXPECT_FALSE(session.WaitForEvent<RoomInvite>(absl::ZeroDuration()).has_value());
}

TEST(SessionTest, AnUnansweredDiscoveryTrustsNoRelayedInvitation) {
  auto server = StartServer({.answer_disco_items = false});
  SessionOptions options = ComponentOptions(*server);
  options.muc_discovery_timeout = absl::Milliseconds(200);
  SessionUnderTest session(options);
  ASSERT_NE(server->WaitForStanza(DiscoQueryTo("localhost", ns::kDiscoItems), kWait), nullptr);
  server->Send(kGenuineInvite);
  server->Send(
      "<message from='alice@localhost/pc' to='agent.localhost'>"
      "<x xmlns='jabber:x:conference' jid='lobby@conference.localhost'/></message>");
  // The direct one arrives at once; the relayed one waits for the discovery's timeout and is
  // then refused: nothing says conference.localhost is the server's.
  std::optional<RoomInvite> invite = session.WaitForEvent<RoomInvite>();
  ASSERT_TRUE(invite.has_value());
  EXPECT_TRUE(invite->reason.empty());
  // Watched for ten times the discovery timeout: the held invitation was decided by then.
  EXPECT_FALSE(session.WaitForEvent<RoomInvite>(absl::Seconds(2)).has_value());
}

// --- HTTP upload service discovery (XEP-0363) ----------------------------------------------

TEST(SessionTest, FindsTheServersHttpUploadServiceOnEveryStream) {
  FakeXmppServerOptions server_options;
  server_options.disco_entities = {{.jid = "conference.localhost",
                                    .category = "conference",
                                    .type = "text",
                                    .features = {ns::kMuc}},
                                   {.jid = "upload.localhost",
                                    .features = {ns::kHttpUpload},
                                    .form_type = ns::kHttpUpload,
                                    .form_fields = {{"max-file-size", "10485760"}}}};
  auto server = StartServer(server_options);
  SessionUnderTest session(ComponentOptions(*server));
  std::optional<UploadServiceFound> found = session.WaitForEvent<UploadServiceFound>();
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->jid.ToString(), "upload.localhost");
  EXPECT_EQ(found->max_file_size, 10485760u);
  // The queries came from the component, to the server's domain and then to its items.
  auto info = server->WaitForStanza(DiscoQueryTo("upload.localhost", ns::kDiscoInfo), kWait);
  ASSERT_NE(info, nullptr);
  EXPECT_EQ(info->Attr("from"), "agent.localhost");
  // A new stream may lead to another server: it is asked again.
  server->DropConnection();
  ASSERT_TRUE(server->WaitForAuthenticatedSessions(2, kWait));
  found = session.WaitForEvent<UploadServiceFound>();
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->jid.ToString(), "upload.localhost");
}

TEST(SessionTest, ClientFindsAnUploadServiceOnItsAccountsDomainItself) {
  FakeXmppServerOptions server_options;
  server_options.disco_entities = {
      {.jid = "localhost", .category = "server", .type = "im", .features = {ns::kHttpUpload}}};
  auto server = StartClientServer(server_options);
  SessionUnderTest session(ClientOptions(*server));
  std::optional<UploadServiceFound> found = session.WaitForEvent<UploadServiceFound>();
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->jid.ToString(), "localhost");
  EXPECT_FALSE(found->max_file_size.has_value());
}

TEST(SessionTest, AnUploadServiceThatAnswersLateIsFoundWhenTheDiscoveryGivesUp) {
  // The server lists two items; only the second answers. The first in order would win if it
  // said it is one, so the session waits for it until upload_discovery_timeout.
  auto server = StartServer({.answer_disco_items = false});
  SessionOptions options = ComponentOptions(*server);
  options.upload_discovery_timeout = absl::Milliseconds(300);
  SessionUnderTest session(options);
  // The MUC discovery asks first; then the upload discovery asks for the same items.
  auto muc_items = server->WaitForStanza(DiscoQueryTo("localhost", ns::kDiscoItems), kWait);
  auto items = server->WaitForStanza(DiscoQueryTo("localhost", ns::kDiscoItems), kWait);
  ASSERT_NE(muc_items, nullptr);
  ASSERT_NE(items, nullptr);
  server->Send(absl::StrCat("<iq type='result' from='localhost' to='agent.localhost' id='",
                            std::string(items->Attr("id")), "'>",
                            "<query xmlns='http://jabber.org/protocol/disco#items'>",
                            "<item jid='silent.localhost'/><item jid='upload.localhost'/>",
                            "</query></iq>"));
  auto silent = server->WaitForStanza(DiscoQueryTo("silent.localhost", ns::kDiscoInfo), kWait);
  auto upload = server->WaitForStanza(DiscoQueryTo("upload.localhost", ns::kDiscoInfo), kWait);
  ASSERT_NE(silent, nullptr);
  ASSERT_NE(upload, nullptr);
  server->Send(absl::StrCat("<iq type='result' from='upload.localhost' to='agent.localhost' id='",
                            std::string(upload->Attr("id")),
                            "'><query xmlns='http://jabber.org/protocol/disco#info'>"
                            "<feature var='urn:xmpp:http:upload:0'/></query></iq>"));
  std::optional<UploadServiceFound> found = session.WaitForEvent<UploadServiceFound>();
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->jid.ToString(), "upload.localhost");
}

// --- Oversized stanzas, in and out (issue 16, findings 6 and 9) ----------------------------

TEST(SessionTest, SkipsAnOversizedStanzaTellsItsSenderAndKeepsTheStream) {
  auto server = StartServer();
  SessionOptions options = ComponentOptions(*server);
  options.limits.max_stanza_bytes = 16 * 1024;
  SessionUnderTest session(options);
  ASSERT_TRUE(session.WaitForEvent<SessionOnline>().has_value());
  server->Send(absl::StrCat(
      "<message type='chat' id='huge' from='mallory@evil.example/x' to='agent.localhost'><body>",
      std::string(64 * 1024, 'm'), "</body></message>",
      "<message type='chat' id='m2' from='alice@localhost/pc' to='agent.localhost'>"
      "<body>still there?</body></message>"));
  std::optional<ChatMessage> message = session.WaitForEvent<ChatMessage>();
  ASSERT_TRUE(message.has_value());
  EXPECT_EQ(message->body, "still there?");
  auto bounce = server->WaitForStanza(
      [](const XmlElement& s) { return s.name() == "message" && s.Attr("type") == "error"; },
      kWait);
  ASSERT_NE(bounce, nullptr);
  EXPECT_EQ(bounce->Attr("to"), "mallory@evil.example/x");
  EXPECT_EQ(bounce->Attr("id"), "huge");
  const XmlElement* error = bounce->FindChild("error");
  ASSERT_NE(error, nullptr);
  EXPECT_NE(error->FindChild("policy-violation", ns::kStanzaErrors), nullptr);
  EXPECT_EQ(session.ConnectionsEstablished(), 1);
}

std::string Lines(int count, int width) {
  std::string text;
  for (int i = 0; i < count; ++i) {
    std::string line = absl::StrCat("line ", i, " & <", std::string(width, 'x'), ">");
    absl::StrAppend(&text, line, "\n");
  }
  return text;
}

TEST(SessionTest, SplitsAMessageTooLargeForTheServerIntoPartsThatFitAndStaysOnline) {
  FakeXmppServerOptions server_options;
  server_options.max_stanza_bytes = 32 * 1024;  // a server stricter than Herald's default cap
  auto server = StartServer(server_options);
  SessionOptions options = ComponentOptions(*server);
  options.max_outbound_stanza_bytes = 30 * 1024;
  SessionUnderTest session(options);
  ASSERT_TRUE(session.WaitForEvent<SessionOnline>().has_value());
  const std::string body = Lines(1000, 80);  // ~100 KB, more once escaped
  session.Perform(SendMessage{
      .to = Jid::Parse("alice@localhost/pc").value(), .body = body, .chat_state = "active"});
  std::string received;
  int parts = 0;
  while (received.size() < body.size()) {
    auto part = server->WaitForStanza(
        [](const XmlElement& s) { return s.name() == "message" && s.Attr("type") == "chat"; },
        kWait);
    ASSERT_NE(part, nullptr) << "after " << parts << " parts";
    EXPECT_LE(ToXml(*part).size(), options.max_outbound_stanza_bytes);
    const std::string text = part->ChildText("body");
    // Cut after a line: every part but the last ends with a newline.
    EXPECT_EQ(text.back(), '\n');
    received += text;
    ++parts;
  }
  EXPECT_EQ(received, body);
  EXPECT_GE(parts, 4);
  EXPECT_EQ(session.ConnectionsEstablished(), 1);
}

TEST(SessionTest, CutsAMessageBeyondTheMostPartsAndSaysWhatWasLeftOut) {
  auto server = StartServer();
  SessionOptions options = ComponentOptions(*server);
  options.max_outbound_stanza_bytes = 10'000;
  SessionUnderTest session(options);
  ASSERT_TRUE(session.WaitForEvent<SessionOnline>().has_value());
  const std::string body(200'000, 'z');
  session.Perform(SendMessage{.to = Jid::Parse("alice@localhost/pc").value(), .body = body});
  std::string received;
  for (int i = 0; i < 8; ++i) {
    auto part =
        server->WaitForStanza([](const XmlElement& s) { return s.name() == "message"; }, kWait);
    ASSERT_NE(part, nullptr);
    EXPECT_LE(ToXml(*part).size(), options.max_outbound_stanza_bytes);
    received += part->ChildText("body");
  }
  EXPECT_THAT(received, ::testing::HasSubstr("more bytes were not sent"));
  EXPECT_EQ(received.substr(0, 1000), body.substr(0, 1000));
  // Watched for a second after the eighth part: no ninth comes (the parts were queued in one
  // turn of the loop, so a ninth would have been written right behind them).
  EXPECT_EQ(server->WaitForStanza([](const XmlElement& s) { return s.name() == "message"; },
                                  absl::Seconds(1)),
            nullptr);
}

TEST(SessionTest, NeverWritesAStanzaOverTheCapAndKeepsTheStream) {
  auto server = StartServer();
  SessionOptions options = ComponentOptions(*server);
  options.max_outbound_stanza_bytes = 10'000;
  SessionUnderTest session(options);
  ASSERT_TRUE(session.WaitForEvent<SessionOnline>().has_value());
  session.Perform(
      SendRawStanza{.xml = absl::StrCat("<message from='agent.localhost' to='alice@localhost'>"
                                        "<body>",
                                        std::string(20'000, 'r'), "</body></message>")});
  session.Perform(SendMessage{.to = Jid::Parse("alice@localhost/pc").value(), .body = "after"});
  ASSERT_NE(server->WaitForStanza(MessageWithBody("after"), kWait), nullptr);
  EXPECT_EQ(server->WaitForStanza([](const XmlElement& s) { return s.name() == "message"; },
                                  absl::ZeroDuration()),
            nullptr);
  EXPECT_EQ(session.ConnectionsEstablished(), 1);
}

}  // namespace
}  // namespace herald::xmpp
