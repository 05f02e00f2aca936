// component/agent/voice.h
//
// Voice both ways (V1; docs/media.md). A voice message becomes text — through the provider's
// /v1/audio/transcriptions when [voice] transcription names one, otherwise on this machine with
// PocketSphinx (component/media/speech.h) — and an answer becomes speech when the person asked
// for it (/voice on) or sent a voice message and [voice] answer_voice_notes is set: through the
// provider's /v1/audio/speech, or on this machine with espeak-ng (speech_synthesis.h), as Ogg
// Opus, which the runtime sends like any file (file_sender.h). Local work runs on the Voice's own
// thread (started when it is first needed), one message at a time: reading a two-minute message
// takes some 35 CPU seconds, which must not hold up the worker pool that every conversation's
// memory and the ledger use (on two cores, one thread for voice leaves the other for everything
// else). Provider calls run on the I/O loop's HTTP client. Calls to a provider are recorded in the
// usage ledger by the caller, under `transcription_model()` / `speech_model()`.
//
//   auto voice = Voice::Create(io, options, media_api.get());
//   (*voice)->Speak(answer, [](absl::StatusOr<std::string> ogg) { ... });
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "asio.hpp"
#include "component/agent/agent_options.h"
#include "providers/openai/media_api.h"

namespace herald::agent {

class Voice {
 public:
  using Done = std::function<void(absl::StatusOr<std::string>)>;

  // InvalidArgument when a provider is named that is not "openai:<model>", or when one is named
  // and `api` is null. `api` (may be null) outlives the Voice.
  static absl::StatusOr<std::unique_ptr<Voice>> Create(asio::io_context& io, VoiceOptions options,
                                                       providers::OpenAiMediaApi* api);

  const VoiceOptions& options() const { return options_; }
  bool transcribes() const { return options_.transcription != "off"; }
  bool transcribes_locally() const { return options_.transcription == "local"; }
  bool speaks() const { return options_.speech != "off"; }
  // "openai:whisper-1" — what a provider call is recorded under; "" when it is local.
  const std::string& transcription_model() const { return transcription_model_; }
  const std::string& speech_model() const { return speech_model_; }

  // What is said in `audio` (of `media_type`, as SniffMediaType spells it): on this machine or
  // by the provider, as [voice] transcription says; `done` runs on the loop. The errors of
  // TranscribeLocally (speech.h), whose messages the sender may read, or the provider's.
  void Transcribe(std::shared_ptr<const std::string> audio, std::string media_type, Done done);
  // `text` spoken, as Ogg Opus bytes; `done` runs on the loop.
  void Speak(std::string_view text, Done done);

 private:
  Voice(asio::io_context& io, VoiceOptions options, providers::OpenAiMediaApi* api);

  // The thread for transcription and speech on this machine, started by the first message
  // that needs it (most Herald processes never hear a voice message). Called on the loop.
  asio::thread_pool& Local();

  asio::io_context& io_;
  std::unique_ptr<asio::thread_pool> local_;
  VoiceOptions options_;
  providers::OpenAiMediaApi* api_;
  std::string transcription_model_;  // "openai:<model>" or ""
  std::string speech_model_;
};

// `text` as it should be read aloud: Markdown marks, code and links left out, at most
// `max_bytes` bytes (cut after a sentence where possible, and saying that the rest is in the
// text).
std::string SpeakableText(std::string_view text, size_t max_bytes);

}  // namespace herald::agent
