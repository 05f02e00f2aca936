#include "component/media/ogg_opus_encoding.h"

#include <opus/opusenc.h>

#include <algorithm>
#include <memory>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace herald::media {
namespace {

// Speech at 24 kbit/s is transparent enough for a listener and for PocketSphinx.
constexpr int kBitrate = 24'000;
// Samples handed to libopusenc at a time (per channel): it buffers what it needs itself.
constexpr int kChunk = 4'096;

struct EncoderFree {
  void operator()(OggOpusEnc* encoder) const { ope_encoder_destroy(encoder); }
};
struct CommentsFree {
  void operator()(OggOpusComments* comments) const { ope_comments_destroy(comments); }
};

int Append(void* user_data, const unsigned char* data, opus_int32 length) {
  static_cast<std::string*>(user_data)->append(reinterpret_cast<const char*>(data),
                                               static_cast<size_t>(length));
  return 0;
}

int Close(void* /*user_data*/) { return 0; }

// FNV-1a of the samples, as the stream's serial number: the same audio, the same bytes.
int SerialNumber(std::span<const int16_t> samples, int sample_rate, int channels) {
  uint32_t hash = 2'166'136'261u;
  auto mix = [&hash](uint32_t value) {
    for (int i = 0; i < 4; ++i) {
      hash ^= (value >> (8 * i)) & 0xFF;
      hash *= 16'777'619u;
    }
  };
  mix(static_cast<uint32_t>(sample_rate));
  mix(static_cast<uint32_t>(channels));
  for (int16_t sample : samples) mix(static_cast<uint16_t>(sample));
  return static_cast<int>(hash & 0x7FFF'FFFF);
}

absl::Status Failed(const char* what, int error) {
  return absl::InternalError(absl::StrCat("libopusenc: ", what, ": ", ope_strerror(error)));
}

}  // namespace

absl::StatusOr<std::string> EncodeOggOpus(std::span<const int16_t> samples, int sample_rate,
                                          int channels) {
  if (sample_rate < kMinEncodeRate || sample_rate > kMaxEncodeRate) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot encode audio at ", sample_rate, " Hz as Opus (8 to 192 kHz)"));
  }
  if (channels < 1 || channels > kMaxEncodeChannels) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot encode audio of ", channels, " channels as Opus (1 or 2)"));
  }
  if (samples.size() % static_cast<size_t>(channels) != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        samples.size(), " samples are not a whole number of frames of ", channels, " channels"));
  }

  std::unique_ptr<OggOpusComments, CommentsFree> comments(ope_comments_create());
  if (comments == nullptr) return absl::InternalError("libopusenc: out of memory");
  std::string ogg;
  const OpusEncCallbacks callbacks = {&Append, &Close};
  int error = OPE_OK;
  // Family 0: mono or stereo in one Opus stream, as every player reads.
  std::unique_ptr<OggOpusEnc, EncoderFree> encoder(ope_encoder_create_callbacks(
      &callbacks, &ogg, comments.get(), sample_rate, channels, /*family=*/0, &error));
  if (encoder == nullptr) return Failed("creating the encoder", error);

  const std::pair<const char*, int> settings[] = {
      {"setting the serial number",
       ope_encoder_ctl(encoder.get(),
                       OPE_SET_SERIALNO(SerialNumber(samples, sample_rate, channels)))},
      {"setting the bitrate", ope_encoder_ctl(encoder.get(), OPUS_SET_BITRATE(kBitrate))},
      {"choosing VoIP",
       ope_encoder_ctl(encoder.get(), OPUS_SET_APPLICATION(OPUS_APPLICATION_VOIP))},
      {"choosing voice", ope_encoder_ctl(encoder.get(), OPUS_SET_SIGNAL(OPUS_SIGNAL_VOICE))},
  };
  for (const auto& [what, result] : settings) {
    if (result != OPE_OK) return Failed(what, result);
  }

  const size_t frames = samples.size() / static_cast<size_t>(channels);
  for (size_t at = 0; at < frames; at += kChunk) {
    const int count = static_cast<int>(std::min<size_t>(kChunk, frames - at));
    error = ope_encoder_write(encoder.get(), samples.data() + at * channels, count);
    if (error != OPE_OK) return Failed("encoding", error);
  }
  error = ope_encoder_drain(encoder.get());
  if (error != OPE_OK) return Failed("finishing the stream", error);
  return ogg;
}

}  // namespace herald::media
