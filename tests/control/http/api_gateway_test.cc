// The HTTP/JSON gateway over a real control server and runtime: unary calls and their errors,
// the server-sent events of the streaming calls, and that the tokens, scopes and audit are
// the control plane's own.
#include "control/http/api_gateway.h"

#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/control/control_test_env.h"
#include "tests/control/http/http_test_client.h"

namespace herald::control::http {
namespace {

using ::herald::control::testing::ControlTestEnv;
using ::herald::control::testing::PollUntil;
using ::herald::control::testing::TokenFor;
using ::testing::HasSubstr;
using ::testing::Not;

// An answer split into its status, head and body (chunked bodies joined).
struct Answer {
  int status = 0;
  std::string head;
  std::string body;
};

Answer Split(const std::string& bytes) {
  Answer answer;
  const size_t end = bytes.find("\r\n\r\n");
  if (bytes.size() < 12 || end == std::string::npos) return answer;
  answer.status = std::stoi(bytes.substr(9, 3));
  answer.head = bytes.substr(0, end);
  std::string rest = bytes.substr(end + 4);
  if (answer.head.find("Transfer-Encoding: chunked") == std::string::npos) {
    answer.body = rest;
    return answer;
  }
  while (!rest.empty()) {
    const size_t line = rest.find("\r\n");
    if (line == std::string::npos) break;
    const size_t size = std::stoul(rest.substr(0, line), nullptr, 16);
    if (size == 0) break;
    answer.body += rest.substr(line + 2, size);
    rest.erase(0, line + 2 + size + 2);
  }
  return answer;
}

class ApiGatewayTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(env_.Start().ok());
    env_.OnLoop([this] {
      authenticator_.emplace(*Authenticator::Create(env_.config().control.tokens));
      server_ = *HttpServer::Start(env_.services().io, {.listen = "127.0.0.1:0"});
      ServeApi(*server_, {.io = env_.services().io,
                          .workers = env_.services().workers,
                          .channel = env_.server().InProcessChannel(),
                          .authenticator = &*authenticator_,
                          .heartbeat = absl::Milliseconds(200),
                          .begin_after = absl::Seconds(2)});
    });
  }

  void TearDown() override {
    env_.OnLoop([this] { server_.reset(); });
  }

  static std::string Request(const std::string& method, const std::string& path,
                             const std::string& token, const std::string& body,
                             const std::string& content_type = "application/json") {
    std::string request = absl::StrCat(method, " ", path, " HTTP/1.1\r\nHost: h\r\n");
    if (!token.empty())
      absl::StrAppend(&request, "Authorization: Bearer ", TokenFor(token), "\r\n");
    if (!body.empty()) absl::StrAppend(&request, "Content-Type: ", content_type, "\r\n");
    absl::StrAppend(&request, "Content-Length: ", body.size(), "\r\nConnection: close\r\n\r\n",
                    body);
    return request;
  }

  Answer Call(const std::string& method, const std::string& token, const std::string& body = "",
              const std::string& content_type = "application/json") {
    return Split(http::testing::HttpExchange(
        server_->port(),
        Request("POST", absl::StrCat("/api/", method), token, body, content_type)));
  }

  std::string AuditText() { return env_.AuditText(); }

  ControlTestEnv env_;
  std::optional<Authenticator> authenticator_;
  std::unique_ptr<HttpServer> server_;
};

TEST_F(ApiGatewayTest, AUnaryCallAnswersItsResponseAsJsonAndIsAuditedLikeGrpc) {
  const Answer answer = Call("herald.v1.AdminService/GetStatus", "reader");
  ASSERT_EQ(answer.status, 200) << answer.head << answer.body;
  EXPECT_THAT(answer.head, HasSubstr("Content-Type: application/json"));
  const nlohmann::json status = nlohmann::json::parse(answer.body, nullptr, false);
  ASSERT_TRUE(status.is_object()) << answer.body;
  EXPECT_TRUE(status.contains("version")) << answer.body;
  // Defaults are written too, so a client sees every field.
  EXPECT_TRUE(status.contains("messagesReceived")) << answer.body;
  const std::string audit = AuditText();
  EXPECT_THAT(audit, HasSubstr("AdminService/GetStatus"));
  EXPECT_THAT(audit, HasSubstr("\"reader\""));
  EXPECT_THAT(audit, Not(HasSubstr(TokenFor("reader"))));
}

