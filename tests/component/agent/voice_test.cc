// Voice both ways: which settings are accepted, what of an answer is read aloud, and a spoken
// answer made on this machine (espeak-ng, Ogg Opus).
#include "component/agent/voice.h"

#include <filesystem>
#include <iterator>
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
  EXPECT_TRUE(Voice::Create(io, {}, nullptr).ok());
  EXPECT_TRUE(Voice::Create(io, {.transcription = "off", .speech = "off"}, nullptr).ok());
  absl::StatusOr<std::unique_ptr<Voice>> provider =
      Voice::Create(io, {.transcription = "openai:whisper-1"}, nullptr);
  ASSERT_FALSE(provider.ok());
  EXPECT_THAT(provider.status().message(), HasSubstr("[voice] transcription"));
  absl::StatusOr<std::unique_ptr<Voice>> other =
      Voice::Create(io, {.speech = "anthropic:voice"}, nullptr);
  ASSERT_FALSE(other.ok());
  EXPECT_THAT(other.status().message(), HasSubstr("[voice] speech"));
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

// The threads of this process, from /proc.
size_t ThreadCount() {
  return static_cast<size_t>(std::distance(std::filesystem::directory_iterator("/proc/self/task"),
                                           std::filesystem::directory_iterator()));
}

TEST(VoiceTest, AnAnswerIsSpokenOnThisMachineAsOggOpus) {
  asio::io_context io;
  asio::executor_work_guard<asio::io_context::executor_type> work(io.get_executor());
  const size_t threads_before = ThreadCount();
  absl::StatusOr<std::unique_ptr<Voice>> voice = Voice::Create(io, {}, nullptr);
  ASSERT_TRUE(voice.ok()) << voice.status();
  // The thread for work on this machine starts with the first such work, not before.
  EXPECT_EQ(ThreadCount(), threads_before);
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
  EXPECT_GT(ThreadCount(), threads_before);  // its own, and whatever espeak-ng starts
}

TEST(VoiceTest, ItsOwnSpeechIsHeardBackOnThisMachine) {
  asio::io_context io;
  asio::executor_work_guard<asio::io_context::executor_type> work(io.get_executor());
  absl::StatusOr<std::unique_ptr<Voice>> voice = Voice::Create(io, {}, nullptr);
  ASSERT_TRUE(voice.ok()) << voice.status();
  auto wait = [&io](const auto& result) {
    const absl::Time deadline = absl::Now() + absl::Seconds(60);
    while (!result.has_value() && absl::Now() < deadline) {
      io.run_one_for(std::chrono::milliseconds(20));
    }
  };
  std::optional<absl::StatusOr<std::string>> spoken;
  (*voice)->Speak("The meeting starts at three in the afternoon.",
                  [&](absl::StatusOr<std::string> ogg) { spoken = ogg; });
  wait(spoken);
  ASSERT_TRUE(spoken.has_value() && spoken->ok());
  std::optional<absl::StatusOr<std::string>> heard;
  (*voice)->Transcribe(std::make_shared<const std::string>(**spoken), "audio/ogg",
                       [&](absl::StatusOr<std::string> text) { heard = text; });
  wait(heard);
  ASSERT_TRUE(heard.has_value());
  ASSERT_TRUE(heard->ok()) << heard->status();
  EXPECT_THAT(**heard, HasSubstr("meeting"));
  EXPECT_THAT(**heard, HasSubstr("afternoon"));

  // Not audio: the decoder's refusal, in words the sender can read.
  heard.reset();
  (*voice)->Transcribe(std::make_shared<const std::string>("not audio"), "audio/ogg",
                       [&](absl::StatusOr<std::string> text) { heard = text; });
  wait(heard);
  ASSERT_TRUE(heard.has_value());
  EXPECT_EQ(heard->status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace herald::agent
