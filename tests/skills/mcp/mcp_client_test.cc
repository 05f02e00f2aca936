#include "skills/mcp/mcp_client.h"

#include <memory>
#include <optional>
#include <string>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "providers/http/http_client.h"
#include "skills/mcp/http_transport.h"
#include "tests/fakes/fake_mcp_http_server.h"
#include "tests/skills/mcp/mcp_test_support.h"

namespace herald::skills::mcp {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using testing::McpTestEnvironment;

std::vector<std::string> RegistryNames(const ToolList& list) {
  std::vector<std::string> names;
  for (const McpTool& tool : list.tools) names.push_back(tool.registry_name);
  return names;
}

class McpClientTest : public ::testing::Test {
 protected:
  std::shared_ptr<McpClient> Client(std::unique_ptr<McpTransport> transport,
                                    absl::Duration timeout = absl::Seconds(5)) {
    return McpClient::Create(env_.io(), std::move(transport),
                             {.server = "fake", .request_timeout = timeout});
  }

  absl::Status Connect(McpClient& client) {
    std::optional<absl::Status> result;
    client.Connect([&](absl::Status status) { result = status; });
    if (!env_.RunUntil([&] { return result.has_value(); })) return absl::DeadlineExceededError("");
    return *result;
  }

  absl::StatusOr<ToolList> List(McpClient& client) {
    std::optional<absl::StatusOr<ToolList>> result;
    client.ListTools([&](absl::StatusOr<ToolList> list) { result = std::move(list); });
    if (!env_.RunUntil([&] { return result.has_value(); })) return absl::DeadlineExceededError("");
    return *std::move(result);
  }

  absl::StatusOr<std::string> Call(McpClient& client, const std::string& name,
                                   nlohmann::json arguments = nlohmann::json::object()) {
    std::optional<absl::StatusOr<std::string>> result;
    client.CallTool(name, arguments,
                    [&](absl::StatusOr<std::string> text) { result = std::move(text); });
    if (!env_.RunUntil([&] { return result.has_value(); })) {
      return absl::InternalError("the test gave up waiting");
    }
    return *std::move(result);
  }

  McpTestEnvironment env_;
};

TEST_F(McpClientTest, ListsEveryPageAndRefusesToolsThatDoNotFit) {
  auto client = Client(env_.FakeServerTransport({"--page_size=2", "--numbered_tools=5"}));
  ASSERT_TRUE(Connect(*client).ok());
  EXPECT_EQ(client->protocol_version(), "2025-06-18");
  absl::StatusOr<ToolList> list = List(*client);
  ASSERT_TRUE(list.ok()) << list.status();
  const std::vector<std::string> names = RegistryNames(*list);
  EXPECT_THAT(names, Contains("fake__echo"));
  EXPECT_THAT(names, Contains("fake__tool_4"));  // on the last of nine pages
  EXPECT_EQ(names.size(), 15u);                  // 17 listed, 2 refused
  EXPECT_THAT(list->refused, Contains(HasSubstr("'!!!'")));
  EXPECT_THAT(list->refused, Contains(HasSubstr("'stringly': inputSchema is not a schema")));
  for (const McpTool& tool : list->tools) EXPECT_FALSE(tool.input_schema.contains("$schema"));
}

TEST_F(McpClientTest, CallsAToolAndJoinsItsTextContent) {
  auto client = Client(env_.FakeServerTransport({}));
  ASSERT_TRUE(Connect(*client).ok());
  EXPECT_EQ(*Call(*client, "add", {{"a", 2}, {"b", 3}}), "5.0");
  EXPECT_EQ(*Call(*client, "image"), "a picture:\n[image: image/png, 8 bytes of base64 not shown]");
}

TEST_F(McpClientTest, AToolErrorIsAnErrorTheModelReads) {
  auto client = Client(env_.FakeServerTransport({}));
  ASSERT_TRUE(Connect(*client).ok());
  absl::StatusOr<std::string> result = Call(*client, "fail");
  EXPECT_EQ(result.status(), absl::UnknownError("it failed on purpose"));
}

TEST_F(McpClientTest, AnswersTheServersPing) {
  auto client = Client(env_.FakeServerTransport({"--ping_before_list"}));
  ASSERT_TRUE(Connect(*client).ok());
  absl::StatusOr<ToolList> list = List(*client);  // answered only once the ping was
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_THAT(RegistryNames(*list), Contains("fake__add"));
}

TEST_F(McpClientTest, AcceptsAnOlderRevisionTheServerAnswersWith) {
  auto client = Client(env_.FakeServerTransport({"--protocol_version=2024-11-05"}));
  ASSERT_TRUE(Connect(*client).ok());
  EXPECT_EQ(client->protocol_version(), "2024-11-05");
  EXPECT_EQ(*Call(*client, "echo", {{"text", "hi"}}), "hi");
}

TEST_F(McpClientTest, RefusesARevisionItDoesNotSpeak) {
  auto client = Client(env_.FakeServerTransport({"--protocol_version=1999-01-01"}));
  absl::Status status = Connect(*client);
  EXPECT_TRUE(absl::IsFailedPrecondition(status)) << status;
  EXPECT_THAT(status.message(), HasSubstr("'1999-01-01'"));
  EXPECT_FALSE(client->connected());
}

TEST_F(McpClientTest, SkipsALineThatIsNotJson) {
  auto client = Client(env_.FakeServerTransport({}));
  ASSERT_TRUE(Connect(*client).ok());
  EXPECT_EQ(*Call(*client, "garbage"), "after garbage");
  EXPECT_EQ(*Call(*client, "echo", {{"text", "still here"}}), "still here");
}

TEST_F(McpClientTest, AnOverlongLineEndsTheServerNotHerald) {
  auto client = Client(env_.FakeServerTransport({}));
  std::optional<absl::Status> closed;
  client->SetHandlers({.on_closed = [&](absl::Status why) { closed = why; }});
  ASSERT_TRUE(Connect(*client).ok());
  absl::StatusOr<std::string> result = Call(*client, "flood");
  EXPECT_TRUE(absl::IsUnavailable(result.status())) << result.status();
  ASSERT_TRUE(env_.RunUntil([&] { return closed.has_value(); }));
  EXPECT_THAT(closed->message(), HasSubstr("a line longer than"));
}

TEST_F(McpClientTest, ACrashFailsTheCallAsUnavailable) {
  auto client = Client(env_.FakeServerTransport({}));
  ASSERT_TRUE(Connect(*client).ok());
  absl::StatusOr<std::string> result = Call(*client, "crash");
  EXPECT_TRUE(absl::IsUnavailable(result.status())) << result.status();
  EXPECT_THAT(result.status().message(), HasSubstr("exited with status 4"));
}

TEST_F(McpClientTest, ASlowAnswerTimesOutAndTheSessionGoesOn) {
  // The timeout leaves the ordinary calls room on a loaded machine; the slow one is far past it.
  auto client = Client(env_.FakeServerTransport({}), absl::Milliseconds(1000));
  ASSERT_TRUE(Connect(*client).ok());
  absl::StatusOr<std::string> result = Call(*client, "slow", {{"ms", 2500}});
  EXPECT_TRUE(absl::IsDeadlineExceeded(result.status())) << result.status();
  // The late answer is dropped; the next call is matched by its own id.
  env_.RunFor(absl::Milliseconds(1800));
  EXPECT_EQ(*Call(*client, "echo", {{"text", "next"}}), "next");
}

class McpHttpTest : public McpClientTest, public ::testing::WithParamInterface<bool> {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<providers::HttpClient>> http =
        providers::HttpClient::Create(env_.io());
    ASSERT_TRUE(http.ok());
    http_ = *std::move(http);
    absl::StatusOr<std::unique_ptr<fakes::FakeMcpHttpServer>> server =
        fakes::FakeMcpHttpServer::Start({.page_size = 4}, /*event_stream=*/GetParam());
    ASSERT_TRUE(server.ok());
    server_ = *std::move(server);
  }

