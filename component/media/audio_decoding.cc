#include "component/media/audio_decoding.h"

#include <opus/opusfile.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "component/base/absl_string_view.h"
#include "component/base/byte_size.h"
#include "component/media/ffmpeg_library.h"
#include "component/media/resampler.h"

namespace herald::media {
namespace {

enum class Format { kOggOpus, kWav, kAac };

// The spellings of the audio types, SniffMediaType's and libmagic's (media_type.h).
struct Spelling {
  std::string_view media_type;
  Format format;
};
constexpr Spelling kSpellings[] = {
    {"audio/ogg", Format::kOggOpus},       {"audio/opus", Format::kOggOpus},
    {"audio/wav", Format::kWav},           {"audio/x-wav", Format::kWav},
    {"audio/wave", Format::kWav},          {"audio/vnd.wave", Format::kWav},
    {"audio/mp4", Format::kAac},           {"audio/x-m4a", Format::kAac},
    {"audio/aac", Format::kAac},           {"audio/x-aac", Format::kAac},
    {"audio/x-hx-aac-adts", Format::kAac},
};

const Spelling* FindFormat(std::string_view media_type) {
  absl::string_view bare = AbslView(media_type);
  bare = absl::StripAsciiWhitespace(bare.substr(0, bare.find(';')));
  for (const Spelling& spelling : kSpellings) {
    if (absl::EqualsIgnoreCase(bare, AbslView(spelling.media_type))) return &spelling;
  }
  return nullptr;
}

constexpr int kOpusRate = 48'000;

// "2 minutes", "90 seconds", "1 minute".
std::string HumanSeconds(double seconds) {
  const double minutes = seconds / 60;
  if (seconds >= 60 && minutes == std::floor(minutes)) {
    return absl::StrCat(minutes, minutes == 1 ? " minute" : " minutes");
  }
  return absl::StrCat(seconds, seconds == 1 ? " second" : " seconds");
}

absl::Status TooLong(const SpeechLimits& limits) {
  return absl::InvalidArgumentError(
      absl::StrCat("the voice message is longer than ", HumanSeconds(limits.max_seconds)));
}

// The most samples at `rate` that max_seconds allows.
int64_t MaxSamples(const SpeechLimits& limits, int rate) {
  const double samples = std::max(0.0, limits.max_seconds) * rate;
  return samples >= 9e15 ? int64_t{9'000'000'000'000'000} : static_cast<int64_t>(samples);
}

// ----- Ogg -------------------------------------------------------------------------------------

struct OpusFileCloser {
  void operator()(OggOpusFile* file) const { op_free(file); }
};

// Another codec in Ogg: said apart from damage, since the sender did nothing wrong.
const char* OtherOggCodec(std::string_view bytes) {
  if (bytes.substr(0, 4) != "OggS") return nullptr;
  const std::string_view head = bytes.substr(0, 512);
  if (head.find("\x01vorbis") != std::string_view::npos) return "Ogg Vorbis";
  if (head.find("Speex   ") != std::string_view::npos) return "Ogg Speex";
  if (head.find("\177FLAC") != std::string_view::npos) return "Ogg FLAC";
  return nullptr;
}

absl::StatusOr<SpeechAudio> DecodeOggOpus(std::string_view bytes, const SpeechLimits& limits) {
  if (const char* codec = OtherOggCodec(bytes); codec != nullptr) {
    return absl::UnimplementedError(
        absl::StrCat(codec, " voice messages are not transcribed here yet"));
  }
  const absl::Status damaged =
      absl::InvalidArgumentError("the voice message is damaged or not Ogg Opus");
  int error = 0;
  std::unique_ptr<OggOpusFile, OpusFileCloser> file(
      op_open_memory(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), &error));
  if (file == nullptr) return damaged;

  const int64_t max_samples = MaxSamples(limits, kOpusRate);
  // What the last granule position claims, known before a packet is decoded.
  if (op_pcm_total(file.get(), -1) > max_samples) return TooLong(limits);

  // 120 ms of stereo, the longest an Opus packet holds; opusfile mixes any channel layout down
  // to stereo, and the two channels are averaged here.
  constexpr int kBufferValues = 120 * 48 * 2;
  std::vector<float> stereo(kBufferValues);
  std::vector<float> mono;
  mono.reserve(static_cast<size_t>(
      std::min<int64_t>(max_samples, std::max<int64_t>(op_pcm_total(file.get(), -1), 0))));
  int holes = 0;
  for (;;) {
    const int read = op_read_float_stereo(file.get(), stereo.data(), kBufferValues);
    if (read == 0) break;
    if (read == OP_HOLE) {
      // A page lost between two others: decoding goes on past it, but not past many.
      if (++holes > 16) return damaged;
      continue;
    }
    if (read < 0) return damaged;
    if (static_cast<int64_t>(mono.size()) + read > max_samples) return TooLong(limits);
    for (int i = 0; i < read; ++i) mono.push_back(0.5f * (stereo[2 * i] + stereo[2 * i + 1]));
  }
  SpeechAudio audio;
  audio.seconds = static_cast<double>(mono.size()) / kOpusRate;
  audio.samples = ResampleToSpeechRate(mono, kOpusRate);
  return audio;
}

// ----- WAV -------------------------------------------------------------------------------------

uint16_t Le16(std::string_view bytes, size_t at) {
  return static_cast<uint16_t>(static_cast<unsigned char>(bytes[at]) |
                               static_cast<unsigned char>(bytes[at + 1]) << 8);
}

uint32_t Le32(std::string_view bytes, size_t at) {
  return static_cast<uint32_t>(Le16(bytes, at)) | static_cast<uint32_t>(Le16(bytes, at + 2)) << 16;
}

constexpr uint16_t kWaveFormatPcm = 1;
constexpr uint16_t kWaveFormatExtensible = 0xFFFE;
// KSDATAFORMAT_SUBTYPE_PCM after its first two bytes (which are the format tag, 1).
constexpr std::string_view kPcmSubformatTail(
    "\x00\x00\x00\x00\x10\x00\x80\x00\x00\xAA\x00\x38\x9B\x71", 14);

struct WavFormat {
  int channels = 0;
  int rate = 0;
};

// The "fmt " chunk's body: 16-bit PCM, mono or stereo, at a rate resampler.h takes.
absl::StatusOr<WavFormat> ParseWavFormat(std::string_view body) {
  const absl::Status unsupported = absl::InvalidArgumentError(
      "the voice message is not a WAV file Herald reads (16-bit PCM, mono or stereo, 8 to "
      "48 kHz)");
  if (body.size() < 16) return unsupported;
  const uint16_t tag = Le16(body, 0);
  WavFormat format;
  format.channels = Le16(body, 2);
  const uint32_t rate = Le32(body, 4);
  const uint16_t block_align = Le16(body, 12);
  const uint16_t bits = Le16(body, 14);
  if (tag == kWaveFormatExtensible) {
    // cbSize (22), valid bits, channel mask, then the sub-format's GUID.
    if (body.size() < 40 || Le16(body, 16) < 22 || Le16(body, 24) != kWaveFormatPcm ||
        body.substr(26, 14) != kPcmSubformatTail) {
      return unsupported;
    }
  } else if (tag != kWaveFormatPcm) {
    return unsupported;
  }
  if (format.channels < 1 || format.channels > 2 || bits != 16 ||
      block_align != format.channels * 2 || rate < kMinInputRate || rate > kMaxInputRate) {
    return unsupported;
  }
  format.rate = static_cast<int>(rate);
  return format;
}

absl::StatusOr<SpeechAudio> DecodeWav(std::string_view bytes, const SpeechLimits& limits) {
  const absl::Status damaged =
      absl::InvalidArgumentError("the voice message is damaged or not a WAV file");
  // The RIFF size is not read: writers get it wrong, and the chunks say all there is.
  if (bytes.size() < 12 || bytes.substr(0, 4) != "RIFF" || bytes.substr(8, 4) != "WAVE") {
    return damaged;
  }
  std::optional<WavFormat> format;
  size_t at = 12;
  while (bytes.size() - at >= 8) {
    const std::string_view id = bytes.substr(at, 4);
    const uint32_t size = Le32(bytes, at + 4);
    const size_t body = at + 8;
    const size_t available = bytes.size() - body;
    if (id == "fmt ") {
      if (format.has_value() || size > available) return damaged;
      absl::StatusOr<WavFormat> parsed = ParseWavFormat(bytes.substr(body, size));
      if (!parsed.ok()) return parsed.status();
      format = *parsed;
    } else if (id == "data") {
      if (!format.has_value()) return damaged;
      const int64_t frame_bytes = format->channels * 2;
      // What the header claims decides, before a sample is read.
      if (static_cast<int64_t>(size) / frame_bytes > MaxSamples(limits, format->rate)) {
        return TooLong(limits);
      }
      if (size > available) return damaged;  // cut off
      const size_t frames = size / frame_bytes;
      std::vector<float> mono(frames);
      for (size_t i = 0; i < frames; ++i) {
        const size_t frame = body + i * frame_bytes;
        float sum = 0;
        for (int c = 0; c < format->channels; ++c) {
          sum += static_cast<int16_t>(Le16(bytes, frame + 2 * c));
        }
        mono[i] = sum / (32768.0f * format->channels);
      }
      SpeechAudio audio;
      audio.seconds = static_cast<double>(frames) / format->rate;
      audio.samples = ResampleToSpeechRate(mono, format->rate);
      return audio;
    }
    if (size > available) return damaged;
    // Chunks are padded to an even length; a file may end without the last pad byte.
    at = body + size + (size & 1);
    if (at > bytes.size()) at = bytes.size();
  }
  return damaged;
}

// ----- AAC -------------------------------------------------------------------------------------

// What FFmpeg may be asked to read: the MP4 family (iOS and Monal's .m4a) and raw ADTS.
constexpr char kAacFormats[] = "mov,mp4,m4a,3gp,3g2,mj2,aac";
constexpr char kAacCodecs[] = "aac";
// Decoding errors tolerated in one message (a damaged frame is skipped, as players do).
constexpr int kMaxAacErrors = 16;
// The most samples a channel of one AAC frame holds is 2,048 (HE-AAC); more is refused.
constexpr int kMaxAacFrameSamples = 4'096;
// The shortest AAC frame, in samples: a sample table's frame count is read with it, so that
// no file it does not hold is refused for its claim.
constexpr int kShortestAacFrame = 960;

// The attachment, read by FFmpeg through a custom AVIOContext: no file, no network.
struct MemoryInput {
  std::string_view bytes;
  size_t at = 0;
};

int ReadMemory(void* opaque, uint8_t* buffer, int size) {
  MemoryInput& input = *static_cast<MemoryInput*>(opaque);
  const size_t left = input.bytes.size() - input.at;
  if (left == 0) return AVERROR_EOF;
  const size_t count = std::min(left, static_cast<size_t>(std::max(size, 0)));
  std::memcpy(buffer, input.bytes.data() + input.at, count);
  input.at += count;
  return static_cast<int>(count);
}

int64_t SeekMemory(void* opaque, int64_t offset, int whence) {
  MemoryInput& input = *static_cast<MemoryInput*>(opaque);
  const auto size = static_cast<int64_t>(input.bytes.size());
  whence &= ~AVSEEK_FORCE;
  if (whence == AVSEEK_SIZE) return size;
  int64_t base = 0;
  if (whence == SEEK_CUR) {
    base = static_cast<int64_t>(input.at);
  } else if (whence == SEEK_END) {
    base = size;
  } else if (whence != SEEK_SET) {
    return AVERROR(EINVAL);
  }
  if (offset < -size || offset > size) return AVERROR(EINVAL);
  const int64_t target = base + offset;
  if (target < 0 || target > size) return AVERROR(EINVAL);
  input.at = static_cast<size_t>(target);
  return target;
}

// Deleters for what FFmpeg allocated, through the loaded library.
struct AvioFree {
  const FfmpegLibrary* av;
  void operator()(AVIOContext* io) const {
    av->av_freep(&io->buffer);  // FFmpeg may have replaced the one it was given
    av->avio_context_free(&io);
  }
};
struct FormatFree {
  const FfmpegLibrary* av;
  void operator()(AVFormatContext* format) const { av->avformat_free_context(format); }
};
struct FormatClose {
  const FfmpegLibrary* av;
  void operator()(AVFormatContext* format) const { av->avformat_close_input(&format); }
};
struct CodecFree {
  const FfmpegLibrary* av;
  void operator()(AVCodecContext* codec) const { av->avcodec_free_context(&codec); }
};
struct PacketFree {
  const FfmpegLibrary* av;
  void operator()(AVPacket* packet) const { av->av_packet_free(&packet); }
};
struct FrameFree {
  const FfmpegLibrary* av;
  void operator()(AVFrame* frame) const { av->av_frame_free(&frame); }
};

// Whether what the container and the stream claim (their durations, the sample table's frame
// count) is longer than max_seconds: read before a packet is decoded.
bool ClaimsTooLong(const AVFormatContext& format, const AVStream& stream,
                   const SpeechLimits& limits) {
  const double max_seconds = std::max(0.0, limits.max_seconds);
  if (format.duration != AV_NOPTS_VALUE && format.duration > 0 &&
      static_cast<double>(format.duration) / AV_TIME_BASE > max_seconds) {
    return true;
  }
  if (stream.duration != AV_NOPTS_VALUE && stream.duration > 0 && stream.time_base.num > 0 &&
      stream.time_base.den > 0 &&
      static_cast<double>(stream.duration) * av_q2d(stream.time_base) > max_seconds) {
    return true;
  }
  const int rate = stream.codecpar->sample_rate;
  return stream.nb_frames > 0 && rate > 0 &&
         static_cast<double>(stream.nb_frames) * kShortestAacFrame / rate > max_seconds;
}

// Decoded AAC mixed down to mono as it comes, up to max_seconds.
class AacSink {
 public:
  AacSink(const FfmpegLibrary& av, const SpeechLimits& limits, absl::Status damaged)
      : av_(av), limits_(limits), damaged_(std::move(damaged)) {}

