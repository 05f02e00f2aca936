#include "tests/fakes/fake_llm_server.h"

#include <algorithm>
#include <asio.hpp>
#include <chrono>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "component/base/hex.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "providers/http/http_client.h"

namespace herald::fakes {
namespace {

using providers::HttpClient;
using providers::HttpRequest;
using providers::HttpResponse;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using json = nlohmann::json;

// Posts raw requests to the fake, so that the test controls every byte Herald would send.
class FakeLlmServerTest : public ::testing::Test {
 protected:
  void Start(LlmWireFormat format, FakeHttpServerOptions http_options = {}) {
    absl::StatusOr<std::unique_ptr<FakeLlmServer>> server =
        FakeLlmServer::Start(format, http_options);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    absl::StatusOr<std::unique_ptr<HttpClient>> http = HttpClient::Create(io_);
    ASSERT_TRUE(http.ok()) << http.status();
    http_ = *std::move(http);
  }

  HttpResponse Post(const std::string& url, const json& body,
                    std::vector<std::pair<std::string, std::string>> headers = {}) {
    HttpRequest request;
    request.url = url;
    request.body = body.dump();
    request.headers = std::move(headers);
    request.retry.max_retries = 0;
    request.ca_file = server_->certificate_path();  // "" in cleartext: no matter
    absl::StatusOr<HttpResponse> result = absl::UnknownError("no answer");
    bool done = false;
    io_.restart();
    asio::post(io_, [&] {
      http_->Send(request, [&](absl::StatusOr<HttpResponse> response) {
        result = std::move(response);
        done = true;
      });
    });
    const absl::Time deadline = absl::Now() + absl::Seconds(10);
    while (!done && absl::Now() < deadline) io_.run_one_for(std::chrono::milliseconds(50));
    EXPECT_TRUE(result.ok()) << result.status();
    return result.ok() ? *result : HttpResponse{};
  }

