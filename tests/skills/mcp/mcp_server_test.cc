#include "skills/mcp/mcp_server.h"

#include <atomic>
#include <memory>
#include <optional>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "providers/http/http_client.h"
#include "skills/mcp/http_transport.h"
#include "tests/fakes/fake_mcp_http_server.h"
#include "tests/skills/mcp/mcp_test_support.h"

namespace herald::skills::mcp {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::McpTestEnvironment;
using ::testing::Not;

class McpServerTest : public ::testing::Test {
 protected:
  ~McpServerTest() override {
    if (server_ != nullptr) server_->Stop();
  }

  void StartServer(McpServer::TransportFactory factory, McpServer::Options options = {}) {
    options.name = "fake";
    options.initial_backoff = absl::Milliseconds(50);
    options.max_backoff = absl::Milliseconds(200);
    if (options.request_timeout == absl::Seconds(30)) options.request_timeout = absl::Seconds(5);
    registry_.ReserveNamespace("fake__");
    server_ = McpServer::Create(env_.io(), registry_, std::move(factory), options);
    server_->Start();
  }

  void StartFake(std::vector<std::string> flags = {}) {
    StartServer([this, flags] { return env_.FakeServerTransport(flags); });
    ASSERT_TRUE(env_.RunUntil([&] { return server_->ready(); }));
  }

  // Calls a registered tool as the agent does: Check, then Execute.
  absl::StatusOr<std::string> Call(const std::string& name,
                                   nlohmann::json arguments = nlohmann::json::object()) {
    absl::StatusOr<Skill*> skill = registry_.Check(name, arguments);
    if (!skill.ok()) return skill.status();
    std::optional<absl::StatusOr<std::string>> result;
    (*skill)->Execute(arguments, SkillContext{},
                      [&](absl::StatusOr<std::string> text) { result = std::move(text); });
    if (!env_.RunUntil([&] { return result.has_value(); }, absl::Seconds(15))) {
      return absl::InternalError("the test gave up waiting");
    }
    return *std::move(result);
  }

  std::vector<std::string> EnabledNames() const {
    std::vector<std::string> names;
    for (const providers::ToolSpec& tool : registry_.EnabledTools()) names.push_back(tool.name);
    return names;
  }

