// FFmpeg, espeak-ng and PocketSphinx are opened by their first use, each only by its own
// (shared_library.h): a process of its own, to see what is mapped before any of them is used.
#include <string>

#include "component/media/audio_decoding.h"
#include "component/media/speech.h"
#include "component/media/speech_synthesis.h"
#include "gtest/gtest.h"
#include "tests/support/mapped_files.h"

namespace herald::media {
namespace {

using ::herald::testing::MappedFiles;

bool Mapped(const std::string& library) { return MappedFiles().find(library) != std::string::npos; }

TEST(OpenedWhenUsedTest, EachLibraryIsOpenedByItsOwnFirstUse) {
  ASSERT_TRUE(Mapped("libc.so")) << MappedFiles();  // the check can see files
  EXPECT_FALSE(Mapped("libespeak-ng")) << "espeak-ng was linked, not opened";
  EXPECT_FALSE(Mapped("libpocketsphinx")) << "PocketSphinx was linked, not opened";
  EXPECT_FALSE(Mapped("libsphinxbase"));
  EXPECT_FALSE(Mapped("libavformat")) << "FFmpeg was linked, not opened";

  absl::StatusOr<SpokenAudio> spoken = SynthesizeLocally("hello there", {}, {});
  ASSERT_TRUE(spoken.ok()) << spoken.status();
  EXPECT_TRUE(Mapped("libespeak-ng.so.1"));
  EXPECT_FALSE(Mapped("libpocketsphinx"));

  // Ogg Opus is read by libopusfile (linked: it is small): still no FFmpeg.
  absl::StatusOr<SpeechAudio> audio = DecodeSpeechAudio(spoken->ogg_opus, "audio/ogg", {});
  ASSERT_TRUE(audio.ok()) << audio.status();
  absl::StatusOr<std::string> heard = RecognizeSpeech(audio->samples, {});
  ASSERT_TRUE(heard.ok()) << heard.status();
  EXPECT_TRUE(Mapped("libpocketsphinx.so.3"));
  EXPECT_TRUE(Mapped("libsphinxbase.so.3"));
  EXPECT_FALSE(Mapped("libavformat"));
}

}  // namespace
}  // namespace herald::media
