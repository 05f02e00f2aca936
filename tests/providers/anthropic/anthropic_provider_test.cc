#include "providers/anthropic/anthropic_provider.h"

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

constexpr char kKey[] = "sk-ant-test-0123456789";

class AnthropicProviderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<FakeLlmServer>> server =
        FakeLlmServer::Start(FakeLlmServer::Format::kAnthropic);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    server_->RequireApiKey(kKey);
    ASSERT_NE(harness_.http(), nullptr);
    provider_ = MakeProvider(FastOptions());
    ASSERT_NE(provider_, nullptr);
  }

  std::unique_ptr<AnthropicProvider> MakeProvider(const HttpCallOptions& options) {
    absl::StatusOr<std::unique_ptr<AnthropicProvider>> provider = AnthropicProvider::Create(
        harness_.http(), {.api_key = kKey, .base_url = server_->base_url()}, options);
    return provider.ok() ? *std::move(provider) : nullptr;
  }

  ProviderHarness harness_;
  std::unique_ptr<FakeLlmServer> server_;
  std::unique_ptr<AnthropicProvider> provider_;
};

TEST_F(AnthropicProviderTest, AnswersWithTextAndUsageAndSendsTheMessagesRequest) {
  server_->Enqueue(
      Answer::Text("Hello there")
          .WithUsage({.input_tokens = 21, .output_tokens = 2, .cache_read_input_tokens = 100}));
  CallResult result = harness_.Call(*provider_, UserAsks("hi", /*stream=*/false));
  ASSERT_TRUE(result.response.ok()) << result.response.status();
  EXPECT_EQ(result.done_calls, 1);
  EXPECT_EQ(result.response->text, "Hello there");
  EXPECT_EQ(result.response->provider, "anthropic");
  EXPECT_EQ(result.response->model, "test-model");
  EXPECT_EQ(result.response->stop_reason, StopReason::kEndTurn);
  EXPECT_EQ(result.response->usage.input_tokens, 21);
  EXPECT_EQ(result.response->usage.cache_read_input_tokens, 100);
  EXPECT_TRUE(result.deltas.empty());

  ASSERT_EQ(server_->request_count(), 1u);
  const RecordedLlmRequest request = server_->requests()[0];
  EXPECT_EQ(request.http.path, "/v1/messages");
  EXPECT_EQ(request.Header("x-api-key"), kKey);
  EXPECT_EQ(request.Header("anthropic-version"), "2023-06-01");
  EXPECT_EQ(request.System(), "You are a test.");
  EXPECT_EQ(request.LastUserText(), "hi");
  EXPECT_FALSE(request.stream);
}

