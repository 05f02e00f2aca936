// Voice both ways: which settings are accepted, what of an answer is read aloud, and a spoken
// answer made on this machine (espeak-ng, Ogg Opus).
#include "component/agent/voice.h"

#include <optional>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace herald::agent {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(VoiceTest, AProviderNeedsAnApiAndAnythingElseIsRefusedNamingTheKey) {
  asio::io_context io;
  asio::thread_pool workers(1);
  EXPECT_TRUE(Voice::Create(io, workers, {}, nullptr).ok());
  EXPECT_TRUE(Voice::Create(io, workers, {.transcription = "off", .speech = "off"}, nullptr).ok());
  absl::StatusOr<std::unique_ptr<Voice>> provider =
      Voice::Create(io, workers, {.transcription = "openai:whisper-1"}, nullptr);
  ASSERT_FALSE(provider.ok());
  EXPECT_THAT(provider.status().message(), HasSubstr("[voice] transcription"));
  absl::StatusOr<std::unique_ptr<Voice>> other =
      Voice::Create(io, workers, {.speech = "anthropic:voice"}, nullptr);
  ASSERT_FALSE(other.ok());
  EXPECT_THAT(other.status().message(), HasSubstr("[voice] speech"));
  workers.join();
}

TEST(VoiceTest, MarkdownCodeAndLinksAreNotReadAloud) {
  EXPECT_EQ(SpeakableText("**Bold** and _this_ — see https://example.org/x?y=1 now.", 1000),
            "Bold and this — see a link now.");
  EXPECT_EQ(SpeakableText("# Title\n\n- one\n- two", 1000), "Title - one - two");
  EXPECT_EQ(SpeakableText("Run:\n```\nrm -rf /\n```\nDone.", 1000),
            "Run: (some code, left out) Done.");
  EXPECT_EQ(SpeakableText("```only code```", 1000), "(some code, left out)");
  EXPECT_EQ(SpeakableText("**", 1000), "");
}

TEST(VoiceTest, ALongAnswerIsCutAfterASentenceSayingTheRestIsInTheText) {
  std::string answer;
  for (int i = 0; i < 50; ++i) answer += "This is one sentence of a long answer. ";
  const std::string spoken = SpeakableText(answer, 300);
  EXPECT_LE(spoken.size(), 300u);
  EXPECT_THAT(spoken, HasSubstr("answer. The rest is in the text."));
  EXPECT_THAT(spoken, Not(HasSubstr("  ")));
}

TEST(VoiceTest, AnAnswerIsSpokenOnThisMachineAsOggOpus) {
  asio::io_context io;
  asio::executor_work_guard<asio::io_context::executor_type> work(io.get_executor());
  asio::thread_pool workers(1);
  absl::StatusOr<std::unique_ptr<Voice>> voice = Voice::Create(io, workers, {}, nullptr);
  ASSERT_TRUE(voice.ok()) << voice.status();
  std::optional<absl::StatusOr<std::string>> spoken;
  (*voice)->Speak("**Hello** there.", [&](absl::StatusOr<std::string> ogg) { spoken = ogg; });
  const absl::Time deadline = absl::Now() + absl::Seconds(60);
  while (!spoken.has_value() && absl::Now() < deadline) {
    io.run_one_for(std::chrono::milliseconds(20));
  }
  ASSERT_TRUE(spoken.has_value());
  ASSERT_TRUE(spoken->ok()) << spoken->status();
  EXPECT_EQ((*spoken)->substr(0, 4), "OggS");
  EXPECT_THAT(**spoken, HasSubstr("OpusHead"));
  workers.join();
}

}  // namespace
}  // namespace herald::agent
