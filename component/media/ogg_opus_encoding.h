// component/media/ogg_opus_encoding.h
//
// PCM encoded as Ogg Opus, what XMPP clients play as a voice message (Conversations, Monal,
// Dino, Gajim): libopusenc, tuned for speech (the VoIP application, 24 kbit/s variable
// bitrate), at any input rate from 8 to 192 kHz (libopusenc resamples to Opus's 48 kHz itself).
// The stream keeps the input's length to the sample: its pre-skip and last granule position
// say where the audio starts and ends, so a decoder plays exactly what was given. The same
// samples always encode to the same bytes (the stream's serial number is derived from them).
//
// Encoding blocks on the CPU (some 15 ms a second of mono audio at 22 kHz, resampling included):
// call it on the worker pool. It is safe to call from several threads at once.
//
//   absl::StatusOr<std::string> ogg = EncodeOggOpus(samples, 22'050, 1);
//   if (!ogg.ok()) return ogg.status();
//   Upload(*ogg, "audio/ogg");
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "absl/status/statusor.h"

namespace herald::media {

// The rates and channel counts EncodeOggOpus takes.
inline constexpr int kMinEncodeRate = 8'000;
inline constexpr int kMaxEncodeRate = 192'000;
inline constexpr int kMaxEncodeChannels = 2;

// `samples` (16-bit, interleaved when there are two channels) at `sample_rate` as an Ogg Opus
// file. No samples make a valid file of next to no audio (libopusenc writes one frame: 13.5 ms
// of silence).
//   - InvalidArgument for a rate outside 8 to 192 kHz, a channel count other than 1 or 2, or a
//     sample count that is not a whole number of frames;
//   - Internal when libopusenc fails.
absl::StatusOr<std::string> EncodeOggOpus(std::span<const int16_t> samples, int sample_rate,
                                          int channels);

}  // namespace herald::media
