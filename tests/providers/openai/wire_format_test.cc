#include "providers/openai/wire_format.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace herald::providers {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using json = nlohmann::json;

LlmRequest ToolRoundTripRequest(bool stream) {
  LlmRequest request;
  request.model = "gpt-4o-mini";
  request.system = "You are Herald.";
  request.max_tokens = 256;
  request.stream = stream;
  request.messages.push_back({.role = LlmMessage::Role::kUser, .text = "What time is it?"});
  request.messages.push_back(
      {.role = LlmMessage::Role::kAssistant,
       .tool_calls = {{"call_1", "current_time", json{{"zone", "UTC"}}},
                      {"call_2", "memory_recall", json{{"query", "lunch"}}}}});
  request.messages.push_back({.role = LlmMessage::Role::kTool,
                              .tool_results = {{"call_1", "current_time", "12:00", false},
                                               {"call_2", "memory_recall", "no file", true}}});
  request.tools.push_back({"current_time", "The current time", json{{"type", "object"}}});
  return request;
}

TEST(OpenAiRequestTest, BuildsAChatCompletionsBodyWithToolCallsAndToolMessages) {
  const json body = BuildOpenAiRequest(ToolRoundTripRequest(/*stream=*/false));
  const json expected = json::parse(R"({
    "model": "gpt-4o-mini",
    "max_tokens": 256,
    "stream": false,
    "messages": [
      {"role": "system", "content": "You are Herald."},
      {"role": "user", "content": "What time is it?"},
      {"role": "assistant", "content": null, "tool_calls": [
        {"id": "call_1", "type": "function",
         "function": {"name": "current_time", "arguments": "{\"zone\":\"UTC\"}"}},
        {"id": "call_2", "type": "function",
         "function": {"name": "memory_recall", "arguments": "{\"query\":\"lunch\"}"}}
      ]},
      {"role": "tool", "tool_call_id": "call_1", "content": "12:00"},
      {"role": "tool", "tool_call_id": "call_2", "content": "Error: no file"}
    ],
    "tools": [{"type": "function", "function": {"name": "current_time",
               "description": "The current time", "parameters": {"type": "object"}}}]
  })");
  EXPECT_EQ(body, expected) << body.dump(2);
}

TEST(OpenAiRequestTest, SendsAUserMessagesImagesAsDataUrlsAfterItsText) {
  LlmRequest request;
  request.messages.push_back(
      {.role = LlmMessage::Role::kUser,
       .text = "What is in these?",
       .images = {ImagePart::FromBytes("image/png", "\x89PNG"),
                  ImagePart::FromBytes("image/jpeg", std::string("\xff\xd8\xff\x00", 4))}});
  const json body = BuildOpenAiRequest(request);
  EXPECT_EQ(body["messages"], json::parse(R"([{"role": "user", "content": [
    {"type": "text", "text": "What is in these?"},
    {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw=="}},
    {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,/9j/AA=="}}
  ]}])"))
      << body.dump(2);
}

TEST(OpenAiRequestTest, SendsAnImageWithoutTextAsAnImagePartAlone) {
  LlmRequest request;
  request.messages.push_back(
      {.role = LlmMessage::Role::kUser, .images = {ImagePart::FromBytes("image/gif", "GIF89a")}});
  EXPECT_EQ(BuildOpenAiRequest(request)["messages"][0]["content"],
            json::parse(R"([{"type": "image_url",
                             "image_url": {"url": "data:image/gif;base64,R0lGODlh"}}])"));
}

TEST(OpenAiRequestTest, EncodesAMessageWithoutImagesAsAString) {
  LlmRequest request;
  request.model = "gpt-4o-mini";
  request.messages.push_back({.role = LlmMessage::Role::kUser, .text = "hi"});
  EXPECT_EQ(DumpJson(BuildOpenAiRequest(request)),
            R"({"max_tokens":1024,"messages":[{"content":"hi","role":"user"}],)"
            R"("model":"gpt-4o-mini","stream":false})");
}

