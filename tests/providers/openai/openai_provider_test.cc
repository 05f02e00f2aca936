#include "providers/openai/openai_provider.h"

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "component/base/hex.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/fakes/fake_llm_server.h"
#include "tests/providers/wire/provider_harness.h"

namespace herald::providers {
namespace {

using fakes::Answer;
using fakes::FakeLlmServer;
using fakes::RecordedLlmRequest;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using json = nlohmann::json;

constexpr char kKey[] = "sk-proj-test-0123456789";

class OpenAiProviderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<FakeLlmServer>> server =
        FakeLlmServer::Start(FakeLlmServer::Format::kOpenAi);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    server_->RequireApiKey(kKey);
    ASSERT_NE(harness_.http(), nullptr);
    provider_ = MakeProvider(FastOptions());
    ASSERT_NE(provider_, nullptr);
  }

  std::unique_ptr<OpenAiProvider> MakeProvider(const HttpCallOptions& options) {
    absl::StatusOr<std::unique_ptr<OpenAiProvider>> provider = OpenAiProvider::Create(
        harness_.http(), {.api_key = kKey, .base_url = server_->base_url()}, options);
    return provider.ok() ? *std::move(provider) : nullptr;
  }

  ProviderHarness harness_;
  std::unique_ptr<FakeLlmServer> server_;
  std::unique_ptr<OpenAiProvider> provider_;
};

TEST_F(OpenAiProviderTest, AnswersWithTextAndUsageAndSendsAChatCompletionsRequest) {
  server_->Enqueue(
      Answer::Text("Hello there")
          .WithUsage({.input_tokens = 21, .output_tokens = 2, .cache_read_input_tokens = 100}));
  CallResult result = harness_.Call(*provider_, UserAsks("hi", /*stream=*/false));
  ASSERT_TRUE(result.response.ok()) << result.response.status();
  EXPECT_EQ(result.done_calls, 1);
  EXPECT_EQ(result.response->text, "Hello there");
  EXPECT_EQ(result.response->provider, "openai");
  EXPECT_EQ(result.response->model, "test-model");
  EXPECT_EQ(result.response->stop_reason, StopReason::kEndTurn);
  EXPECT_EQ(result.response->usage.input_tokens, 21);
  EXPECT_EQ(result.response->usage.cache_read_input_tokens, 100);
  EXPECT_TRUE(result.deltas.empty());

  ASSERT_EQ(server_->request_count(), 1u);
  const RecordedLlmRequest request = server_->requests()[0];
  EXPECT_EQ(request.http.path, "/v1/chat/completions");
  EXPECT_EQ(request.Header("authorization"), std::string("Bearer ") + kKey);
  EXPECT_EQ(request.body["max_tokens"], 1024);
  EXPECT_FALSE(request.body.contains("stream_options"));
  EXPECT_EQ(request.System(), "You are a test.");
  EXPECT_EQ(request.LastUserText(), "hi");
  EXPECT_FALSE(request.stream);
}

// Over TLS the call goes out as HTTP/2 (ALPN), trusting [llm.openai] tls_ca_file, and streams.
TEST_F(OpenAiProviderTest, SpeaksHttp2OverTlsTrustingItsCaFile) {
  absl::StatusOr<std::unique_ptr<FakeLlmServer>> tls_server =
      FakeLlmServer::Start(FakeLlmServer::Format::kOpenAi, {.tls = true});
  ASSERT_TRUE(tls_server.ok()) << tls_server.status();
  absl::StatusOr<std::unique_ptr<OpenAiProvider>> provider =
      OpenAiProvider::Create(harness_.http(),
                             {.api_key = kKey,
                              .base_url = (*tls_server)->base_url(),
                              .tls_ca_file = (*tls_server)->certificate_path()},
                             FastOptions());
  ASSERT_TRUE(provider.ok()) << provider.status();
  (*tls_server)->Enqueue(Answer::Text("one two").WithChunkInterval(absl::Milliseconds(5)));
  CallResult result = harness_.Call(**provider, UserAsks("count", /*stream=*/true));
  ASSERT_TRUE(result.response.ok()) << result.response.status();
  EXPECT_EQ(result.response->text, "one two");
  EXPECT_THAT(result.deltas, ElementsAre("one", " two"));
  ASSERT_EQ((*tls_server)->request_count(), 1u);
  EXPECT_EQ((*tls_server)->requests()[0].http.version, "HTTP/2");
}

TEST_F(OpenAiProviderTest, StreamsTextDeltasInOrder) {
  server_->Enqueue(Answer::Text("one two three four").WithChunkInterval(absl::Milliseconds(5)));
  CallResult result = harness_.Call(*provider_, UserAsks("count", /*stream=*/true));
  ASSERT_TRUE(result.response.ok()) << result.response.status();
  EXPECT_THAT(result.deltas, ElementsAre("one", " two", " three", " four"));
  EXPECT_EQ(result.response->text, "one two three four");
  EXPECT_EQ(result.response->usage.output_tokens, 4);  // the usage chunk Herald asked for
  EXPECT_TRUE(server_->requests()[0].stream);
  EXPECT_EQ(server_->requests()[0].body["stream_options"], json({{"include_usage", true}}));
}

