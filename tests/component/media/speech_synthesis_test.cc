// Text spoken on this machine: espeak-ng's speech comes back as an Ogg Opus voice message that
// Herald's own decoder reads at the right length and PocketSphinx reads as the same words, from
// any thread; and what cannot or should not be spoken
// (nothing, too much, an unknown voice) is refused with a reason.
#include "component/media/speech_synthesis.h"

#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "component/media/audio_decoding.h"
#include "component/media/speech.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace herald::media {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::StartsWith;

TEST(SynthesizeLocallyTest, SpeaksHelloWorldAsAnOggOpusVoiceMessage) {
  absl::StatusOr<SpokenAudio> spoken = SynthesizeLocally("hello world", {}, {});
  ASSERT_TRUE(spoken.ok()) << spoken.status();
  EXPECT_THAT(spoken->ogg_opus, AllOf(StartsWith("OggS"), HasSubstr("OpusHead")));
  EXPECT_GT(spoken->seconds, 0.5);
  EXPECT_LT(spoken->seconds, 2.5);
  absl::StatusOr<SpeechAudio> decoded = DecodeSpeechAudio(spoken->ogg_opus, "audio/ogg", {});
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_NEAR(decoded->seconds, spoken->seconds, 0.001);
}

TEST(SynthesizeLocallyTest, SaysWhatPocketSphinxHearsAgain) {
  // A sentence PocketSphinx reads right in espeak-ng's default voice at its default speed.
  absl::StatusOr<SpokenAudio> spoken =
      SynthesizeLocally("the meeting starts at three in the afternoon", {}, {});
  ASSERT_TRUE(spoken.ok()) << spoken.status();
  absl::StatusOr<Transcript> heard = TranscribeLocally(spoken->ogg_opus, "audio/ogg", {});
  ASSERT_TRUE(heard.ok()) << heard.status();
  EXPECT_THAT(heard->text, AllOf(HasSubstr("meeting"), HasSubstr("three"), HasSubstr("afternoon")));
  EXPECT_NEAR(heard->seconds, spoken->seconds, 0.001);
}

TEST(SynthesizeLocallyTest, SpeaksInTheVoiceAndAtTheSpeedAsked) {
  SynthesisOptions slow;
  slow.words_per_minute = 120;
  SynthesisOptions fast;
  fast.words_per_minute = 300;
  absl::StatusOr<SpokenAudio> slowly = SynthesizeLocally("one two three four five", slow, {});
  absl::StatusOr<SpokenAudio> quickly = SynthesizeLocally("one two three four five", fast, {});
  ASSERT_TRUE(slowly.ok() && quickly.ok());
  EXPECT_GT(slowly->seconds, 1.8 * quickly->seconds);

  SynthesisOptions german;
  german.voice = "de";
  EXPECT_TRUE(SynthesizeLocally("Guten Tag, wie geht es dir?", german, {}).ok());
  SynthesisOptions variant;
  variant.voice = "en-us+f2";
  EXPECT_TRUE(SynthesizeLocally("hello world", variant, {}).ok());
}

TEST(SynthesizeLocallyTest, SpeaksFromSeveralThreadsAtOnce) {
  const std::string text = "hello what is the weather like today";
  absl::StatusOr<SpokenAudio> alone = SynthesizeLocally(text, {}, {});
  ASSERT_TRUE(alone.ok()) << alone.status();
  std::vector<absl::StatusOr<SpokenAudio>> results(4, absl::UnknownError("not run"));
  std::vector<std::thread> threads;
  for (auto& result : results) {
    threads.emplace_back([&] { result = SynthesizeLocally(text, {}, {}); });
  }
  for (std::thread& thread : threads) thread.join();
  for (const auto& result : results) {
    ASSERT_TRUE(result.ok()) << result.status();
    // espeak-ng varies by a few milliseconds from call to call (speech_synthesis.h).
    EXPECT_NEAR(result->seconds, alone->seconds, 0.05);
    absl::StatusOr<SpeechAudio> decoded = DecodeSpeechAudio(result->ogg_opus, "audio/ogg", {});
    ASSERT_TRUE(decoded.ok()) << decoded.status();
    EXPECT_NEAR(decoded->seconds, result->seconds, 0.001);
  }
}

TEST(SynthesizeLocallyTest, PassesMarkdownThroughAndReadsControlsAndBadBytesAsSpaces) {
  for (const char* text : {"**Hello** _world_: see `ls -l` # done",
                           "hello\x07 world\x1b[31m red\x7f", "hello \xff\xfe world \xc3"}) {
    absl::StatusOr<SpokenAudio> spoken = SynthesizeLocally(text, {}, {});
    ASSERT_TRUE(spoken.ok()) << spoken.status();
    EXPECT_GT(spoken->seconds, 0.5);
  }
}

TEST(SynthesizeLocallyTest, RefusesToSpeakNothing) {
  for (const char* text : {"", "   ", "\n\t\n", "\x01\x02\x1b"}) {
    absl::StatusOr<SpokenAudio> spoken = SynthesizeLocally(text, {}, {});
    EXPECT_EQ(spoken.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(spoken.status().message(), "there is no text to speak");
  }
}

TEST(SynthesizeLocallyTest, RefusesTextOverTheLimitBeforeSpeakingIt) {
  absl::StatusOr<SpokenAudio> spoken = SynthesizeLocally(std::string(4001, 'a'), {}, {});
  EXPECT_EQ(spoken.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(spoken.status().message(),
            "the answer is too long to speak (4001 bytes; at most 4000)");
  SynthesisLimits limits;
  limits.max_text_bytes = 5;
  EXPECT_EQ(SynthesizeLocally("hello world", {}, limits).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(SynthesizeLocallyTest, RefusesSpeechLongerThanTheLimit) {
  SynthesisLimits limits;
  limits.max_seconds = 1;
  absl::StatusOr<SpokenAudio> spoken =
      SynthesizeLocally("the meeting starts at three in the afternoon", {}, limits);
  EXPECT_EQ(spoken.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(spoken.status().message(), "the answer is too long to speak (over 1 second)");
  // espeak-ng was stopped cleanly: the next call speaks.
  EXPECT_TRUE(SynthesizeLocally("hello world", {}, {}).ok());
}

TEST(SynthesizeLocallyTest, RefusesAnUnknownVoiceOrSpeed) {
  for (const char* voice : {"xx-nonexistent", "", "../../../etc/passwd", "en us"}) {
    SynthesisOptions options;
    options.voice = voice;
    absl::StatusOr<SpokenAudio> spoken = SynthesizeLocally("hello", options, {});
    EXPECT_EQ(spoken.status().code(), absl::StatusCode::kInvalidArgument) << voice;
    EXPECT_THAT(spoken.status().message(), HasSubstr("espeak-ng has no voice")) << voice;
  }
  for (int speed : {0, 79, 451}) {
    SynthesisOptions options;
    options.words_per_minute = speed;
    EXPECT_EQ(SynthesizeLocally("hello", options, {}).status().code(),
              absl::StatusCode::kInvalidArgument)
        << speed;
  }
  // The next call, with a voice that is there, speaks.
  EXPECT_TRUE(SynthesizeLocally("hello world", {}, {}).ok());
}

}  // namespace
}  // namespace herald::media