TEST_F(ApiGatewayTest, RefusalsHaveTheirHttpStatusAndAnErrorObject) {
  Answer answer = Call("herald.v1.AdminService/GetStatus", "");
  EXPECT_EQ(answer.status, 401);
  nlohmann::json error = nlohmann::json::parse(answer.body, nullptr, false);
  EXPECT_EQ(error.value("status", ""), "UNAUTHENTICATED") << answer.body;
  EXPECT_EQ(error.value("code", -1), 16);

  answer = Call("herald.v1.AdminService/ReloadConfig", "reader");
  EXPECT_EQ(answer.status, 403);
  error = nlohmann::json::parse(answer.body, nullptr, false);
  EXPECT_THAT(error.value("message", ""), HasSubstr("lacks the 'admin' scope"));

  answer = Call("herald.v1.AdminService/NoSuchThing", "root");
  EXPECT_EQ(answer.status, 404);
  answer = Call("grpc.health.v1.Health/Check", "root");
  EXPECT_EQ(answer.status, 404) << "only the methods of the scope table are served";

  answer = Call("herald.v1.SessionService/GetHistory", "reader", "{\"key\": 5");
  EXPECT_EQ(answer.status, 400);
  EXPECT_THAT(answer.body, HasSubstr("INVALID_ARGUMENT"));
  answer = Call("herald.v1.SessionService/GetHistory", "reader", "{\"nonsense\": 1}");
  EXPECT_EQ(answer.status, 400) << "unknown fields are refused, not ignored";
  answer = Call("herald.v1.SessionService/GetHistory", "reader", "{}", "text/plain");
  EXPECT_EQ(answer.status, 415);
  answer = Call("herald.v1.SessionService/GetHistory", "reader",
                std::string(100, '[') + std::string(100, ']'));
  EXPECT_EQ(answer.status, 400);
  EXPECT_THAT(answer.body, HasSubstr("deeper than 64"));

  answer = Call("herald.v1.HookService/Attach", "root", "{}");
  EXPECT_EQ(answer.status, 501);

  // The server's own answer to a bad argument keeps its code.
  answer = Call("herald.v1.SessionService/Converse", "operator",
                R"({"conversation": "no spaces allowed", "text": "hello"})");
  EXPECT_EQ(answer.status, 400) << answer.head << answer.body;
  EXPECT_THAT(answer.head, HasSubstr("application/json"));
}

TEST_F(ApiGatewayTest, TheIndexListsEveryMethodWithItsScope) {
  const Answer answer =
      Split(http::testing::HttpExchange(server_->port(), Request("GET", "/api/", "", "")));
  ASSERT_EQ(answer.status, 200);
  const nlohmann::json index = nlohmann::json::parse(answer.body, nullptr, false);
  ASSERT_TRUE(index.contains("methods")) << answer.body;
  size_t served = 0;
  bool converse_streams = false;
  for (const nlohmann::json& method : index["methods"]) {
    served += method.value("http", false) ? 1 : 0;
    if (method.value("path", "") == "/api/herald.v1.SessionService/Converse") {
      converse_streams = method.value("streaming", false);
      EXPECT_EQ(method.value("scope", ""), "operate");
    }
  }
  EXPECT_EQ(index["methods"].size(), std::size(kMethodScopes));
  EXPECT_EQ(served, std::size(kMethodScopes) - 1) << "all but HookService/Attach";
  EXPECT_TRUE(converse_streams);
}

TEST_F(ApiGatewayTest, ConverseStreamsItsRunAsServerSentEvents) {
  const Answer answer = Call("herald.v1.SessionService/Converse", "operator",
                             R"({"conversation": "http-test", "text": "hello there"})");
  ASSERT_EQ(answer.status, 200) << answer.head << answer.body;
  EXPECT_THAT(answer.head, HasSubstr("Content-Type: text/event-stream"));
  EXPECT_THAT(answer.body, HasSubstr("event: message\ndata: {"));
  EXPECT_THAT(answer.body, HasSubstr("Hello from the scripted provider"));
  EXPECT_THAT(answer.body, HasSubstr("event: end\ndata: {\"code\":0,"));
  // Each event is one data line of JSON.
  std::istringstream lines(answer.body);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("data: ", 0) != 0) continue;
    EXPECT_FALSE(nlohmann::json::parse(line.substr(6), nullptr, false).is_discarded()) << line;
  }
  // A stream is audited when the server is done with it, which may be a moment after the
  // client read its last event (it failed once in tools/test without the wait).
  PollUntil([&] { return AuditText().find("SessionService/Converse") != std::string::npos; },
            absl::Seconds(20));
  EXPECT_THAT(AuditText(), HasSubstr("SessionService/Converse"));
}

