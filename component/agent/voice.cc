// component/agent/voice.cc
#include "component/agent/voice.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "component/base/absl_string_view.h"
#include "component/base/utf8.h"
#include "component/media/speech.h"
#include "component/media/speech_synthesis.h"

namespace herald::agent {
namespace {

// "openai:<model>" → "<model>"; nullopt for anything else.
std::optional<std::string> OpenAiModel(std::string_view choice) {
  constexpr std::string_view kPrefix = "openai:";
  if (!choice.starts_with(kPrefix) || choice.size() == kPrefix.size()) return std::nullopt;
  return std::string(choice.substr(kPrefix.size()));
}

absl::Status CheckChoice(std::string_view key, std::string_view choice,
                         providers::OpenAiMediaApi* api) {
  if (choice == "local" || choice == "off") return absl::OkStatus();
  if (!OpenAiModel(choice).has_value()) {
    return absl::InvalidArgumentError(
        absl::StrCat("[voice] ", AbslView(key), " is \"", AbslView(choice),
                     "\"; it must be \"local\", \"off\" or \"openai:<model>\""));
  }
  if (api == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("[voice] ", AbslView(key), " names openai, but [llm.openai] is not usable"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<Voice>> Voice::Create(asio::io_context& io, VoiceOptions options,
                                                     providers::OpenAiMediaApi* api) {
  if (absl::Status ok = CheckChoice("transcription", options.transcription, api); !ok.ok()) {
    return ok;
  }
  if (absl::Status ok = CheckChoice("speech", options.speech, api); !ok.ok()) return ok;
  return std::unique_ptr<Voice>(new Voice(io, std::move(options), api));
}

Voice::Voice(asio::io_context& io, VoiceOptions options, providers::OpenAiMediaApi* api)
    : io_(io), options_(std::move(options)), api_(api) {
  if (OpenAiModel(options_.transcription).has_value()) {
    transcription_model_ = options_.transcription;
  }
  if (OpenAiModel(options_.speech).has_value()) speech_model_ = options_.speech;
}

asio::thread_pool& Voice::Local() {
  if (local_ == nullptr) local_ = std::make_unique<asio::thread_pool>(1);
  return *local_;
}

void Voice::Transcribe(std::shared_ptr<const std::string> audio, std::string media_type,
                       Done done) {
  if (std::optional<std::string> model = OpenAiModel(options_.transcription);
      model.has_value() && api_ != nullptr) {
    api_->Transcribe(*std::move(model), std::move(audio), std::move(media_type), std::move(done));
    return;
  }
  if (!transcribes_locally()) {
    asio::post(io_, [done = std::move(done)] {
      done(absl::FailedPreconditionError("voice messages are not transcribed here"));
    });
    return;
  }
  const media::SpeechLimits limits{.max_seconds = static_cast<double>(options_.max_seconds)};
  // The thread holds only the loop (which outlives its work), not the Voice.
  asio::post(Local(), [io = &io_, audio = std::move(audio), media_type = std::move(media_type),
                       limits, done = std::move(done)]() mutable {
    absl::StatusOr<media::Transcript> heard = media::TranscribeLocally(*audio, media_type, limits);
    absl::StatusOr<std::string> text =
        heard.ok() ? absl::StatusOr<std::string>(std::move(heard->text)) : heard.status();
    asio::post(
        *io, [done = std::move(done), text = std::move(text)]() mutable { done(std::move(text)); });
  });
}

void Voice::Speak(std::string_view text, Done done) {
  // What espeak-ng reads in the longest answer spoken, at its 165 words a minute.
  const size_t max_bytes = std::min<size_t>(4000, static_cast<size_t>(options_.max_seconds) * 15);
  std::string speakable = SpeakableText(text, max_bytes);
  if (speakable.empty()) {
    asio::post(io_, [done = std::move(done)] {
      done(absl::InvalidArgumentError("the answer has nothing to say aloud"));
    });
    return;
  }
  if (std::optional<std::string> model = OpenAiModel(options_.speech); model.has_value()) {
    api_->Speak(*std::move(model), options_.voice.empty() ? "alloy" : options_.voice,
                std::move(speakable), std::move(done));
    return;
  }
  media::SynthesisOptions synthesis;
  if (!options_.voice.empty()) synthesis.voice = options_.voice;
  const media::SynthesisLimits limits{.max_text_bytes = max_bytes + 200,
                                      .max_seconds = static_cast<double>(options_.max_seconds)};
  // The thread holds only the loop (which outlives its work), not the Voice.
  asio::post(Local(), [io = &io_, speakable = std::move(speakable), synthesis, limits,
                       done = std::move(done)]() mutable {
    absl::StatusOr<media::SpokenAudio> spoken =
        media::SynthesizeLocally(speakable, synthesis, limits);
    absl::StatusOr<std::string> ogg =
        spoken.ok() ? absl::StatusOr<std::string>(std::move(spoken->ogg_opus)) : spoken.status();
    asio::post(*io,
               [done = std::move(done), ogg = std::move(ogg)]() mutable { done(std::move(ogg)); });
  });
}

std::string SpeakableText(std::string_view text, size_t max_bytes) {
  std::string out;
  out.reserve(std::min(text.size(), max_bytes));
  bool in_code = false;
  size_t i = 0;
  while (i < text.size()) {
    if (text.substr(i).starts_with("```")) {
      in_code = !in_code;
      i += 3;
      if (in_code) out.append(" (some code, left out) ");
      continue;
    }
    if (in_code) {
      ++i;
      continue;
    }
    if (text.substr(i).starts_with("http://") || text.substr(i).starts_with("https://")) {
      while (i < text.size() && text[i] != ' ' && text[i] != '\n' && text[i] != ')') ++i;
      out.append("a link");
      continue;
    }
    const char c = text[i++];
    if (c == '*' || c == '_' || c == '#' || c == '`' || c == '>' || c == '|' || c == '[' ||
        c == ']') {
      continue;
    }
    out.push_back(c == '\n' || c == '\t' ? ' ' : c);
  }
  // Spaces collapsed, then cut after the last sentence that fits.
  std::string collapsed;
  for (char c : out) {
    if (c == ' ' && (collapsed.empty() || collapsed.back() == ' ')) continue;
    collapsed.push_back(c);
  }
  while (!collapsed.empty() && collapsed.back() == ' ') collapsed.pop_back();
  if (collapsed.size() <= max_bytes) return collapsed;
  constexpr std::string_view kRest = " The rest is in the text.";
  const size_t room = max_bytes > kRest.size() ? max_bytes - kRest.size() : 0;
  std::string cut = collapsed.substr(0, room);
  base::TruncateUtf8(cut, room);
  const size_t sentence = cut.find_last_of(".!?");
  if (sentence != std::string::npos && sentence > room / 2) cut.resize(sentence + 1);
  absl::StrAppend(&cut, AbslView(kRest));
  return cut;
}

}  // namespace herald::agent
