#include "component/media/speech_synthesis.h"

#include <espeak-ng/espeak_ng.h>
#include <espeak-ng/speak_lib.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "component/base/absl_string_view.h"
#include "component/base/mutex.h"
#include "component/base/shared_library.h"
#include "component/base/utf8.h"
#include "component/media/ogg_opus_encoding.h"
#include "glog/logging.h"

namespace herald::media {
namespace {

constexpr std::string_view kDataPackage = "espeak-ng-data";
constexpr int kMinWordsPerMinute = 80;
constexpr int kMaxWordsPerMinute = 450;
constexpr size_t kMaxVoiceName = 64;

// espeak-ng's functions, from the library opened by the first synthesis (shared_library.h):
// linked, it and the libraries it brings were 3 MiB of every Herald's resident memory.
constexpr char kEspeakLibrary[] = "libespeak-ng.so.1";
struct EspeakApi {
  decltype(&::espeak_ng_InitializePath) espeak_ng_InitializePath = nullptr;
  decltype(&::espeak_Info) espeak_Info = nullptr;
  decltype(&::espeak_ng_Initialize) espeak_ng_Initialize = nullptr;
  decltype(&::espeak_ng_ClearErrorContext) espeak_ng_ClearErrorContext = nullptr;
  decltype(&::espeak_ng_InitializeOutput) espeak_ng_InitializeOutput = nullptr;
  decltype(&::espeak_SetSynthCallback) espeak_SetSynthCallback = nullptr;
  decltype(&::espeak_ng_GetSampleRate) espeak_ng_GetSampleRate = nullptr;
  decltype(&::espeak_ng_GetStatusCodeMessage) espeak_ng_GetStatusCodeMessage = nullptr;
  decltype(&::espeak_ng_SetVoiceByName) espeak_ng_SetVoiceByName = nullptr;
  decltype(&::espeak_ng_SetParameter) espeak_ng_SetParameter = nullptr;
  decltype(&::espeak_Synth) espeak_Synth = nullptr;
  decltype(&::espeak_ng_Cancel) espeak_ng_Cancel = nullptr;
};

absl::StatusOr<EspeakApi> OpenEspeak() {
  absl::StatusOr<base::SharedLibrary> library = base::SharedLibrary::Open(kEspeakLibrary);
  EspeakApi api;
  if (library.ok()) {
    HERALD_FIND_FUNCTION(*library, api, espeak_ng_InitializePath);
    HERALD_FIND_FUNCTION(*library, api, espeak_Info);
    HERALD_FIND_FUNCTION(*library, api, espeak_ng_Initialize);
    HERALD_FIND_FUNCTION(*library, api, espeak_ng_ClearErrorContext);
    HERALD_FIND_FUNCTION(*library, api, espeak_ng_InitializeOutput);
    HERALD_FIND_FUNCTION(*library, api, espeak_SetSynthCallback);
    HERALD_FIND_FUNCTION(*library, api, espeak_ng_GetSampleRate);
    HERALD_FIND_FUNCTION(*library, api, espeak_ng_GetStatusCodeMessage);
    HERALD_FIND_FUNCTION(*library, api, espeak_ng_SetVoiceByName);
    HERALD_FIND_FUNCTION(*library, api, espeak_ng_SetParameter);
    HERALD_FIND_FUNCTION(*library, api, espeak_Synth);
    HERALD_FIND_FUNCTION(*library, api, espeak_ng_Cancel);
  }
  // The loader's reason (a path of this machine) goes to the log; the status may be shown to
  // the person who asked for a spoken answer.
  absl::Status found = library.ok() ? library->AllFound() : library.status();
  if (!found.ok()) {
    LOG(ERROR) << "speaking needs espeak-ng (install Debian's libespeak-ng1): " << found.message();
    return absl::FailedPreconditionError("espeak-ng is not installed here (libespeak-ng1)");
  }
  return api;
}

// espeak-ng's globals, and what Herald knows of them: one lock for the whole process.
struct Espeak {
  base::Mutex mu;
  std::optional<EspeakApi> api ABSL_GUARDED_BY(mu);  // once the library is open
  bool ready ABSL_GUARDED_BY(mu) = false;
  int rate ABSL_GUARDED_BY(mu) = 0;  // what espeak-ng speaks at (22,050 Hz)
};

Espeak& TheEspeak() {
  static Espeak* const espeak = new Espeak();
  return *espeak;
}

// Where one synthesis puts its samples; espeak-ng hands it back to the callback.
struct Collector {
  std::vector<int16_t> samples;
  size_t max_samples = 0;
  bool too_long = false;
};

// espeak-ng's synth callback (synchronous output: called on the synthesising thread, under the
// lock). Returning 1 stops the synthesis.
int Collect(short* wav, int count, espeak_EVENT* events) {
  if (events == nullptr || events->user_data == nullptr) return 0;
  Collector& collector = *static_cast<Collector*>(events->user_data);
  if (wav == nullptr || count <= 0) return 0;
  if (collector.samples.size() + static_cast<size_t>(count) > collector.max_samples) {
    collector.too_long = true;
    return 1;
  }
  collector.samples.insert(collector.samples.end(), wav, wav + count);
  return 0;
}

std::string EspeakMessage(const EspeakApi& api, espeak_ng_STATUS status) {
  char message[256] = {};
  api.espeak_ng_GetStatusCodeMessage(status, message, sizeof(message));
  return message;
}

// Opens espeak-ng and initialises it on the first call that finds the library and its data, for
// synchronous output to Collect. Until both are there, each call looks again (and says which
// package to install).
absl::Status EnsureEspeak(Espeak& espeak) ABSL_EXCLUSIVE_LOCKS_REQUIRED(espeak.mu) {
  if (espeak.ready) return absl::OkStatus();
  if (!espeak.api.has_value()) {
    absl::StatusOr<EspeakApi> opened = OpenEspeak();
    if (!opened.ok()) return opened.status();
    espeak.api = *opened;
  }
  const EspeakApi& api = *espeak.api;
  api.espeak_ng_InitializePath(nullptr);  // ESPEAK_DATA_PATH, ~/espeak-ng-data, or Debian's
  const char* data = nullptr;
  api.espeak_Info(&data);
  const std::string phontab = absl::StrCat(data == nullptr ? "" : data, "/phontab");
  if (data == nullptr || access(phontab.c_str(), R_OK) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("espeak-ng's data is not installed (no readable ", phontab,
                     "); install Debian's ", AbslView(kDataPackage)));
  }
  espeak_ng_ERROR_CONTEXT context = nullptr;
  espeak_ng_STATUS status = api.espeak_ng_Initialize(&context);
  api.espeak_ng_ClearErrorContext(&context);
  if (status != ENS_OK) {
    return absl::FailedPreconditionError(
        absl::StrCat("espeak-ng could not load its data in ", data, " (",
                     EspeakMessage(api, status), "); reinstall Debian's ", AbslView(kDataPackage)));
  }
  status = api.espeak_ng_InitializeOutput(ENOUTPUT_MODE_SYNCHRONOUS, 0, nullptr);
  if (status != ENS_OK) {
    return absl::InternalError(absl::StrCat("espeak-ng: ", EspeakMessage(api, status)));
  }
  api.espeak_SetSynthCallback(&Collect);
  espeak.rate = api.espeak_ng_GetSampleRate();
  if (espeak.rate < kMinEncodeRate || espeak.rate > kMaxEncodeRate) {
    return absl::InternalError(absl::StrCat("espeak-ng speaks at ", espeak.rate, " Hz"));
  }
  espeak.ready = true;
  return absl::OkStatus();
}

// `text` with what espeak-ng should not see read as spaces: control characters other than tab
// and newline, and bytes that are not UTF-8. Whether anything but spaces is left.
bool CleanText(std::string_view text, std::string* clean) {
  clean->clear();
  clean->reserve(text.size());
  bool speakable = false;
  for (size_t i = 0; i < text.size();) {
    uint32_t code_point = 0;
    const size_t length = base::DecodeUtf8At(text, i, &code_point);
    if (length == 0) {
      clean->push_back(' ');
      ++i;
      continue;
    }
    if (base::IsDroppedControl(code_point)) {
      clean->push_back(' ');
    } else {
      clean->append(text.substr(i, length));
      if (code_point != ' ' && code_point != '\t' && code_point != '\n') speakable = true;
    }
    i += length;
  }
  return speakable;
}

// A voice name as espeak-ng spells them: no path can be made of it.
bool PlausibleVoice(std::string_view voice) {
  if (voice.empty() || voice.size() > kMaxVoiceName) return false;
  for (char c : voice) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '-' || c == '+' || c == '_';
    if (!ok) return false;
  }
  return true;
}