  McpTestEnvironment env_;
  SkillRegistry registry_;
  std::shared_ptr<McpServer> server_;
};

TEST_F(McpServerTest, AToolThatEchoesTheServersSecretsHasThemRedactedBeforeTheModel) {
  // [[skills.mcp]] environment and headers values authenticate the server; a tool echoing one
  // must not hand it to the model (issue 16: the redaction pattern beyond skills' stdout).
  StartServer([this] { return env_.FakeServerTransport({}); },
              {.secrets = {{"API_TOKEN", "sk-mcp-secret-1"}}});
  ASSERT_TRUE(env_.RunUntil([&] { return server_->ready(); }));
  ASSERT_TRUE(registry_.SetEnabled({"fake__*"}).ok());
  absl::StatusOr<std::string> echoed =
      Call("fake__echo", {{"text", "my token is sk-mcp-secret-1"}});
  ASSERT_TRUE(echoed.ok()) << echoed.status();
  EXPECT_THAT(*echoed, HasSubstr("[redacted API_TOKEN]"));
  EXPECT_THAT(*echoed, Not(HasSubstr("sk-mcp-secret-1")));
}

TEST_F(McpServerTest, ToolsJoinTheRegistryUnderTheServersNameAndSource) {
  StartFake();
  ASSERT_TRUE(registry_.SetEnabled({"fake__*"}).ok());
  EXPECT_THAT(server_->tool_names(), Contains("fake__echo"));
  EXPECT_THAT(server_->tool_names(), Not(Contains("fake__stringly")));
  EXPECT_THAT(EnabledNames(), Contains("fake__add"));
  for (const Skill* skill : registry_.All()) EXPECT_EQ(skill->source(), "mcp:fake");
  EXPECT_EQ(*Call("fake__echo", {{"text", "hello"}}), "hello");
  // The registry checks arguments against the server's schema before the call.
  EXPECT_TRUE(absl::IsInvalidArgument(Call("fake__echo", {{"text", 5}}).status()));
}

TEST_F(McpServerTest, AnExactNameEnabledBeforeTheServerIsUpIsEnabledWhenItArrives) {
  registry_.ReserveNamespace("fake__");
  ASSERT_TRUE(registry_.SetEnabled({"fake__echo"}).ok());
  StartFake();
  EXPECT_THAT(EnabledNames(), ElementsAre("fake__echo"));
  EXPECT_TRUE(absl::IsPermissionDenied(Call("fake__add", {{"a", 1}, {"b", 1}}).status()));
}

TEST_F(McpServerTest, ListChangedAddsAndRemovesTools) {
  StartFake();
  ASSERT_TRUE(registry_.SetEnabled({"fake__*"}).ok());
  EXPECT_THAT(EnabledNames(), Not(Contains("fake__extra")));
  EXPECT_EQ(*Call("fake__change"), "changed");
  ASSERT_TRUE(env_.RunUntil([&] {
    return registry_.IsEnabled("fake__extra") &&
           registry_.Check("fake__extra", nlohmann::json::object()).ok();
  }));
  EXPECT_EQ(*Call("fake__extra"), "ran extra");
  EXPECT_EQ(*Call("fake__change"), "changed");
  ASSERT_TRUE(env_.RunUntil(
      [&] { return !registry_.Check("fake__extra", nlohmann::json::object()).ok(); }));
  EXPECT_TRUE(absl::IsNotFound(registry_.Check("fake__extra", nlohmann::json::object()).status()));
  EXPECT_EQ(*Call("fake__echo", {{"text", "still"}}), "still");
}

TEST_F(McpServerTest, ADeadServerIsRestartedAndLaterCallsWork) {
  StartFake();
  ASSERT_TRUE(registry_.SetEnabled({"fake__*"}).ok());
  // The crash is a transport failure: the call is retried on the restarted server, which
  // crashes again, until the attempts are used up.
  absl::StatusOr<std::string> crashed = Call("fake__crash");
  EXPECT_TRUE(absl::IsUnavailable(crashed.status())) << crashed.status();
  EXPECT_THAT(crashed.status().message(), HasSubstr("the MCP server fake is unavailable"));
  EXPECT_THAT(crashed.status().message(), HasSubstr("fake__echo"));
  ASSERT_TRUE(env_.RunUntil([&] { return server_->ready(); }));
  EXPECT_GE(server_->connections(), 3);
  EXPECT_EQ(*Call("fake__echo", {{"text", "back"}}), "back");
}

TEST_F(McpServerTest, ACallInterruptedByATransportFailureIsRetried) {
  absl::StatusOr<std::unique_ptr<providers::HttpClient>> http =
      providers::HttpClient::Create(env_.io());
  ASSERT_TRUE(http.ok());
  absl::StatusOr<std::unique_ptr<fakes::FakeMcpHttpServer>> fake =
      fakes::FakeMcpHttpServer::Start({}, /*event_stream=*/true);
  ASSERT_TRUE(fake.ok());
  StartServer([&] {
    return std::make_unique<HttpTransport>("fake", **http,
                                           HttpTransport::Options{.url = (*fake)->url()});
  });
  ASSERT_TRUE(env_.RunUntil([&] { return server_->ready(); }));
  ASSERT_TRUE(registry_.SetEnabled({"fake__*"}).ok());
  (*fake)->EndSessions();  // the next POST gets 404: the session is gone
  EXPECT_EQ(*Call("fake__echo", {{"text", "again"}}), "again");
  EXPECT_EQ((*fake)->sessions(), 2);
  server_->Stop();
  server_ = nullptr;
}

TEST_F(McpServerTest, AServerThatKeepsFailingAnswersAtOnceNamingItsTools) {
  auto starts = std::make_shared<int>(0);
  StartServer([this, starts] {
    // The first start works; every restart fails at once.
    return env_.FakeServerTransport(++*starts == 1 ? std::vector<std::string>{}
                                                   : std::vector<std::string>{"--crash_on_start"});
  });
  ASSERT_TRUE(env_.RunUntil([&] { return server_->ready(); }));
  ASSERT_TRUE(registry_.SetEnabled({"fake__*"}).ok());
  absl::StatusOr<std::string> first = Call("fake__crash");
  EXPECT_TRUE(absl::IsUnavailable(first.status()));
  ASSERT_TRUE(env_.RunUntil([&] { return server_->unavailable(); }));
  // The answer comes at once, before the loop runs again: nothing waits for the server.
  absl::StatusOr<Skill*> echo = registry_.Check("fake__echo", {{"text", "x"}});
  ASSERT_TRUE(echo.ok());
  std::optional<absl::StatusOr<std::string>> answered;
  (*echo)->Execute({{"text", "x"}}, SkillContext{},
                   [&](absl::StatusOr<std::string> text) { answered = std::move(text); });
  ASSERT_TRUE(answered.has_value());
  const absl::StatusOr<std::string>& later = *answered;
  EXPECT_TRUE(absl::IsUnavailable(later.status()));
  EXPECT_THAT(later.status().message(),
              HasSubstr("the MCP server fake is unavailable (it exited with status 3)"));
  EXPECT_THAT(later.status().message(), HasSubstr("fake__echo, fake__add"));
  EXPECT_THAT(later.status().message(), HasSubstr("cannot be used now"));
  // It keeps trying in the background.
  const int connections = server_->connections();
  ASSERT_TRUE(env_.RunUntil([&] { return server_->connections() > connections; }));
}

TEST_F(McpServerTest, ShutdownCallsNothingBack) {
  StartFake();
  ASSERT_TRUE(registry_.SetEnabled({"fake__*"}).ok());
  absl::StatusOr<Skill*> slow = registry_.Check("fake__slow", {{"ms", 500}});
  ASSERT_TRUE(slow.ok());
  bool called = false;
  (*slow)->Execute({{"ms", 500}}, SkillContext{},
                   [&](absl::StatusOr<std::string>) { called = true; });
  env_.RunFor(absl::Milliseconds(50));
  server_->Shutdown();
  env_.RunFor(absl::Milliseconds(700));
  EXPECT_FALSE(called);
  EXPECT_TRUE(registry_.Names().empty());
}

TEST_F(McpServerTest, StopUnregistersItsTools) {
  StartFake();
  EXPECT_FALSE(registry_.Names().empty());
  server_->Stop();
  EXPECT_TRUE(registry_.Names().empty());
}

}  // namespace
}  // namespace herald::skills::mcp
