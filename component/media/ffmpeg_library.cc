#include "component/media/ffmpeg_library.h"

#include <cstdarg>
#include <cstdio>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "component/base/shared_library.h"
#include "glog/logging.h"

namespace herald::media {
namespace {

// The files the headers were built against: the major version is the ABI.
constexpr char kAvutil[] = "libavutil.so." AV_STRINGIFY(LIBAVUTIL_VERSION_MAJOR);
constexpr char kAvcodec[] = "libavcodec.so." AV_STRINGIFY(LIBAVCODEC_VERSION_MAJOR);
constexpr char kAvformat[] = "libavformat.so." AV_STRINGIFY(LIBAVFORMAT_VERSION_MAJOR);

// FFmpeg's messages (about a stranger's damaged file, mostly) go to VLOG(2), not stderr.
void ForwardFfmpegLog(void* /*context*/, int level, const char* format, va_list arguments) {
  if (level > AV_LOG_WARNING || !VLOG_IS_ON(2)) return;
  char line[512];
  std::vsnprintf(line, sizeof(line), format, arguments);
  std::string_view text(line);
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  if (!text.empty()) VLOG(2) << "ffmpeg: " << text;
}

// The reason goes to the operator's log (once: the load is not tried again); the status, which
// the sender of the voice message may be shown, names no file of this machine.
absl::Status Missing(absl::string_view why) {
  LOG(ERROR) << "AAC voice messages need FFmpeg (install Debian's libavformat"
             << LIBAVFORMAT_VERSION_MAJOR << " and libavcodec" << LIBAVCODEC_VERSION_MAJOR
             << "): " << why;
  return absl::FailedPreconditionError(
      "AAC voice messages cannot be read here (FFmpeg is not installed)");
}

absl::StatusOr<FfmpegLibrary> Load() {
  absl::StatusOr<base::SharedLibrary> avutil = base::SharedLibrary::Open(kAvutil);
  if (!avutil.ok()) return Missing(avutil.status().message());
  absl::StatusOr<base::SharedLibrary> avcodec = base::SharedLibrary::Open(kAvcodec);
  if (!avcodec.ok()) return Missing(avcodec.status().message());
  absl::StatusOr<base::SharedLibrary> avformat = base::SharedLibrary::Open(kAvformat);
  if (!avformat.ok()) return Missing(avformat.status().message());

  FfmpegLibrary av;
  // Each member is looked up by its own name, in the library that defines it.
  HERALD_FIND_FUNCTION(*avutil, av, av_malloc);
  HERALD_FIND_FUNCTION(*avutil, av, av_free);
  HERALD_FIND_FUNCTION(*avutil, av, av_freep);
  HERALD_FIND_FUNCTION(*avutil, av, av_strdup);
  HERALD_FIND_FUNCTION(*avutil, av, av_rescale_q);
  HERALD_FIND_FUNCTION(*avutil, av, av_log_set_callback);
  HERALD_FIND_FUNCTION(*avutil, av, av_frame_alloc);
  HERALD_FIND_FUNCTION(*avutil, av, av_frame_free);
  HERALD_FIND_FUNCTION(*avutil, av, av_frame_unref);
  HERALD_FIND_FUNCTION(*avcodec, av, avcodec_find_decoder_by_name);
  HERALD_FIND_FUNCTION(*avcodec, av, avcodec_alloc_context3);
  HERALD_FIND_FUNCTION(*avcodec, av, avcodec_free_context);
  HERALD_FIND_FUNCTION(*avcodec, av, avcodec_parameters_to_context);
  HERALD_FIND_FUNCTION(*avcodec, av, avcodec_open2);
  HERALD_FIND_FUNCTION(*avcodec, av, avcodec_send_packet);
  HERALD_FIND_FUNCTION(*avcodec, av, avcodec_receive_frame);
  HERALD_FIND_FUNCTION(*avcodec, av, av_packet_alloc);
  HERALD_FIND_FUNCTION(*avcodec, av, av_packet_free);
  HERALD_FIND_FUNCTION(*avcodec, av, av_packet_unref);
  HERALD_FIND_FUNCTION(*avformat, av, avio_alloc_context);
  HERALD_FIND_FUNCTION(*avformat, av, avio_context_free);
  HERALD_FIND_FUNCTION(*avformat, av, avformat_alloc_context);
  HERALD_FIND_FUNCTION(*avformat, av, avformat_free_context);
  HERALD_FIND_FUNCTION(*avformat, av, avformat_open_input);
  HERALD_FIND_FUNCTION(*avformat, av, avformat_close_input);
  HERALD_FIND_FUNCTION(*avformat, av, av_read_frame);
  for (const base::SharedLibrary* library : {&*avutil, &*avcodec, &*avformat}) {
    if (absl::Status found = library->AllFound(); !found.ok()) return Missing(found.message());
  }

  av.av_log_set_callback(&ForwardFfmpegLog);
  return av;
}

}  // namespace

absl::StatusOr<const FfmpegLibrary*> LoadFfmpeg() {
  static const absl::StatusOr<FfmpegLibrary>* const loaded =
      new absl::StatusOr<FfmpegLibrary>(Load());
  if (!loaded->ok()) return loaded->status();
  return &**loaded;
}

}  // namespace herald::media
