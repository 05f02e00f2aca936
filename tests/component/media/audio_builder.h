// tests/component/media/audio_builder.h
//
// Audio files made by hand for the tests: WAV files of given samples, laid out chunk by chunk so
// that a test can make them wrong in one place (a header that claims three hours, a format
// Herald does not read, chunks out of order); tones; Ogg streams rewritten to claim another
// length; MP4 files rewritten the same way; and the voice messages espeak-ng, opusenc and ffmpeg
// made when the tests were built.
//
//   std::string wav = BuildWav(Tone(440, 1.0, 22'050), {.rate = 22'050});
//   std::string lying = RiffWave({FmtChunk({}), ChunkHeader("data", 345'600'000)});
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace herald::media::testing {

struct WavSpec {
  int rate = 16'000;
  int channels = 1;
  int bits = 16;
  uint16_t format = 1;  // WAVE_FORMAT_PCM
};

// A sine of `hz` at `amplitude` (of full scale), `seconds` long at `rate`, as 16-bit samples.
std::vector<int16_t> Tone(double hz, double seconds, int rate, double amplitude = 0.5);

// Samples as the little-endian bytes of a WAV data chunk.
std::string SampleBytes(const std::vector<int16_t>& samples);

// A chunk: id, little-endian size and body, and a pad byte when the size is odd.
std::string Chunk(std::string_view id, std::string_view body);
// Only a chunk's id and size, claiming `size` bytes that do not follow.
std::string ChunkHeader(std::string_view id, uint32_t size);
// The "fmt " chunk for `spec` (16 bytes of body).
std::string FmtChunk(const WavSpec& spec);
// "RIFF", the size of what follows, "WAVE", then `chunks` as given.
std::string RiffWave(const std::vector<std::string>& chunks);
// A well-formed WAV file: fmt, then data holding `samples` (interleaved when stereo).
std::string BuildWav(const std::vector<int16_t>& samples, const WavSpec& spec);

// `ogg` with the granule position of its last page set to `granule` (and that page's CRC
// made right again), so that it claims another length.
std::string WithLastGranule(std::string ogg, int64_t granule);

// `mp4` with the duration its "mvhd" (the movie) and, when `media_too`, its "mdhd" boxes (each
// track) claim set to `seconds`, in each box's own timescale, so that it claims another length.
std::string WithMp4Duration(std::string mp4, double seconds, bool media_too);

// A file from the test's runfiles, by its path in the workspace ("tests/component/media/...");
// empty when it cannot be read.
std::string ReadRunfile(std::string_view path);

}  // namespace herald::media::testing
