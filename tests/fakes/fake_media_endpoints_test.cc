#include "tests/fakes/fake_media_endpoints.h"

#include <asio.hpp>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "component/base/hex.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "providers/http/http_client.h"
#include "tests/fakes/fake_llm_server.h"

namespace herald::fakes {
namespace {

using providers::HttpClient;
using providers::HttpRequest;
using providers::HttpResponse;
using json = nlohmann::json;
using Headers = std::vector<std::pair<std::string, std::string>>;

// Audio whose bytes hold line ends and dashes, as a boundary search must expect.
const std::string kAudio = std::string("OggS\0\r\n--x\r\n\r\n", 14) + std::string(500, '\x7f');

// A multipart body as a client writes it: one part per (name, filename, value).
std::string Multipart(const std::string& boundary,
                      const std::vector<std::vector<std::string>>& parts) {
  std::string body;
  for (const std::vector<std::string>& part : parts) {
    absl::StrAppend(&body, "--", boundary, "\r\nContent-Disposition: form-data; name=\"", part[0],
                    "\"");
    if (!part[1].empty()) {
      absl::StrAppend(&body, "; filename=\"", part[1], "\"\r\nContent-Type: audio/ogg");
    }
    absl::StrAppend(&body, "\r\n\r\n", part[2], "\r\n");
  }
  return absl::StrCat(body, "--", boundary, "--\r\n");
}

// Posts raw requests to the fake, so that the test controls every byte a client would send.
class FakeMediaEndpointsTest : public ::testing::Test {
 protected:
  void Start(LlmWireFormat format = LlmWireFormat::kOpenAi) {
    absl::StatusOr<std::unique_ptr<FakeLlmServer>> server = FakeLlmServer::Start(format);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    absl::StatusOr<std::unique_ptr<HttpClient>> http = HttpClient::Create(io_);
    ASSERT_TRUE(http.ok()) << http.status();
    http_ = *std::move(http);
  }

  void SetUp() override { Start(); }

  HttpResponse Post(const std::string& path, std::string body, Headers headers) {
    HttpRequest request;
    request.url = server_->base_url() + path;
    request.body = std::move(body);
    request.headers = std::move(headers);
    request.retry.max_retries = 0;
    absl::StatusOr<HttpResponse> result = absl::UnknownError("no answer");
    bool done = false;
    io_.restart();
    asio::post(io_, [&] {
      http_->Send(request, [&](absl::StatusOr<HttpResponse> response) {
        result = std::move(response);
        done = true;
      });
    });
    const absl::Time deadline = absl::Now() + absl::Seconds(10);
    while (!done && absl::Now() < deadline) io_.run_one_for(std::chrono::milliseconds(50));
    EXPECT_TRUE(result.ok()) << result.status();
    return result.ok() ? *result : HttpResponse{};
  }

  HttpResponse PostJson(const std::string& path, const json& body, Headers headers = {}) {
    headers.emplace_back("content-type", "application/json");
    return Post(path, body.dump(), std::move(headers));
  }

  HttpResponse Upload(const std::vector<std::vector<std::string>>& parts,
                      const std::string& content_type = "multipart/form-data; boundary=\"b-1\"") {
    return Post("/audio/transcriptions", Multipart("b-1", parts), {{"content-type", content_type}});
  }

  RecordedMediaRequest Last() {
    std::vector<RecordedMediaRequest> requests = server_->media_requests();
    EXPECT_FALSE(requests.empty());
    return requests.empty() ? RecordedMediaRequest{} : requests.back();
  }

  // The message of an OpenAI error body, after checking its shape.
  static std::string ErrorMessage(const HttpResponse& response) {
    const json body = json::parse(response.body, nullptr, false);
    EXPECT_EQ(body["error"]["type"], "invalid_request_error") << response.body;
    return body["error"]["message"].is_string() ? body["error"]["message"].get<std::string>() : "";
  }

