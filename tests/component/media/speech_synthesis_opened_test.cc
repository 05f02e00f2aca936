#include <string>

#include "component/media/speech_synthesis.h"
#include "gtest/gtest.h"
#include "tests/support/mapped_files.h"

namespace herald::media {
namespace {

using ::herald::testing::MappedFiles;

TEST(SpeechSynthesisOpenedTest, OpensEspeakNgOnlyForTheFirstSynthesis) {
  const std::string before = MappedFiles();
  ASSERT_NE(before.find("libc.so"), std::string::npos) << before;  // the check can see files
  EXPECT_EQ(before.find("libespeak-ng"), std::string::npos) << "espeak-ng was linked, not opened";

  absl::StatusOr<SpokenAudio> spoken = SynthesizeLocally("hello", {}, {});
  ASSERT_TRUE(spoken.ok()) << spoken.status();
  EXPECT_GT(spoken->seconds, 0.2);
  EXPECT_NE(MappedFiles().find("libespeak-ng.so.1"), std::string::npos);
}

}  // namespace
}  // namespace herald::media
