// providers/openai/media_api.h
//
// OpenAiMediaApi speaks the audio and image endpoints of OpenAI-compatible servers (OpenAI,
// and the local servers that copy them: speaches, LocalAI, vLLM...): speech to text (POST
// {base_url}/audio/transcriptions, multipart/form-data), text to speech (POST
// {base_url}/audio/speech, answered with Ogg Opus) and image generation (POST
// {base_url}/images/generations, answered with base64 that is decoded here). It sends over the
// shared HttpClient with the [llm] timeouts and retries (429 and 5xx are retried with backoff,
// honouring Retry-After), from [llm.openai]'s base_url and key. The key goes only into the
// Authorization header (none is sent when it is empty, for local servers) and is removed from
// every error message.
//
//   auto media = OpenAiMediaApi::Create(http.get(), config.llm.openai, HttpCallOptionsFrom(llm));
//   (*media)->Transcribe("whisper-1", audio, "audio/ogg", [](absl::StatusOr<std::string> text) {
//     ...  // on the I/O loop: "what is the weather in paris"
//   });
//
// Every call must be made on the I/O loop's thread; its `done` runs exactly once, later, on the
// I/O loop. Errors (every message starts with "openai: "):
//   - Unauthenticated: 401/403 (a wrong or missing key);
//   - InvalidArgument: another 4xx (an unknown model or voice, audio the server cannot read,
//     a prompt its safety system refused...), with the server's own message;
//   - Unavailable: 429 and 5xx after the retries, transport failures; DeadlineExceeded: timeouts;
//   - Internal: a 2xx answer that is not what the endpoint promises — not JSON, a field missing
//     or of the wrong type, base64 that does not decode, audio that is not Ogg Opus, bytes that
//     are not an image, a transcript that is not UTF-8 — or one larger than the limits below.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "providers/http/http_client.h"
#include "providers/llm_options.h"
#include "providers/wire/http_call.h"

namespace herald::providers {

// The most each answer may hold; a larger one fails Internal without being kept.
inline constexpr size_t kMaxTranscriptionAnswerBytes = 1 << 20;  // the JSON
inline constexpr size_t kMaxTranscriptBytes = 64 << 10;          // its text
inline constexpr size_t kMaxSpeechBytes = 16 << 20;
inline constexpr size_t kMaxImageAnswerBytes = 32 << 20;   // the JSON
inline constexpr size_t kMaxImageBytes = 24 << 20;         // the decoded image
inline constexpr size_t kMaxRevisedPromptBytes = 8 << 10;  // longer ones are cut

// The OpenAI-compatible audio and image endpoints: speech to text, text to speech, images.
class OpenAiMediaApi {
 public:
  // Fails when base_url is not an http(s) URL. An empty key is allowed (local servers).
  static absl::StatusOr<std::unique_ptr<OpenAiMediaApi>> Create(HttpClient* http,
                                                                const HostedProviderOptions& config,
                                                                const HttpCallOptions& options);
  // The same with [llm]'s timeouts and retries.
  static absl::StatusOr<std::unique_ptr<OpenAiMediaApi>> Create(HttpClient* http,
                                                                const HostedProviderOptions& config,
                                                                const LlmOptions& llm) {
    return Create(http, config, HttpCallOptionsFrom(llm));
  }

  // POST {base_url}/audio/transcriptions, multipart/form-data: file (with a filename whose
  // extension matches media_type: "audio/ogg" → voice.ogg, audio/mp4 → .m4a, audio/aac,
  // audio/wav, audio/mpeg → .mp3, audio/webm, audio/flac; any other audio/<x> → voice.<x>), model,
  // response_format=json. Done with the transcript's text (valid UTF-8, at most
  // kMaxTranscriptBytes; empty when nothing was said).
  void Transcribe(std::string model, std::shared_ptr<const std::string> audio,
                  std::string media_type, std::function<void(absl::StatusOr<std::string>)> done);

  // POST {base_url}/audio/speech, JSON {model, input, voice, response_format: "opus"}. Done
  // with the audio bytes: an Ogg Opus file (checked by its first page).
  void Speak(std::string model, std::string voice, std::string text,
             std::function<void(absl::StatusOr<std::string>)> done);

  struct GeneratedImage {
    std::string bytes;           // PNG, JPEG, WebP or GIF (checked by their signatures)
    std::string revised_prompt;  // what the model drew from, when it says; UTF-8, bounded
  };
  // POST {base_url}/images/generations, JSON {model, prompt, n: 1, size, response_format:
  // "b64_json"} (size left out when empty). Done with the decoded image bytes.
  void GenerateImage(std::string model, std::string prompt, std::string size,
                     std::function<void(absl::StatusOr<GeneratedImage>)> done);

 private:
  OpenAiMediaApi(HttpClient* http, std::string base_url, std::string api_key,
                 HttpCallOptions options);

  // Sends `request` with the call options; `done` gets the 2xx body or the error status.
  void Send(HttpRequest request, size_t max_body_bytes,
            std::function<void(absl::StatusOr<std::string>)> done);

  HttpClient* http_;
  std::string base_url_;
  std::string api_key_;
  HttpCallOptions options_;
};

}  // namespace herald::providers