TEST_F(ApiGatewayTest, AStreamTheTokenMayNotOpenIsAPlainRefusal) {
  const Answer answer = Call("herald.v1.SessionService/Converse", "reader",
                             R"({"conversation": "http-test", "text": "hello"})");
  EXPECT_EQ(answer.status, 403);
  EXPECT_THAT(answer.head, HasSubstr("application/json"));
  // The gateway refuses at once; the server's call, refused too, is audited when it ends,
  // which may be after the client has its 403.
  EXPECT_TRUE(PollUntil([&] { return AuditText().find("PERMISSION_DENIED") != std::string::npos; },
                        absl::Seconds(20)))
      << AuditText();
}

TEST_F(ApiGatewayTest,
       SubscribeDeliversEventsAsTheyHappenWithHeartbeatsAndEndsWhenTheClientLeaves) {
  const int fd = http::testing::ConnectTo(server_->port());
  ASSERT_GE(fd, 0);
  http::testing::SendAll(fd,
                         Request("POST", "/api/herald.v1.AdminService/Subscribe", "reader", "{}"));
  std::string received;
  auto read_until = [&](const std::string& wanted) {
    char buffer[4096];
    while (received.find(wanted) == std::string::npos) {
      const ssize_t n = ::recv(fd, buffer, sizeof(buffer), 0);
      if (n <= 0) return false;
      received.append(buffer, static_cast<size_t>(n));
    }
    return true;
  };
  // The head comes at once, before any event: the token may subscribe.
  ASSERT_TRUE(read_until("\r\n\r\n"));
  EXPECT_THAT(received, HasSubstr("200 OK"));
  EXPECT_THAT(received, HasSubstr("text/event-stream"));
  ASSERT_TRUE(read_until(": keep-alive"));
  // Subscribe's own stream is open once the bus has a subscriber; publish until it arrives.
  bool delivered = false;
  for (int attempt = 0; attempt < 100 && !delivered; ++attempt) {
    env_.events().Publish(events::Event{
        .type = events::EventType::kRunStarted, .time = absl::Now(), .run_id = "run-over-http"});
    char buffer[4096];
    timeval quick{.tv_sec = 0, .tv_usec = 100000};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &quick, sizeof(quick));
    const ssize_t n = ::recv(fd, buffer, sizeof(buffer), 0);
    if (n > 0) received.append(buffer, static_cast<size_t>(n));
    delivered = received.find("run-over-http") != std::string::npos;
  }
  EXPECT_TRUE(delivered) << received;
  const size_t before = env_.events().subscriber_count();
  ::close(fd);
  // Leaving cancels the call: its subscription goes (noticed at the next heartbeat's write).
  EXPECT_TRUE(
      PollUntil([&] { return env_.events().subscriber_count() < before; }, absl::Seconds(20)));
}

TEST_F(ApiGatewayTest, AClientStreamingCallTakesAnArrayOfRequests) {
  const std::string line1 =
      R"({"id":"t1","name":"weather","description":"the weather","input_schema":{"type":"object"},"executor":{"type":"skill","skill":"shout"}})";
  const std::string line2 =
      R"({"id":"t2","name":"tides","description":"the tides","input_schema":{"type":"object"},"executor":{"type":"skill","skill":"shout"}})";
  auto base64 = [](const std::string& text) {
    static constexpr char kAlphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    int value = 0, bits = -6;
    for (unsigned char c : text) {
      value = (value << 8) + c;
      bits += 8;
      while (bits >= 0) {
        out.push_back(kAlphabet[(value >> bits) & 0x3F]);
        bits -= 6;
      }
    }
    if (bits > -6) out.push_back(kAlphabet[((value << 8) >> (bits + 8)) & 0x3F]);
    while (out.size() % 4 != 0) out.push_back('=');
    return out;
  };
  const Answer answer = Call("herald.v1.SkillService/ImportTools", "administrator",
                             absl::StrCat(R"([{"data": ")", base64(line1 + "\n"),
                                          R"("}, {"data": ")", base64(line2 + "\n"), R"("}])"));
  ASSERT_EQ(answer.status, 200) << answer.head << answer.body;
  EXPECT_THAT(answer.body, HasSubstr("\"added\":\"2\"")) << answer.body;
  EXPECT_THAT(answer.body, HasSubstr("event: end"));
}

}  // namespace
}  // namespace herald::control::http