  asio::io_context io_;
  std::unique_ptr<HttpClient> http_;
  std::unique_ptr<FakeLlmServer> server_;
};

TEST_F(FakeMediaEndpointsTest, TranscribesAMultipartUploadAndRecordsTheFileExactly) {
  HttpResponse response =
      Upload({{"model", "", "whisper-1"}, {"file", "voice.ogg", kAudio}, {"language", "", "en"}});
  EXPECT_EQ(response.status, 200);
  EXPECT_EQ(json::parse(response.body), json({{"text", "what is the weather in paris"}}));
  const RecordedMediaRequest request = Last();
  EXPECT_EQ(request.endpoint, "transcriptions");
  EXPECT_EQ(request.status, 200);
  EXPECT_EQ(request.summary["model"], "whisper-1");
  EXPECT_EQ(request.summary["filename"], "voice.ogg");
  EXPECT_EQ(request.summary["file_content_type"], "audio/ogg");
  EXPECT_EQ(request.summary["file_size"], kAudio.size());
  EXPECT_EQ(request.summary["file_sha256"], base::Sha256Hex(kAudio));
  EXPECT_EQ(request.summary["language"], "en");
  EXPECT_EQ(request.summary["transcript"], "what is the weather in paris");
  EXPECT_FALSE(request.summary.contains("error"));
}

TEST_F(FakeMediaEndpointsTest, AnswersTheTranscriptItWasGivenAsJsonOrText) {
  server_->SetTranscript("turn on the lights");
  HttpResponse as_json = Upload({{"model", "", "m"}, {"file", "a.wav", kAudio}});
  EXPECT_EQ(json::parse(as_json.body)["text"], "turn on the lights");
  HttpResponse as_text =
      Upload({{"model", "", "m"}, {"file", "a.mp3", kAudio}, {"response_format", "", "text"}});
  EXPECT_EQ(as_text.body, "turn on the lights");
  EXPECT_EQ(as_text.Header("content-type"), "text/plain; charset=utf-8");
}

TEST_F(FakeMediaEndpointsTest, RefusesAnUploadWithoutItsFileOrModel) {
  HttpResponse no_file = Upload({{"model", "", "whisper-1"}});
  EXPECT_EQ(no_file.status, 400);
  EXPECT_EQ(ErrorMessage(no_file), "file: field required");
  HttpResponse no_model = Upload({{"file", "voice.ogg", kAudio}});
  EXPECT_EQ(no_model.status, 400);
  EXPECT_EQ(ErrorMessage(no_model), "model: field required");
  EXPECT_EQ(Last().summary["file_sha256"], base::Sha256Hex(kAudio));  // recorded all the same
  EXPECT_EQ(Last().summary["error"], "model: field required");
  HttpResponse no_name = Upload({{"model", "", "m"}, {"file", "", kAudio}});
  EXPECT_EQ(ErrorMessage(no_name), "file: the part has no filename");
  HttpResponse not_audio = Upload({{"model", "", "m"}, {"file", "notes.txt", kAudio}});
  EXPECT_THAT(ErrorMessage(not_audio), ::testing::StartsWith("Invalid file format."));
}

TEST_F(FakeMediaEndpointsTest, RefusesABodyThatIsNotWellFormedMultipart) {
  const std::vector<std::vector<std::string>> parts = {{"model", "", "m"}, {"file", "a.ogg", "x"}};
  EXPECT_EQ(ErrorMessage(Upload(parts, "application/json")),
            "Content-Type must be multipart/form-data");
  EXPECT_THAT(ErrorMessage(Upload(parts, "multipart/form-data")), ::testing::HasSubstr("boundary"));
  EXPECT_EQ(ErrorMessage(Upload(parts, "multipart/form-data; boundary=other")),
            "the body does not start with the boundary");
  std::string cut = Multipart("b-1", parts);
  cut.resize(cut.size() - 10);
  HttpResponse unclosed =
      Post("/audio/transcriptions", cut, {{"content-type", "multipart/form-data; boundary=b-1"}});
  EXPECT_EQ(ErrorMessage(unclosed), "the multipart body has no closing boundary");
  EXPECT_EQ(ErrorMessage(Upload({{"model", "", "m"}, {"model", "", "n"}})),
            "part 'model' appears twice");
}

TEST_F(FakeMediaEndpointsTest, SpeaksOggOpusAndRecordsTheVoiceAndInput) {
  HttpResponse response = PostJson(
      "/audio/speech",
      {{"model", "tts-1"}, {"input", "hello"}, {"voice", "nova"}, {"response_format", "opus"}});
  EXPECT_EQ(response.status, 200);
  EXPECT_EQ(response.Header("content-type"), "audio/ogg");
  EXPECT_EQ(response.body, FakeSpeechOgg());
  const RecordedMediaRequest request = Last();
  EXPECT_EQ(request.endpoint, "speech");
  EXPECT_EQ(request.summary["model"], "tts-1");
  EXPECT_EQ(request.summary["voice"], "nova");
  EXPECT_EQ(request.summary["input"], "hello");
  EXPECT_EQ(request.summary["audio_sha256"], base::Sha256Hex(FakeSpeechOgg()));
}

TEST_F(FakeMediaEndpointsTest, RefusesSpeechWithoutItsFieldsOrInAnotherFormat) {
  EXPECT_EQ(ErrorMessage(PostJson("/audio/speech", {{"model", "tts-1"}, {"input", "hi"}})),
            "voice: field required");
  EXPECT_EQ(ErrorMessage(PostJson("/audio/speech", {{"model", "tts-1"}, {"voice", "alloy"}})),
            "input: field required");
  EXPECT_EQ(ErrorMessage(PostJson("/audio/speech",
                                  {{"model", "tts-1"}, {"input", "hi"}, {"voice", "alloy"}})),
            "response_format: the fake LLM speaks only \"opus\"");
  EXPECT_EQ(ErrorMessage(Post("/audio/speech", "{not json", {})),
            "the request body is not a JSON object");
}

TEST_F(FakeMediaEndpointsTest, TheSpeechIsARealOggOpusFile) {
  const std::string_view ogg = FakeSpeechOgg();
  EXPECT_EQ(ogg.size(), 2497u);  // tests/fakes/data/fake_speech.ogg
  EXPECT_EQ(ogg.substr(0, 4), "OggS");
  EXPECT_EQ(ogg.substr(28, 8), "OpusHead");
  EXPECT_NE(ogg.find("OpusTags"), std::string_view::npos);
}

TEST_F(FakeMediaEndpointsTest, DrawsAPngOfOneColourPerPromptAndRecordsIt) {
  HttpResponse response = PostJson("/images/generations", {{"model", "dall-e-3"},
                                                           {"prompt", "a red fox"},
                                                           {"n", 1},
                                                           {"size", "1024x1024"},
                                                           {"response_format", "b64_json"}});
  EXPECT_EQ(response.status, 200);
  const json body = json::parse(response.body);
  EXPECT_TRUE(body["created"].is_number_integer());
  std::string png;
  ASSERT_TRUE(absl::Base64Unescape(body["data"][0]["b64_json"].get<std::string>(), &png));
  EXPECT_EQ(png, FakeImagePng("a red fox"));
  EXPECT_EQ(body["data"][0]["revised_prompt"], "A picture of a red fox");
  const RecordedMediaRequest request = Last();
  EXPECT_EQ(request.endpoint, "images");
  EXPECT_EQ(request.summary["prompt"], "a red fox");
  EXPECT_EQ(request.summary["size"], "1024x1024");
  EXPECT_EQ(request.summary["image_sha256"], base::Sha256Hex(png));
  EXPECT_EQ(request.summary["image_size"], png.size());
}

TEST_F(FakeMediaEndpointsTest, ThePngIsWellFormedAndTheSameForTheSamePrompt) {
  const std::string png = FakeImagePng("a red fox");
  EXPECT_EQ(png, FakeImagePng("a red fox"));
  EXPECT_NE(png, FakeImagePng("a blue fox"));
  EXPECT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  // IHDR: length 13, 64 x 64, 8-bit RGB.
  EXPECT_EQ(png.substr(8, 25).substr(0, 16), std::string("\0\0\0\x0dIHDR\0\0\0\x40\0\0\0\x40", 16));
  EXPECT_EQ(png.substr(24, 2), std::string("\x08\x02", 2));
  EXPECT_EQ(png.substr(png.size() - 12), std::string("\0\0\0\0IEND\xae\x42\x60\x82", 12));
}

TEST_F(FakeMediaEndpointsTest, RefusesImagesWithoutAPromptOrForUrls) {
  EXPECT_EQ(ErrorMessage(
                PostJson("/images/generations", {{"model", "m"}, {"response_format", "b64_json"}})),
            "prompt: field required");
  EXPECT_EQ(ErrorMessage(PostJson("/images/generations", {{"model", "m"}, {"prompt", "p"}})),
            "response_format: the fake LLM answers only \"b64_json\"");
  EXPECT_EQ(ErrorMessage(PostJson(
                "/images/generations",
                {{"model", "m"}, {"prompt", "p"}, {"n", 2}, {"response_format", "b64_json"}})),
            "n: the fake LLM draws one image");
}

TEST_F(FakeMediaEndpointsTest, RequiresTheApiKeyWhenTold) {
  server_->RequireApiKey("sk-fake");
  const json speech = {
      {"model", "tts-1"}, {"input", "hi"}, {"voice", "alloy"}, {"response_format", "opus"}};
  HttpResponse refused = PostJson("/audio/speech", speech);
  EXPECT_EQ(refused.status, 401);
  EXPECT_EQ(json::parse(refused.body)["error"]["code"], "invalid_api_key");
  EXPECT_EQ(PostJson("/audio/speech", speech, {{"authorization", "Bearer sk-fake"}}).status, 200);
}

TEST_F(FakeMediaEndpointsTest, AScriptedAnswerTakesTheNextMediaRequestOnly) {
  std::mutex mu;  // the observer runs on the server's thread
  std::vector<std::string> seen;
  server_->OnMedia([&](const RecordedMediaRequest& r) {
    std::lock_guard<std::mutex> lock(mu);
    seen.push_back(r.endpoint);
  });
  server_->EnqueueMedia(Answer::RateLimited(absl::Seconds(2)));
  server_->EnqueueMedia(Answer::Malformed("{\"oops\""));
  const json image = {{"model", "m"}, {"prompt", "p"}, {"response_format", "b64_json"}};
  HttpResponse limited = PostJson("/images/generations", image);
  EXPECT_EQ(limited.status, 429);
  EXPECT_EQ(limited.Header("retry-after"), "2");
  HttpResponse malformed = PostJson("/images/generations", image);
  EXPECT_EQ(malformed.status, 200);
  EXPECT_EQ(malformed.body, "{\"oops\"");
  EXPECT_EQ(PostJson("/images/generations", image).status, 200);
  {
    std::lock_guard<std::mutex> lock(mu);
    EXPECT_THAT(seen, ::testing::ElementsAre("images", "images", "images"));
  }
  EXPECT_EQ(server_->request_count(), 0u);  // chat requests are counted apart
}

TEST_F(FakeMediaEndpointsTest, ServesMediaOnlyInTheOpenAiFormat) {
  Start(LlmWireFormat::kAnthropic);
  HttpResponse response = PostJson("/v1/audio/speech", {{"model", "tts-1"}});
  EXPECT_EQ(response.status, 404);
  EXPECT_TRUE(server_->media_requests().empty());
}

}  // namespace
}  // namespace herald::fakes
