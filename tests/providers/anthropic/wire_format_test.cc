#include "providers/anthropic/wire_format.h"

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

LlmRequest ToolRoundTripRequest() {
  LlmRequest request;
  request.model = "claude-sonnet-4-5";
  request.system = "You are Herald.";
  request.max_tokens = 512;
  request.stream = true;
  request.messages.push_back({.role = LlmMessage::Role::kUser, .text = "What time is it?"});
  request.messages.push_back({.role = LlmMessage::Role::kAssistant,
                              .text = "Let me check.",
                              .tool_calls = {{"toolu_01", "current_time", json{{"zone", "UTC"}}}}});
  request.messages.push_back({.role = LlmMessage::Role::kTool,
                              .tool_results = {{"toolu_01", "current_time", "12:00", false}}});
  request.messages.push_back({.role = LlmMessage::Role::kUser, .text = "Thanks"});
  request.tools.push_back({"current_time", "The current time", json{{"type", "object"}}});
  return request;
}

TEST(AnthropicRequestTest, BuildsAMessagesBodyWithToolUseAndToolResultBlocks) {
  const json body = BuildAnthropicRequest(ToolRoundTripRequest());
  const json expected = json::parse(R"({
    "model": "claude-sonnet-4-5",
    "max_tokens": 512,
    "system": "You are Herald.",
    "stream": true,
    "messages": [
      {"role": "user", "content": [{"type": "text", "text": "What time is it?"}]},
      {"role": "assistant", "content": [
        {"type": "text", "text": "Let me check."},
        {"type": "tool_use", "id": "toolu_01", "name": "current_time", "input": {"zone": "UTC"}}
      ]},
      {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_01", "content": "12:00"},
        {"type": "text", "text": "Thanks"}
      ]}
    ],
    "tools": [{"name": "current_time", "description": "The current time",
               "input_schema": {"type": "object"}}]
  })");
  EXPECT_EQ(body, expected) << body.dump(2);
}

TEST(AnthropicRequestTest, MarksAFailedToolResultAsAnError) {
  LlmRequest request;
  request.messages.push_back({.role = LlmMessage::Role::kTool,
                              .tool_results = {{"toolu_9", "url_fetch", "timed out", true}}});
  const json body = BuildAnthropicRequest(request);
  EXPECT_EQ(body["messages"][0]["content"][0],
            json::parse(R"({"type": "tool_result", "tool_use_id": "toolu_9",
                            "content": "timed out", "is_error": true})"));
}

TEST(AnthropicRequestTest, LeavesOutEmptyTextAndTheSystemWhenThereIsNone) {
  LlmRequest request;
  request.messages.push_back({.role = LlmMessage::Role::kUser, .text = "hi"});
  request.messages.push_back(
      {.role = LlmMessage::Role::kAssistant, .tool_calls = {{"t1", "current_time", nullptr}}});
  const json body = BuildAnthropicRequest(request);
  EXPECT_FALSE(body.contains("system"));
  EXPECT_FALSE(body.contains("tools"));
  EXPECT_EQ(body["stream"], false);
  // No empty text block before the tool_use, and null arguments become an empty object.
  EXPECT_EQ(body["messages"][1]["content"],
            json::parse(R"([{"type": "tool_use", "id": "t1", "name": "current_time",
                             "input": {}}])"));
}

TEST(AnthropicRequestTest, SendsAUserMessagesImagesAsBase64BlocksBeforeItsText) {
  LlmRequest request;
  request.messages.push_back(
      {.role = LlmMessage::Role::kUser,
       .text = "What is in these?",
       .images = {ImagePart::FromBytes("image/png", "\x89PNG"),
                  ImagePart::FromBytes("image/jpeg", std::string("\xff\xd8\xff\x00", 4))}});
  const json body = BuildAnthropicRequest(request);
  EXPECT_EQ(body["messages"], json::parse(R"([{"role": "user", "content": [
    {"type": "image",
     "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw=="}},
    {"type": "image",
     "source": {"type": "base64", "media_type": "image/jpeg", "data": "/9j/AA=="}},
    {"type": "text", "text": "What is in these?"}
  ]}])"))
      << body.dump(2);
}

