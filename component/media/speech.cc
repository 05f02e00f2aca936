#include "component/media/speech.h"

#include <pocketsphinx/pocketsphinx.h>
#include <sphinxbase/err.h>
#include <unistd.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "component/base/absl_string_view.h"
#include "component/base/mutex.h"
#include "component/base/shared_library.h"
#include "glog/logging.h"

namespace herald::media {
namespace {

constexpr std::string_view kModelPackage = "pocketsphinx-en-us";

// The files PocketSphinx reads from a model folder. Some of its loaders end the process
// (E_FATAL) rather than fail on a missing file, so each is looked for first.
constexpr std::string_view kAcousticModel = "en-us";
constexpr std::string_view kLanguageModel = "en-us.lm.bin";
constexpr std::string_view kDictionary = "cmudict-en-us.dict";
constexpr std::string_view kModelFiles[] = {
    "en-us/mdef",    "en-us/means",       "en-us/variances", "en-us/transition_matrices",
    "en-us/sendump", "en-us/feat.params", "en-us/noisedict", kLanguageModel,
    kDictionary,
};

// `sample` plus a little noise, uniform in [-kDitherLsb, kDitherLsb] (about -76 dBFS), from a
// generator seeded per message so that the same audio always reads the same. Digital silence
// (synthetic speech, a recorder's noise gate) would otherwise drive PocketSphinx's log spectrum
// to its floor and skew its normalisation (of espeak-ng's speech in WAV files, 73% of words
// wrong without it, 51% with it). Any microphone's own noise is louder than this, so real
// recordings are not changed.
constexpr int kDitherLsb = 8;

int16_t Dithered(int16_t sample, uint32_t& state) {
  state = state * 1'664'525u + 1'013'904'223u;  // Numerical Recipes' LCG
  const int noise = static_cast<int>((state >> 16) % (2 * kDitherLsb + 1)) - kDitherLsb;
  return static_cast<int16_t>(std::clamp(sample + noise, -32768, 32767));
}

// PocketSphinx's messages, one line each, for whoever runs with --v=2.
void ForwardToVlog(void* /*user_data*/, err_lvl_t /*level*/, const char* format, ...) {
  if (!VLOG_IS_ON(2)) return;
  char line[512];
  va_list arguments;
  va_start(arguments, format);
  std::vsnprintf(line, sizeof(line), format, arguments);
  va_end(arguments);
  std::string_view text(line);
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  if (!text.empty()) VLOG(2) << "pocketsphinx: " << text;
}

// PocketSphinx's and sphinxbase's functions, from the libraries opened when the first decoder is
// made (shared_library.h): linked, they and the BLAS, LAPACK and Fortran runtime they bring were
// 1 MiB of every Herald's resident memory. Debian 12's libpocketsphinx3 and libsphinxbase3.
constexpr char kSphinxbaseLibrary[] = "libsphinxbase.so.3";
constexpr char kPocketSphinxLibrary[] = "libpocketsphinx.so.3";
struct SphinxApi {
  decltype(&::err_set_logfp) err_set_logfp = nullptr;
  decltype(&::err_set_callback) err_set_callback = nullptr;
  decltype(&::cmd_ln_init) cmd_ln_init = nullptr;
  decltype(&::cmd_ln_free_r) cmd_ln_free_r = nullptr;
  decltype(&::ps_args) ps_args = nullptr;
  decltype(&::ps_init) ps_init = nullptr;
  decltype(&::ps_free) ps_free = nullptr;
  decltype(&::ps_start_utt) ps_start_utt = nullptr;
  decltype(&::ps_process_raw) ps_process_raw = nullptr;
  decltype(&::ps_end_utt) ps_end_utt = nullptr;
  decltype(&::ps_get_hyp) ps_get_hyp = nullptr;
};

absl::StatusOr<SphinxApi> OpenSphinxLibraries() {
  absl::StatusOr<base::SharedLibrary> sphinxbase = base::SharedLibrary::Open(kSphinxbaseLibrary);
  absl::StatusOr<base::SharedLibrary> pocketsphinx =
      sphinxbase.ok() ? base::SharedLibrary::Open(kPocketSphinxLibrary) : sphinxbase.status();
  SphinxApi api;
  if (pocketsphinx.ok()) {
    HERALD_FIND_FUNCTION(*sphinxbase, api, err_set_logfp);
    HERALD_FIND_FUNCTION(*sphinxbase, api, err_set_callback);
    HERALD_FIND_FUNCTION(*sphinxbase, api, cmd_ln_init);
    HERALD_FIND_FUNCTION(*sphinxbase, api, cmd_ln_free_r);
    HERALD_FIND_FUNCTION(*pocketsphinx, api, ps_args);
    HERALD_FIND_FUNCTION(*pocketsphinx, api, ps_init);
    HERALD_FIND_FUNCTION(*pocketsphinx, api, ps_free);
    HERALD_FIND_FUNCTION(*pocketsphinx, api, ps_start_utt);
    HERALD_FIND_FUNCTION(*pocketsphinx, api, ps_process_raw);
    HERALD_FIND_FUNCTION(*pocketsphinx, api, ps_end_utt);
    HERALD_FIND_FUNCTION(*pocketsphinx, api, ps_get_hyp);
  }
  absl::Status found = pocketsphinx.status();
  if (found.ok()) found = sphinxbase->AllFound();
  if (found.ok()) found = pocketsphinx->AllFound();
  if (!found.ok()) {
    // The loader's reason (a path of this machine) is the operator's; the sender may be told
    // the status.
    LOG(ERROR) << "local transcription needs PocketSphinx (install Debian's libpocketsphinx3): "
               << found.message();
    return absl::FailedPreconditionError(
        "voice messages cannot be read here (PocketSphinx is not installed)");
  }
  // Before the first decoder: sphinxbase's log goes through ForwardToVlog, and its log file is
  // off (PocketSphinx prints its whole configuration to that file, when it has one, bypassing
  // the callback). -logfn is not used: each decoder made with it would reopen the file and
  // close the one the others are writing to.
  api.err_set_logfp(nullptr);
  api.err_set_callback(&ForwardToVlog, nullptr);
  return api;
}

// The libraries, opened on the first call (and not tried again when they could not be).
absl::StatusOr<const SphinxApi*> Sphinx() {
  static const absl::StatusOr<SphinxApi>* const opened =
      new absl::StatusOr<SphinxApi>(OpenSphinxLibraries());
  if (!opened->ok()) return opened->status();
  return &**opened;
}

absl::Status CheckModel(const std::string& dir) {
  for (std::string_view file : kModelFiles) {
    const std::string path = absl::StrCat(dir, "/", AbslView(file));
    if (access(path.c_str(), R_OK) != 0) {
      return absl::FailedPreconditionError(
          absl::StrCat("the speech model is not installed (no readable ", path,
                       "); install Debian's ", AbslView(kModelPackage)));
    }
  }
  return absl::OkStatus();
}

struct DecoderFree {
  const SphinxApi* api;
  void operator()(ps_decoder_t* decoder) const { api->ps_free(decoder); }
};
using Decoder = std::unique_ptr<ps_decoder_t, DecoderFree>;

// Makes one decoder at a time: a decoder takes a second to make, and sphinxbase's loaders
// were never meant to run side by side.
absl::StatusOr<Decoder> MakeDecoder(const std::string& dir) {
  static base::Mutex* const make_mu = new base::Mutex();
  base::MutexLock lock(make_mu);
  absl::StatusOr<const SphinxApi*> sphinx = Sphinx();
  if (!sphinx.ok()) return sphinx.status();
  const SphinxApi& api = **sphinx;
  if (absl::Status model = CheckModel(dir); !model.ok()) return model;
  const std::string hmm = absl::StrCat(dir, "/", AbslView(kAcousticModel));
  const std::string lm = absl::StrCat(dir, "/", AbslView(kLanguageModel));
  const std::string dict = absl::StrCat(dir, "/", AbslView(kDictionary));
  cmd_ln_t* config = api.cmd_ln_init(nullptr, api.ps_args(), TRUE, "-hmm", hmm.c_str(), "-lm",
                                     lm.c_str(), "-dict", dict.c_str(), nullptr);
  if (config == nullptr) return absl::InternalError("PocketSphinx refused its configuration");
  Decoder decoder(api.ps_init(config), DecoderFree{&api});
  api.cmd_ln_free_r(config);  // the decoder holds its own reference
  if (decoder == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("PocketSphinx could not load the speech model in ", dir,
                     "; reinstall Debian's ", AbslView(kModelPackage)));
  }
  return decoder;
}

// The decoders of one model folder: at most `capacity`, made when a call finds none idle.
class DecoderPool {
 public:
  DecoderPool(std::string dir, int capacity) : dir_(std::move(dir)), capacity_(capacity) {}

