// component/media/resampler.h
//
// Mono audio at whatever rate it was recorded brought to the 16 kHz that speech recognition
// (speech.h) expects. One method serves every rate: band-limited interpolation (J. O. Smith's
// resampling method) with a Kaiser-windowed sinc whose cutoff sits just below the lower of the
// two Nyquist frequencies, so that going down from 48 kHz (Opus) or 44.1 kHz leaves no alias
// of what lay above 8 kHz, and going up from 8 kHz invents nothing above 4 kHz. The kernel is
// read from a table, interpolated; each output sample costs about 35 / min(1, 16000 / rate)
// multiply-adds (about 110 from 48 kHz): a few milliseconds a second of audio.
//
//   std::vector<int16_t> speech = ResampleToSpeechRate(mono_48k, 48000);
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace herald::media {

// The rate PocketSphinx's en-us model was trained at.
inline constexpr int kSpeechRate = 16'000;

// The lowest and highest input rates ResampleToSpeechRate is meant for; callers refuse others.
inline constexpr int kMinInputRate = 8'000;
inline constexpr int kMaxInputRate = 48'000;

// `mono`, samples in [-1, 1] at `input_rate` Hz (within [kMinInputRate, kMaxInputRate]), as
// 16-bit samples at kSpeechRate: floor(size * 16000 / input_rate) of them. Louder than full
// scale is clipped.
std::vector<int16_t> ResampleToSpeechRate(std::span<const float> mono, int input_rate);

}  // namespace herald::media
