#include "providers/ollama/wire_format.h"

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

TEST(OllamaRequestTest, BuildsAChatBodyWithToolCallsAndToolMessages) {
  LlmRequest request;
  request.model = "llama3.1:8b";
  request.system = "You are Herald.";
  request.max_tokens = 300;
  request.messages.push_back({.role = LlmMessage::Role::kUser, .text = "Time?"});
  request.messages.push_back({.role = LlmMessage::Role::kAssistant,
                              .tool_calls = {{"call_0", "current_time", json{{"zone", "UTC"}}}}});
  request.messages.push_back({.role = LlmMessage::Role::kTool,
                              .tool_results = {{"call_0", "current_time", "12:00", false}}});
  request.tools.push_back({"current_time", "", nullptr});
  const json body = BuildOllamaRequest(request);
  const json expected = json::parse(R"({
    "model": "llama3.1:8b",
    "stream": false,
    "options": {"num_predict": 300},
    "messages": [
      {"role": "system", "content": "You are Herald."},
      {"role": "user", "content": "Time?"},
      {"role": "assistant", "content": "", "tool_calls": [
        {"function": {"name": "current_time", "arguments": {"zone": "UTC"}}}
      ]},
      {"role": "tool", "tool_name": "current_time", "content": "12:00"}
    ],
    "tools": [{"type": "function", "function": {"name": "current_time",
               "parameters": {"type": "object", "properties": {}}}}]
  })");
  EXPECT_EQ(body, expected) << body.dump(2);
}

TEST(OllamaRequestTest, SendsAUserMessagesImagesAsPlainBase64BesideItsText) {
  LlmRequest request;
  request.messages.push_back(
      {.role = LlmMessage::Role::kUser,
       .text = "What is in these?",
       .images = {ImagePart::FromBytes("image/png", "\x89PNG"),
                  ImagePart::FromBytes("image/jpeg", std::string("\xff\xd8\xff\x00", 4))}});
  const json body = BuildOllamaRequest(request);
  EXPECT_EQ(body["messages"], json::parse(R"([{"role": "user", "content": "What is in these?",
                                               "images": ["iVBORw==", "/9j/AA=="]}])"))
      << body.dump(2);
}

TEST(OllamaRequestTest, EncodesAMessageWithoutImagesWithoutAnImagesField) {
  LlmRequest request;
  request.model = "llama3.2-vision";
  request.messages.push_back({.role = LlmMessage::Role::kUser, .text = "hi"});
  EXPECT_EQ(DumpJson(BuildOllamaRequest(request)),
            R"({"messages":[{"content":"hi","role":"user"}],"model":"llama3.2-vision",)"
            R"("options":{"num_predict":1024},"stream":false})");
}

TEST(OllamaRequestTest, AddsASchemeToAHostWithoutOne) {
  EXPECT_EQ(OllamaChatUrl("localhost:11434"), "http://localhost:11434/api/chat");
  EXPECT_EQ(OllamaChatUrl("https://ollama.example/"), "https://ollama.example/api/chat");
}

TEST(OllamaResponseTest, ParsesTextToolCallsAndCounts) {
  absl::StatusOr<LlmResponse> response = ParseOllamaResponse(R"({
    "model": "llama3.1:8b", "created_at": "2025-01-01T00:00:00Z",
    "message": {"role": "assistant", "content": "",
                "tool_calls": [{"function": {"name": "current_time", "arguments": {"zone": "UTC"}}},
                               {"function": {"index": 1, "name": "memory_recall",
                                             "arguments": {"query": "x"}}}]},
    "done_reason": "stop", "done": true, "total_duration": 1, "prompt_eval_count": 26,
    "eval_count": 298
  })");
  ASSERT_TRUE(response.ok()) << response.status();
  ASSERT_EQ(response->tool_calls.size(), 2u);
  EXPECT_EQ(response->tool_calls[0].id, "call_0");
  EXPECT_EQ(response->tool_calls[1].id, "call_1");
  EXPECT_EQ(response->tool_calls[0].arguments, json({{"zone", "UTC"}}));
  EXPECT_EQ(response->stop_reason, StopReason::kToolUse);
  EXPECT_EQ(response->usage.input_tokens, 26);
  EXPECT_EQ(response->usage.output_tokens, 298);
  EXPECT_EQ(response->model, "llama3.1:8b");
}

TEST(OllamaResponseTest, MapsDoneReasons) {
  EXPECT_EQ(OllamaDoneReason("stop"), StopReason::kEndTurn);
  EXPECT_EQ(OllamaDoneReason("length"), StopReason::kMaxTokens);
  EXPECT_EQ(OllamaDoneReason("unload"), StopReason::kOther);
}