  std::unique_ptr<HttpTransport> Transport() {
    return std::make_unique<HttpTransport>(
        "fake", *http_,
        HttpTransport::Options{.url = server_->url(),
                               .headers = {{"Authorization", "Bearer t0k"}}});
  }

  std::unique_ptr<providers::HttpClient> http_;
  std::unique_ptr<fakes::FakeMcpHttpServer> server_;
};

TEST_P(McpHttpTest, SpeaksStreamableHttpWithASession) {
  auto client = Client(Transport());
  ASSERT_TRUE(Connect(*client).ok());
  absl::StatusOr<ToolList> list = List(*client);
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_THAT(RegistryNames(*list), Contains("fake__count"));
  EXPECT_EQ(*Call(*client, "echo", {{"text", "over http"}}), "over http");
  EXPECT_EQ(Call(*client, "fail").status(), absl::UnknownError("it failed on purpose"));

  const std::vector<fakes::FakeHttpRequest> requests = server_->requests();
  ASSERT_GE(requests.size(), 4u);
  EXPECT_EQ(requests[0].Header("mcp-session-id"), "");
  EXPECT_EQ(requests[0].Header("accept"), "application/json, text/event-stream");
  EXPECT_EQ(requests[0].Header("authorization"), "Bearer t0k");
  for (size_t i = 1; i < requests.size(); ++i) {
    EXPECT_EQ(requests[i].Header("mcp-session-id"), "session-1");
    EXPECT_EQ(requests[i].Header("mcp-protocol-version"), "2025-06-18");
  }
}

TEST_P(McpHttpTest, AnEndedSessionClosesTheTransport) {
  auto client = Client(Transport());
  std::optional<absl::Status> closed;
  client->SetHandlers({.on_closed = [&](absl::Status why) { closed = why; }});
  ASSERT_TRUE(Connect(*client).ok());
  server_->EndSessions();
  EXPECT_TRUE(absl::IsUnavailable(Call(*client, "echo", {{"text", "x"}}).status()));
  ASSERT_TRUE(closed.has_value());
  EXPECT_THAT(closed->message(), HasSubstr("session ended"));
}

INSTANTIATE_TEST_SUITE_P(JsonAndEventStream, McpHttpTest, ::testing::Bool());

}  // namespace
}  // namespace herald::skills::mcp