TEST(AnthropicRequestTest, SendsAnImageWithoutTextAsAnImageBlockAlone) {
  LlmRequest request;
  request.messages.push_back({.role = LlmMessage::Role::kTool,
                              .tool_results = {{"toolu_1", "screenshot", "taken", false}}});
  request.messages.push_back(
      {.role = LlmMessage::Role::kUser, .images = {ImagePart::FromBytes("image/gif", "GIF89a")}});
  const json body = BuildAnthropicRequest(request);
  // One user turn: the tool result, then the image, and no empty text block.
  EXPECT_EQ(body["messages"], json::parse(R"([{"role": "user", "content": [
    {"type": "tool_result", "tool_use_id": "toolu_1", "content": "taken"},
    {"type": "image",
     "source": {"type": "base64", "media_type": "image/gif", "data": "R0lGODlh"}}
  ]}])"))
      << body.dump(2);
}

TEST(AnthropicRequestTest, EncodesAMessageWithoutImagesAsOneTextBlock) {
  LlmRequest request;
  request.model = "claude-sonnet-4-5";
  request.messages.push_back({.role = LlmMessage::Role::kUser, .text = "hi"});
  EXPECT_EQ(DumpJson(BuildAnthropicRequest(request)),
            R"({"max_tokens":1024,"messages":[{"content":[{"text":"hi","type":"text"}],)"
            R"("role":"user"}],"model":"claude-sonnet-4-5","stream":false})");
}

TEST(AnthropicRequestTest, SendsTheKeyAndVersionHeaders) {
  EXPECT_THAT(AnthropicHeaders("sk-ant-test"),
              ElementsAre(std::pair<std::string, std::string>{"x-api-key", "sk-ant-test"},
                          std::pair<std::string, std::string>{"anthropic-version", "2023-06-01"},
                          std::pair<std::string, std::string>{"content-type", "application/json"}));
}

constexpr char kTextAndToolResponse[] = R"({
  "id": "msg_01", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5-20250929",
  "content": [
    {"type": "thinking", "thinking": "hmm", "signature": "x"},
    {"type": "text", "text": "Checking the clock."},
    {"type": "tool_use", "id": "toolu_01", "name": "current_time", "input": {"zone": "UTC"}}
  ],
  "stop_reason": "tool_use", "stop_sequence": null,
  "usage": {"input_tokens": 120, "output_tokens": 33, "cache_creation_input_tokens": 7,
            "cache_read_input_tokens": 2048}
})";

TEST(AnthropicResponseTest, ParsesTextToolUseUsageAndStopReason) {
  absl::StatusOr<LlmResponse> response = ParseAnthropicResponse(kTextAndToolResponse);
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->text, "Checking the clock.");
  ASSERT_EQ(response->tool_calls.size(), 1u);
  EXPECT_EQ(response->tool_calls[0].id, "toolu_01");
  EXPECT_EQ(response->tool_calls[0].name, "current_time");
  EXPECT_EQ(response->tool_calls[0].arguments, json({{"zone", "UTC"}}));
  EXPECT_EQ(response->stop_reason, StopReason::kToolUse);
  EXPECT_EQ(response->model, "claude-sonnet-4-5-20250929");
  EXPECT_EQ(response->usage.input_tokens, 120);
  EXPECT_EQ(response->usage.output_tokens, 33);
  EXPECT_EQ(response->usage.cache_creation_input_tokens, 7);
  EXPECT_EQ(response->usage.cache_read_input_tokens, 2048);
}

TEST(AnthropicResponseTest, MapsEveryStopReason) {
  EXPECT_EQ(AnthropicStopReason("end_turn"), StopReason::kEndTurn);
  EXPECT_EQ(AnthropicStopReason("tool_use"), StopReason::kToolUse);
  EXPECT_EQ(AnthropicStopReason("max_tokens"), StopReason::kMaxTokens);
  EXPECT_EQ(AnthropicStopReason("stop_sequence"), StopReason::kStopSequence);
  EXPECT_EQ(AnthropicStopReason("refusal"), StopReason::kOther);
  EXPECT_EQ(AnthropicStopReason("pause_turn"), StopReason::kOther);
}

