// Audio brought to 16 kHz: speech frequencies pass at their level and pitch, what lies above
// 8 kHz is filtered out rather than folded down onto the speech, and lengths come out right.
#include "component/media/resampler.h"

#include <cmath>
#include <cstdint>
#include <vector>

#include "gtest/gtest.h"

namespace herald::media {
namespace {

std::vector<float> Sine(double hz, int rate, double seconds = 1.0) {
  const double pi = std::acos(-1.0);
  std::vector<float> samples(static_cast<size_t>(seconds * rate));
  for (size_t i = 0; i < samples.size(); ++i) {
    samples[i] = static_cast<float>(0.5 * std::sin(2 * pi * hz * static_cast<double>(i) / rate));
  }
  return samples;
}

// The level of `samples` away from the edges, in decibels relative to the sine's 0.5.
double LevelDb(const std::vector<int16_t>& samples) {
  double sum = 0;
  const size_t from = samples.size() / 8;
  const size_t to = samples.size() - from;
  for (size_t i = from; i < to; ++i) sum += static_cast<double>(samples[i]) * samples[i];
  const double rms = std::sqrt(sum / static_cast<double>(to - from)) / 32767;
  return 20 * std::log10(rms / (0.5 / std::sqrt(2.0)) + 1e-12);
}

// The frequency of a sine, from its zero crossings.
double Frequency(const std::vector<int16_t>& samples) {
  int crossings = 0;
  for (size_t i = 1; i < samples.size(); ++i) {
    if ((samples[i - 1] < 0) != (samples[i] < 0)) ++crossings;
  }
  return crossings / 2.0 / (static_cast<double>(samples.size()) / kSpeechRate);
}

TEST(ResamplerTest, PassesSpeechFrequenciesAtTheirLevelAndPitchFromEveryCommonRate) {
  for (int rate : {8'000, 11'025, 16'000, 22'050, 32'000, 44'100, 48'000}) {
    for (double hz : {200.0, 1'000.0, 3'000.0}) {
      const std::vector<int16_t> out = ResampleToSpeechRate(Sine(hz, rate), rate);
      EXPECT_EQ(out.size(), 16'000u) << rate;
      EXPECT_NEAR(LevelDb(out), 0.0, 0.1) << rate << " Hz in, " << hz << " Hz tone";
      EXPECT_NEAR(Frequency(out), hz, 2.0) << rate << " Hz in, " << hz << " Hz tone";
    }
  }
}

// PocketSphinx's filter bank ends at 6.8 kHz; the transition band starts just below it.
TEST(ResamplerTest, KeepsWhatPocketSphinxListensToWithinHalfADecibel) {
  for (int rate : {22'050, 44'100, 48'000}) {
    EXPECT_NEAR(LevelDb(ResampleToSpeechRate(Sine(6'000, rate), rate)), 0.0, 0.1) << rate;
    EXPECT_NEAR(LevelDb(ResampleToSpeechRate(Sine(6'500, rate), rate)), 0.0, 0.5) << rate;
  }
}

// Without the low-pass, a 10 kHz tone at 48 kHz would come out as a 6 kHz one at full level.
TEST(ResamplerTest, FiltersOutWhatLiesAboveEightKilohertzInsteadOfFoldingItDown) {
  for (int rate : {22'050, 44'100, 48'000}) {
    for (double hz : {8'500.0, 10'000.0}) {
      EXPECT_LT(LevelDb(ResampleToSpeechRate(Sine(hz, rate), rate)), -60.0)
          << rate << " Hz in, " << hz << " Hz tone";
    }
  }
}

TEST(ResamplerTest, GivesOneSixteenKilohertzSamplePerInputSampleTimeTheRatio) {
  EXPECT_EQ(ResampleToSpeechRate(Sine(440, 48'000, 0.5), 48'000).size(), 8'000u);
  EXPECT_EQ(ResampleToSpeechRate(std::vector<float>(22'049), 22'050).size(), 15'999u);
  EXPECT_EQ(ResampleToSpeechRate(std::vector<float>(1), 48'000).size(), 0u);
  EXPECT_TRUE(ResampleToSpeechRate({}, 48'000).empty());
}

TEST(ResamplerTest, ClipsWhatIsLouderThanFullScale) {
  const std::vector<float> loud = {2.0f, -2.0f, 1.0f};
  const std::vector<int16_t> out = ResampleToSpeechRate(loud, kSpeechRate);
  EXPECT_EQ(out, (std::vector<int16_t>{32767, -32768, 32767}));
}

}  // namespace
}  // namespace herald::media