  absl::Status Take(const AVFrame& frame) {
    const int channels = frame.ch_layout.nb_channels;
    if (frame.format != AV_SAMPLE_FMT_FLTP || channels < 1 || frame.nb_samples < 0) {
      return damaged_;
    }
    if (rate_ == 0) {
      if (frame.sample_rate < kMinInputRate || frame.sample_rate > kMaxInputRate) {
        return absl::InvalidArgumentError(
            "the voice message is not AAC audio Herald reads (8 to 48 kHz)");
      }
      rate_ = frame.sample_rate;
      max_samples_ = MaxSamples(limits_, rate_);
    } else if (frame.sample_rate != rate_) {
      return damaged_;  // ADTS frames may change their rate; a voice message does not
    }
    // One frame over, for the last frame's padding, which Finish may cut off.
    if (static_cast<int64_t>(mono_.size()) + frame.nb_samples >
        max_samples_ + kMaxAacFrameSamples) {
      return TooLong(limits_);
    }
    const float scale = 1.0f / static_cast<float>(channels);
    const size_t start = mono_.size();
    mono_.resize(start + static_cast<size_t>(frame.nb_samples));
    for (int c = 0; c < channels; ++c) {
      const auto* plane = reinterpret_cast<const float*>(frame.extended_data[c]);
      for (int i = 0; i < frame.nb_samples; ++i) mono_[start + i] += plane[i] * scale;
    }
    return absl::OkStatus();
  }