// "5 minutes", "90 seconds", "1 second".
std::string HumanSeconds(double seconds) {
  const double minutes = seconds / 60;
  if (seconds >= 60 && minutes == std::floor(minutes)) {
    return absl::StrCat(minutes, minutes == 1 ? " minute" : " minutes");
  }
  return absl::StrCat(seconds, seconds == 1 ? " second" : " seconds");
}

}  // namespace

absl::StatusOr<SpokenAudio> SynthesizeLocally(std::string_view text,
                                              const SynthesisOptions& options,
                                              const SynthesisLimits& limits) {
  if (text.size() > limits.max_text_bytes) {
    return absl::InvalidArgumentError(absl::StrCat("the answer is too long to speak (", text.size(),
                                                   " bytes; at most ", limits.max_text_bytes, ")"));
  }
  std::string clean;
  if (!CleanText(text, &clean)) return absl::InvalidArgumentError("there is no text to speak");
  if (!PlausibleVoice(options.voice)) {
    return absl::InvalidArgumentError(
        absl::StrCat("espeak-ng has no voice '", options.voice.substr(0, kMaxVoiceName), "'"));
  }
  if (options.words_per_minute < kMinWordsPerMinute ||
      options.words_per_minute > kMaxWordsPerMinute) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot speak at ", options.words_per_minute, " words a minute (80 to 450)"));
  }

  Collector collector;
  int rate = 0;
  {
    Espeak& espeak = TheEspeak();
    base::MutexLock lock(&espeak.mu);
    if (absl::Status ready = EnsureEspeak(espeak); !ready.ok()) return ready;
    rate = espeak.rate;
    const EspeakApi& api = *espeak.api;
    // The voice first: choosing one sets the speed back to the voice's own.
    const espeak_ng_STATUS voice = api.espeak_ng_SetVoiceByName(options.voice.c_str());
    if (voice == ENS_VOICE_NOT_FOUND) {
      return absl::InvalidArgumentError(
          absl::StrCat("espeak-ng has no voice '", options.voice, "'"));
    }
    if (voice != ENS_OK) {
      return absl::InternalError(absl::StrCat("espeak-ng could not load the voice '", options.voice,
                                              "': ", EspeakMessage(api, voice)));
    }
    if (const espeak_ng_STATUS speed =
            api.espeak_ng_SetParameter(espeakRATE, options.words_per_minute, 0);
        speed != ENS_OK) {
      return absl::InternalError(absl::StrCat("espeak-ng: ", EspeakMessage(api, speed)));
    }
    const double max_samples = std::max(0.0, limits.max_seconds) * rate;
    collector.max_samples =
        max_samples >= 1e15 ? size_t{1'000'000'000'000'000} : static_cast<size_t>(max_samples);
    collector.samples.reserve(
        std::min<size_t>(collector.max_samples, static_cast<size_t>(rate) * 10));
    const espeak_ERROR spoken =
        api.espeak_Synth(clean.c_str(), clean.size() + 1, 0, POS_CHARACTER, 0,
                         espeakCHARS_UTF8 | espeakENDPAUSE, nullptr, &collector);
    if (collector.too_long) {
      api.espeak_ng_Cancel();
    } else if (spoken != EE_OK) {
      return absl::InternalError(absl::StrCat("espeak-ng could not speak the text (error ",
                                              static_cast<int>(spoken), ")"));
    }
  }
  if (collector.too_long) {
    return absl::InvalidArgumentError(absl::StrCat("the answer is too long to speak (over ",
                                                   HumanSeconds(limits.max_seconds), ")"));
  }
  if (collector.samples.empty()) return absl::InvalidArgumentError("there is no text to speak");

  absl::StatusOr<std::string> ogg = EncodeOggOpus(collector.samples, rate, 1);
  if (!ogg.ok()) return ogg.status();
  SpokenAudio audio;
  audio.ogg_opus = *std::move(ogg);
  audio.seconds = static_cast<double>(collector.samples.size()) / rate;
  return audio;
}

}  // namespace herald::media
