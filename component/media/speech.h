// component/media/speech.h
//
// Voice messages as text, on this machine: the audio is decoded (audio_decoding.h: Ogg Opus, AAC
// in M4A or ADTS, or WAV, bounded in size and length before it is decoded) and read by PocketSphinx
// with Debian's US English model (pocketsphinx-en-us). Nothing leaves the machine and nothing needs
// a key; the price is accuracy. PocketSphinx gets short, plain English partly right (of espeak-ng's
// synthetic voice it gets about a third of the words wrong in Ogg Opus and half in WAV:
// tools/bench/speech_roundtrip) and other languages not at all, so the runtime should show the
// sender what it heard. The same audio always reads the same, whatever was read before it.
//
// A PocketSphinx decoder takes about 0.4 s of CPU and 100 MB of memory to make, so decoders are
// kept in a process-wide pool, one pool per model folder, made on first use and never freed:
// at most max_decoders of them, each used by one call at a time. A call that finds them all busy
// waits for one; recognition is CPU-bound, so more decoders than cores would only queue on the
// CPU. PocketSphinx's own logging (to stderr, or with -logfn to a file it reopens per decoder
// without a lock) goes to VLOG(2) instead.
//
// TranscribeLocally blocks for about a third of the audio's length in CPU time (40 s for a
// two-minute message, which takes some 100 MB more while it is read; the first call on a new
// decoder takes 0.4 s more): call it on the worker pool, never on the I/O loop. It is safe to
// call from several threads at once.
//
//   absl::StatusOr<Transcript> heard = TranscribeLocally(bytes, "audio/ogg", {});
//   if (!heard.ok()) return Reply(heard.status().message());  // "the voice message is longer
//                                                              //  than 2 minutes"
//   message.body = heard->text;                                // "hello what is the weather"
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "component/media/audio_decoding.h"

namespace herald::media {

// Where Debian's pocketsphinx-en-us installs the US English model.
inline constexpr std::string_view kDefaultSpeechModelDir = "/usr/share/pocketsphinx/model/en-us";

struct SpeechOptions {
  // A folder laid out as pocketsphinx-en-us's: the acoustic model in en-us/, the language model
  // en-us.lm.bin and the dictionary cmudict-en-us.dict beside it.
  std::string model_dir = std::string(kDefaultSpeechModelDir);
  // The most decoders kept for this folder (about 100 MB each): as many messages are read at
  // once. The first call for a folder fixes its pool; later calls' values are not read.
  int max_decoders = 2;
};

struct Transcript {
  std::string text;    // lower-case words separated by spaces; empty when no speech was heard
  double seconds = 0;  // the length of the audio
};

// What is said in `bytes`, a voice message of `media_type` ("audio/ogg", "audio/wav",
// "audio/mp4", "audio/aac", as SniffMediaType spells them). The errors of DecodeSpeechAudio
// (InvalidArgument for what the sender can act on, Unimplemented for Ogg Vorbis), and:
//   - FailedPrecondition when the model is not installed (naming the Debian package), or
//     PocketSphinx itself ("voice messages cannot be read here (PocketSphinx is not
//     installed)"; the log names the file and the package);
//   - Internal when PocketSphinx fails on audio it was given.
absl::StatusOr<Transcript> TranscribeLocally(std::string_view bytes, std::string_view media_type,
                                             const SpeechLimits& limits);
absl::StatusOr<Transcript> TranscribeLocally(std::string_view bytes, std::string_view media_type,
                                             const SpeechLimits& limits,
                                             const SpeechOptions& options);

// The words in `samples`, 16 kHz mono audio, as TranscribeLocally reads them.
absl::StatusOr<std::string> RecognizeSpeech(std::span<const int16_t> samples,
                                            const SpeechOptions& options);

}  // namespace herald::media
