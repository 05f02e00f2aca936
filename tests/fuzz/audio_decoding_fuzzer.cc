// libFuzzer target for voice messages on their way to speech recognition: DecodeSpeechAudio,
// which reads WAV itself, Ogg Opus with libopusfile and AAC (MP4/M4A or ADTS) with FFmpeg, on
// any bytes a sender attaches. The whole input is the attachment, read as Ogg, as WAV and as
// AAC ("audio/mp4": FFmpeg tells MP4 from ADTS by the bytes, as for "audio/aac"), with the
// default limits and with tight ones. Whatever it holds:
//   - a refusal is InvalidArgument or Unimplemented (ResourceExhausted if FFmpeg runs out of
//     memory), with a message;
//   - what is decoded is no longer than max_seconds, and holds 16,000 samples a second of it;
//   - under a one-second limit, longer audio is refused as too long, and audio of at most a
//     second decodes to the same samples (or is refused as too long for what it claims).
// PocketSphinx is not fuzzed: it only ever sees samples, never the sender's bytes.
//
//   tests/fuzz/run audio_decoding       # builds with clang and fuzzes for FUZZ_SECONDS
//   audio_decoding_fuzzer corpus_dir/   # by hand, once built

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "component/media/audio_decoding.h"

namespace herald::media {
namespace {

[[noreturn]] void Fail(const char* what, std::string_view input, std::string_view type,
                       std::string_view detail) {
  std::fprintf(stderr, "%s\n--- type: %.*s\n--- input: %zu bytes\n--- detail: %.*s\n", what,
               static_cast<int>(type.size()), type.data(), input.size(),
               static_cast<int>(detail.size()), detail.data());
  std::abort();
}

void CheckOne(std::string_view input, std::string_view type, const SpeechLimits& limits,
              const absl::StatusOr<SpeechAudio>& result) {
  if (!result.ok()) {
    const absl::StatusCode code = result.status().code();
    if (code != absl::StatusCode::kInvalidArgument && code != absl::StatusCode::kUnimplemented &&
        code != absl::StatusCode::kResourceExhausted) {
      Fail("a refusal that is neither InvalidArgument nor Unimplemented", input, type,
           result.status().ToString());
    }
    if (result.status().message().empty()) Fail("a refusal without a message", input, type, "");
    return;
  }
  const SpeechAudio& audio = *result;
  if (!(audio.seconds >= 0) || audio.seconds > limits.max_seconds) {
    Fail("more audio decoded than the limit allows", input, type, std::to_string(audio.seconds));
  }
  const double expected = audio.seconds * 16'000;
  if (std::abs(static_cast<double>(audio.samples.size()) - expected) > 1.0) {
    Fail("not 16,000 samples a second", input, type,
         std::to_string(audio.samples.size()) + " samples for " + std::to_string(audio.seconds));
  }
}

void Check(std::string_view input) {
  SpeechLimits tight;
  tight.max_seconds = 1;
  const SpeechLimits loose;
  for (std::string_view type : {"audio/ogg", "audio/wav", "audio/mp4"}) {
    const absl::StatusOr<SpeechAudio> full = DecodeSpeechAudio(input, type, loose);
    const absl::StatusOr<SpeechAudio> part = DecodeSpeechAudio(input, type, tight);
    CheckOne(input, type, loose, full);
    CheckOne(input, type, tight, part);
    if (!full.ok()) continue;
    const bool too_long =
        !part.ok() && part.status().message() == "the voice message is longer than 1 second";
    if (full->seconds > 1 && !too_long) {
      Fail("long audio not refused as too long", input, type, part.status().ToString());
    }
    // A damaged Ogg may claim (op_pcm_total) more than it holds, and be refused for the claim;
    // so may an MP4 (its durations and sample count).
    if (full->seconds <= 1 && !too_long && (!part.ok() || part->samples != full->samples)) {
      Fail("short audio read differently under a tighter limit", input, type,
           part.status().ToString());
    }
  }
}

}  // namespace
}  // namespace herald::media

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  herald::media::Check(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
