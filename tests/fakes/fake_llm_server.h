// tests/fakes/fake_llm_server.h
//
// FakeLlmServer is an LLM API for tests: a FakeHttpServer on 127.0.0.1 that speaks one of the
// three wire formats Herald uses — Anthropic Messages, OpenAI Chat Completions, Ollama
// /api/chat — byte for byte as the real services shape them, streamed (SSE, or NDJSON for
// Ollama) or whole according to the request's own `stream` flag. It answers from a script of
// Answers (text, tool calls, errors with Retry-After, malformed or cut-off bodies, delays,
// hangs), then from a handler that computes the answer from the request, then with a default
// text. It checks what a real server checks first (path, JSON body, required fields, the API
// key when told to, images: base64 that decodes, a media type the API takes) and records every
// request, parsed, so tests can assert what Herald sent — the images too, decoded to their
// size and SHA-256. In the OpenAI format it also serves the audio and image endpoints
// (fake_media_endpoints.h), recorded apart in media_requests(). It speaks what its
// FakeHttpServer speaks: by default cleartext HTTP/1.1 (or h2c with prior knowledge); started
// with FakeHttpServerOptions{.tls = true}, TLS on a self-signed certificate that a client
// trusts through certificate_path(), HTTP/2 when the client offers it by ALPN.
//
//   auto server = FakeLlmServer::Start(FakeLlmServer::Format::kAnthropic);
//   (*server)->Enqueue(Answer::ToolCall("current_time", {{"zone", "UTC"}}));
//   (*server)->Enqueue(Answer::Text("It is noon.").WithDelay(absl::Seconds(2)));
//   (*server)->Enqueue(Answer::RateLimited(absl::Seconds(1)));
//   config.llm.anthropic.base_url = (*server)->base_url();
//   ...
//   ASSERT_TRUE((*server)->WaitForRequests(2, absl::Seconds(5)));
//   EXPECT_EQ((*server)->requests()[1].LastToolResult(), "12:00");
//   EXPECT_EQ((*server)->requests()[1].images[0].sha256, base::Sha256Hex(png));
//
//   // An answer computed from each request: a tool-call loop that ends with the result.
//   (*server)->SetHandler(FakeLlmServer::ToolLoop("current_time", {}));
//
//   // Over TLS: base_url() is https://127.0.0.1:P..., trusted through the CA file.
//   auto tls = FakeLlmServer::Start(FakeLlmServer::Format::kOpenAi, {.tls = true});
//   request.ca_file = (*tls)->certificate_path();
//
// The handler runs on the server's thread, one request at a time; keep it quick (delays are
// Answer::WithDelay, which do not block other connections).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "nlohmann/json.hpp"
#include "providers/provider.h"
#include "tests/fakes/fake_http_server.h"
#include "tests/fakes/fake_media_endpoints.h"

namespace herald::fakes {

enum class LlmWireFormat { kAnthropic, kOpenAi, kOllama };

struct FakeToolCall {
  std::string name;
  nlohmann::json arguments;  // null is sent as {}
};

// One answer of the fake. Build it with a factory, adjust it with the With... methods:
//   Answer::Text("hi").WithDelay(absl::Seconds(2)).WithUsage({.input_tokens = 5})
struct Answer {
  enum class Kind { kReply, kError, kRaw, kHang };

  // 200 with this text.
  static Answer Text(std::string text);
  // 200 with one tool call (arguments null or {} mean no arguments).
  static Answer ToolCall(std::string name, nlohmann::json arguments = nlohmann::json::object());
  static Answer ToolCalls(std::vector<FakeToolCall> calls);
  // `status` with the format's error body (type chosen from the status: 429 rate limit, 529
  // overloaded, 500 api/server error, 401 authentication...); `message` defaults to one
  // naming the status.
  static Answer Error(int status, std::string message = "");
  // 429 with a Retry-After header (whole seconds, rounded up).
  static Answer RateLimited(absl::Duration retry_after = absl::Seconds(1));
  // 200 with exactly these bytes as the body (one chunk when the request streams).
  static Answer Malformed(std::string body = "{\"id\": \"msg_broken\", \"content\": [tru");
  // The request is read and never answered.
  static Answer Hang();

  Answer WithText(std::string text) const;  // text beside the tool calls
  Answer WithDelay(absl::Duration delay) const;
  Answer WithChunkInterval(absl::Duration interval) const;  // between streamed events
  Answer WithUsage(providers::Usage usage) const;
  Answer WithStopReason(providers::StopReason reason) const;
  Answer WithRetryAfter(absl::Duration retry_after) const;  // on an Error
  // Well-formed HTTP, but the answer stops short: a stream ends without its final events
  // (message_delta/message_stop, finish_reason/usage/[DONE], the done line); a whole body is
  // cut in half.
  Answer Truncated() const;
  // The connection is closed mid-body (after half the streamed events, or half the body).
  Answer Disconnected() const;
  // A whole JSON body even when the request asked to stream, as servers that cannot stream do.
  Answer IgnoringStream() const;