  // An idle decoder, or a new one while fewer than `capacity` exist; otherwise waits.
  absl::StatusOr<Decoder> Take() ABSL_LOCKS_EXCLUDED(mu_) {
    {
      base::MutexLock lock(&mu_);
      mu_.Await(
          [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return !idle_.empty() || made_ < capacity_; });
      if (!idle_.empty()) {
        Decoder decoder = std::move(idle_.back());
        idle_.pop_back();
        return decoder;
      }
      ++made_;
    }
    absl::StatusOr<Decoder> decoder = MakeDecoder(dir_);
    if (!decoder.ok()) Drop();
    return decoder;
  }

  void Give(Decoder decoder) ABSL_LOCKS_EXCLUDED(mu_) {
    base::MutexLock lock(&mu_);
    idle_.push_back(std::move(decoder));
  }

  // A decoder taken and not given back (it failed), so that another may be made in its place.
  void Drop() ABSL_LOCKS_EXCLUDED(mu_) {
    base::MutexLock lock(&mu_);
    --made_;
  }

 private:
  const std::string dir_;
  const int capacity_;
  base::Mutex mu_;
  std::vector<Decoder> idle_ ABSL_GUARDED_BY(mu_);
  int made_ ABSL_GUARDED_BY(mu_) = 0;  // idle and taken
};

// The pool for options.model_dir, made on first use and kept for the life of the process.
DecoderPool& PoolFor(const SpeechOptions& options) {
  static base::Mutex* const mu = new base::Mutex();
  static auto* const pools = new std::map<std::string, std::unique_ptr<DecoderPool>>();
  base::MutexLock lock(mu);
  std::unique_ptr<DecoderPool>& pool = (*pools)[options.model_dir];
  if (pool == nullptr) {
    pool = std::make_unique<DecoderPool>(options.model_dir, std::max(options.max_decoders, 1));
  }
  return *pool;
}

}  // namespace