TEST(AnthropicResponseTest, RefusesMalformedBodiesWithDataLossNamingTheProblem) {
  struct Case {
    const char* body;
    const char* says;
  };
  for (const Case& c : std::vector<Case>{
           {"", "empty"},
           {R"({"type": "message", "content": [{"type": "te)", "truncated"},
           {"[1, 2]", "not a JSON object"},
           {R"({"type": "message"})", "no 'content' array"},
           {R"({"type": "completion", "content": []})", "not 'message'"},
           {R"({"content": [{"type": "text"}]})", "content[0].text is missing"},
           {R"({"content": [{"text": "x"}]})", "content[0] has no type"},
           {R"({"content": [{"type": "tool_use", "name": "x", "input": {}}]})", "id or name"},
           {R"({"content": [{"type": "tool_use", "id": "t", "name": "x", "input": [1]}]})",
            "not an object"},
           {R"({"content": [], "usage": {"input_tokens": "many"}})", "usage.input_tokens"},
       }) {
    absl::StatusOr<LlmResponse> response = ParseAnthropicResponse(c.body);
    EXPECT_EQ(response.status().code(), absl::StatusCode::kDataLoss) << c.body;
    EXPECT_THAT(response.status().message(), HasSubstr(c.says)) << c.body;
    EXPECT_THAT(response.status().message(), HasSubstr("anthropic")) << c.body;
  }
}