TEST_F(OpenAiProviderTest, ReadsAWholeAnswerFromAServerThatWouldNotStream) {
  server_->Enqueue(Answer::ToolCall("current_time", {{"zone", "UTC"}}).IgnoringStream());
  CallResult result = harness_.Call(*provider_, UserAsks("hi", /*stream=*/true));
  ASSERT_TRUE(result.response.ok()) << result.response.status();
  ASSERT_EQ(result.response->tool_calls.size(), 1u);
  EXPECT_EQ(result.response->tool_calls[0].arguments, json({{"zone", "UTC"}}));
}

TEST_F(OpenAiProviderTest, CompletesAToolCallRoundTrip) {
  server_->SetHandler(FakeLlmServer::ToolLoop("current_time", {{"zone", "UTC"}}));
  LlmRequest request = UserAsks("what time is it?", /*stream=*/true);
  request.tools.push_back({"current_time", "The time", json{{"type", "object"}}});

  CallResult first = harness_.Call(*provider_, request);
  ASSERT_TRUE(first.response.ok()) << first.response.status();
  ASSERT_EQ(first.response->tool_calls.size(), 1u);
  const ToolCall call = first.response->tool_calls[0];
  EXPECT_EQ(call.name, "current_time");
  EXPECT_EQ(call.arguments, json({{"zone", "UTC"}}));
  EXPECT_EQ(first.response->stop_reason, StopReason::kToolUse);

  request.messages.push_back({.role = LlmMessage::Role::kAssistant, .tool_calls = {call}});
  request.messages.push_back({.role = LlmMessage::Role::kTool,
                              .tool_results = {{call.id, call.name, "12:00 UTC", false}}});
  CallResult second = harness_.Call(*provider_, request);
  ASSERT_TRUE(second.response.ok()) << second.response.status();
  EXPECT_EQ(second.response->text, "tool said: 12:00 UTC");

  const RecordedLlmRequest sent = server_->requests()[1];
  EXPECT_THAT(sent.ToolNames(), ElementsAre("current_time"));
  EXPECT_EQ(sent.LastToolResult(), "12:00 UTC");
  // system, user, assistant with the call, tool with its result.
  EXPECT_EQ(sent.body["messages"][3]["role"], "tool");
  EXPECT_EQ(sent.body["messages"][3]["tool_call_id"], call.id);
  EXPECT_EQ(sent.body["messages"][2]["tool_calls"][0]["function"]["arguments"],
            "{\"zone\":\"UTC\"}");
}

TEST_F(OpenAiProviderTest, SendsImagesTheServerDecodesToTheSameBytes) {
  // A PNG signature and some bytes: every byte value base64 must carry, '+' and '/' included.
  std::string png = "\x89PNG\r\n\x1a\n";
  for (int i = 0; i < 256; ++i) png.push_back(static_cast<char>(i));
  LlmRequest request = UserAsks("what is this?", /*stream=*/true);
  request.messages[0].images = {ImagePart::FromBytes("image/png", png),
                                ImagePart::FromBytes("image/jpeg", "\xff\xd8\xff")};
  CallResult result = harness_.Call(*provider_, request);
  ASSERT_TRUE(result.response.ok()) << result.response.status();

  const RecordedLlmRequest recorded = server_->requests()[0];
  EXPECT_EQ(recorded.LastUserText(), "what is this?");
  ASSERT_EQ(recorded.images.size(), 2u);
  EXPECT_EQ(recorded.images[0].media_type, "image/png");
  EXPECT_EQ(recorded.images[0].size, png.size());
  EXPECT_EQ(recorded.images[0].sha256, base::Sha256Hex(png));
  EXPECT_EQ(recorded.images[1].size, 3u);
  EXPECT_EQ(recorded.images[1].sha256, base::Sha256Hex("\xff\xd8\xff"));
}

