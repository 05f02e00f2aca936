// tests/fakes/fake_media_endpoints.h
//
// The OpenAI media endpoints of FakeLlmServer (in the OpenAI format, under its /v1 base path):
// speech to text (POST /v1/audio/transcriptions, multipart/form-data), text to speech (POST
// /v1/audio/speech) and image generation (POST /v1/images/generations). Each checks what the real
// API checks first — the API key when the server requires one, the multipart framing and its
// `file` and `model` parts, the JSON fields — and refuses with OpenAI's error body otherwise:
//   {"error": {"message": "...", "type": "invalid_request_error", "param": ..., "code": ...}}
// and answers with real media: the transcript as {"text": ...} (kDefaultFakeTranscript unless
// set), a small Ogg Opus file (FakeSpeechOgg(), tests/fakes/data/fake_speech.ogg) as audio/ogg,
// a 64x64 PNG of one colour chosen by the prompt's hash (FakeImagePng(prompt)) as b64_json.
//
// Every media request is recorded as a RecordedMediaRequest whose `summary` is what
// fake_llm_main writes to its request log. Its fields:
//   all:            endpoint ("transcriptions" | "speech" | "images"), path, status (the HTTP
//                   status answered), model, error (the refusal's message; absent when none)
//   transcriptions: filename, file_content_type, file_size, file_sha256 (64 lower-case hex
//                   digits of the file part's bytes), response_format, language (or null),
//                   transcript (the text answered)
//   speech:         voice, input, response_format, audio_size, audio_sha256 (of the answer)
//   images:         prompt, size (or null), n, response_format, image_size, image_sha256 (of the
//                   PNG answered, decoded), revised_prompt
//
//   auto server = FakeLlmServer::Start(FakeLlmServer::Format::kOpenAi);
//   (*server)->SetTranscript("turn on the lights");
//   (*server)->EnqueueMedia(Answer::RateLimited());      // the next media request gets 429
//   ...
//   EXPECT_EQ((*server)->media_requests()[0].summary["file_sha256"], base::Sha256Hex(audio));
#pragma once

#include <string>
#include <string_view>

#include "nlohmann/json.hpp"
#include "tests/fakes/fake_http_server.h"

namespace herald::fakes {

struct Answer;

inline constexpr char kDefaultFakeTranscript[] = "what is the weather in paris";

// One request to a media endpoint, as the fake read it.
struct RecordedMediaRequest {
  FakeHttpRequest http;    // method, path, headers (lower case), raw body
  std::string endpoint;    // "transcriptions", "speech" or "images"
  int status = 0;          // the HTTP status answered (0 for a hanging answer)
  nlohmann::json summary;  // the fields above

  std::string Header(std::string_view name) const { return http.Header(name); }
};

// What a media request is answered from.
struct MediaSettings {
  std::string api_key;  // required as "Authorization: Bearer <key>" when not empty
  std::string transcript = kDefaultFakeTranscript;
  // When set, overrides the answer of a well-authenticated request: Error / RateLimited (that
  // status and OpenAI's error body, even for a request that would be refused), Malformed (200
  // with exactly its bytes, as audio/ogg for speech and application/json otherwise), Hang,
  // WithDelay; Text(t) answers a transcription with t.
  const Answer* scripted = nullptr;
};

// Whether `path` is one of the three media endpoints (the query string aside).
bool IsMediaPath(std::string_view path);

// Answers one media request and fills `record`.
FakeHttpResponse ServeMedia(const FakeHttpRequest& http, const MediaSettings& settings,
                            RecordedMediaRequest* record);

// OpenAI's error body for `status` (its type and code as the API chooses them).
nlohmann::json OpenAiErrorJson(int status, const std::string& message);

// The Ogg Opus file the speech endpoint answers with (1.7 s of espeak-ng saying "this is the
// fake speech").
std::string_view FakeSpeechOgg();

// The PNG the image endpoint answers `prompt` with: 64x64, RGB, one colour (the first three
// bytes of the prompt's SHA-256).
std::string FakeImagePng(std::string_view prompt);

}  // namespace herald::fakes
