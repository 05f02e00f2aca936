#include "component/media/ffmpeg_library.h"

#include <string>

#include "gtest/gtest.h"
#include "tests/support/mapped_files.h"

namespace herald::media {
namespace {

using ::herald::testing::MappedFiles;

// One test, in order: what is mapped before the first load is the point.
TEST(FfmpegLibraryTest, OpensFfmpegOnlyWhenFirstAskedAndOnce) {
  const std::string before = MappedFiles();
  ASSERT_NE(before.find("libc.so"), std::string::npos) << before;  // the check can see files
  EXPECT_EQ(before.find("libavformat"), std::string::npos) << "FFmpeg was linked, not loaded";
  EXPECT_EQ(before.find("libavcodec"), std::string::npos);

  absl::StatusOr<const FfmpegLibrary*> av = LoadFfmpeg();
  ASSERT_TRUE(av.ok()) << av.status();
  const std::string after = MappedFiles();
  EXPECT_NE(after.find("libavformat.so.59"), std::string::npos);
  EXPECT_NE(after.find("libavcodec.so.59"), std::string::npos);

  // Every function was found, and they work.
  const FfmpegLibrary& f = **av;
  for (const void* function : {(const void*)f.av_malloc,
                               (const void*)f.av_free,
                               (const void*)f.av_freep,
                               (const void*)f.av_strdup,
                               (const void*)f.av_rescale_q,
                               (const void*)f.av_log_set_callback,
                               (const void*)f.av_frame_alloc,
                               (const void*)f.av_frame_free,
                               (const void*)f.av_frame_unref,
                               (const void*)f.avcodec_find_decoder_by_name,
                               (const void*)f.avcodec_alloc_context3,
                               (const void*)f.avcodec_free_context,
                               (const void*)f.avcodec_parameters_to_context,
                               (const void*)f.avcodec_open2,
                               (const void*)f.avcodec_send_packet,
                               (const void*)f.avcodec_receive_frame,
                               (const void*)f.av_packet_alloc,
                               (const void*)f.av_packet_free,
                               (const void*)f.av_packet_unref,
                               (const void*)f.avio_alloc_context,
                               (const void*)f.avio_context_free,
                               (const void*)f.avformat_alloc_context,
                               (const void*)f.avformat_free_context,
                               (const void*)f.avformat_open_input,
                               (const void*)f.avformat_close_input,
                               (const void*)f.av_read_frame}) {
    EXPECT_NE(function, nullptr);
  }
  EXPECT_NE(f.avcodec_find_decoder_by_name("aac"), nullptr);
  EXPECT_EQ(f.av_rescale_q(48000, AVRational{1, 48000}, AVRational{1, 16000}), 16000);

  // Loaded once: the same table on the next call.
  absl::StatusOr<const FfmpegLibrary*> again = LoadFfmpeg();
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *av);
}

}  // namespace
}  // namespace herald::media