  Kind kind = Kind::kReply;
  std::string text;
  std::vector<FakeToolCall> tool_calls;
  int status = 200;
  std::string error_message;
  std::optional<absl::Duration> retry_after;
  std::string raw_body;
  std::optional<providers::Usage> usage;             // default: 10 in, a count of the words out
  std::optional<providers::StopReason> stop_reason;  // default: tool use or end of turn
  absl::Duration delay = absl::ZeroDuration();
  absl::Duration chunk_interval = absl::ZeroDuration();
  bool truncated = false;
  bool disconnect = false;
  bool ignore_stream = false;
};

// An image a request carried, decoded: Anthropic's `image` blocks (base64 source), OpenAI's
// `image_url` parts (base64 data URLs), Ollama's `images` strings.
struct RecordedImage {
  std::string media_type;  // as the request said it; "" for Ollama, whose format does not say
  size_t size = 0;         // of the decoded bytes
  std::string sha256;      // of the decoded bytes, 64 lower-case hex digits
};

// One request the fake received, with its body parsed and read in the format's terms.
struct RecordedLlmRequest {
  LlmWireFormat format = LlmWireFormat::kAnthropic;
  FakeHttpRequest http;  // method, path, headers (lower case), raw body
  nlohmann::json body;   // null when the body was not JSON
  bool stream = false;   // what the body asked for (Ollama streams when it says nothing)
  std::string model;
  // The images of every message, in order. A request with a malformed image (not base64, no
  // or an unknown media type, a URL rather than data) is refused with 400 and records none.
  std::vector<RecordedImage> images;

  std::string Header(std::string_view name) const { return http.Header(name); }
  // The system prompt ("" when there is none).
  std::string System() const;
  // The messages of the conversation, the system message of OpenAI/Ollama excluded.
  size_t MessageCount() const;
  // The text of the last user message ("" when there is none).
  std::string LastUserText() const;
  // The content of the last tool result when the last message carries one.
  std::optional<std::string> LastToolResult() const;
  // The names of the tools offered.
  std::vector<std::string> ToolNames() const;
};

class FakeLlmServer {
 public:
  using Format = LlmWireFormat;
  using Handler = std::function<Answer(const RecordedLlmRequest& request)>;

  static constexpr char kDefaultText[] = "This is the fake LLM's default answer.";

  // In cleartext.
  static absl::StatusOr<std::unique_ptr<FakeLlmServer>> Start(Format format);
  // With TLS when `http_options` say so.
  static absl::StatusOr<std::unique_ptr<FakeLlmServer>> Start(Format format,
                                                              FakeHttpServerOptions http_options);
  ~FakeLlmServer();  // stops the server (a hanging answer is dropped)

  Format format() const;
  uint16_t port() const;
  // What to configure: Anthropic's base_url ("http://127.0.0.1:P"), OpenAI's base_url
  // ("http://127.0.0.1:P/v1") or Ollama's host ("http://127.0.0.1:P"); "https://..." with TLS.
  std::string base_url() const;
  // The PEM file a client trusts as its CA file with TLS (FakeHttpServer's); "" without.
  std::string certificate_path() const;
  // TCP connections accepted so far (over HTTP/2 many requests share one).
  size_t connection_count() const;

  // Appends to the script; each request takes the next answer.
  void Enqueue(Answer answer);
  // Answers the requests that find the script empty.
  void SetHandler(Handler handler);
  // Answers when there is neither a script nor a handler; Text(kDefaultText) unless set.
  void SetDefaultAnswer(Answer answer);
  // From now on a request without this key (x-api-key, or Authorization: Bearer) gets 401.
  void RequireApiKey(std::string key);
  // Scripted answers not yet given.
  size_t pending_answers() const;

  // Every request so far, in arrival order, refused ones included (embeddings requests are
  // kept apart, below); none when the http_options did not keep_requests.
  std::vector<RecordedLlmRequest> requests() const;

  // Embeddings (POST /v1/embeddings for the OpenAI format, /api/embed for Ollama's): each
  // text gets FakeEmbedding(text) (fake_embeddings.h). Every such request so far, and how
  // many texts they carried; with a status set, they are refused with it.
  std::vector<RecordedLlmRequest> embedding_requests() const;
  size_t embedded_texts() const;
  void FailEmbeddings(int status);
  // Called (on the server's thread) with every embeddings request as it arrives.
  void OnEmbeddings(std::function<void(const RecordedLlmRequest&)> observer);
  size_t request_count() const;
  bool WaitForRequests(size_t count, absl::Duration timeout) const;

  // The media endpoints of the OpenAI format (fake_media_endpoints.h): the text transcriptions
  // answer (kDefaultFakeTranscript unless set); the answers of the next media requests, one
  // each (Error, RateLimited, Malformed, Hang, WithDelay; Text for a transcript); every media
  // request so far; an observer called (on the server's thread) with each as it is answered.
  void SetTranscript(std::string text);
  void EnqueueMedia(Answer answer);
  std::vector<RecordedMediaRequest> media_requests() const;
  void OnMedia(std::function<void(const RecordedMediaRequest&)> observer);

  // Answers "echo: <last user text>", or "tool said: <result>" after a tool result.
  static Handler Echo();
  // Calls `tool` with `arguments` after a user message; answers "tool said: <result>" after a
  // tool result — the shape of one agentic round trip.
  static Handler ToolLoop(std::string tool, nlohmann::json arguments);

  struct State;

 private:
  FakeLlmServer(std::unique_ptr<State> state, std::unique_ptr<FakeHttpServer> http);

  std::unique_ptr<State> state_;
  std::unique_ptr<FakeHttpServer> http_;  // declared last: stopped before state_ goes
};

}  // namespace herald::fakes
