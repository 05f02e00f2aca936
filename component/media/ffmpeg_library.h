// component/media/ffmpeg_library.h
//
// FFmpeg's libavformat, libavcodec and libavutil, loaded the first time an AAC voice message is
// decoded instead of when Herald starts. Debian's libavcodec brings a hundred more libraries
// with it (video encoders, subtitle renderers, network protocols): linked into the binary, their
// pages were 16 MiB of every Herald's resident memory, whether or not it ever saw a voice message
// (docs/BENCHMARKS.md). Only the functions audio_decoding.cc calls are looked up.
//
// The libraries are the ones the headers were built against (libavformat.so.59 and its siblings
// on Debian 12, packages libavformat59 and libavcodec59, installed by tools/setup). They are
// opened once per process and stay open. FFmpeg's own log messages go to VLOG(2) from then on.
//
//   absl::StatusOr<const FfmpegLibrary*> av = LoadFfmpeg();
//   if (!av.ok()) return av.status();  // "AAC voice messages cannot be read here (...)"
//   AVPacket* packet = (*av)->av_packet_alloc();
#pragma once

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/log.h>
#include <libavutil/mathematics.h>
}

#include "absl/status/statusor.h"

namespace herald::media {

// FFmpeg's functions, named as FFmpeg names them. Every member is set once loaded.
struct FfmpegLibrary {
  // libavutil
  decltype(&::av_malloc) av_malloc = nullptr;
  decltype(&::av_free) av_free = nullptr;
  decltype(&::av_freep) av_freep = nullptr;
  decltype(&::av_strdup) av_strdup = nullptr;
  decltype(&::av_rescale_q) av_rescale_q = nullptr;
  decltype(&::av_log_set_callback) av_log_set_callback = nullptr;
  decltype(&::av_frame_alloc) av_frame_alloc = nullptr;
  decltype(&::av_frame_free) av_frame_free = nullptr;
  decltype(&::av_frame_unref) av_frame_unref = nullptr;
  // libavcodec
  decltype(&::avcodec_find_decoder_by_name) avcodec_find_decoder_by_name = nullptr;
  decltype(&::avcodec_alloc_context3) avcodec_alloc_context3 = nullptr;
  decltype(&::avcodec_free_context) avcodec_free_context = nullptr;
  decltype(&::avcodec_parameters_to_context) avcodec_parameters_to_context = nullptr;
  decltype(&::avcodec_open2) avcodec_open2 = nullptr;
  decltype(&::avcodec_send_packet) avcodec_send_packet = nullptr;
  decltype(&::avcodec_receive_frame) avcodec_receive_frame = nullptr;
  decltype(&::av_packet_alloc) av_packet_alloc = nullptr;
  decltype(&::av_packet_free) av_packet_free = nullptr;
  decltype(&::av_packet_unref) av_packet_unref = nullptr;
  // libavformat
  decltype(&::avio_alloc_context) avio_alloc_context = nullptr;
  decltype(&::avio_context_free) avio_context_free = nullptr;
  decltype(&::avformat_alloc_context) avformat_alloc_context = nullptr;
  decltype(&::avformat_free_context) avformat_free_context = nullptr;
  decltype(&::avformat_open_input) avformat_open_input = nullptr;
  decltype(&::avformat_close_input) avformat_close_input = nullptr;
  decltype(&::av_read_frame) av_read_frame = nullptr;
};

// The library, loaded on the first call; safe to call from several threads at once. When it
// cannot be loaded, the reason (the file, Debian's package) is logged as an error once, and every
// call returns FailedPrecondition "AAC voice messages cannot be read here (FFmpeg is not
// installed)", fit to show the sender; it is not tried again.
absl::StatusOr<const FfmpegLibrary*> LoadFfmpeg();

}  // namespace herald::media