TEST(AnthropicResponseTest, TurnsAnErrorObjectInA200BodyIntoItsStatus) {
  absl::StatusOr<LlmResponse> response = ParseAnthropicResponse(
      R"({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})");
  EXPECT_EQ(response.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(response.status().message(), HasSubstr("overloaded_error"));
}

TEST(AnthropicErrorStatusTest, ReadsTheErrorTypeAndMessageOfTheBody) {
  absl::Status status = AnthropicErrorStatus(
      400,
      R"({"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: too big"}})",
      "");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(),
            "anthropic: HTTP 400 request refused (invalid_request_error): max_tokens: too big");
  EXPECT_EQ(AnthropicErrorStatus(401, "", "").code(), absl::StatusCode::kUnauthenticated);
  absl::Status html = AnthropicErrorStatus(502, "<html>Bad Gateway</html>", "");
  EXPECT_EQ(html.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(html.message(), HasSubstr("<html>Bad Gateway</html>"));
}

// The shape of a real streamed answer with text and a tool call (the API reference's).
constexpr char kToolStream[] =
    "event: message_start\n"
    "data: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_01\",\"type\":\"message\","
    "\"role\":\"assistant\",\"content\":[],\"model\":\"claude-sonnet-4-5\",\"stop_reason\":null,"
    "\"stop_sequence\":null,\"usage\":{\"input_tokens\":472,\"output_tokens\":2,"
    "\"cache_creation_input_tokens\":10,\"cache_read_input_tokens\":300}}}\n"
    "\n"
    "event: content_block_start\n"
    "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\","
    "\"text\":\"\"}}\n"
    "\n"
    "event: ping\n"
    "data: {\"type\": \"ping\"}\n"
    "\n"
    "event: content_block_delta\n"
    "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\","
    "\"text\":\"Okay, let me check \"}}\n"
    "\n"
    "event: content_block_delta\n"
    "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\","
    "\"text\":\"the time.\"}}\n"
    "\n"
    "event: content_block_stop\n"
    "data: {\"type\":\"content_block_stop\",\"index\":0}\n"
    "\n"
    "event: content_block_start\n"
    "data: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\","
    "\"id\":\"toolu_01\",\"name\":\"current_time\",\"input\":{}}}\n"
    "\n"
    "event: content_block_delta\n"
    "data: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\","
    "\"partial_json\":\"\"}}\n"
    "\n"
    "event: content_block_delta\n"
    "data: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\","
    "\"partial_json\":\"{\\\"zone\\\": \\\"Eu\"}}\n"
    "\n"
    "event: content_block_delta\n"
    "data: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\","
    "\"partial_json\":\"rope/Paris\\\"}\"}}\n"
    "\n"
    "event: content_block_stop\n"
    "data: {\"type\":\"content_block_stop\",\"index\":1}\n"
    "\n"
    "event: message_delta\n"
    "data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\","
    "\"stop_sequence\":null},\"usage\":{\"output_tokens\":89}}\n"
    "\n"
    "event: message_stop\n"
    "data: {\"type\":\"message_stop\"}\n"
    "\n";

struct Decoded {
  absl::StatusOr<LlmResponse> response;
  std::vector<std::string> deltas;
};

Decoded Decode(std::string_view stream, size_t chunk) {
  Decoded out;
  AnthropicStreamDecoder decoder([&](std::string_view d) { out.deltas.emplace_back(d); });
  for (size_t pos = 0; pos < stream.size(); pos += chunk) {
    if (absl::Status s = decoder.Feed(stream.substr(pos, chunk)); !s.ok()) {
      out.response = s;
      return out;
    }
  }
  out.response = decoder.Finish();
  return out;
}

TEST(AnthropicStreamTest, DecodesTextDeltasAndAToolCallFedWhole) {
  Decoded decoded = Decode(kToolStream, sizeof(kToolStream));
  ASSERT_TRUE(decoded.response.ok()) << decoded.response.status();
  EXPECT_THAT(decoded.deltas, ElementsAre("Okay, let me check ", "the time."));
  EXPECT_EQ(decoded.response->text, "Okay, let me check the time.");
  ASSERT_EQ(decoded.response->tool_calls.size(), 1u);
  EXPECT_EQ(decoded.response->tool_calls[0].id, "toolu_01");
  EXPECT_EQ(decoded.response->tool_calls[0].arguments, json({{"zone", "Europe/Paris"}}));
  EXPECT_EQ(decoded.response->stop_reason, StopReason::kToolUse);
  EXPECT_EQ(decoded.response->model, "claude-sonnet-4-5");
  EXPECT_EQ(decoded.response->usage.input_tokens, 472);
  EXPECT_EQ(decoded.response->usage.output_tokens, 89);  // message_delta's count wins
  EXPECT_EQ(decoded.response->usage.cache_creation_input_tokens, 10);
  EXPECT_EQ(decoded.response->usage.cache_read_input_tokens, 300);
}

TEST(AnthropicStreamTest, DecodesTheSameAnswerFedOneByteAtATime) {
  Decoded whole = Decode(kToolStream, sizeof(kToolStream));
  Decoded bytes = Decode(kToolStream, 1);
  ASSERT_TRUE(bytes.response.ok()) << bytes.response.status();
  EXPECT_EQ(bytes.deltas, whole.deltas);
  EXPECT_EQ(bytes.response->text, whole.response->text);
  EXPECT_EQ(bytes.response->tool_calls[0].arguments, whole.response->tool_calls[0].arguments);
}

TEST(AnthropicStreamTest, AcceptsCrLfLineEndings) {
  std::string crlf;
  for (char c : std::string(kToolStream)) {
    if (c == '\n') crlf += '\r';
    crlf += c;
  }
  Decoded decoded = Decode(crlf, 7);
  ASSERT_TRUE(decoded.response.ok()) << decoded.response.status();
  EXPECT_EQ(decoded.response->text, "Okay, let me check the time.");
}

TEST(AnthropicStreamTest, SaysTruncatedWhenTheStreamStopsBeforeMessageStop) {
  const std::string stream = kToolStream;
  for (size_t cut : {size_t{0}, size_t{40}, stream.find("event: content_block_stop"),
                     stream.find("event: message_delta"), stream.find("event: message_stop")}) {
    Decoded decoded = Decode(stream.substr(0, cut), 5);
    EXPECT_EQ(decoded.response.status().code(), absl::StatusCode::kDataLoss) << cut;
    EXPECT_THAT(decoded.response.status().message(), HasSubstr("anthropic stream")) << cut;
  }
  Decoded cut = Decode(stream.substr(0, stream.find("event: message_stop")), 5);
  EXPECT_THAT(cut.response.status().message(), HasSubstr("ended before message_stop"));
}

TEST(AnthropicStreamTest, ReportsAnErrorEventWithItsStatus) {
  const std::string start =
      std::string(kToolStream)
          .substr(0, std::string(kToolStream).find("event: content_block_start"));
  Decoded decoded = Decode(start +
                               "event: error\ndata: {\"type\": \"error\", \"error\": {\"type\": "
                               "\"overloaded_error\", \"message\": \"Overloaded\"}}\n\n",
                           3);
  EXPECT_EQ(decoded.response.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(decoded.response.status().message(), HasSubstr("Overloaded"));
}

TEST(AnthropicStreamTest, RefusesProtocolViolationsWithDataLoss) {
  const std::string start =
      std::string(kToolStream)
          .substr(0, std::string(kToolStream).find("event: content_block_start"));
  struct Case {
    std::string stream;
    const char* says;
  };
  for (const Case& c : std::vector<Case>{
           {"data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{}}\n\n",
            "before message_start"},
           {start + "data: not json\n\n", "is not valid JSON"},
           {start + "data: {\"type\":\"content_block_delta\",\"index\":4,\"delta\":{\"type\":"
                    "\"text_delta\",\"text\":\"x\"}}\n\n",
            "never started"},
           {start + "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{"
                    "\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"n\",\"input\":{}}}\n\n"
                    "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":"
                    "\"input_json_delta\",\"partial_json\":\"{\\\"a\\\":\"}}\n\n"
                    "data: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
            "input of tool_use 'n' is truncated JSON"},
           {start + "data: {\"type\":\"message_start\",\"message\":{}}\n\n",
            "second message_start"},
           {start + "data: [1]\n\n", "not an object"},
       }) {
    Decoded decoded = Decode(c.stream, 4);
    EXPECT_EQ(decoded.response.status().code(), absl::StatusCode::kDataLoss) << c.stream;
    EXPECT_THAT(decoded.response.status().message(), HasSubstr(c.says)) << c.stream;
  }
}

TEST(AnthropicStreamTest, SkipsUnknownEventsAndDeltaTypes) {
  const std::string stream = kToolStream;
  const size_t at = stream.find("event: content_block_stop");
  const std::string patched =
      stream.substr(0, at) +
      "event: future_event\ndata: {\"type\":\"future_event\",\"x\":1}\n\n"
      "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":"
      "\"citations_delta\",\"citation\":{}}}\n\n" +
      stream.substr(at);
  Decoded decoded = Decode(patched, 9);
  ASSERT_TRUE(decoded.response.ok()) << decoded.response.status();
  EXPECT_EQ(decoded.response->text, "Okay, let me check the time.");
}

TEST(AnthropicStreamTest, AToolCallWithoutInputDeltasHasAnEmptyObject) {
  const std::string start =
      std::string(kToolStream)
          .substr(0, std::string(kToolStream).find("event: content_block_start"));
  Decoded decoded =
      Decode(start +
                 "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":"
                 "\"tool_use\",\"id\":\"t\",\"name\":\"current_time\",\"input\":{}}}\n\n"
                 "data: {\"type\":\"content_block_stop\",\"index\":0}\n\n"
                 "data: {\"type\":\"message_stop\"}\n\n",
             11);
  ASSERT_TRUE(decoded.response.ok()) << decoded.response.status();
  ASSERT_EQ(decoded.response->tool_calls.size(), 1u);
  EXPECT_EQ(decoded.response->tool_calls[0].arguments, json::object());
  EXPECT_EQ(decoded.response->stop_reason, StopReason::kToolUse);
}

}  // namespace
}  // namespace herald::providers