TEST(OpenAiRequestTest, AsksForUsageInTheStreamOnlyWhenStreaming) {
  EXPECT_EQ(BuildOpenAiRequest(ToolRoundTripRequest(true))["stream_options"],
            json({{"include_usage", true}}));
  EXPECT_FALSE(BuildOpenAiRequest(ToolRoundTripRequest(false)).contains("stream_options"));
}

TEST(OpenAiRequestTest, SendsABearerTokenOnlyWhenThereIsAKey) {
  EXPECT_THAT(OpenAiHeaders("sk-test"),
              ElementsAre(std::pair<std::string, std::string>{"authorization", "Bearer sk-test"},
                          std::pair<std::string, std::string>{"content-type", "application/json"}));
  EXPECT_THAT(OpenAiHeaders(""),
              ElementsAre(std::pair<std::string, std::string>{"content-type", "application/json"}));
}

TEST(OpenAiResponseTest, ParsesToolCallsWithStringArgumentsAndCachedUsage) {
  absl::StatusOr<LlmResponse> response = ParseOpenAiResponse(R"({
    "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-4o-mini-2024",
    "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
      "role": "assistant", "content": null, "refusal": null,
      "tool_calls": [{"id": "call_9", "type": "function",
                      "function": {"name": "current_time", "arguments": "{\"zone\": \"UTC\"}"}}]
    }}],
    "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120,
              "prompt_tokens_details": {"cached_tokens": 64}}
  })");
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->text, "");
  ASSERT_EQ(response->tool_calls.size(), 1u);
  EXPECT_EQ(response->tool_calls[0].id, "call_9");
  EXPECT_EQ(response->tool_calls[0].arguments, json({{"zone", "UTC"}}));
  EXPECT_EQ(response->stop_reason, StopReason::kToolUse);
  EXPECT_EQ(response->model, "gpt-4o-mini-2024");
  EXPECT_EQ(response->usage.input_tokens, 36);
  EXPECT_EQ(response->usage.cache_read_input_tokens, 64);
  EXPECT_EQ(response->usage.output_tokens, 20);
}

TEST(OpenAiResponseTest, PassesArgumentsThatAreNotJsonOnAsAString) {
  absl::StatusOr<LlmResponse> response = ParseOpenAiResponse(R"({"choices": [{"message": {
      "content": "", "tool_calls": [{"id": "c", "type": "function",
      "function": {"name": "f", "arguments": "{\"a\": "}}]}, "finish_reason": "length"}]})");
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->tool_calls[0].arguments, json("{\"a\": "));
  EXPECT_EQ(response->stop_reason, StopReason::kMaxTokens);
}

TEST(OpenAiResponseTest, MapsFinishReasons) {
  EXPECT_EQ(OpenAiFinishReason("stop"), StopReason::kEndTurn);
  EXPECT_EQ(OpenAiFinishReason("length"), StopReason::kMaxTokens);
  EXPECT_EQ(OpenAiFinishReason("tool_calls"), StopReason::kToolUse);
  EXPECT_EQ(OpenAiFinishReason("content_filter"), StopReason::kOther);
}

TEST(OpenAiResponseTest, RefusesMalformedBodiesWithDataLossNamingTheProblem) {
  struct Case {
    const char* body;
    const char* says;
  };
  for (const Case& c : std::vector<Case>{
           {"", "empty"},
           {R"({"choices": [{"message": {"content": "hi)", "truncated"},
           {R"("text")", "not a JSON object"},
           {R"({"choices": []})", "no choices"},
           {R"({"choices": [{"text": "legacy"}]})", "no message object"},
           {R"({"choices": [{"message": {"content": 5}}]})", "content is not text"},
           {R"({"choices": [{"message": {"tool_calls": {}}}]})", "not an array"},
           {R"({"choices": [{"message": {"tool_calls": [{"id": "c", "function": {}}]}}]})",
            "lacks its function name"},
           {R"({"choices": [{"message": {"content": "x"}}], "usage": {"prompt_tokens": -3}})",
            "usage.prompt_tokens"},
       }) {
    absl::StatusOr<LlmResponse> response = ParseOpenAiResponse(c.body);
    EXPECT_EQ(response.status().code(), absl::StatusCode::kDataLoss) << c.body;
    EXPECT_THAT(response.status().message(), HasSubstr(c.says)) << c.body;
    EXPECT_THAT(response.status().message(), HasSubstr("openai")) << c.body;
  }
}