  asio::io_context io_;
  std::unique_ptr<HttpClient> http_;
  std::unique_ptr<FakeLlmServer> server_;
};

const json kAnthropicBody = {
    {"model", "claude-x"},
    {"max_tokens", 100},
    {"system", "Be brief."},
    {"messages", {{{"role", "user"}, {"content", "hello"}}}},
    {"tools", {{{"name", "current_time"}, {"input_schema", json::object()}}}}};

TEST_F(FakeLlmServerTest, RefusesWhatTheRealAnthropicApiRefuses) {
  Start(LlmWireFormat::kAnthropic);
  const std::string url = server_->base_url() + "/v1/messages";
  HttpResponse wrong_path = Post(server_->base_url() + "/v1/complete", kAnthropicBody,
                                 {{"anthropic-version", "2023-06-01"}});
  EXPECT_EQ(wrong_path.status, 404);
  HttpResponse no_version = Post(url, kAnthropicBody);
  EXPECT_EQ(no_version.status, 400);
  EXPECT_THAT(no_version.body, HasSubstr("anthropic-version"));
  json no_max_tokens = kAnthropicBody;
  no_max_tokens.erase("max_tokens");
  EXPECT_EQ(Post(url, no_max_tokens, {{"anthropic-version", "2023-06-01"}}).status, 400);

  server_->RequireApiKey("right");
  HttpResponse wrong_key =
      Post(url, kAnthropicBody, {{"anthropic-version", "2023-06-01"}, {"x-api-key", "wrong"}});
  EXPECT_EQ(wrong_key.status, 401);
  EXPECT_EQ(json::parse(wrong_key.body)["error"]["type"], "authentication_error");
  // Refused requests are recorded and consume no scripted answer.
  EXPECT_EQ(server_->request_count(), 4u);
}

TEST_F(FakeLlmServerTest, RecordsTheRequestReadInTheFormatsTerms) {
  Start(LlmWireFormat::kAnthropic);
  server_->Enqueue(Answer::Text("scripted"));
  EXPECT_EQ(server_->pending_answers(), 1u);
  HttpResponse response = Post(server_->base_url() + "/v1/messages", kAnthropicBody,
                               {{"anthropic-version", "2023-06-01"}});
  EXPECT_EQ(response.status, 200);
  EXPECT_EQ(json::parse(response.body)["content"][0]["text"], "scripted");
  EXPECT_EQ(server_->pending_answers(), 0u);
  ASSERT_TRUE(server_->WaitForRequests(1, absl::Seconds(1)));
  const RecordedLlmRequest request = server_->requests()[0];
  EXPECT_EQ(request.model, "claude-x");
  EXPECT_EQ(request.System(), "Be brief.");
  EXPECT_EQ(request.LastUserText(), "hello");
  EXPECT_EQ(request.MessageCount(), 1u);
  EXPECT_FALSE(request.LastToolResult().has_value());
  EXPECT_THAT(request.ToolNames(), ElementsAre("current_time"));
  EXPECT_FALSE(request.stream);
  EXPECT_TRUE(request.images.empty());
}

TEST_F(FakeLlmServerTest, CountsRequestsItWasToldNotToKeep) {
  Start(LlmWireFormat::kAnthropic, {.keep_requests = false});
  for (int i = 0; i < 2; ++i) {
    HttpResponse response = Post(server_->base_url() + "/v1/messages", kAnthropicBody,
                                 {{"anthropic-version", "2023-06-01"}});
    EXPECT_EQ(response.status, 200);
  }
  EXPECT_TRUE(server_->WaitForRequests(2, absl::Seconds(5)));
  EXPECT_EQ(server_->request_count(), 2u);
  EXPECT_TRUE(server_->requests().empty());
}

TEST_F(FakeLlmServerTest, AnswersOverTlsToAClientThatTrustsItsCertificate) {
  Start(LlmWireFormat::kAnthropic, {.tls = true});
  ASSERT_FALSE(server_->certificate_path().empty());
  EXPECT_EQ(server_->base_url(), absl::StrCat("https://127.0.0.1:", server_->port()));
  HttpResponse response = Post(server_->base_url() + "/v1/messages", kAnthropicBody,
                               {{"anthropic-version", "2023-06-01"}});
  EXPECT_EQ(response.status, 200);
  EXPECT_EQ(json::parse(response.body)["content"][0]["text"], FakeLlmServer::kDefaultText);
  ASSERT_EQ(server_->request_count(), 1u);
  EXPECT_EQ(server_->requests()[0].model, "claude-x");
  // Herald's client offers HTTP/2 by ALPN over TLS.
  EXPECT_EQ(server_->requests()[0].http.version, "HTTP/2");
}

// "abc" in base64, and its SHA-256.
constexpr char kAbc64[] = "YWJj";
constexpr char kAbcSha256[] = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";

json AnthropicImageBody(const json& source) {
  return {{"model", "claude-x"},
          {"max_tokens", 100},
          {"messages",
           {{{"role", "user"},
             {"content",
              {{{"type", "image"}, {"source", source}}, {{"type", "text"}, {"text", "what?"}}}}}}}};
}

TEST_F(FakeLlmServerTest, RecordsTheImagesOfAnAnthropicRequestDecoded) {
  Start(LlmWireFormat::kAnthropic);
  HttpResponse response =
      Post(server_->base_url() + "/v1/messages",
           AnthropicImageBody({{"type", "base64"}, {"media_type", "image/png"}, {"data", kAbc64}}),
           {{"anthropic-version", "2023-06-01"}});
  EXPECT_EQ(response.status, 200);
  const RecordedLlmRequest request = server_->requests()[0];
  EXPECT_EQ(request.LastUserText(), "what?");
  ASSERT_EQ(request.images.size(), 1u);
  EXPECT_EQ(request.images[0].media_type, "image/png");
  EXPECT_EQ(request.images[0].size, 3u);
  EXPECT_EQ(request.images[0].sha256, kAbcSha256);
}

TEST_F(FakeLlmServerTest, RefusesAMalformedAnthropicImageAsTheApiDoes) {
  Start(LlmWireFormat::kAnthropic);
  auto post = [&](const json& source) {
    return Post(server_->base_url() + "/v1/messages", AnthropicImageBody(source),
                {{"anthropic-version", "2023-06-01"}});
  };
  HttpResponse bad_base64 =
      post({{"type", "base64"}, {"media_type", "image/png"}, {"data", "YWJ!"}});
  EXPECT_EQ(bad_base64.status, 400);
  EXPECT_EQ(json::parse(bad_base64.body)["error"]["type"], "invalid_request_error");
  EXPECT_THAT(bad_base64.body, HasSubstr("invalid base64 data"));
  HttpResponse no_media_type = post({{"type", "base64"}, {"data", kAbc64}});
  EXPECT_EQ(no_media_type.status, 400);
  EXPECT_THAT(no_media_type.body, HasSubstr("media_type"));
  EXPECT_EQ(post({{"type", "base64"}, {"media_type", "image/bmp"}, {"data", kAbc64}}).status, 400);
  EXPECT_EQ(post({{"type", "base64"}, {"media_type", "image/png"}, {"data", "YWJj\n"}}).status,
            400);
  EXPECT_EQ(post({{"type", "url"}, {"url", "https://example.org/a.png"}}).status, 400);
  // Refused requests are recorded, without images.
  ASSERT_EQ(server_->request_count(), 5u);
  EXPECT_TRUE(server_->requests()[0].images.empty());
}

TEST_F(FakeLlmServerTest, RecordsTheImagesOfAnOpenAiRequestFromTheirDataUrls) {
  Start(LlmWireFormat::kOpenAi);
  auto body = [](const std::string& url) {
    return json{{"model", "gpt-x"},
                {"messages",
                 {{{"role", "user"},
                   {"content",
                    {{{"type", "text"}, {"text", "what?"}},
                     {{"type", "image_url"}, {"image_url", {{"url", url}}}}}}}}}};
  };
  const std::string url = server_->base_url() + "/chat/completions";
  EXPECT_EQ(Post(url, body(std::string("data:image/webp;base64,") + kAbc64)).status, 200);
  const RecordedLlmRequest request = server_->requests()[0];
  EXPECT_EQ(request.LastUserText(), "what?");
  ASSERT_EQ(request.images.size(), 1u);
  EXPECT_EQ(request.images[0].media_type, "image/webp");
  EXPECT_EQ(request.images[0].size, 3u);
  EXPECT_EQ(request.images[0].sha256, kAbcSha256);

  HttpResponse bad_base64 = Post(url, body("data:image/png;base64,Y=Jj"));
  EXPECT_EQ(bad_base64.status, 400);
  EXPECT_EQ(json::parse(bad_base64.body)["error"]["type"], "invalid_request_error");
  EXPECT_EQ(Post(url, body(std::string("data:;base64,") + kAbc64)).status, 400);
  EXPECT_EQ(Post(url, body("https://example.org/a.png")).status, 400);
}

TEST_F(FakeLlmServerTest, RecordsTheImagesOfAnOllamaRequestWithoutAMediaType) {
  Start(LlmWireFormat::kOllama);
  auto body = [](const json& images) {
    return json{{"model", "llava"},
                {"stream", false},
                {"messages", {{{"role", "user"}, {"content", "what?"}, {"images", images}}}}};
  };
  const std::string url = server_->base_url() + "/api/chat";
  EXPECT_EQ(Post(url, body({kAbc64, "AAEC"})).status, 200);
  const RecordedLlmRequest request = server_->requests()[0];
  ASSERT_EQ(request.images.size(), 2u);
  EXPECT_EQ(request.images[0].media_type, "");
  EXPECT_EQ(request.images[0].sha256, kAbcSha256);
  EXPECT_EQ(request.images[1].size, 3u);
  EXPECT_EQ(request.images[1].sha256, base::Sha256Hex(std::string("\0\1\2", 3)));

  // Ollama wants the bare base64: a data URL is not base64.
  HttpResponse data_url = Post(url, body({std::string("data:image/png;base64,") + kAbc64}));
  EXPECT_EQ(data_url.status, 400);
  EXPECT_THAT(json::parse(data_url.body)["error"].get<std::string>(),
              HasSubstr("invalid base64 data"));
  EXPECT_EQ(Post(url, body(kAbc64)).status, 400);  // not an array
}

TEST_F(FakeLlmServerTest, FallsBackFromTheScriptToTheHandlerToTheDefault) {
  Start(LlmWireFormat::kOpenAi);
  const std::string url = server_->base_url() + "/chat/completions";
  const json body = {
      {"model", "gpt-x"},
      {"messages",
       {{{"role", "system"}, {"content", "sys"}}, {{"role", "user"}, {"content", "ping"}}}}};
  auto text_of = [](const HttpResponse& response) {
    return json::parse(response.body)["choices"][0]["message"]["content"].get<std::string>();
  };
  EXPECT_EQ(text_of(Post(url, body)), FakeLlmServer::kDefaultText);
  server_->SetHandler(FakeLlmServer::Echo());
  EXPECT_EQ(text_of(Post(url, body)), "echo: ping");
  server_->Enqueue(Answer::Text("from the script"));
  EXPECT_EQ(text_of(Post(url, body)), "from the script");
  EXPECT_EQ(server_->requests()[0].System(), "sys");
  EXPECT_EQ(server_->requests()[0].MessageCount(), 1u);
}

TEST_F(FakeLlmServerTest, ToolLoopAnswersATrailingToolResultWithText) {
  Start(LlmWireFormat::kOllama);
  server_->SetHandler(FakeLlmServer::ToolLoop("current_time", {}));
  const std::string url = server_->base_url() + "/api/chat";
  json body = {{"model", "llama"},
               {"stream", false},
               {"messages", {{{"role", "user"}, {"content", "time?"}}}}};
  json first = json::parse(Post(url, body).body);
  EXPECT_EQ(first["message"]["tool_calls"][0]["function"]["name"], "current_time");
  EXPECT_EQ(first["message"]["tool_calls"][0]["function"]["arguments"], json::object());
  body["messages"].push_back(first["message"]);
  body["messages"].push_back(
      {{"role", "tool"}, {"tool_name", "current_time"}, {"content", "noon"}});
  json second = json::parse(Post(url, body).body);
  EXPECT_EQ(second["message"]["content"], "tool said: noon");
  EXPECT_EQ(server_->requests()[1].LastToolResult(), "noon");
}

TEST_F(FakeLlmServerTest, StreamsOllamaAnswersWhenTheRequestSaysNothing) {
  Start(LlmWireFormat::kOllama);
  server_->Enqueue(Answer::Text("two words"));
  HttpResponse response =
      Post(server_->base_url() + "/api/chat",
           {{"model", "llama"}, {"messages", {{{"role", "user"}, {"content", "hi"}}}}});
  EXPECT_EQ(response.Header("content-type"), "application/x-ndjson");
  EXPECT_EQ(std::count(response.body.begin(), response.body.end(), '\n'), 3);  // 2 words + done
  EXPECT_TRUE(server_->requests()[0].stream);
}

TEST_F(FakeLlmServerTest, SendsRetryAfterWithARateLimit) {
  Start(LlmWireFormat::kOpenAi);
  server_->Enqueue(Answer::RateLimited(absl::Milliseconds(1500)));
  HttpResponse response =
      Post(server_->base_url() + "/chat/completions",
           {{"model", "gpt-x"}, {"messages", {{{"role", "user"}, {"content", "hi"}}}}});
  EXPECT_EQ(response.status, 429);
  EXPECT_EQ(response.Header("retry-after"), "2");
  EXPECT_EQ(json::parse(response.body)["error"]["code"], "rate_limit_exceeded");
}

}  // namespace
}  // namespace herald::fakes
