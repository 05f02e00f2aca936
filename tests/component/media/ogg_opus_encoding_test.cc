// PCM encoded as Ogg Opus: what libopusfile (audio_decoding.h) reads back has the input's
// length to the sample and its loudness, the same samples make the same bytes, and what cannot
// be encoded is refused.
#include "component/media/ogg_opus_encoding.h"

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "component/media/audio_decoding.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/component/media/audio_builder.h"

namespace herald::media {
namespace {

using ::testing::HasSubstr;
using testing::Tone;

double Rms(const std::vector<int16_t>& samples) {
  double sum = 0;
  for (int16_t sample : samples) sum += static_cast<double>(sample) * sample;
  return samples.empty() ? 0 : std::sqrt(sum / samples.size());
}

TEST(EncodeOggOpusTest, MakesAnOggOpusFileThatDecodesToTheSameLengthAndLevel) {
  const std::vector<int16_t> tone = Tone(440, 1.5, 22'050);
  absl::StatusOr<std::string> ogg = EncodeOggOpus(tone, 22'050, 1);
  ASSERT_TRUE(ogg.ok()) << ogg.status();
  EXPECT_EQ(ogg->substr(0, 4), "OggS");
  EXPECT_THAT(*ogg, HasSubstr("OpusHead"));
  absl::StatusOr<SpeechAudio> decoded = DecodeSpeechAudio(*ogg, "audio/ogg", {});
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  // The pre-skip and the last granule position cut the stream to the input's length.
  EXPECT_NEAR(decoded->seconds, 1.5, 0.0001);
  EXPECT_NEAR(Rms(decoded->samples), Rms(tone), 0.1 * Rms(tone));
}

TEST(EncodeOggOpusTest, EncodesStereoAtAnyRateItTakes) {
  for (int rate : {8'000, 16'000, 44'100, 48'000, 96'000}) {
    std::vector<int16_t> interleaved;
    for (int16_t sample : Tone(300, 0.5, rate)) {
      interleaved.push_back(sample);
      interleaved.push_back(static_cast<int16_t>(-sample));
    }
    absl::StatusOr<std::string> ogg = EncodeOggOpus(interleaved, rate, 2);
    ASSERT_TRUE(ogg.ok()) << rate << ": " << ogg.status();
    absl::StatusOr<SpeechAudio> decoded = DecodeSpeechAudio(*ogg, "audio/ogg", {});
    ASSERT_TRUE(decoded.ok()) << rate << ": " << decoded.status();
    EXPECT_NEAR(decoded->seconds, 0.5, 0.0001) << rate;
  }
}

TEST(EncodeOggOpusTest, MakesTheSameBytesOfTheSameSamples) {
  const std::vector<int16_t> tone = Tone(523, 0.7, 22'050);
  absl::StatusOr<std::string> first = EncodeOggOpus(tone, 22'050, 1);
  absl::StatusOr<std::string> second = EncodeOggOpus(tone, 22'050, 1);
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_EQ(*first, *second);
}

TEST(EncodeOggOpusTest, SpendsAboutTwentyFourKilobitsASecond) {
  const std::vector<int16_t> tone = Tone(220, 10, 22'050, 0.3);
  absl::StatusOr<std::string> ogg = EncodeOggOpus(tone, 22'050, 1);
  ASSERT_TRUE(ogg.ok()) << ogg.status();
  // 24 kbit/s is 30 KB for ten seconds; variable bitrate spends less on a plain tone.
  EXPECT_LT(ogg->size(), 40'000u);
  EXPECT_GT(ogg->size(), 5'000u);
}

TEST(EncodeOggOpusTest, EncodesNoSamplesAsAFileOfNextToNoAudio) {
  absl::StatusOr<std::string> ogg = EncodeOggOpus({}, 22'050, 1);
  ASSERT_TRUE(ogg.ok()) << ogg.status();
  absl::StatusOr<SpeechAudio> decoded = DecodeSpeechAudio(*ogg, "audio/ogg", {});
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_LT(decoded->seconds, 0.02);  // libopusenc's one frame of silence
}

TEST(EncodeOggOpusTest, RefusesRatesAndChannelCountsOpusDoesNotTake) {
  const std::vector<int16_t> samples(1'000);
  EXPECT_EQ(EncodeOggOpus(samples, 4'000, 1).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(EncodeOggOpus(samples, 384'000, 1).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(EncodeOggOpus(samples, 48'000, 0).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(EncodeOggOpus(samples, 48'000, 3).status().code(), absl::StatusCode::kInvalidArgument);
  const std::vector<int16_t> odd(1'001);
  absl::StatusOr<std::string> stereo = EncodeOggOpus(odd, 48'000, 2);
  EXPECT_EQ(stereo.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(stereo.status().message(), HasSubstr("not a whole number of frames"));
}

}  // namespace
}  // namespace herald::media