TEST(OpenAiErrorStatusTest, PrefersTheErrorCodeToItsType) {
  absl::Status status = OpenAiErrorStatus(
      401,
      R"({"error": {"message": "Incorrect API key provided", "type": "invalid_request_error",
                    "param": null, "code": "invalid_api_key"}})",
      "");
  EXPECT_EQ(status.code(), absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(status.message(),
            "openai: HTTP 401 authentication failed (invalid_api_key): Incorrect API key provided");
  absl::Status vllm = OpenAiErrorStatus(
      400, R"({"object": "error", "message": "context too long", "type": "BadRequestError"})", "");
  EXPECT_EQ(vllm.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(vllm.message(), HasSubstr("context too long"));
  EXPECT_THAT(OpenAiErrorStatus(429, R"({"error": "slow down"})", "2").message(),
              HasSubstr("slow down; retry after 2"));
}

// A real stream's shape: role chunk, text, two tool calls in fragments, finish, usage, DONE.
constexpr char kToolStream[] =
    "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"model\":\"gpt-4o\","
    "\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},"
    "\"finish_reason\":null}],\"usage\":null}\n\n"
    "data: {\"id\":\"chatcmpl-1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Let me \"},"
    "\"finish_reason\":null}]}\n\n"
    ": OPENROUTER PROCESSING\n\n"
    "data: {\"id\":\"chatcmpl-1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"look.\"},"
    "\"finish_reason\":null}]}\n\n"
    "data: "
    "{\"id\":\"chatcmpl-1\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,"
    "\"id\":\"call_a\",\"type\":\"function\",\"function\":{\"name\":\"current_time\","
    "\"arguments\":\"\"}}]},\"finish_reason\":null}]}\n\n"
    "data: "
    "{\"id\":\"chatcmpl-1\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,"
    "\"function\":{\"arguments\":\"{\\\"zo\"}}]},\"finish_reason\":null}]}\n\n"
    "data: "
    "{\"id\":\"chatcmpl-1\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":1,"
    "\"id\":\"call_b\",\"type\":\"function\",\"function\":{\"name\":\"memory_recall\","
    "\"arguments\":\"{}\"}}]},\"finish_reason\":null}]}\n\n"
    "data: "
    "{\"id\":\"chatcmpl-1\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,"
    "\"function\":{\"arguments\":\"ne\\\": \\\"UTC\\\"}\"}}]},\"finish_reason\":null}]}\n\n"
    "data: {\"id\":\"chatcmpl-1\",\"choices\":[{\"index\":0,\"delta\":{},"
    "\"finish_reason\":\"tool_calls\"}]}\n\n"
    "data: {\"id\":\"chatcmpl-1\",\"choices\":[],\"usage\":{\"prompt_tokens\":50,"
    "\"completion_tokens\":12,\"total_tokens\":62}}\n\n"
    "data: [DONE]\n\n";

struct Decoded {
  absl::StatusOr<LlmResponse> response;
  std::vector<std::string> deltas;
};

Decoded Decode(std::string_view stream, size_t chunk) {
  Decoded out;
  OpenAiStreamDecoder decoder([&](std::string_view d) { out.deltas.emplace_back(d); });
  for (size_t pos = 0; pos < stream.size(); pos += chunk) {
    if (absl::Status s = decoder.Feed(stream.substr(pos, chunk)); !s.ok()) {
      out.response = s;
      return out;
    }
  }
  out.response = decoder.Finish();
  return out;
}

TEST(OpenAiStreamTest, AccumulatesTextAndToolCallFragmentsByIndex) {
  Decoded decoded = Decode(kToolStream, sizeof(kToolStream));
  ASSERT_TRUE(decoded.response.ok()) << decoded.response.status();
  EXPECT_THAT(decoded.deltas, ElementsAre("Let me ", "look."));
  EXPECT_EQ(decoded.response->text, "Let me look.");
  ASSERT_EQ(decoded.response->tool_calls.size(), 2u);
  EXPECT_EQ(decoded.response->tool_calls[0].id, "call_a");
  EXPECT_EQ(decoded.response->tool_calls[0].name, "current_time");
  EXPECT_EQ(decoded.response->tool_calls[0].arguments, json({{"zone", "UTC"}}));
  EXPECT_EQ(decoded.response->tool_calls[1].id, "call_b");
  EXPECT_EQ(decoded.response->tool_calls[1].arguments, json::object());
  EXPECT_EQ(decoded.response->stop_reason, StopReason::kToolUse);
  EXPECT_EQ(decoded.response->usage.input_tokens, 50);
  EXPECT_EQ(decoded.response->usage.output_tokens, 12);
  EXPECT_EQ(decoded.response->model, "gpt-4o");
}

TEST(OpenAiStreamTest, DecodesTheSameAnswerFedOneByteAtATime) {
  Decoded whole = Decode(kToolStream, sizeof(kToolStream));
  Decoded bytes = Decode(kToolStream, 1);
  ASSERT_TRUE(bytes.response.ok()) << bytes.response.status();
  EXPECT_EQ(bytes.deltas, whole.deltas);
  EXPECT_EQ(bytes.response->tool_calls[0].arguments, whole.response->tool_calls[0].arguments);
  EXPECT_EQ(bytes.response->usage.output_tokens, 12);
}

TEST(OpenAiStreamTest, SaysTruncatedWhenTheStreamStopsBeforeItsEnd) {
  const std::string stream = kToolStream;
  Decoded cut = Decode(stream.substr(0, stream.find("data: {\"id\":\"chatcmpl-1\",\"choices\":"
                                                    "[{\"index\":0,\"delta\":{},")),
                       6);
  EXPECT_EQ(cut.response.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(cut.response.status().message(), HasSubstr("ended before finish_reason"));
  EXPECT_EQ(Decode("", 1).response.status().code(), absl::StatusCode::kDataLoss);
}

TEST(OpenAiStreamTest, AcceptsAStreamThatEndsAfterFinishReasonWithoutDone) {
  const std::string stream = kToolStream;
  Decoded decoded = Decode(stream.substr(0, stream.find("data: [DONE]")), 13);
  ASSERT_TRUE(decoded.response.ok()) << decoded.response.status();
  EXPECT_EQ(decoded.response->tool_calls.size(), 2u);
}

TEST(OpenAiStreamTest, ReportsAnErrorChunkWithItsStatus) {
  Decoded decoded = Decode(
      "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"}}]}\n\n"
      "data: {\"error\":{\"message\":\"The server had an error\",\"type\":\"server_error\"}}\n\n",
      5);
  EXPECT_EQ(decoded.response.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(decoded.response.status().message(), HasSubstr("The server had an error"));
  EXPECT_THAT(decoded.deltas, ElementsAre("Hel"));
}

