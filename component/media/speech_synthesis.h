// component/media/speech_synthesis.h
//
// Text spoken aloud, on this machine: espeak-ng (libespeak-ng, with Debian's espeak-ng-data)
// says it, and ogg_opus_encoding.h makes it a voice message any XMPP client plays (Ogg Opus,
// mono, 24 kbit/s). Nothing leaves the machine and nothing needs a key; the price is a robotic
// voice. Text goes in as it is, Markdown and all (espeak-ng reads punctuation as pauses);
// control characters and bytes that are not UTF-8 are read as spaces.
//
// espeak-ng keeps its state in globals, so every call in the process takes one lock: calls from
// several threads are safe, and are spoken one after another. The library is initialised on the
// first call (some 30 ms), and each call sets its own voice and speed. espeak-ng is not quite
// deterministic: the same text comes out a few milliseconds longer or shorter from one call to
// the next, and what was said before shifts it a little more.
//
// SynthesizeLocally blocks on the CPU for some 20 ms a second of speech (espeak-ng, then the
// Opus encoder): call it on the worker pool, never on the I/O loop. Its memory is bounded by
// max_seconds (some 13 MB for five minutes, while it is encoded).
//
//   absl::StatusOr<SpokenAudio> spoken = SynthesizeLocally(answer, {}, {});
//   if (!spoken.ok()) return SendText(answer);   // "the answer is too long to speak (over
//                                                 //  5 minutes)"
//   SendVoiceMessage(spoken->ogg_opus, "audio/ogg", spoken->seconds);
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace herald::media {

struct SynthesisOptions {
  // An espeak-ng voice: a language ("en-us", "de", "fr") with an optional variant
  // ("en-us+f2"), as `espeak-ng --voices` lists them.
  std::string voice = "en-us";
  // Speed, from 80 to 450 words a minute.
  int words_per_minute = 165;
};

struct SynthesisLimits {
  // Longer text is refused before it is spoken.
  size_t max_text_bytes = 4000;
  // Speech longer than this is refused: espeak-ng is stopped when it reaches it.
  double max_seconds = 300;
};

struct SpokenAudio {
  std::string ogg_opus;  // an Ogg Opus file, mono (ogg_opus_encoding.h)
  double seconds = 0;    // the length of the speech
};

// `text` (UTF-8) spoken by espeak-ng and encoded as Ogg Opus.
//   - InvalidArgument when there is nothing to speak (empty text, or only spaces and controls),
//     the text is over max_text_bytes, the voice is unknown, the speed is outside 80 to 450
//     words a minute, or the speech would be longer than max_seconds ("the answer is too long
//     to speak (over 5 minutes)");
//   - FailedPrecondition when espeak-ng or its data is not installed (naming the Debian
//     package);
//   - Internal when espeak-ng or the encoder fails.
absl::StatusOr<SpokenAudio> SynthesizeLocally(std::string_view text,
                                              const SynthesisOptions& options,
                                              const SynthesisLimits& limits);

}  // namespace herald::media
