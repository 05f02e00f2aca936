#include "providers/openai/media_api.h"

#include <algorithm>
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/random/random.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "component/base/absl_string_view.h"
#include "component/base/hex.h"
#include "component/base/utf8.h"
#include "nlohmann/json.hpp"
#include "providers/openai/wire_format.h"
#include "providers/wire/wire.h"

namespace herald::providers {
namespace {

using nlohmann::json;

constexpr std::string_view kProvider = "openai";
constexpr std::string_view kTranscriptionsPath = "/audio/transcriptions";
constexpr std::string_view kSpeechPath = "/audio/speech";
constexpr std::string_view kImagesPath = "/images/generations";

absl::Status Unreadable(std::string_view what, std::string_view problem) {
  return absl::InternalError(absl::StrCat(AbslView(what), ": ", AbslView(problem)));
}

std::string MiB(size_t bytes) { return absl::StrCat(bytes >> 20, " MiB"); }

// "audio/ogg" of "Audio/OGG; codecs=opus".
std::string BaseMediaType(std::string_view media_type) {
  const absl::string_view type =
      AbslView(media_type.substr(0, std::min(media_type.find(';'), media_type.size())));
  return absl::AsciiStrToLower(absl::StripAsciiWhitespace(type));
}

// The extension OpenAI reads the audio format from (it goes by the file name), for the
// media types a voice message comes in (`type` as BaseMediaType spells it); "bin" for what is
// not audio/<letters and digits>.
std::string AudioExtension(const std::string& type) {
  struct Row {
    std::string_view type;
    std::string_view extension;
  };
  static constexpr Row kExtensions[] = {
      {"audio/ogg", "ogg"},     {"audio/opus", "ogg"},     {"application/ogg", "ogg"},
      {"audio/mp4", "m4a"},     {"audio/m4a", "m4a"},      {"audio/x-m4a", "m4a"},
      {"audio/aac", "aac"},     {"audio/wav", "wav"},      {"audio/x-wav", "wav"},
      {"audio/wave", "wav"},    {"audio/vnd.wave", "wav"}, {"audio/mpeg", "mp3"},
      {"audio/mp3", "mp3"},     {"audio/webm", "webm"},    {"audio/flac", "flac"},
      {"audio/x-flac", "flac"},
  };
  for (const Row& row : kExtensions) {
    if (type == row.type) return std::string(row.extension);
  }
  if (absl::StartsWith(type, "audio/") && type.size() > 6 && type.size() <= 16) {
    const std::string subtype = type.substr(6);
    bool plain = true;
    for (char c : subtype) plain = plain && absl::ascii_isalnum(static_cast<unsigned char>(c));
    if (plain) return subtype;
  }
  return "bin";
}

// `media_type` when it is a plain type/subtype fit for a part header, else a neutral one.
std::string PartContentType(std::string_view media_type) {
  const bool plain = !media_type.empty() && media_type.size() <= 100 &&
                     media_type.find('/') != std::string_view::npos &&
                     std::all_of(media_type.begin(), media_type.end(), [](char c) {
                       return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '/' ||
                              c == '-' || c == '.' || c == '+' || c == '_';
                     });
  return plain ? std::string(media_type) : "application/octet-stream";
}

// A boundary that occurs in none of `contents`: 128 random bits, drawn again on the
// (astronomically unlikely) collision.
std::string Boundary(const std::vector<std::string_view>& contents) {
  absl::BitGen random;
  while (true) {
    std::string bits(16, '\0');
    for (char& c : bits) c = static_cast<char>(absl::Uniform<uint8_t>(random));
    std::string boundary = absl::StrCat("herald-", base::HexEncode(bits));
    const bool clashes = std::any_of(contents.begin(), contents.end(), [&](std::string_view c) {
      return c.find(boundary) != std::string_view::npos;
    });
    if (!clashes) return boundary;
  }
}

struct FormPart {
  std::string_view name;
  std::string_view value;
  std::string_view filename;      // a file part when not empty
  std::string_view content_type;  // of a file part
};

std::string Multipart(const std::vector<FormPart>& parts, std::string_view boundary) {
  size_t size = 0;
  for (const FormPart& part : parts) size += part.value.size() + 200;
  std::string body;
  body.reserve(size);
  for (const FormPart& part : parts) {
    absl::StrAppend(&body, "--", AbslView(boundary), "\r\n",
                    "Content-Disposition: form-data; name=\"", AbslView(part.name), "\"");
    if (!part.filename.empty()) {
      absl::StrAppend(&body, "; filename=\"", AbslView(part.filename),
                      "\"\r\nContent-Type: ", AbslView(part.content_type));
    }
    absl::StrAppend(&body, "\r\n\r\n", AbslView(part.value), "\r\n");
  }
  absl::StrAppend(&body, "--", AbslView(boundary), "--\r\n");
  return body;
}

absl::StatusOr<json> ParseObject(std::string_view body, std::string_view what) {
  absl::StatusOr<json> parsed = ParseJson(body, what);
  if (!parsed.ok()) return absl::InternalError(parsed.status().message());
  if (!parsed->is_object()) return Unreadable(what, "not a JSON object");
  return parsed;
}

// {"text": "..."} (other members, such as usage or language, are ignored).
absl::StatusOr<std::string> ParseTranscript(std::string_view body) {
  constexpr std::string_view kWhat = "transcription answer";
  absl::StatusOr<json> answer = ParseObject(body, kWhat);
  if (!answer.ok()) return answer.status();
  const std::string* text = FindString(*answer, "text");
  if (text == nullptr) return Unreadable(kWhat, "no \"text\" string");
  if (text->size() > kMaxTranscriptBytes) {
    return Unreadable(kWhat,
                      absl::StrCat("transcript longer than ", kMaxTranscriptBytes >> 10, " KiB"));
  }
  if (!base::IsValidUtf8(*text)) return Unreadable(kWhat, "transcript is not valid UTF-8");
  return *text;
}

// The first Ogg page of an Ogg Opus file: "OggS", then the OpusHead packet at byte 28.
absl::StatusOr<std::string> CheckSpeech(std::string body) {
  if (body.size() < 36 || body.compare(0, 4, "OggS") != 0 || body.compare(28, 8, "OpusHead") != 0) {
    return Unreadable("speech answer", "not Ogg Opus audio");
  }
  return body;
}

bool IsImage(std::string_view bytes) {
  return absl::StartsWith(AbslView(bytes), "\x89PNG\r\n\x1a\n") ||
         absl::StartsWith(AbslView(bytes), "\xff\xd8\xff") ||
         absl::StartsWith(AbslView(bytes), "GIF87a") ||
         absl::StartsWith(AbslView(bytes), "GIF89a") ||
         (bytes.size() >= 12 && bytes.substr(0, 4) == "RIFF" && bytes.substr(8, 4) == "WEBP");
}

// {"created": ..., "data": [{"b64_json": "...", "revised_prompt": "..."}]}
absl::StatusOr<OpenAiMediaApi::GeneratedImage> ParseImage(std::string_view body) {
  constexpr std::string_view kWhat = "image answer";
  absl::StatusOr<json> answer = ParseObject(body, kWhat);
  if (!answer.ok()) return answer.status();
  const json* data = FindArray(*answer, "data");
  if (data == nullptr || data->empty() || !(*data)[0].is_object()) {
    return Unreadable(kWhat, "no \"data\" array of images");
  }
  const json& first = (*data)[0];
  const std::string* base64 = FindString(first, "b64_json");
  if (base64 == nullptr) return Unreadable(kWhat, "data[0] has no \"b64_json\" string");
  // Base64 is 4 characters for 3 bytes: a longer text cannot decode within the limit.
  if (base64->size() > (kMaxImageBytes / 3 + 1) * 4) {
    return Unreadable(kWhat, absl::StrCat("image larger than ", MiB(kMaxImageBytes)));
  }
  OpenAiMediaApi::GeneratedImage image;
  if (base64->empty() || !absl::Base64Unescape(AbslView(*base64), &image.bytes)) {
    return Unreadable(kWhat, "b64_json is not base64");
  }
  if (image.bytes.size() > kMaxImageBytes) {
    return Unreadable(kWhat, absl::StrCat("image larger than ", MiB(kMaxImageBytes)));
  }
  if (!IsImage(image.bytes)) return Unreadable(kWhat, "b64_json is not a PNG, JPEG, WebP or GIF");
  if (const std::string* revised = FindString(first, "revised_prompt")) {
    if (!base::IsValidUtf8(*revised)) return Unreadable(kWhat, "revised_prompt is not valid UTF-8");
    image.revised_prompt = *revised;
    base::TruncateUtf8(image.revised_prompt, kMaxRevisedPromptBytes);
  }
  return image;
}

}  // namespace

absl::StatusOr<std::unique_ptr<OpenAiMediaApi>> OpenAiMediaApi::Create(
    HttpClient* http, const HostedProviderOptions& config, const HttpCallOptions& options) {
  if (http == nullptr) return absl::InvalidArgumentError("openai: no HTTP client");
  if (!IsHttpUrl(config.base_url)) {
    return absl::InvalidArgumentError("base_url must start with http:// or https://");
  }
  return std::unique_ptr<OpenAiMediaApi>(
      new OpenAiMediaApi(http, config.base_url, config.api_key, ForProvider(options, config)));
}

OpenAiMediaApi::OpenAiMediaApi(HttpClient* http, std::string base_url, std::string api_key,
                               HttpCallOptions options)
    : http_(http),
      base_url_(std::move(base_url)),
      api_key_(std::move(api_key)),
      options_(options) {}

void OpenAiMediaApi::Send(HttpRequest request, size_t max_body_bytes,
                          std::function<void(absl::StatusOr<std::string>)> done) {
  request.connect_timeout = options_.connect_timeout;
  request.total_timeout = options_.total_timeout;
  request.retry = options_.retry;
  request.http_version = options_.http_version;
  request.ca_file = options_.ca_file;
  request.max_body_bytes = max_body_bytes;
  http_->Send(std::move(request), [secret = api_key_, max_body_bytes,
                                   done = std::move(done)](absl::StatusOr<HttpResponse> response) {
    absl::Status failure;
    if (!response.ok()) {
      failure = response.status().code() == absl::StatusCode::kResourceExhausted
                    ? absl::InternalError(absl::StrCat("answer larger than ", MiB(max_body_bytes)))
                    : response.status();
    } else if (response->status < 200 || response->status >= 300) {
      failure =
          OpenAiErrorStatus(response->status, response->body, response->Header("retry-after"));
    } else {
      return done(std::move(response->body));
    }
    done(WithContext(failure, kProvider, secret));
  });
}

void OpenAiMediaApi::Transcribe(std::string model, std::shared_ptr<const std::string> audio,
                                std::string media_type,
                                std::function<void(absl::StatusOr<std::string>)> done) {
  const std::string_view bytes = audio != nullptr ? std::string_view(*audio) : std::string_view();
  const std::string type = BaseMediaType(media_type);
  const std::string filename = absl::StrCat("voice.", AudioExtension(type));
  const std::string content_type = PartContentType(type);
  const std::string boundary = Boundary({bytes, model});
  HttpRequest request;
  request.url = JoinUrl(base_url_, kTranscriptionsPath);
  request.headers = OpenAiHeaders(api_key_);
  for (auto& [name, value] : request.headers) {
    if (name == "content-type") value = absl::StrCat("multipart/form-data; boundary=", boundary);
  }
  request.body = Multipart(
      {{.name = "model", .value = model},
       {.name = "response_format", .value = "json"},
       {.name = "file", .value = bytes, .filename = filename, .content_type = content_type}},
      boundary);
  Send(std::move(request), kMaxTranscriptionAnswerBytes,
       [secret = api_key_, done = std::move(done)](absl::StatusOr<std::string> body) {
         if (!body.ok()) return done(body.status());
         absl::StatusOr<std::string> text = ParseTranscript(*body);
         if (!text.ok()) return done(WithContext(text.status(), kProvider, secret));
         done(std::move(text));
       });
}

void OpenAiMediaApi::Speak(std::string model, std::string voice, std::string text,
                           std::function<void(absl::StatusOr<std::string>)> done) {
  HttpRequest request;
  request.url = JoinUrl(base_url_, kSpeechPath);
  request.headers = OpenAiHeaders(api_key_);
  request.body = DumpJson(
      json{{"model", model}, {"input", text}, {"voice", voice}, {"response_format", "opus"}});
  Send(std::move(request), kMaxSpeechBytes,
       [secret = api_key_, done = std::move(done)](absl::StatusOr<std::string> body) {
         if (!body.ok()) return done(body.status());
         absl::StatusOr<std::string> audio = CheckSpeech(*std::move(body));
         if (!audio.ok()) return done(WithContext(audio.status(), kProvider, secret));
         done(std::move(audio));
       });
}

void OpenAiMediaApi::GenerateImage(std::string model, std::string prompt, std::string size,
                                   std::function<void(absl::StatusOr<GeneratedImage>)> done) {
  HttpRequest request;
  request.url = JoinUrl(base_url_, kImagesPath);
  request.headers = OpenAiHeaders(api_key_);
  json body = {{"model", model}, {"prompt", prompt}, {"n", 1}, {"response_format", "b64_json"}};
  if (!size.empty()) body["size"] = size;
  request.body = DumpJson(body);
  Send(std::move(request), kMaxImageAnswerBytes,
       [secret = api_key_, done = std::move(done)](absl::StatusOr<std::string> answer) {
         if (!answer.ok()) return done(answer.status());
         absl::StatusOr<GeneratedImage> image = ParseImage(*answer);
         if (!image.ok()) return done(WithContext(image.status(), kProvider, secret));
         done(std::move(image));
       });
}

}  // namespace herald::providers