  // The audio as decoded, or as long as the stream says when that is up to one frame less:
  // FFmpeg drops the encoder's priming samples that an MP4's edit list skips, but decodes the
  // padding of the last frame. Damaged when the stream says it holds half a second more than
  // could be decoded (a file cut off after its index).
  absl::StatusOr<SpeechAudio> Finish(const AVStream& stream) {
    SpeechAudio audio;
    if (rate_ == 0) return audio;
    if (stream.duration != AV_NOPTS_VALUE && stream.duration > 0 && stream.time_base.num > 0 &&
        stream.time_base.den > 0) {
      const int64_t claimed =
          av_.av_rescale_q(stream.duration, stream.time_base, AVRational{1, rate_});
      const auto decoded = static_cast<int64_t>(mono_.size());
      if (claimed < decoded && decoded - claimed <= kMaxAacFrameSamples) {
        mono_.resize(static_cast<size_t>(claimed));
      } else if (claimed - decoded > rate_ / 2) {
        return damaged_;
      }
    }
    if (static_cast<int64_t>(mono_.size()) > max_samples_) return TooLong(limits_);
    audio.seconds = static_cast<double>(mono_.size()) / rate_;
    audio.samples = ResampleToSpeechRate(mono_, rate_);
    return audio;
  }

 private:
  const FfmpegLibrary& av_;
  const SpeechLimits& limits_;
  const absl::Status damaged_;
  int rate_ = 0;
  int64_t max_samples_ = 0;
  std::vector<float> mono_;
};

absl::StatusOr<SpeechAudio> DecodeAac(std::string_view bytes, const SpeechLimits& limits) {
  absl::StatusOr<const FfmpegLibrary*> loaded = LoadFfmpeg();
  if (!loaded.ok()) return loaded.status();
  const FfmpegLibrary& av = **loaded;
  const absl::Status damaged =
      absl::InvalidArgumentError("the voice message is damaged or not AAC audio");
  const absl::Status out_of_memory = absl::ResourceExhaustedError("FFmpeg: out of memory");

  MemoryInput input{bytes};
  constexpr int kIoBufferBytes = 32 * 1024;
  auto* buffer = static_cast<unsigned char*>(av.av_malloc(kIoBufferBytes));
  if (buffer == nullptr) return out_of_memory;
  std::unique_ptr<AVIOContext, AvioFree> io(
      av.avio_alloc_context(buffer, kIoBufferBytes, /*write_flag=*/0, &input, &ReadMemory, nullptr,
                            &SeekMemory),
      AvioFree{&av});
  if (io == nullptr) {
    av.av_free(buffer);
    return out_of_memory;
  }

  std::unique_ptr<AVFormatContext, FormatFree> unopened(av.avformat_alloc_context(),
                                                        FormatFree{&av});
  if (unopened == nullptr) return out_of_memory;
  unopened->pb = io.get();
  unopened->flags |= AVFMT_FLAG_CUSTOM_IO;
  unopened->max_streams = 16;
  // Only these demuxers and this decoder, and no protocol at all (an MP4 may name other files).
  unopened->format_whitelist = av.av_strdup(kAacFormats);
  unopened->codec_whitelist = av.av_strdup(kAacCodecs);
  unopened->protocol_whitelist = av.av_strdup("");
  if (unopened->format_whitelist == nullptr || unopened->codec_whitelist == nullptr ||
      unopened->protocol_whitelist == nullptr) {
    return out_of_memory;
  }
  AVFormatContext* raw = unopened.release();
  if (av.avformat_open_input(&raw, nullptr, nullptr, nullptr) < 0) return damaged;  // frees raw
  std::unique_ptr<AVFormatContext, FormatClose> format(raw, FormatClose{&av});

  // The first audio stream (av_find_best_stream would pass over an ADTS stream, whose rate and
  // channels are known only once a frame is read).
  int index = -1;
  for (unsigned i = 0; i < format->nb_streams && index < 0; ++i) {
    if (format->streams[i]->codecpar->codec_type == AVMEDIA_TYPE_AUDIO) index = static_cast<int>(i);
  }
  if (index < 0) return damaged;
  const AVStream& stream = *format->streams[index];
  if (stream.codecpar->codec_id != AV_CODEC_ID_AAC) return damaged;
  if (ClaimsTooLong(*format, stream, limits)) return TooLong(limits);

  const AVCodec* decoder = av.avcodec_find_decoder_by_name(kAacCodecs);
  if (decoder == nullptr) return absl::InternalError("FFmpeg has no AAC decoder");
  std::unique_ptr<AVCodecContext, CodecFree> codec(av.avcodec_alloc_context3(decoder),
                                                   CodecFree{&av});
  if (codec == nullptr) return out_of_memory;
  if (av.avcodec_parameters_to_context(codec.get(), stream.codecpar) < 0) return damaged;
  codec->thread_count = 1;
  codec->max_samples = kMaxAacFrameSamples;
  codec->codec_whitelist = av.av_strdup(kAacCodecs);
  if (codec->codec_whitelist == nullptr) return out_of_memory;
  if (av.avcodec_open2(codec.get(), decoder, nullptr) < 0) return damaged;

  std::unique_ptr<AVPacket, PacketFree> packet(av.av_packet_alloc(), PacketFree{&av});
  std::unique_ptr<AVFrame, FrameFree> frame(av.av_frame_alloc(), FrameFree{&av});
  if (packet == nullptr || frame == nullptr) return out_of_memory;
  AacSink sink(av, limits, damaged);
  int errors = 0;
  // Takes every frame the decoder has ready.
  auto receive = [&]() -> absl::Status {
    for (;;) {
      const int received = av.avcodec_receive_frame(codec.get(), frame.get());
      if (received == AVERROR(EAGAIN) || received == AVERROR_EOF) return absl::OkStatus();
      if (received < 0) {
        if (++errors > kMaxAacErrors) return damaged;
        continue;
      }
      absl::Status taken = sink.Take(*frame);
      av.av_frame_unref(frame.get());
      if (!taken.ok()) return taken;
    }
  };
  for (;;) {
    const int read = av.av_read_frame(format.get(), packet.get());
    if (read == AVERROR_EOF) break;
    if (read < 0) return damaged;
    if (packet->stream_index == index) {
      const int sent = av.avcodec_send_packet(codec.get(), packet.get());
      if (sent < 0 && sent != AVERROR(EAGAIN) && ++errors > kMaxAacErrors) return damaged;
    }
    av.av_packet_unref(packet.get());
    if (absl::Status received = receive(); !received.ok()) return received;
  }
  if (av.avcodec_send_packet(codec.get(), nullptr) >= 0) {
    if (absl::Status received = receive(); !received.ok()) return received;
  }
  absl::StatusOr<SpeechAudio> audio = sink.Finish(stream);
  // A stream of nothing but errors is not a voice message.
  if (audio.ok() && audio->samples.empty() && errors > 0) return damaged;
  return audio;
}
}  // namespace

absl::StatusOr<SpeechAudio> DecodeSpeechAudio(std::string_view bytes, std::string_view media_type,
                                              const SpeechLimits& limits) {
  const Spelling* spelling = FindFormat(media_type);
  if (spelling == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(AbslView(media_type.substr(0, 100)),
                                                   " is not a voice message Herald transcribes"));
  }
  if (bytes.size() > limits.max_input_bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("the voice message is ", base::HumanBytes(bytes.size()),
                     "; Herald transcribes voice messages of at most ",
                     base::HumanBytes(limits.max_input_bytes)));
  }
  switch (spelling->format) {
    case Format::kOggOpus:
      return DecodeOggOpus(bytes, limits);
    case Format::kWav:
      return DecodeWav(bytes, limits);
    case Format::kAac:
      return DecodeAac(bytes, limits);
  }
  return absl::InternalError("unknown audio format");
}

}  // namespace herald::media