TEST_F(OpenAiProviderTest, FailsInvalidArgumentWhenTheApiRefusesTheImageType) {
  LlmRequest request = UserAsks("what is this?", /*stream=*/false);
  request.messages[0].images = {ImagePart::FromBytes("image/bmp", "BM")};
  CallResult result = harness_.Call(*provider_, request);
  EXPECT_EQ(result.response.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(OpenAiProviderTest, WaitsOutA429AndThenSucceeds) {
  server_->Enqueue(Answer::RateLimited(absl::Seconds(1)));
  server_->Enqueue(Answer::Text("after the wait"));
  CallResult result = harness_.Call(*provider_, UserAsks("hi", /*stream=*/true));
  ASSERT_TRUE(result.response.ok()) << result.response.status();
  EXPECT_EQ(result.response->text, "after the wait");
  EXPECT_EQ(server_->request_count(), 2u);
  EXPECT_GE(result.elapsed, absl::Milliseconds(900));  // Retry-After: 1 was honoured
}

TEST_F(OpenAiProviderTest, FailsUnavailableWhen5xxOutlastsTheRetries) {
  for (int i = 0; i < 3; ++i) server_->Enqueue(Answer::Error(500, "The server had an error"));
  server_->Enqueue(Answer::Text("too late"));
  CallResult result = harness_.Call(*provider_, UserAsks("hi", /*stream=*/false));
  EXPECT_EQ(result.response.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(result.response.status().message(),
              HasSubstr("openai: HTTP 500 server error (server_error): The server had an error"));
  EXPECT_EQ(server_->request_count(), 3u);  // the first try and two retries
}

TEST_F(OpenAiProviderTest, FailsDataLossOnAMalformedBody) {
  server_->Enqueue(Answer::Malformed());
  CallResult whole = harness_.Call(*provider_, UserAsks("hi", /*stream=*/false));
  EXPECT_EQ(whole.response.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(whole.response.status().message(), HasSubstr("openai response"));

  server_->Enqueue(Answer::Malformed("data: {nope\n\n"));
  CallResult streamed = harness_.Call(*provider_, UserAsks("hi", /*stream=*/true));
  EXPECT_EQ(streamed.response.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(streamed.response.status().message(), HasSubstr("openai stream"));
}

TEST_F(OpenAiProviderTest, FailsDataLossOnATruncatedStreamAfterDeliveringItsText) {
  server_->Enqueue(Answer::Text("cut short").Truncated());
  CallResult result = harness_.Call(*provider_, UserAsks("hi", /*stream=*/true));
  EXPECT_EQ(result.response.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(result.response.status().message(), HasSubstr("ended before finish_reason"));
  EXPECT_THAT(result.deltas, ElementsAre("cut", " short"));
  EXPECT_EQ(result.done_calls, 1);
}

TEST_F(OpenAiProviderTest, FailsUnavailableWhenTheConnectionDropsMidStream) {
  server_->Enqueue(Answer::Text("a b c d e f g h").Disconnected());
  CallResult result = harness_.Call(*provider_, UserAsks("hi", /*stream=*/true));
  EXPECT_EQ(result.response.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(server_->request_count(), 1u);  // text was already streamed: no retry
}

TEST_F(OpenAiProviderTest, FailsDeadlineExceededWhenTheServerNeverAnswers) {
  HttpCallOptions options = FastOptions();
  options.total_timeout = absl::Milliseconds(300);
  options.retry.max_retries = 0;
  std::unique_ptr<OpenAiProvider> impatient = MakeProvider(options);
  server_->Enqueue(Answer::Hang());
  CallResult result = harness_.Call(*impatient, UserAsks("hi", /*stream=*/false));
  EXPECT_EQ(result.response.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(result.response.status().message(), HasSubstr("openai"));
}

TEST_F(OpenAiProviderTest, FailsUnauthenticatedOnAWrongKeyWithoutRevealingAnyKey) {
  server_->RequireApiKey("sk-proj-the-right-one");
  CallResult result = harness_.Call(*provider_, UserAsks("hi", /*stream=*/false));
  EXPECT_EQ(result.response.status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_THAT(result.response.status().message(), Not(HasSubstr(kKey)));
}

TEST_F(OpenAiProviderTest, RedactsTheKeyWhenAnErrorBodyEchoesIt) {
  server_->Enqueue(Answer::Error(400, std::string("bad request from key ") + kKey));
  CallResult result = harness_.Call(*provider_, UserAsks("hi", /*stream=*/false));
  EXPECT_EQ(result.response.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(result.response.status().message(), HasSubstr("bad request from key [redacted]"));
  EXPECT_THAT(result.response.status().message(), Not(HasSubstr(kKey)));
}

TEST_F(OpenAiProviderTest, SendsNoAuthorizationWithoutAKey) {
  server_->RequireApiKey("");
  absl::StatusOr<std::unique_ptr<OpenAiProvider>> keyless = OpenAiProvider::Create(
      harness_.http(), {.api_key = "", .base_url = server_->base_url()}, FastOptions());
  ASSERT_TRUE(keyless.ok()) << keyless.status();
  CallResult result = harness_.Call(**keyless, UserAsks("hi", /*stream=*/false));
  ASSERT_TRUE(result.response.ok()) << result.response.status();
  EXPECT_EQ(result.response->text, FakeLlmServer::kDefaultText);
  EXPECT_EQ(server_->requests()[0].Header("authorization"), "");
}

TEST(OpenAiProviderCreateTest, RefusesANonHttpBaseUrl) {
  ProviderHarness harness;
  absl::Status bad_url =
      OpenAiProvider::Create(harness.http(), {.api_key = "k", .base_url = "ftp://x"}, FastOptions())
          .status();
  EXPECT_EQ(bad_url.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad_url.message(), HasSubstr("base_url"));
}

}  // namespace
}  // namespace herald::providers
