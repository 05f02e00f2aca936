// tools/bench/speech_roundtrip/speech_roundtrip.cc
//
// Herald's side of the speech round trip (run, beside this file, drives it): transcribes each
// voice message named on the command line with TranscribeLocally, one after another on one
// thread, and prints one JSON object a line: the file, its length, the CPU seconds the
// transcription took (decoding, resampling and PocketSphinx) and what was heard. The first
// line is the decoder's load: a first, uncounted transcription of the first file.
//
// With --speak it is Herald's voice instead (SynthesizeLocally, speech_synthesis.h): each TEXT
// is spoken in VOICE at SPEED words a minute and written to OUT as Ogg Opus, one JSON object a
// line: the file, the length of the speech and the CPU seconds it took (espeak-ng and the Opus
// encoder). The first line is espeak-ng's load: a first, uncounted synthesis of the first text.
//
//   bazel run -c opt //tools/bench/speech_roundtrip -- audio/wav a.wav audio/ogg a.ogg
//   bazel run -c opt //tools/bench/speech_roundtrip -- --speak en-us 165 a.ogg "hello there"
#include <time.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "absl/status/statusor.h"
#include "component/media/speech.h"
#include "component/media/speech_synthesis.h"
#include "nlohmann/json.hpp"

namespace {

double ThreadCpuSeconds() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) / 1e9;
}

bool Read(const std::string& path, std::string* bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream out;
  out << in.rdbuf();
  *bytes = out.str();
  return true;
}

int Speak(int argc, char** argv) {
  if (argc < 6 || argc % 2 != 0) {
    std::cerr << "usage: speech_roundtrip --speak VOICE SPEED OUT TEXT [OUT TEXT ...]\n";
    return 2;
  }
  herald::media::SynthesisOptions options;
  options.voice = argv[2];
  options.words_per_minute = std::atoi(argv[3]);
  for (int i = 4; i < argc; i += 2) {
    const std::string path = argv[i];
    const std::string text = argv[i + 1];
    if (i == 4) {
      const double start = ThreadCpuSeconds();
      absl::StatusOr<herald::media::SpokenAudio> first =
          herald::media::SynthesizeLocally(text, options, {});
      if (!first.ok()) {
        std::cerr << "speech_roundtrip: " << text << ": " << first.status() << "\n";
        return 1;
      }
      std::cout << nlohmann::json{{"load_cpu_seconds", ThreadCpuSeconds() - start}}.dump() << "\n";
    }
    const double start = ThreadCpuSeconds();
    absl::StatusOr<herald::media::SpokenAudio> spoken =
        herald::media::SynthesizeLocally(text, options, {});
    const double cpu = ThreadCpuSeconds() - start;
    if (!spoken.ok()) {
      std::cerr << "speech_roundtrip: " << text << ": " << spoken.status() << "\n";
      return 1;
    }
    std::ofstream out(path, std::ios::binary);
    out << spoken->ogg_opus;
    if (!out) {
      std::cerr << "speech_roundtrip: cannot write " << path << "\n";
      return 1;
    }
    std::cout
        << nlohmann::json{{"file", path}, {"seconds", spoken->seconds}, {"cpu_seconds", cpu}}.dump()
        << std::endl;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "--speak") return Speak(argc, argv);
  if (argc < 3 || argc % 2 == 0) {
    std::cerr << "usage: speech_roundtrip TYPE FILE [TYPE FILE ...]\n";
    return 2;
  }
  for (int i = 1; i < argc; i += 2) {
    const std::string type = argv[i];
    const std::string path = argv[i + 1];
    std::string bytes;
    if (!Read(path, &bytes)) {
      std::cerr << "speech_roundtrip: cannot read " << path << "\n";
      return 1;
    }
    if (i == 1) {
      const double start = ThreadCpuSeconds();
      absl::StatusOr<herald::media::Transcript> first =
          herald::media::TranscribeLocally(bytes, type, {});
      if (!first.ok()) {
        std::cerr << "speech_roundtrip: " << path << ": " << first.status() << "\n";
        return 1;
      }
      std::cout << nlohmann::json{{"load_cpu_seconds", ThreadCpuSeconds() - start}}.dump() << "\n";
    }
    const double start = ThreadCpuSeconds();
    absl::StatusOr<herald::media::Transcript> heard =
        herald::media::TranscribeLocally(bytes, type, {});
    const double cpu = ThreadCpuSeconds() - start;
    nlohmann::json line = {{"file", path}, {"type", type}, {"cpu_seconds", cpu}};
    if (heard.ok()) {
      line["seconds"] = heard->seconds;
      line["text"] = heard->text;
    } else {
      line["error"] = std::string(heard.status().message());
    }
    std::cout << line.dump() << std::endl;
  }
  return 0;
}
