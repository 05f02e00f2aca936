#include "tests/component/media/audio_builder.h"

#include <array>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace herald::media::testing {
namespace {

void AppendLe(std::string& out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xFF));
}

// Ogg's CRC-32: polynomial 0x04C11DB7, not reflected, initial value 0.
uint32_t OggCrc(std::string_view bytes) {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t r = i << 24;
      for (int bit = 0; bit < 8; ++bit) r = (r & 0x80000000u) ? (r << 1) ^ 0x04C11DB7u : r << 1;
      t[i] = r;
    }
    return t;
  }();
  uint32_t crc = 0;
  for (char c : bytes)
    crc = (crc << 8) ^ table[((crc >> 24) ^ static_cast<unsigned char>(c)) & 0xFF];
  return crc;
}

}  // namespace

std::vector<int16_t> Tone(double hz, double seconds, int rate, double amplitude) {
  const double pi = std::acos(-1.0);
  std::vector<int16_t> samples(static_cast<size_t>(seconds * rate));
  for (size_t i = 0; i < samples.size(); ++i) {
    samples[i] = static_cast<int16_t>(
        std::lround(amplitude * 32767 * std::sin(2 * pi * hz * static_cast<double>(i) / rate)));
  }
  return samples;
}

std::string SampleBytes(const std::vector<int16_t>& samples) {
  std::string out;
  out.reserve(samples.size() * 2);
  for (int16_t sample : samples) AppendLe(out, static_cast<uint16_t>(sample), 2);
  return out;
}

std::string Chunk(std::string_view id, std::string_view body) {
  std::string out = ChunkHeader(id, static_cast<uint32_t>(body.size()));
  out.append(body);
  if (body.size() % 2 == 1) out.push_back('\0');
  return out;
}

std::string ChunkHeader(std::string_view id, uint32_t size) {
  std::string out(id);
  AppendLe(out, size, 4);
  return out;
}

std::string FmtChunk(const WavSpec& spec) {
  const int block_align = spec.channels * spec.bits / 8;
  std::string body;
  AppendLe(body, spec.format, 2);
  AppendLe(body, static_cast<uint16_t>(spec.channels), 2);
  AppendLe(body, static_cast<uint32_t>(spec.rate), 4);
  AppendLe(body, static_cast<uint32_t>(spec.rate * block_align), 4);
  AppendLe(body, static_cast<uint16_t>(block_align), 2);
  AppendLe(body, static_cast<uint16_t>(spec.bits), 2);
  return Chunk("fmt ", body);
}

std::string RiffWave(const std::vector<std::string>& chunks) {
  std::string body = "WAVE";
  for (const std::string& chunk : chunks) body += chunk;
  std::string out = "RIFF";
  AppendLe(out, body.size(), 4);
  return out + body;
}

std::string BuildWav(const std::vector<int16_t>& samples, const WavSpec& spec) {
  return RiffWave({FmtChunk(spec), Chunk("data", SampleBytes(samples))});
}

std::string WithLastGranule(std::string ogg, int64_t granule) {
  size_t last = std::string::npos;
  size_t end = 0;
  for (size_t at = 0; at + 27 <= ogg.size() && ogg.compare(at, 4, "OggS") == 0;) {
    const size_t segments = static_cast<unsigned char>(ogg[at + 26]);
    size_t body = 0;
    for (size_t i = 0; i < segments; ++i) body += static_cast<unsigned char>(ogg[at + 27 + i]);
    last = at;
    at += 27 + segments + body;
    end = at;
  }
  if (last == std::string::npos || end > ogg.size()) return ogg;
  std::string granule_bytes;
  AppendLe(granule_bytes, static_cast<uint64_t>(granule), 8);
  ogg.replace(last + 6, 8, granule_bytes);
  ogg.replace(last + 22, 4, std::string(4, '\0'));
  std::string crc_bytes;
  AppendLe(crc_bytes, OggCrc(std::string_view(ogg).substr(last, end - last)), 4);
  ogg.replace(last + 22, 4, crc_bytes);
  return ogg;
}

namespace {

uint64_t Be(std::string_view bytes, size_t at, int width) {
  uint64_t value = 0;
  for (int i = 0; i < width; ++i) value = value << 8 | static_cast<unsigned char>(bytes[at + i]);
  return value;
}

void PutBe(std::string& bytes, size_t at, int width, uint64_t value) {
  for (int i = width - 1; i >= 0; --i, value >>= 8) bytes[at + i] = static_cast<char>(value & 0xFF);
}

// Sets the duration of every `type` box ("mvhd" or "mdhd": version, flags, two times, the
// timescale, then the duration; the times and the duration are 64-bit in version 1).
void SetDurations(std::string& mp4, std::string_view type, double seconds) {
  for (size_t at = mp4.find(type); at != std::string::npos; at = mp4.find(type, at + 4)) {
    const size_t body = at + 4;
    if (body + 4 > mp4.size()) break;
    const int width = mp4[body] == 1 ? 8 : 4;
    const size_t timescale_at = body + 4 + 2 * width;
    if (timescale_at + 4 + width > mp4.size()) break;
    const uint64_t timescale = Be(mp4, timescale_at, 4);
    PutBe(mp4, timescale_at + 4, width, static_cast<uint64_t>(seconds * timescale));
  }
}

}  // namespace

std::string WithMp4Duration(std::string mp4, double seconds, bool media_too) {
  SetDurations(mp4, "mvhd", seconds);
  if (media_too) SetDurations(mp4, "mdhd", seconds);
  return mp4;
}

std::string ReadRunfile(std::string_view path) {
  const char* runfiles = std::getenv("TEST_SRCDIR");
  const std::string full =
      std::string(runfiles != nullptr ? runfiles : ".") + "/herald/" + std::string(path);
  std::ifstream in(full, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

}  // namespace herald::media::testing