TEST(OllamaResponseTest, RefusesMalformedBodiesWithDataLossNamingTheProblem) {
  struct Case {
    const char* body;
    const char* says;
  };
  for (const Case& c : std::vector<Case>{
           {"", "empty"},
           {R"({"message": {"content": "hi)", "truncated"},
           {R"(["x"])", "not a JSON object"},
           {R"({"done": true})", "no message object"},
           {R"({"message": {"content": "hi"}, "done": false})", "not marked done"},
           {R"({"message": {"content": 7}, "done": true})", "content is not text"},
           {R"({"message": {"tool_calls": [{"function": {}}]}, "done": true})", "no function name"},
           {R"({"message": {"tool_calls": [{"function": {"name": "f", "arguments": [1]}}]},
                "done": true})",
            "are not an object"},
           {R"({"message": {"content": "x"}, "done": "yes"})", "done is not a boolean"},
       }) {
    absl::StatusOr<LlmResponse> response = ParseOllamaResponse(c.body);
    EXPECT_EQ(response.status().code(), absl::StatusCode::kDataLoss) << c.body;
    EXPECT_THAT(response.status().message(), HasSubstr(c.says)) << c.body;
    EXPECT_THAT(response.status().message(), HasSubstr("ollama")) << c.body;
  }
}

TEST(OllamaErrorStatusTest, ReadsTheErrorText) {
  absl::Status status = OllamaErrorStatus(
      404, R"({"error": "model \"llama9\" not found, try pulling it first"})", "");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("model \"llama9\" not found"));
  EXPECT_EQ(OllamaErrorStatus(500, "boom", "").code(), absl::StatusCode::kUnavailable);
}

constexpr char kStream[] =
    "{\"model\":\"llama3.1\",\"created_at\":\"t\",\"message\":{\"role\":\"assistant\","
    "\"content\":\"The \"},\"done\":false}\n"
    "{\"model\":\"llama3.1\",\"created_at\":\"t\",\"message\":{\"role\":\"assistant\","
    "\"content\":\"time \\u00e9\"},\"done\":false}\r\n"
    "{\"model\":\"llama3.1\",\"created_at\":\"t\",\"message\":{\"role\":\"assistant\","
    "\"content\":\"\",\"tool_calls\":[{\"function\":{\"name\":\"current_time\","
    "\"arguments\":{}}}]},\"done\":false}\n"
    "\n"
    "{\"model\":\"llama3.1\",\"created_at\":\"t\",\"message\":{\"role\":\"assistant\","
    "\"content\":\"\"},\"done_reason\":\"stop\",\"done\":true,\"total_duration\":5,"
    "\"prompt_eval_count\":31,\"eval_count\":7}\n";

struct Decoded {
  absl::StatusOr<LlmResponse> response;
  std::vector<std::string> deltas;
};

Decoded Decode(std::string_view stream, size_t chunk) {
  Decoded out;
  OllamaStreamDecoder decoder([&](std::string_view d) { out.deltas.emplace_back(d); });
  for (size_t pos = 0; pos < stream.size(); pos += chunk) {
    if (absl::Status s = decoder.Feed(stream.substr(pos, chunk)); !s.ok()) {
      out.response = s;
      return out;
    }
  }
  out.response = decoder.Finish();
  return out;
}

TEST(OllamaStreamTest, DecodesNdjsonLinesFedOneByteAtATime) {
  for (size_t chunk : {sizeof(kStream), size_t{1}, size_t{7}}) {
    Decoded decoded = Decode(kStream, chunk);
    ASSERT_TRUE(decoded.response.ok()) << decoded.response.status();
    EXPECT_THAT(decoded.deltas, ElementsAre("The ", "time \xC3\xA9"));
    EXPECT_EQ(decoded.response->text, "The time \xC3\xA9");
    ASSERT_EQ(decoded.response->tool_calls.size(), 1u);
    EXPECT_EQ(decoded.response->tool_calls[0].name, "current_time");
    EXPECT_EQ(decoded.response->stop_reason, StopReason::kToolUse);
    EXPECT_EQ(decoded.response->usage.input_tokens, 31);
    EXPECT_EQ(decoded.response->usage.output_tokens, 7);
  }
}

TEST(OllamaStreamTest, ReadsALastLineWithoutItsNewline) {
  std::string stream = kStream;
  stream.pop_back();
  Decoded decoded = Decode(stream, 10);
  ASSERT_TRUE(decoded.response.ok()) << decoded.response.status();
  EXPECT_EQ(decoded.response->usage.output_tokens, 7);
}

TEST(OllamaStreamTest, SaysTruncatedWhenTheStreamStopsBeforeDone) {
  const std::string stream = kStream;
  Decoded cut = Decode(stream.substr(0, stream.rfind("{\"model\"")), 10);
  EXPECT_EQ(cut.response.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(cut.response.status().message(), HasSubstr("ended before \"done\": true"));
  Decoded mid_line = Decode(stream.substr(0, stream.size() - 20), 10);
  EXPECT_EQ(mid_line.response.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(mid_line.response.status().message(), HasSubstr("truncated"));
}

TEST(OllamaStreamTest, ReportsAnErrorLine) {
  Decoded decoded = Decode(
      "{\"message\":{\"content\":\"Hi\"},\"done\":false}\n{\"error\":\"model runner crashed\"}\n",
      4);
  EXPECT_EQ(decoded.response.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(decoded.response.status().message(), HasSubstr("model runner crashed"));
}

}  // namespace
}  // namespace herald::providers