// Over TLS the call goes out as HTTP/2 (ALPN), trusting [llm.anthropic] tls_ca_file, and streams.
TEST_F(AnthropicProviderTest, SpeaksHttp2OverTlsTrustingItsCaFile) {
  absl::StatusOr<std::unique_ptr<FakeLlmServer>> tls_server =
      FakeLlmServer::Start(FakeLlmServer::Format::kAnthropic, {.tls = true});
  ASSERT_TRUE(tls_server.ok()) << tls_server.status();
  absl::StatusOr<std::unique_ptr<AnthropicProvider>> provider =
      AnthropicProvider::Create(harness_.http(),
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

TEST_F(AnthropicProviderTest, StreamsTextDeltasInOrder) {
  server_->Enqueue(Answer::Text("one two three four").WithChunkInterval(absl::Milliseconds(5)));
  CallResult result = harness_.Call(*provider_, UserAsks("count", /*stream=*/true));
  ASSERT_TRUE(result.response.ok()) << result.response.status();
  EXPECT_THAT(result.deltas, ElementsAre("one", " two", " three", " four"));
  EXPECT_EQ(result.response->text, "one two three four");
  EXPECT_EQ(result.response->usage.output_tokens, 4);
  EXPECT_TRUE(server_->requests()[0].stream);
}

TEST_F(AnthropicProviderTest, ReadsAWholeAnswerFromAServerThatWouldNotStream) {
  server_->Enqueue(Answer::Text("whole at once").IgnoringStream());
  CallResult result = harness_.Call(*provider_, UserAsks("hi", /*stream=*/true));
  ASSERT_TRUE(result.response.ok()) << result.response.status();
  EXPECT_EQ(result.response->text, "whole at once");

  server_->Enqueue(
      Answer::Malformed(R"({"type":"error","error":{"type":"overloaded_error","message":"busy"}})")
          .IgnoringStream());
  CallResult error = harness_.Call(*provider_, UserAsks("hi", /*stream=*/true));
  EXPECT_EQ(error.response.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(error.response.status().message(), HasSubstr("busy"));
}

TEST_F(AnthropicProviderTest, CompletesAToolCallRoundTrip) {
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
  EXPECT_EQ(sent.body["messages"][2]["content"][0]["tool_use_id"], call.id);
  EXPECT_EQ(sent.body["messages"][1]["content"][0]["input"], json({{"zone", "UTC"}}));
}

TEST_F(AnthropicProviderTest, SendsImagesTheServerDecodesToTheSameBytes) {
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

TEST_F(AnthropicProviderTest, FailsInvalidArgumentWhenTheApiRefusesTheImageType) {
  LlmRequest request = UserAsks("what is this?", /*stream=*/false);
  request.messages[0].images = {ImagePart::FromBytes("image/bmp", "BM")};
  CallResult result = harness_.Call(*provider_, request);
  EXPECT_EQ(result.response.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(AnthropicProviderTest, WaitsOutA429AndThenSucceeds) {
  server_->Enqueue(Answer::RateLimited(absl::Seconds(1)));
  server_->Enqueue(Answer::Text("after the wait"));
  CallResult result = harness_.Call(*provider_, UserAsks("hi", /*stream=*/true));
  ASSERT_TRUE(result.response.ok()) << result.response.status();
  EXPECT_EQ(result.response->text, "after the wait");
  EXPECT_EQ(server_->request_count(), 2u);
  EXPECT_GE(result.elapsed, absl::Milliseconds(900));  // Retry-After: 1 was honoured
}

TEST_F(AnthropicProviderTest, FailsUnavailableWhen5xxOutlastsTheRetries) {
  for (int i = 0; i < 3; ++i) server_->Enqueue(Answer::Error(529, "Overloaded"));
  server_->Enqueue(Answer::Text("too late"));
  CallResult result = harness_.Call(*provider_, UserAsks("hi", /*stream=*/false));
  EXPECT_EQ(result.response.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(result.response.status().message(),
              HasSubstr("anthropic: HTTP 529 overloaded (overloaded_error): Overloaded"));
  EXPECT_EQ(server_->request_count(), 3u);  // the first try and two retries
}

TEST_F(AnthropicProviderTest, FailsDataLossOnAMalformedBody) {
  server_->Enqueue(Answer::Malformed());
  CallResult whole = harness_.Call(*provider_, UserAsks("hi", /*stream=*/false));
  EXPECT_EQ(whole.response.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(whole.response.status().message(), HasSubstr("anthropic response"));

  server_->Enqueue(Answer::Malformed("event: message_start\ndata: {nope\n\n"));
  CallResult streamed = harness_.Call(*provider_, UserAsks("hi", /*stream=*/true));
  EXPECT_EQ(streamed.response.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(streamed.response.status().message(), HasSubstr("anthropic stream"));
}

TEST_F(AnthropicProviderTest, FailsDataLossOnATruncatedStreamAfterDeliveringItsText) {
  server_->Enqueue(Answer::Text("cut short").Truncated());
  CallResult result = harness_.Call(*provider_, UserAsks("hi", /*stream=*/true));
  EXPECT_EQ(result.response.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(result.response.status().message(), HasSubstr("ended before message_stop"));
  EXPECT_THAT(result.deltas, ElementsAre("cut", " short"));
  EXPECT_EQ(result.done_calls, 1);
}

TEST_F(AnthropicProviderTest, FailsUnavailableWhenTheConnectionDropsMidStream) {
  server_->Enqueue(Answer::Text("a b c d e f g h").Disconnected());
  CallResult result = harness_.Call(*provider_, UserAsks("hi", /*stream=*/true));
  EXPECT_EQ(result.response.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(server_->request_count(), 1u);  // text was already streamed: no retry
}

TEST_F(AnthropicProviderTest, FailsDeadlineExceededWhenTheServerNeverAnswers) {
  HttpCallOptions options = FastOptions();
  options.total_timeout = absl::Milliseconds(300);
  options.retry.max_retries = 0;
  std::unique_ptr<AnthropicProvider> impatient = MakeProvider(options);
  server_->Enqueue(Answer::Hang());
  CallResult result = harness_.Call(*impatient, UserAsks("hi", /*stream=*/false));
  EXPECT_EQ(result.response.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(result.response.status().message(), HasSubstr("anthropic"));
}

TEST_F(AnthropicProviderTest, FailsUnauthenticatedOnAWrongKeyWithoutRevealingAnyKey) {
  server_->RequireApiKey("sk-ant-the-right-one");
  CallResult result = harness_.Call(*provider_, UserAsks("hi", /*stream=*/false));
  EXPECT_EQ(result.response.status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_THAT(result.response.status().message(), Not(HasSubstr(kKey)));
}

TEST_F(AnthropicProviderTest, RedactsTheKeyWhenAnErrorBodyEchoesIt) {
  server_->Enqueue(Answer::Error(400, std::string("bad request from key ") + kKey));
  CallResult result = harness_.Call(*provider_, UserAsks("hi", /*stream=*/false));
  EXPECT_EQ(result.response.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(result.response.status().message(), HasSubstr("bad request from key [redacted]"));
  EXPECT_THAT(result.response.status().message(), Not(HasSubstr(kKey)));
}

TEST(AnthropicProviderCreateTest, RefusesAnEmptyKeyAndANonHttpBaseUrl) {
  ProviderHarness harness;
  EXPECT_EQ(AnthropicProvider::Create(harness.http(), {.api_key = "", .base_url = "http://x"},
                                      FastOptions())
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
  absl::Status bad_url = AnthropicProvider::Create(
                             harness.http(), {.api_key = "k", .base_url = "ftp://x"}, FastOptions())
                             .status();
  EXPECT_EQ(bad_url.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad_url.message(), HasSubstr("base_url"));
}

}  // namespace
}  // namespace herald::providers
