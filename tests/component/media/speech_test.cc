// Voice messages as text on this machine: what espeak-ng said, recorded as WAV, Ogg Opus and AAC,
// comes back with its words (the ones PocketSphinx reliably gets right of synthetic speech);
// what is too long, broken or of another kind is refused before PocketSphinx sees it; and a
// missing model is named by its Debian package.
#include "component/media/speech.h"

#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/component/media/audio_builder.h"

namespace herald::media {
namespace {

using ::testing::AllOf;
using testing::BuildWav;
using testing::ChunkHeader;
using testing::FmtChunk;
using ::testing::HasSubstr;
using testing::ReadRunfile;
using testing::RiffWave;

// Spoken by espeak-ng (en-us+f2, 140 words a minute) when the tests are built; see BUILD.bazel.
std::string Voice(const std::string& name) { return ReadRunfile("tests/component/media/" + name); }

TEST(TranscribeLocallyTest, HearsTheWordsOfAWavVoiceMessage) {
  const std::string wav = Voice("weather.wav");
  ASSERT_FALSE(wav.empty()) << "weather.wav is missing from the runfiles";
  absl::StatusOr<Transcript> heard = TranscribeLocally(wav, "audio/x-wav", {});
  ASSERT_TRUE(heard.ok()) << heard.status();
  // "hello what is the weather like today" (PocketSphinx hears "oh" for espeak-ng's "hello")
  EXPECT_THAT(heard->text, AllOf(HasSubstr("weather"), HasSubstr("today")));
  EXPECT_GT(heard->seconds, 2.0);
  EXPECT_LT(heard->seconds, 4.0);
}

TEST(TranscribeLocallyTest, HearsTheWordsOfAnOggOpusVoiceMessage) {
  const std::string ogg = Voice("meeting.ogg");
  ASSERT_FALSE(ogg.empty()) << "meeting.ogg is missing from the runfiles";
  absl::StatusOr<Transcript> heard = TranscribeLocally(ogg, "audio/ogg", {});
  ASSERT_TRUE(heard.ok()) << heard.status();
  // "the meeting starts at three in the afternoon"
  EXPECT_THAT(heard->text, AllOf(HasSubstr("meeting"), HasSubstr("three"), HasSubstr("afternoon")));
  EXPECT_GT(heard->seconds, 2.0);
  EXPECT_LT(heard->seconds, 4.0);
}

TEST(TranscribeLocallyTest, HearsTheWordsOfAnAacVoiceMessage) {
  // As an iPhone or Monal sends it (M4A), and as raw ADTS frames.
  for (const char* name : {"meeting.m4a", "meeting.aac"}) {
    const std::string aac = Voice(name);
    ASSERT_FALSE(aac.empty()) << name << " is missing from the runfiles";
    absl::StatusOr<Transcript> heard = TranscribeLocally(aac, "audio/mp4", {});
    ASSERT_TRUE(heard.ok()) << name << ": " << heard.status();
    EXPECT_THAT(heard->text, AllOf(HasSubstr("meeting"), HasSubstr("afternoon"))) << name;
  }
}

TEST(TranscribeLocallyTest, HearsTheSameFromSeveralThreadsAtOnce) {
  // More threads than the pool has decoders on a small machine: some wait for one.
  const std::string ogg = Voice("weather.ogg");
  absl::StatusOr<Transcript> alone = TranscribeLocally(ogg, "audio/ogg", {});
  ASSERT_TRUE(alone.ok()) << alone.status();
  EXPECT_THAT(alone->text, HasSubstr("weather"));
  std::vector<absl::StatusOr<Transcript>> results(5, absl::UnknownError("not run"));
  std::vector<std::thread> threads;
  for (auto& result : results) {
    threads.emplace_back([&] { result = TranscribeLocally(ogg, "audio/ogg", {}); });
  }
  for (std::thread& thread : threads) thread.join();
  for (const auto& result : results) {
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_EQ(result->text, alone->text);
  }
}

TEST(TranscribeLocallyTest, HearsNothingInSilence) {
  absl::StatusOr<Transcript> heard =
      TranscribeLocally(BuildWav(std::vector<int16_t>(32'000), {}), "audio/wav", {});
  ASSERT_TRUE(heard.ok()) << heard.status();
  EXPECT_EQ(heard->text, "");
  EXPECT_DOUBLE_EQ(heard->seconds, 2.0);
}

TEST(TranscribeLocallyTest, RefusesAVoiceMessageLongerThanTwoMinutesBeforeDecodingIt) {
  const std::string wav = RiffWave({FmtChunk({}), ChunkHeader("data", 3 * 3600 * 16'000 * 2)});
  absl::StatusOr<Transcript> heard = TranscribeLocally(wav, "audio/wav", {});
  EXPECT_EQ(heard.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(heard.status().message(), "the voice message is longer than 2 minutes");
}

TEST(TranscribeLocallyTest, RefusesGarbageAsInvalid) {
  for (const char* type : {"audio/ogg", "audio/wav"}) {
    absl::StatusOr<Transcript> heard =
        TranscribeLocally("\x89PNG\r\n\x1a\n not audio at all", type, {});
    EXPECT_EQ(heard.status().code(), absl::StatusCode::kInvalidArgument) << type;
  }
}

TEST(TranscribeLocallyTest, RefusesWhatItCannotTranscribe) {
  EXPECT_EQ(TranscribeLocally(Voice("weather.wav"), "image/png", {}).status().code(),
            absl::StatusCode::kInvalidArgument);
  absl::StatusOr<Transcript> aac = TranscribeLocally("\xFF\xF1 adts", "audio/aac", {});
  EXPECT_EQ(aac.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(aac.status().message(), "the voice message is damaged or not AAC audio");
}

TEST(TranscribeLocallyTest, NamesTheDebianPackageWhenTheModelIsMissing) {
  SpeechOptions options;
  options.model_dir = "/nonexistent/pocketsphinx/model";
  absl::StatusOr<Transcript> heard =
      TranscribeLocally(Voice("weather.wav"), "audio/wav", {}, options);
  EXPECT_EQ(heard.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(heard.status().message(),
              AllOf(HasSubstr("pocketsphinx-en-us"), HasSubstr("/nonexistent/pocketsphinx")));
}

}  // namespace
}  // namespace herald::media
