// espeak-ng without its data: SynthesizeLocally says which Debian package to install, and does
// not end the process (espeak-ng's own initialisation would). In a process of its own, since
// espeak-ng is initialised once per process.
#include <cstdlib>
#include <filesystem>
#include <string>

#include "absl/status/status.h"
#include "component/media/speech_synthesis.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace herald::media {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

TEST(SynthesizeLocallyTest, NamesTheDebianPackageWhenEspeakNgDataIsMissing) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string empty = std::string(tmp != nullptr ? tmp : "/tmp") + "/no-espeak-ng-data";
  std::filesystem::create_directories(empty);
  // espeak-ng reads its data from ESPEAK_DATA_PATH when that is a folder.
  ASSERT_EQ(setenv("ESPEAK_DATA_PATH", empty.c_str(), 1), 0);
  for (int i = 0; i < 2; ++i) {  // and again: it looks each time until the data is there
    absl::StatusOr<SpokenAudio> spoken = SynthesizeLocally("hello world", {}, {});
    EXPECT_EQ(spoken.status().code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_THAT(spoken.status().message(),
                AllOf(HasSubstr("install Debian's espeak-ng-data"), HasSubstr(empty)));
  }
}

}  // namespace
}  // namespace herald::media
