// component/media/audio_decoding.h
//
// A voice message's bytes turned into what speech recognition reads: 16 kHz mono 16-bit PCM
// (resampler.h). Ogg Opus, what Conversations and most XMPP clients record, is decoded with
// libopusfile (any channel count, mixed down to mono). AAC, what iPhones and Monal send, in an
// MP4/M4A file (audio/mp4) or as raw ADTS frames (audio/aac), is decoded with FFmpeg
// (libavformat and libavcodec, read from memory: only the MP4 and ADTS demuxers and the AAC
// decoder are allowed, and no protocol, so a file can name no other file; AAC at 8 to 48 kHz,
// any channel count, mixed down to mono; FFmpeg's messages go to VLOG(2)). WAV is read here,
// strictly: RIFF with a "fmt " chunk of 16-bit integer PCM, mono or stereo, at 8 to 48 kHz, and
// a "data" chunk the file really holds. Ogg Vorbis and Speex are refused as not done yet.
//
// What a stranger's file may cost is bounded before it is decoded: its size, and the length it
// claims (a WAV's data size; an Ogg stream's last granule position, op_pcm_total; an MP4's movie
// and track durations and its sample count). A file that claims less than it holds is cut off
// while it is decoded, at the same limit, so neither a lying header nor a long run of tiny
// packets decodes more than max_seconds of audio.
//
// Decoding blocks on the CPU (some 13 ms a second of Opus, 10 ms of AAC, 4 ms of WAV): call it
// on the worker pool, never on the I/O loop. It is safe to call from several threads at once.
// Its memory is bounded by max_seconds: some 30 MB for two minutes of 48 kHz audio on its way
// to 16 kHz.
//
//   absl::StatusOr<SpeechAudio> audio = DecodeSpeechAudio(bytes, "audio/ogg", {});
//   if (!audio.ok()) return Reply(audio.status().message());  // "the voice message is longer
//                                                              //  than 2 minutes"
//   RecognizeSpeech(audio->samples, {});                       // 16 kHz mono (speech.h)
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace herald::media {

struct SpeechLimits {
  // Audio longer than this is refused, by what the file claims before it is decoded and by
  // what it holds while it is.
  double max_seconds = 120;
  // The file itself; a larger one is refused before it is parsed.
  size_t max_input_bytes = 16 * 1024 * 1024;
};

struct SpeechAudio {
  std::vector<int16_t> samples;  // mono, at kSpeechRate (16 kHz)
  double seconds = 0;            // the length of the audio, as decoded
};

// The audio of `bytes`, a voice message of `media_type` as SniffMediaType spells it
// ("audio/ogg", "audio/wav", "audio/mp4", "audio/aac"; case, parameters and libmagic's own
// spellings such as "audio/x-wav" and "audio/x-m4a" are understood too), as 16 kHz mono
// samples. An MP4 and an ADTS stream are told apart by their bytes, whichever AAC type is given.
//   - InvalidArgument, with a message fit to show the sender, when the type is not audio, the
//     file is over max_input_bytes or longer than max_seconds ("the voice message is longer
//     than 2 minutes"), or the bytes are not a file of that type Herald reads ("the voice
//     message is damaged or not Ogg Opus", "... not AAC audio", "... not a 16-bit PCM WAV
//     file"; an MP4 cut off after its index is damaged too).
//   - Unimplemented for Ogg Vorbis or Speex ("Ogg Vorbis voice messages are not transcribed
//     here yet").
//   - FailedPrecondition for AAC when FFmpeg is not installed ("AAC voice messages cannot be
//     read here (FFmpeg is not installed)"; ffmpeg_library.h logs which file is missing);
//   - ResourceExhausted when FFmpeg cannot allocate.
absl::StatusOr<SpeechAudio> DecodeSpeechAudio(std::string_view bytes, std::string_view media_type,
                                              const SpeechLimits& limits);

}  // namespace herald::media
