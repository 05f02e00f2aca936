#include "tests/fakes/fake_media_endpoints.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "component/base/absl_string_view.h"
#include "component/base/hex.h"
#include "tests/fakes/fake_llm_server.h"
#include "tests/fakes/fake_speech_ogg.h"

namespace herald::fakes {
namespace {

using nlohmann::json;

constexpr std::string_view kTranscriptionsPath = "/v1/audio/transcriptions";
constexpr std::string_view kSpeechPath = "/v1/audio/speech";
constexpr std::string_view kImagesPath = "/v1/images/generations";
constexpr size_t kMaxSpeechInput = 4096;  // characters, as OpenAI counts them (we count bytes)

std::string Dump(const json& value) {
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string_view PathOf(std::string_view path) {
  return path.substr(0, std::min(path.find('?'), path.size()));
}

FakeHttpResponse JsonResponse(int status, const json& body) {
  FakeHttpResponse response;
  response.status = status;
  response.headers.emplace_back("content-type", "application/json");
  response.body = Dump(body);
  return response;
}

FakeHttpResponse ErrorResponse(int status, const std::string& message,
                               std::optional<absl::Duration> retry_after = std::nullopt) {
  FakeHttpResponse response = JsonResponse(status, OpenAiErrorJson(status, message));
  if (retry_after.has_value()) {
    const int64_t seconds = static_cast<int64_t>(std::ceil(absl::ToDoubleSeconds(*retry_after)));
    response.headers.emplace_back("retry-after", absl::StrCat(std::max<int64_t>(0, seconds)));
  }
  return response;
}

// A refusal: its message, or nothing when the request is good.
using Problem = std::optional<std::string>;

const json* Member(const json& value, const char* key) {
  if (!value.is_object()) return nullptr;
  auto it = value.find(key);
  return it == value.end() ? nullptr : &*it;
}

// An error body's message.
std::string StringOr(const json& error_body, std::string fallback) {
  const json* error = Member(error_body, "error");
  const json* message = error != nullptr ? Member(*error, "message") : nullptr;
  return message != nullptr && message->is_string() ? message->get<std::string>() : fallback;
}

// A required non-empty string member: its value, or a problem naming it.
Problem RequireString(const json& body, const char* key, std::string* out) {
  const json* member = Member(body, key);
  if (member == nullptr || member->is_null()) return absl::StrCat(key, ": field required");
  if (!member->is_string()) return absl::StrCat(key, ": must be a string");
  *out = member->get<std::string>();
  if (out->empty()) return absl::StrCat(key, ": must not be empty");
  return std::nullopt;
}

// --- multipart/form-data (RFC 7578) ---

struct FormPart {
  std::string name;
  std::optional<std::string> filename;
  std::string content_type;
  std::string data;
};

// `key="value"` or `key=value` parameters after the first ';' of a header value.
std::map<std::string, std::string> Parameters(std::string_view value) {
  std::map<std::string, std::string> out;
  std::vector<absl::string_view> items = absl::StrSplit(AbslView(value), ';');
  for (size_t i = 1; i < items.size(); ++i) {
    absl::string_view item = absl::StripAsciiWhitespace(items[i]);
    const size_t equals = item.find('=');
    if (equals == absl::string_view::npos) continue;
    std::string key = absl::AsciiStrToLower(absl::StripAsciiWhitespace(item.substr(0, equals)));
    absl::string_view v = absl::StripAsciiWhitespace(item.substr(equals + 1));
    if (v.size() >= 2 && v.front() == '"' && v.back() == '"') v = v.substr(1, v.size() - 2);
    out[key] = std::string(v);
  }
  return out;
}

Problem ParsePart(std::string_view part, FormPart* out) {
  const size_t end = part.find("\r\n\r\n");
  if (end == std::string_view::npos) return "a multipart part has no blank line after its headers";
  for (absl::string_view line : absl::StrSplit(AbslView(part.substr(0, end)), "\r\n")) {
    const size_t colon = line.find(':');
    if (colon == absl::string_view::npos) return "a multipart part header has no colon";
    const std::string name = absl::AsciiStrToLower(line.substr(0, colon));
    const std::string value(absl::StripAsciiWhitespace(line.substr(colon + 1)));
    if (name == "content-disposition") {
      if (!absl::StartsWithIgnoreCase(value, "form-data")) {
        return "Content-Disposition of a part must be form-data";
      }
      std::map<std::string, std::string> parameters = Parameters(value);
      if (!parameters.contains("name")) return "a multipart part has no name";
      out->name = parameters["name"];
      if (parameters.contains("filename")) out->filename = parameters["filename"];
    } else if (name == "content-type") {
      out->content_type = value;
    }
  }
  if (out->name.empty()) return "a multipart part has no Content-Disposition name";
  out->data = std::string(part.substr(end + 4));
  return std::nullopt;
}

Problem ParseMultipart(const FakeHttpRequest& http, std::map<std::string, FormPart>* parts) {
  const std::string content_type = http.Header("content-type");
  if (!absl::StartsWithIgnoreCase(content_type, "multipart/form-data")) {
    return "Content-Type must be multipart/form-data";
  }
  const std::string boundary = Parameters(content_type)["boundary"];
  if (boundary.empty() || boundary.size() > 70) {
    return "multipart/form-data needs a boundary of 1 to 70 characters";
  }
  const std::string delimiter = "--" + boundary;
  std::string_view body = http.body;
  if (!absl::StartsWith(AbslView(body), delimiter + "\r\n")) {
    return "the body does not start with the boundary";
  }
  size_t at = delimiter.size() + 2;
  const std::string separator = "\r\n" + delimiter;
  while (true) {
    const size_t next = body.find(separator, at);
    if (next == std::string_view::npos) return "the multipart body has no closing boundary";
    FormPart part;
    if (Problem p = ParsePart(body.substr(at, next - at), &part)) return p;
    if (parts->contains(part.name)) return "part '" + part.name + "' appears twice";
    std::string name = part.name;
    parts->emplace(std::move(name), std::move(part));
    at = next + separator.size();
    if (body.substr(at, 2) == "--") return std::nullopt;  // the close delimiter; epilogue ignored
    if (body.substr(at, 2) != "\r\n") return "a boundary is not followed by a line end";
    at += 2;
  }
}

// What OpenAI reads the audio's format from: the file name's extension.
bool IsAudioFileName(std::string_view name) {
  const size_t dot = name.rfind('.');
  if (dot == std::string_view::npos) return false;
  const std::string extension = absl::AsciiStrToLower(AbslView(name.substr(dot + 1)));
  for (const char* known :
       {"flac", "m4a", "mp3", "mp4", "mpeg", "mpga", "oga", "ogg", "wav", "webm", "aac", "opus"}) {
    if (extension == known) return true;
  }
  return false;
}

// --- The three endpoints: each fills the summary and says what would be refused ---

Problem ReadTranscription(const FakeHttpRequest& http, json* summary) {
  std::map<std::string, FormPart> parts;
  Problem problem = ParseMultipart(http, &parts);
  auto text_part = [&](const char* name) -> json {
    auto it = parts.find(name);
    return it == parts.end() ? json(nullptr) : json(it->second.data);
  };
  (*summary)["model"] = text_part("model");
  (*summary)["response_format"] = text_part("response_format");
  (*summary)["language"] = text_part("language");
  if (auto file = parts.find("file"); file != parts.end()) {
    (*summary)["filename"] = file->second.filename.value_or("");
    (*summary)["file_content_type"] = file->second.content_type;
    (*summary)["file_size"] = file->second.data.size();
    (*summary)["file_sha256"] = base::Sha256Hex(file->second.data);
  }
  if (problem) return problem;
  auto file = parts.find("file");
  if (file == parts.end()) return "file: field required";
  if (!file->second.filename.has_value()) return "file: the part has no filename";
  if (!IsAudioFileName(*file->second.filename)) {
    return "Invalid file format. Supported formats: ['flac', 'm4a', 'mp3', 'mp4', 'mpeg', "
           "'mpga', 'oga', 'ogg', 'wav', 'webm']";
  }
  if (file->second.data.empty()) return "Audio file is too short.";
  if (!parts.contains("model") || parts["model"].data.empty()) return "model: field required";
  const json format = text_part("response_format");
  if (!format.is_null() && format != "json" && format != "text") {
    return "response_format: the fake LLM answers json or text";
  }
  return std::nullopt;
}

Problem ReadSpeech(const json& body, json* summary) {
  if (!body.is_object()) return "the request body is not a JSON object";
  std::string model, input, voice;
  Problem problem = RequireString(body, "model", &model);
  if (Problem p = RequireString(body, "input", &input); p && !problem) problem = p;
  if (Problem p = RequireString(body, "voice", &voice); p && !problem) problem = p;
  const json* format = Member(body, "response_format");
  (*summary)["model"] = model;
  (*summary)["input"] = input;
  (*summary)["voice"] = voice;
  (*summary)["response_format"] = format != nullptr ? *format : json(nullptr);
  if (problem) return problem;
  if (input.size() > kMaxSpeechInput) return "input: at most 4096 characters";
  if (format == nullptr || *format != "opus") {
    return "response_format: the fake LLM speaks only \"opus\"";
  }
  return std::nullopt;
}

bool IsImageSize(const std::string& size) {
  if (size == "auto") return true;
  const size_t x = size.find('x');
  if (x == std::string::npos || x == 0 || x + 1 == size.size()) return false;
  return std::all_of(size.begin(), size.end(),
                     [](char c) { return c == 'x' || absl::ascii_isdigit(c); });
}

Problem ReadImages(const json& body, json* summary) {
  if (!body.is_object()) return "the request body is not a JSON object";
  std::string model, prompt;
  Problem problem = RequireString(body, "model", &model);
  if (Problem p = RequireString(body, "prompt", &prompt); p && !problem) problem = p;
  const json* size = Member(body, "size");
  const json* n = Member(body, "n");
  const json* format = Member(body, "response_format");
  (*summary)["model"] = model;
  (*summary)["prompt"] = prompt;
  (*summary)["size"] = size != nullptr ? *size : json(nullptr);
  (*summary)["n"] = n != nullptr ? *n : json(nullptr);
  (*summary)["response_format"] = format != nullptr ? *format : json(nullptr);
  if (problem) return problem;
  if (n != nullptr && *n != 1) return "n: the fake LLM draws one image";
  if (size != nullptr && (!size->is_string() || !IsImageSize(size->get<std::string>()))) {
    return "size: must be WIDTHxHEIGHT or auto";
  }
  if (format == nullptr || *format != "b64_json") {
    return "response_format: the fake LLM answers only \"b64_json\"";
  }
  return std::nullopt;
}

// --- PNG, written by hand: stored (uncompressed) deflate blocks need no zlib ---

uint32_t Crc32(std::string_view bytes) {
  uint32_t crc = 0xffffffffu;
  for (unsigned char byte : bytes) {
    crc ^= byte;
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}

uint32_t Adler32(std::string_view bytes) {
  uint32_t a = 1, b = 0;
  for (unsigned char byte : bytes) {
    a = (a + byte) % 65521;
    b = (b + a) % 65521;
  }
  return (b << 16) | a;
}

void AppendBigEndian(uint32_t value, std::string& out) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>(value >> shift));
}

void AppendChunk(std::string_view type, std::string_view data, std::string& out) {
  AppendBigEndian(static_cast<uint32_t>(data.size()), out);
  const std::string typed = absl::StrCat(AbslView(type), AbslView(data));
  out += typed;
  AppendBigEndian(Crc32(typed), out);
}

}  // namespace

bool IsMediaPath(std::string_view path) {
  const std::string_view p = PathOf(path);
  return p == kTranscriptionsPath || p == kSpeechPath || p == kImagesPath;
}

json OpenAiErrorJson(int status, const std::string& message) {
  json error = {{"message", message}, {"param", nullptr}, {"code", nullptr}};
  if (status == 401) {
    error["type"] = "invalid_request_error";
    error["code"] = "invalid_api_key";
  } else if (status == 429) {
    error["type"] = "requests";
    error["code"] = "rate_limit_exceeded";
  } else if (status >= 500) {
    error["type"] = "server_error";
  } else {
    error["type"] = "invalid_request_error";
  }
  return {{"error", std::move(error)}};
}

std::string_view FakeSpeechOgg() {
  return std::string_view(reinterpret_cast<const char*>(kFakeSpeechOgg), sizeof(kFakeSpeechOgg));
}

std::string FakeImagePng(std::string_view prompt) {
  constexpr uint32_t kSide = 64;
  const std::string colour = *base::HexDecode(base::Sha256Hex(prompt).substr(0, 6));
  std::string header;
  AppendBigEndian(kSide, header);
  AppendBigEndian(kSide, header);
  header += std::string("\x08\x02\x00\x00\x00", 5);  // 8-bit RGB, deflate, no filter, no interlace
  std::string rows;
  for (uint32_t y = 0; y < kSide; ++y) {
    rows.push_back('\0');  // filter type: none
    for (uint32_t x = 0; x < kSide; ++x) rows += colour;
  }
  // A zlib stream of one final stored block (the rows are 12,352 bytes, under its 65,535).
  std::string zlib("\x78\x01\x01", 3);
  const uint16_t length = static_cast<uint16_t>(rows.size());
  zlib.push_back(static_cast<char>(length & 0xff));
  zlib.push_back(static_cast<char>(length >> 8));
  zlib.push_back(static_cast<char>(~length & 0xff));
  zlib.push_back(static_cast<char>((~length >> 8) & 0xff));
  zlib += rows;
  AppendBigEndian(Adler32(rows), zlib);
  std::string png("\x89PNG\r\n\x1a\n", 8);
  AppendChunk("IHDR", header, png);
  AppendChunk("IDAT", zlib, png);
  AppendChunk("IEND", "", png);
  return png;
}

FakeHttpResponse ServeMedia(const FakeHttpRequest& http, const MediaSettings& settings,
                            RecordedMediaRequest* record) {
  const std::string_view path = PathOf(http.path);
  record->http = http;
  record->endpoint = path == kTranscriptionsPath ? "transcriptions"
                     : path == kSpeechPath       ? "speech"
                                                 : "images";
  json& summary = record->summary;
  summary = {{"endpoint", record->endpoint}, {"path", http.path}};
  const json body = record->endpoint == "transcriptions"
                        ? json(nullptr)
                        : json::parse(http.body, nullptr, /*allow_exceptions=*/false);
  Problem problem;
  if (http.method != "POST") {
    problem = "use POST";
  } else if (record->endpoint == "transcriptions") {
    problem = ReadTranscription(http, &summary);
  } else if (record->endpoint == "speech") {
    problem = ReadSpeech(body, &summary);
  } else {
    problem = ReadImages(body, &summary);
  }

  FakeHttpResponse response;
  const Answer* scripted = settings.scripted;
  if (!settings.api_key.empty() &&
      http.Header("authorization") != absl::StrCat("Bearer ", settings.api_key)) {
    response = ErrorResponse(401, "Incorrect API key provided.");
  } else if (scripted != nullptr && scripted->kind == Answer::Kind::kError) {
    response = ErrorResponse(scripted->status, scripted->error_message, scripted->retry_after);
  } else if (scripted != nullptr && scripted->kind == Answer::Kind::kHang) {
    response.hang = true;
  } else if (scripted != nullptr && scripted->kind == Answer::Kind::kRaw) {
    response.headers.emplace_back("content-type",
                                  record->endpoint == "speech" ? "audio/ogg" : "application/json");
    response.body = scripted->raw_body;
  } else if (problem.has_value()) {
    response = ErrorResponse(http.method != "POST" ? 405 : 400, *problem);
  } else if (record->endpoint == "transcriptions") {
    const std::string transcript = scripted != nullptr ? scripted->text : settings.transcript;
    summary["transcript"] = transcript;
    if (summary["response_format"] == "text") {
      response.headers.emplace_back("content-type", "text/plain; charset=utf-8");
      response.body = transcript;
    } else {
      response = JsonResponse(200, {{"text", transcript}});
    }
  } else if (record->endpoint == "speech") {
    const std::string_view audio = FakeSpeechOgg();
    summary["audio_size"] = audio.size();
    summary["audio_sha256"] = base::Sha256Hex(audio);
    response.headers.emplace_back("content-type", "audio/ogg");
    response.body = std::string(audio);
  } else {
    const std::string prompt = summary["prompt"].get<std::string>();
    const std::string png = FakeImagePng(prompt);
    const std::string revised = "A picture of " + prompt;
    summary["image_size"] = png.size();
    summary["image_sha256"] = base::Sha256Hex(png);
    summary["revised_prompt"] = revised;
    response = JsonResponse(
        200, {{"created", 1700000000},
              {"data", {{{"b64_json", absl::Base64Escape(png)}, {"revised_prompt", revised}}}}});
  }
  if (scripted != nullptr) response.delay = scripted->delay;
  record->status = response.hang ? 0 : response.status;
  summary["status"] = record->status;
  if (response.status >= 400) {
    const json error = json::parse(response.body, nullptr, /*allow_exceptions=*/false);
    summary["error"] = StringOr(error, "");
  }
  return response;
}

}  // namespace herald::fakes
