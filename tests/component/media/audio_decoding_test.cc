// Voice messages decoded to 16 kHz mono: WAV read strictly, Ogg Opus through libopusfile, AAC
// (M4A and ADTS) through FFmpeg, and
// every file refused whose size or claimed length is over the limits, before it is decoded,
// with a reason the sender can act on.
#include "component/media/audio_decoding.h"

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/component/media/audio_builder.h"

namespace herald::media {
namespace {

using testing::BuildWav;
using testing::Chunk;
using testing::ChunkHeader;
using testing::FmtChunk;
using ::testing::HasSubstr;
using testing::ReadRunfile;
using testing::RiffWave;
using testing::SampleBytes;
using testing::Tone;
using testing::WavSpec;
using testing::WithLastGranule;
using testing::WithMp4Duration;

constexpr char kTooLong[] = "the voice message is longer than 2 minutes";

std::string MeetingOgg() { return ReadRunfile("tests/component/media/meeting.ogg"); }
std::string MeetingWav() { return ReadRunfile("tests/component/media/meeting.wav"); }

TEST(DecodeSpeechAudioTest, GivesA16KilohertzMonoWavItsOwnSamples) {
  const std::vector<int16_t> tone = Tone(440, 0.5, 16'000);
  absl::StatusOr<SpeechAudio> audio = DecodeSpeechAudio(BuildWav(tone, {}), "audio/wav", {});
  ASSERT_TRUE(audio.ok()) << audio.status();
  EXPECT_EQ(audio->samples.size(), tone.size());
  EXPECT_DOUBLE_EQ(audio->seconds, 0.5);
  for (size_t i = 0; i < tone.size(); i += 97) EXPECT_NEAR(audio->samples[i], tone[i], 1) << i;
}

TEST(DecodeSpeechAudioTest, BringsAWavAtAnotherRateTo16Kilohertz) {
  for (int rate : {8'000, 11'025, 22'050, 44'100, 48'000}) {
    absl::StatusOr<SpeechAudio> audio =
        DecodeSpeechAudio(BuildWav(Tone(440, 1.0, rate), {.rate = rate}), "audio/wav", {});
    ASSERT_TRUE(audio.ok()) << rate << ": " << audio.status();
    EXPECT_EQ(audio->samples.size(), 16'000u) << rate;
    EXPECT_DOUBLE_EQ(audio->seconds, 1.0) << rate;
  }
}

TEST(DecodeSpeechAudioTest, MixesAStereoWavDownToMono) {
  const std::vector<int16_t> left = Tone(440, 0.25, 16'000, 0.8);
  std::vector<int16_t> interleaved;
  for (int16_t sample : left) {
    interleaved.push_back(sample);
    interleaved.push_back(0);  // a silent right channel halves the level
  }
  absl::StatusOr<SpeechAudio> audio =
      DecodeSpeechAudio(BuildWav(interleaved, {.channels = 2}), "audio/wav", {});
  ASSERT_TRUE(audio.ok()) << audio.status();
  ASSERT_EQ(audio->samples.size(), left.size());
  for (size_t i = 0; i < left.size(); i += 31) EXPECT_NEAR(audio->samples[i], left[i] / 2, 1);
}

TEST(DecodeSpeechAudioTest, ReadsTheSpellingsOfWavThatClientsAndLibmagicUse) {
  const std::string wav = BuildWav(Tone(440, 0.1, 16'000), {});
  for (const char* type : {"audio/wav", "audio/x-wav", "audio/vnd.wave", "Audio/WAV; codecs=1"}) {
    EXPECT_TRUE(DecodeSpeechAudio(wav, type, {}).ok()) << type;
  }
}

TEST(DecodeSpeechAudioTest, AcceptsWaveFormatExtensibleHolding16BitPcm) {
  const std::string plain = FmtChunk({}).substr(8);  // the 16-byte body
  std::string extensible = plain;
  extensible[0] = '\xFE';
  extensible[1] = '\xFF';
  extensible += std::string("\x16\x00\x10\x00\x04\x00\x00\x00", 8);  // cbSize, bits, mask
  extensible += std::string("\x01\x00\x00\x00\x00\x00\x10\x00\x80\x00\x00\xAA\x00\x38\x9B\x71", 16);
  const std::string wav =
      RiffWave({Chunk("fmt ", extensible), Chunk("data", SampleBytes(Tone(440, 0.1, 16'000)))});
  absl::StatusOr<SpeechAudio> audio = DecodeSpeechAudio(wav, "audio/wav", {});
  ASSERT_TRUE(audio.ok()) << audio.status();
  EXPECT_EQ(audio->samples.size(), 1'600u);
}

TEST(DecodeSpeechAudioTest, SkipsChunksItDoesNotKnowOddSizedOnesIncluded) {
  const std::string wav = RiffWave({Chunk("LIST", "odd"), FmtChunk({}), Chunk("fact", "1234"),
                                    Chunk("data", SampleBytes(Tone(440, 0.1, 16'000)))});
  absl::StatusOr<SpeechAudio> audio = DecodeSpeechAudio(wav, "audio/wav", {});
  ASSERT_TRUE(audio.ok()) << audio.status();
  EXPECT_EQ(audio->samples.size(), 1'600u);
}

TEST(DecodeSpeechAudioTest, RefusesAWavWhoseHeaderClaimsThreeHoursBeforeReadingIt) {
  // Three hours of 16 kHz mono claimed, and not one sample there: refused for the claim.
  const std::string wav = RiffWave({FmtChunk({}), ChunkHeader("data", 3 * 3600 * 16'000 * 2)});
  absl::StatusOr<SpeechAudio> audio = DecodeSpeechAudio(wav, "audio/wav", {});
  EXPECT_EQ(audio.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(audio.status().message(), kTooLong);
}

TEST(DecodeSpeechAudioTest, SaysTheLimitAsTheOperatorSetIt) {
  const std::string wav = BuildWav(Tone(440, 2.0, 16'000), {});
  SpeechLimits limits;
  limits.max_seconds = 90;
  EXPECT_TRUE(DecodeSpeechAudio(wav, "audio/wav", limits).ok());
  limits.max_seconds = 1;
  EXPECT_EQ(DecodeSpeechAudio(wav, "audio/wav", limits).status().message(),
            "the voice message is longer than 1 second");
  limits.max_seconds = 1.5;
  EXPECT_EQ(DecodeSpeechAudio(wav, "audio/wav", limits).status().message(),
            "the voice message is longer than 1.5 seconds");
}

TEST(DecodeSpeechAudioTest, RefusesWavFormatsOtherThan16BitPcmMonoOrStereo) {
  const std::string data = Chunk("data", std::string(3200, '\0'));
  const WavSpec refused[] = {
      {.bits = 8},     {.bits = 24},    {.bits = 32, .format = 3},  // float
      {.format = 6},                                                // A-law
      {.channels = 3}, {.channels = 0}, {.rate = 96'000},          {.rate = 4'000},
  };
  for (const WavSpec& spec : refused) {
    absl::StatusOr<SpeechAudio> audio =
        DecodeSpeechAudio(RiffWave({FmtChunk(spec), data}), "audio/wav", {});
    EXPECT_EQ(audio.status().code(), absl::StatusCode::kInvalidArgument)
        << spec.bits << " bits, format " << spec.format << ", " << spec.channels << " channels, "
        << spec.rate << " Hz";
    EXPECT_THAT(audio.status().message(), HasSubstr("16-bit PCM"));
  }
}

TEST(DecodeSpeechAudioTest, RefusesABrokenWav) {
  const std::string samples = SampleBytes(Tone(440, 0.1, 16'000));
  const std::string broken[] = {
      "",
      "RIFF",
      std::string("RIFF\x04\x00\x00\x00WAVE", 12),                       // no chunks
      RiffWave({FmtChunk({})}),                                          // no data
      RiffWave({Chunk("data", samples), FmtChunk({})}),                  // data before fmt
      RiffWave({FmtChunk({}), FmtChunk({}), Chunk("data", samples)}),    // two fmt chunks
      RiffWave({FmtChunk({}), Chunk("data", samples)}).substr(0, 1000),  // cut off
      RiffWave({ChunkHeader("fmt ", 1000)}),                             // a chunk past the end
      "RIFX" + BuildWav({}, {}).substr(4),                               // big-endian
  };
  for (const std::string& bytes : broken) {
    absl::StatusOr<SpeechAudio> audio = DecodeSpeechAudio(bytes, "audio/wav", {});
    EXPECT_EQ(audio.status().code(), absl::StatusCode::kInvalidArgument) << bytes.size();
    EXPECT_EQ(audio.status().message(), "the voice message is damaged or not a WAV file");
  }
}

TEST(DecodeSpeechAudioTest, GivesAnEmptyWavNoSamples) {
  absl::StatusOr<SpeechAudio> audio = DecodeSpeechAudio(BuildWav({}, {}), "audio/wav", {});
  ASSERT_TRUE(audio.ok()) << audio.status();
  EXPECT_TRUE(audio->samples.empty());
  EXPECT_EQ(audio->seconds, 0);
}

TEST(DecodeSpeechAudioTest, DecodesOggOpusTo16KilohertzMono) {
  const std::string ogg = MeetingOgg();
  ASSERT_FALSE(ogg.empty()) << "meeting.ogg is missing from the runfiles";
  absl::StatusOr<SpeechAudio> from_ogg = DecodeSpeechAudio(ogg, "audio/ogg", {});
  absl::StatusOr<SpeechAudio> from_wav = DecodeSpeechAudio(MeetingWav(), "audio/wav", {});
  ASSERT_TRUE(from_ogg.ok()) << from_ogg.status();
  ASSERT_TRUE(from_wav.ok()) << from_wav.status();
  // opusenc keeps the length to the sample (at 48 kHz).
  EXPECT_NEAR(from_ogg->seconds, from_wav->seconds, 0.001);
  EXPECT_NEAR(static_cast<double>(from_ogg->samples.size()), from_ogg->seconds * 16'000, 1);
}

TEST(DecodeSpeechAudioTest, RefusesAnOggWhoseLastPageClaimsThreeHoursBeforeDecodingIt) {
  const std::string ogg = WithLastGranule(MeetingOgg(), int64_t{3} * 3600 * 48'000);
  absl::StatusOr<SpeechAudio> audio = DecodeSpeechAudio(ogg, "audio/ogg", {});
  EXPECT_EQ(audio.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(audio.status().message(), kTooLong);
}

TEST(DecodeSpeechAudioTest, RefusesAnOggLongerThanTheLimit) {
  SpeechLimits limits;
  limits.max_seconds = 1;  // meeting.ogg is about three seconds
  absl::StatusOr<SpeechAudio> audio = DecodeSpeechAudio(MeetingOgg(), "audio/ogg", limits);
  EXPECT_EQ(audio.status().message(), "the voice message is longer than 1 second");
}

TEST(DecodeSpeechAudioTest, RefusesGarbageAsDamaged) {
  const std::string garbage[] = {"",
                                 "hello",
                                 std::string(5000, '\xAB'),
                                 "OggS" + std::string(200, '\0'),
                                 MeetingOgg().substr(0, 60),
                                 MeetingOgg().substr(100)};
  for (const std::string& bytes : garbage) {
    absl::StatusOr<SpeechAudio> audio = DecodeSpeechAudio(bytes, "audio/ogg", {});
    EXPECT_EQ(audio.status().code(), absl::StatusCode::kInvalidArgument) << bytes.size();
    EXPECT_EQ(audio.status().message(), "the voice message is damaged or not Ogg Opus");
    EXPECT_EQ(DecodeSpeechAudio(bytes, "audio/wav", {}).status().code(),
              absl::StatusCode::kInvalidArgument);
  }
}

TEST(DecodeSpeechAudioTest, RefusesAFileOverTheSizeLimitBeforeParsingIt) {
  SpeechLimits limits;
  limits.max_input_bytes = 1024;
  absl::StatusOr<SpeechAudio> audio =
      DecodeSpeechAudio(std::string(2048, 'x'), "audio/ogg", limits);
  EXPECT_EQ(audio.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(audio.status().message(),
            "the voice message is 2 KiB; Herald transcribes voice messages of at most 1 KiB");
}

// ----- AAC: made by ffmpeg from the same WAV files when the tests are built (BUILD.bazel) -----

std::string Aac(const std::string& name) { return ReadRunfile("tests/component/media/" + name); }

double Rms(const std::vector<int16_t>& samples) {
  double sum = 0;
  for (int16_t sample : samples) sum += static_cast<double>(sample) * sample;
  return samples.empty() ? 0 : std::sqrt(sum / samples.size());
}

TEST(DecodeSpeechAudioTest, DecodesAnM4aAsAnIphoneRecordsItTo16KilohertzMono) {
  const std::string m4a = Aac("weather.m4a");
  ASSERT_FALSE(m4a.empty()) << "weather.m4a is missing from the runfiles";
  absl::StatusOr<SpeechAudio> from_wav =
      DecodeSpeechAudio(ReadRunfile("tests/component/media/weather.wav"), "audio/wav", {});
  ASSERT_TRUE(from_wav.ok()) << from_wav.status();
  for (const char* type : {"audio/mp4", "audio/x-m4a", "Audio/MP4; codecs=mp4a.40.2"}) {
    absl::StatusOr<SpeechAudio> from_m4a = DecodeSpeechAudio(m4a, type, {});
    ASSERT_TRUE(from_m4a.ok()) << type << ": " << from_m4a.status();
    // The edit list drops the encoder's priming samples, and the track's length its padding.
    EXPECT_NEAR(from_m4a->seconds, from_wav->seconds, 0.001) << type;
    EXPECT_NEAR(static_cast<double>(from_m4a->samples.size()), from_m4a->seconds * 16'000, 1);
    EXPECT_NEAR(Rms(from_m4a->samples), Rms(from_wav->samples), 0.1 * Rms(from_wav->samples));
  }
}

TEST(DecodeSpeechAudioTest, MixesAStereo48KilohertzM4aWithItsIndexFirstDownToMono) {
  absl::StatusOr<SpeechAudio> from_m4a =
      DecodeSpeechAudio(Aac("meeting_stereo.m4a"), "audio/mp4", {});
  ASSERT_TRUE(from_m4a.ok()) << from_m4a.status();
  absl::StatusOr<SpeechAudio> from_wav = DecodeSpeechAudio(MeetingWav(), "audio/wav", {});
  ASSERT_TRUE(from_wav.ok()) << from_wav.status();
  EXPECT_NEAR(from_m4a->seconds, from_wav->seconds, 0.001);
  // ffmpeg made the stereo file from a mono one at -3 dB a channel (its centre mix level).
  const double expected = Rms(from_wav->samples) * std::sqrt(0.5);
  EXPECT_NEAR(Rms(from_m4a->samples), expected, 0.1 * expected);
}

TEST(DecodeSpeechAudioTest, DecodesRawAdtsAac) {
  absl::StatusOr<SpeechAudio> from_wav = DecodeSpeechAudio(MeetingWav(), "audio/wav", {});
  ASSERT_TRUE(from_wav.ok()) << from_wav.status();
  for (const char* type : {"audio/aac", "audio/x-hx-aac-adts", "audio/x-aac"}) {
    absl::StatusOr<SpeechAudio> from_adts = DecodeSpeechAudio(Aac("meeting.aac"), type, {});
    ASSERT_TRUE(from_adts.ok()) << type << ": " << from_adts.status();
    // ADTS has no edit list: the encoder's priming and padding (under 3,072 samples) stay.
    EXPECT_GE(from_adts->seconds, from_wav->seconds) << type;
    EXPECT_LT(from_adts->seconds, from_wav->seconds + 3'072.0 / 22'050) << type;
    EXPECT_NEAR(Rms(from_adts->samples), Rms(from_wav->samples), 0.1 * Rms(from_wav->samples));
  }
}

TEST(DecodeSpeechAudioTest, RefusesAacLongerThanTheLimit) {
  SpeechLimits limits;
  limits.max_seconds = 1;  // each is about three seconds
  for (const char* name : {"weather.m4a", "meeting_stereo.m4a", "weather.aac"}) {
    absl::StatusOr<SpeechAudio> audio = DecodeSpeechAudio(Aac(name), "audio/mp4", limits);
    EXPECT_EQ(audio.status().code(), absl::StatusCode::kInvalidArgument) << name;
    EXPECT_EQ(audio.status().message(), "the voice message is longer than 1 second") << name;
  }
}

TEST(DecodeSpeechAudioTest, RefusesAnM4aWhoseHeaderClaimsThreeHoursBeforeDecodingIt) {
  for (bool media_too : {false, true}) {
    const std::string m4a = WithMp4Duration(Aac("weather.m4a"), 3 * 3600, media_too);
    absl::StatusOr<SpeechAudio> audio = DecodeSpeechAudio(m4a, "audio/mp4", {});
    EXPECT_EQ(audio.status().code(), absl::StatusCode::kInvalidArgument) << media_too;
    EXPECT_EQ(audio.status().message(), kTooLong) << media_too;
  }
}

TEST(DecodeSpeechAudioTest, CutsOffAnM4aThatClaimsLessThanItHolds) {
  // Claims half a second and holds three: refused while it is decoded, at the limit.
  const std::string m4a = WithMp4Duration(Aac("meeting.m4a"), 0.5, /*media_too=*/true);
  SpeechLimits limits;
  limits.max_seconds = 2;
  absl::StatusOr<SpeechAudio> audio = DecodeSpeechAudio(m4a, "audio/mp4", limits);
  EXPECT_EQ(audio.status().message(), "the voice message is longer than 2 seconds");
}

TEST(DecodeSpeechAudioTest, RefusesGarbageAndCutOffAacAsDamaged) {
  const std::string m4a = Aac("weather.m4a");           // its index (moov) is at the end
  const std::string first = Aac("meeting_stereo.m4a");  // its index is first
  const std::string garbage[] = {
      "",
      "hello",
      std::string(5000, '\xAB'),
      std::string("\0\0\0\x20"
                  "ftypM4A ",
                  12),
      m4a.substr(0, m4a.size() / 2),         // no index
      first.substr(0, first.size() / 2),     // the index, and half the audio it points to
      "\xFF\xF1" + std::string(3000, '\0'),  // an ADTS sync word, then nothing
      MeetingOgg(),                          // what FFmpeg may not read here
      MeetingWav(),
  };
  for (const std::string& bytes : garbage) {
    for (const char* type : {"audio/mp4", "audio/aac"}) {
      absl::StatusOr<SpeechAudio> audio = DecodeSpeechAudio(bytes, type, {});
      EXPECT_EQ(audio.status().code(), absl::StatusCode::kInvalidArgument) << bytes.size();
      EXPECT_EQ(audio.status().message(), "the voice message is damaged or not AAC audio")
          << bytes.size() << " " << type;
    }
  }
}

TEST(DecodeSpeechAudioTest, SaysOggVorbisIsNotTranscribedYet) {
  const std::string vorbis = "OggS" + std::string(24, '\0') + "\x01vorbis" + std::string(30, '\0');
  absl::StatusOr<SpeechAudio> audio = DecodeSpeechAudio(vorbis, "audio/ogg", {});
  EXPECT_EQ(audio.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_EQ(audio.status().message(), "Ogg Vorbis voice messages are not transcribed here yet");
}

TEST(DecodeSpeechAudioTest, RefusesWhatIsNotAVoiceMessage) {
  for (const char* type : {"image/png", "audio/flac", "text/plain", ""}) {
    absl::StatusOr<SpeechAudio> audio = DecodeSpeechAudio("bytes", type, {});
    EXPECT_EQ(audio.status().code(), absl::StatusCode::kInvalidArgument) << type;
    EXPECT_THAT(audio.status().message(), HasSubstr("is not a voice message Herald transcribes"));
  }
}

}  // namespace
}  // namespace herald::media