absl::StatusOr<std::string> RecognizeSpeech(std::span<const int16_t> samples,
                                            const SpeechOptions& options) {
  DecoderPool& pool = PoolFor(options);
  absl::StatusOr<Decoder> decoder = pool.Take();
  if (!decoder.ok()) return decoder.status();
  std::vector<int16_t> dithered;
  dithered.reserve(samples.size());
  uint32_t noise = 1;
  for (int16_t sample : samples) dithered.push_back(Dithered(sample, noise));
  // The whole message as one utterance (full_utt): PocketSphinx then normalises its features
  // by this message's own cepstral mean (batch CMN), so that what it hears depends on this
  // message alone. Fed as a live stream instead, it would start from the mean of the messages
  // the same decoder read before (another sender's voice, another result for the same audio);
  // reset to the model's initial mean, live reading got 70% of words wrong against batch's 46%.
  ps_decoder_t* ps = decoder->get();
  const SphinxApi& api = *decoder->get_deleter().api;  // opened: there is a decoder
  if (api.ps_start_utt(ps) < 0 ||
      (!dithered.empty() &&
       api.ps_process_raw(ps, dithered.data(), dithered.size(), FALSE, TRUE) < 0) ||
      api.ps_end_utt(ps) < 0) {
    pool.Drop();  // a decoder in an unknown state is not reused; `decoder` frees it
    return absl::InternalError("PocketSphinx failed to read the voice message");
  }
  int32 score = 0;
  const char* hypothesis = api.ps_get_hyp(ps, &score);
  std::string text = hypothesis != nullptr ? hypothesis : "";
  pool.Give(*std::move(decoder));
  return text;
}

absl::StatusOr<Transcript> TranscribeLocally(std::string_view bytes, std::string_view media_type,
                                             const SpeechLimits& limits,
                                             const SpeechOptions& options) {
  absl::StatusOr<SpeechAudio> audio = DecodeSpeechAudio(bytes, media_type, limits);
  if (!audio.ok()) return audio.status();
  Transcript transcript;
  transcript.seconds = audio->seconds;
  if (audio->samples.empty()) return transcript;
  absl::StatusOr<std::string> text = RecognizeSpeech(audio->samples, options);
  if (!text.ok()) return text.status();
  transcript.text = *std::move(text);
  return transcript;
}

absl::StatusOr<Transcript> TranscribeLocally(std::string_view bytes, std::string_view media_type,
                                             const SpeechLimits& limits) {
  return TranscribeLocally(bytes, media_type, limits, SpeechOptions());
}

}  // namespace herald::media
