#include "tools/loadgen/component_server.h"

#include <asio.hpp>
#include <memory>
#include <optional>

#include "component/xmpp/session.h"
#include "gtest/gtest.h"
#include "tools/loadgen/load_driver.h"

namespace herald::loadgen {
namespace {

constexpr char kDomain[] = "echo.localhost";

// Herald's own session as the component under load: it echoes every chat message.
std::unique_ptr<xmpp::XmppSession> EchoComponent(asio::io_context& io, uint16_t port,
                                                 const std::string& secret,
                                                 std::optional<absl::Status>& stopped) {
  xmpp::SessionOptions options;
  options.mode = xmpp::SessionMode::kComponent;
  options.port = port;
  options.server_domain = "localhost";
  options.component_domain = kDomain;
  options.component_secret = secret;
  auto session = std::make_shared<xmpp::XmppSession*>(nullptr);
  absl::StatusOr<std::unique_ptr<xmpp::XmppSession>> created = xmpp::XmppSession::Create(
      io, std::move(options),
      [session](xmpp::InboundEvent&& event) {
        if (auto* message = std::get_if<xmpp::ChatMessage>(&event)) {
          (*session)->Perform(xmpp::SendMessage{.to = message->from, .body = message->body});
        }
      },
      [&stopped](const absl::Status& status) { stopped = status; });
  EXPECT_TRUE(created.ok()) << created.status();
  *session = created->get();
  return *std::move(created);
}

TEST(ComponentServerTest, PumpsMessagesIntoAComponentAndMatchesEveryReply) {
  asio::io_context io;
  absl::StatusOr<std::unique_ptr<ComponentServer>> server = ComponentServer::Listen(
      io, {.secret = "s3cret", .component_domain = kDomain, .users = 10, .body = "/ping & <you>"});
  ASSERT_TRUE(server.ok()) << server.status();
  EXPECT_NE((*server)->port(), 0);
  std::optional<absl::Status> stopped;
  std::unique_ptr<xmpp::XmppSession> component =
      EchoComponent(io, (*server)->port(), "s3cret", stopped);
  bool done = false;
  absl::Status failure;
  LoadDriver driver(io, {.outstanding = 8, .count = 300, .warmup_seconds = 0}, 10, server->get(),
                    [&] {
                      done = true;
                      io.stop();
                    });
  (*server)->set_driver(&driver);
  (*server)->Accept([&] { driver.Start(); },
                    [&](absl::Status status) {
                      failure = status;
                      io.stop();
                    });
  component->Start();
  io.run_for(std::chrono::seconds(30));
  EXPECT_TRUE(failure.ok()) << failure;
  ASSERT_TRUE(done);
  EXPECT_EQ((*server)->component_domain(), kDomain);
  EXPECT_EQ(driver.result().sent, 300);
  EXPECT_EQ(driver.result().round_trips, 300);
  EXPECT_EQ(driver.result().timeouts, 0);
  EXPECT_EQ(driver.result().unexpected, 0);
}

TEST(ComponentServerTest, RefusesAComponentWhoseHandshakeDoesNotMatchTheSecret) {
  asio::io_context io;
  absl::StatusOr<std::unique_ptr<ComponentServer>> server =
      ComponentServer::Listen(io, {.secret = "s3cret"});
  ASSERT_TRUE(server.ok()) << server.status();
  std::optional<absl::Status> stopped;
  std::unique_ptr<xmpp::XmppSession> component =
      EchoComponent(io, (*server)->port(), "not-the-secret", stopped);
  bool ready = false;
  std::optional<absl::Status> failure;
  (*server)->Accept([&] { ready = true; }, [&](absl::Status status) { failure = status; });
  component->Start();
  for (int i = 0; i < 200 && !(failure.has_value() && stopped.has_value()); ++i) {
    io.run_for(std::chrono::milliseconds(50));
  }
  EXPECT_FALSE(ready);
  ASSERT_TRUE(failure.has_value());
  EXPECT_EQ(failure->code(), absl::StatusCode::kPermissionDenied);
  // The component was told why: not-authorized, which it takes as a permanent error.
  ASSERT_TRUE(stopped.has_value());
  EXPECT_FALSE(stopped->ok());
}

TEST(ComponentServerTest, RefusesAComponentThatAsksForAnotherDomain) {
  asio::io_context io;
  absl::StatusOr<std::unique_ptr<ComponentServer>> server =
      ComponentServer::Listen(io, {.secret = "s3cret", .component_domain = "other.localhost"});
  ASSERT_TRUE(server.ok()) << server.status();
  std::optional<absl::Status> stopped;
  std::unique_ptr<xmpp::XmppSession> component =
      EchoComponent(io, (*server)->port(), "s3cret", stopped);
  std::optional<absl::Status> failure;
  (*server)->Accept([] {}, [&](absl::Status status) { failure = status; });
  component->Start();
  for (int i = 0; i < 200 && !failure.has_value(); ++i) io.run_for(std::chrono::milliseconds(50));
  ASSERT_TRUE(failure.has_value());
  EXPECT_EQ(failure->code(), absl::StatusCode::kNotFound);
}

TEST(ComponentServerTest, HandshakeDigestIsLowercaseHexSha1OfStreamIdThenSecret) {
  EXPECT_EQ(ComponentHandshakeDigest("3BF96D32", "secret"),
            "b09ea9b3b7f586be8a08d0a3dd7466f110aeb136");
}

}  // namespace
}  // namespace herald::loadgen