TEST(OpenAiStreamTest, RefusesChunksThatAreNotJson) {
  Decoded decoded =
      Decode("data: {\"choices\":[{\"delta\":{\"content\":\"x\"}}]}\n\ndata: {oops\n\n", 3);
  EXPECT_EQ(decoded.response.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(decoded.response.status().message(), HasSubstr("openai stream: a chunk"));
}

TEST(OpenAiStreamTest, NumbersToolCallsOfServersThatOmitIndexAndId) {
  Decoded decoded = Decode(
      "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"function\":{\"name\":\"f\","
      "\"arguments\":\"{\\\"a\\\":\"}}]}}]}\n\n"
      "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"function\":{\"arguments\":\"1}\"}}]},"
      "\"finish_reason\":\"stop\"}]}\n\n"
      "data: [DONE]\n\n",
      8);
  ASSERT_TRUE(decoded.response.ok()) << decoded.response.status();
  ASSERT_EQ(decoded.response->tool_calls.size(), 1u);
  EXPECT_EQ(decoded.response->tool_calls[0].id, "call_0");
  EXPECT_EQ(decoded.response->tool_calls[0].arguments, json({{"a", 1}}));
  EXPECT_EQ(decoded.response->stop_reason, StopReason::kToolUse);
}

}  // namespace
}  // namespace herald::providers
