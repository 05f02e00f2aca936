#include "providers/openai/media_api.h"

#include <asio.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/time/clock.h"
#include "component/base/hex.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/fakes/fake_llm_server.h"
#include "tests/providers/wire/provider_harness.h"

namespace herald::providers {
namespace {

using fakes::Answer;
using fakes::FakeLlmServer;
using fakes::RecordedMediaRequest;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;
using json = nlohmann::json;

constexpr char kKey[] = "sk-proj-media-0123456789";

// An Ogg page header's worth of bytes and then everything a boundary search could trip on.
std::shared_ptr<const std::string> SomeAudio() {
  std::string audio("OggS\0\x02", 6);
  for (int i = 0; i < 3000; ++i) audio.push_back(static_cast<char>(i * 7 % 256));
  audio += "\r\n--\r\n--herald-\r\n\r\n";
  return std::make_shared<const std::string>(std::move(audio));
}

// As a std::string: Debian's absl::string_view is not std::string_view, which gmock needs.
std::string Message(const absl::Status& status) { return std::string(status.message()); }

template <typename T>
struct Outcome {
  absl::StatusOr<T> result = absl::UnknownError("done never ran");
  int done_calls = 0;
};

class OpenAiMediaApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<FakeLlmServer>> server =
        FakeLlmServer::Start(FakeLlmServer::Format::kOpenAi);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    server_->RequireApiKey(kKey);
    absl::StatusOr<std::unique_ptr<HttpClient>> http = HttpClient::Create(io_);
    ASSERT_TRUE(http.ok()) << http.status();
    http_ = *std::move(http);
    api_ = MakeApi(kKey, FastOptions());
    ASSERT_NE(api_, nullptr);
  }

  void TearDown() override {
    http_.reset();
    io_.run_for(std::chrono::milliseconds(10));
  }

  std::unique_ptr<OpenAiMediaApi> MakeApi(std::string key, const HttpCallOptions& options) {
    absl::StatusOr<std::unique_ptr<OpenAiMediaApi>> api = OpenAiMediaApi::Create(
        http_.get(), {.api_key = std::move(key), .base_url = server_->base_url()}, options);
    return api.ok() ? *std::move(api) : nullptr;
  }

  // Starts `call` on the loop and runs the loop until its `done` ran, then a little longer to
  // catch a second call.
  template <typename T>
  Outcome<T> Run(std::function<void(std::function<void(absl::StatusOr<T>)>)> call) {
    Outcome<T> outcome;
    io_.restart();
    asio::post(io_, [&] {
      call([&](absl::StatusOr<T> result) {
        outcome.result = std::move(result);
        ++outcome.done_calls;
      });
    });
    const absl::Time deadline = absl::Now() + absl::Seconds(30);
    while (outcome.done_calls == 0 && absl::Now() < deadline) {
      io_.run_one_for(std::chrono::milliseconds(50));
      if (io_.stopped()) io_.restart();
    }
    io_.run_for(std::chrono::milliseconds(20));
    return outcome;
  }

  Outcome<std::string> Transcribe(OpenAiMediaApi& api, std::shared_ptr<const std::string> audio,
                                  std::string media_type = "audio/ogg") {
    return Run<std::string>(
        [&](auto done) { api.Transcribe("whisper-1", audio, media_type, std::move(done)); });
  }
  Outcome<std::string> Transcribe(std::string media_type = "audio/ogg") {
    return Transcribe(*api_, SomeAudio(), std::move(media_type));
  }
  Outcome<std::string> Speak(std::string text = "Hello there") {
    return Run<std::string>(
        [&](auto done) { api_->Speak("tts-1", "alloy", text, std::move(done)); });
  }
  Outcome<OpenAiMediaApi::GeneratedImage> Draw(std::string size = "1024x1024") {
    return Run<OpenAiMediaApi::GeneratedImage>([&](auto done) {
      api_->GenerateImage("dall-e-3", "a red fox in the snow", size, std::move(done));
    });
  }

  RecordedMediaRequest OnlyRequest() {
    std::vector<RecordedMediaRequest> requests = server_->media_requests();
    EXPECT_EQ(requests.size(), 1u);
    return requests.empty() ? RecordedMediaRequest{} : requests.back();
  }

  asio::io_context io_;
  std::unique_ptr<HttpClient> http_;
  std::unique_ptr<FakeLlmServer> server_;
  std::unique_ptr<OpenAiMediaApi> api_;
};

// --- Speech to text ---

TEST_F(OpenAiMediaApiTest, TranscribesAudioSentAsAMultipartFileWithItsModel) {
  const std::shared_ptr<const std::string> audio = SomeAudio();
  Outcome<std::string> outcome = Transcribe(*api_, audio);
  ASSERT_TRUE(outcome.result.ok()) << outcome.result.status();
  EXPECT_EQ(outcome.done_calls, 1);
  EXPECT_EQ(*outcome.result, fakes::kDefaultFakeTranscript);

  const RecordedMediaRequest request = OnlyRequest();
  EXPECT_EQ(request.http.path, "/v1/audio/transcriptions");
  EXPECT_EQ(request.Header("authorization"), std::string("Bearer ") + kKey);
  EXPECT_THAT(request.Header("content-type"), StartsWith("multipart/form-data; boundary=herald-"));
  EXPECT_EQ(request.summary["model"], "whisper-1");
  EXPECT_EQ(request.summary["response_format"], "json");
  EXPECT_EQ(request.summary["filename"], "voice.ogg");
  EXPECT_EQ(request.summary["file_content_type"], "audio/ogg");
  EXPECT_EQ(request.summary["file_size"], audio->size());
  EXPECT_EQ(request.summary["file_sha256"], base::Sha256Hex(*audio));
  EXPECT_EQ(request.summary["status"], 200);
}

TEST_F(OpenAiMediaApiTest, NamesTheFileWithTheExtensionOfItsMediaType) {
  const std::pair<std::string, std::string> cases[] = {{"audio/ogg; codecs=opus", "voice.ogg"},
                                                       {"audio/mp4", "voice.m4a"},
                                                       {"audio/aac", "voice.aac"},
                                                       {"audio/wav", "voice.wav"},
                                                       {"audio/x-wav", "voice.wav"},
                                                       {"audio/mpeg", "voice.mp3"},
                                                       {"audio/webm", "voice.webm"},
                                                       {"audio/flac", "voice.flac"}};
  for (const auto& [media_type, filename] : cases) {
    Outcome<std::string> outcome = Transcribe(media_type);
    ASSERT_TRUE(outcome.result.ok()) << media_type << ": " << outcome.result.status();
    const json summary = server_->media_requests().back().summary;
    EXPECT_EQ(summary["filename"], filename) << media_type;
    EXPECT_EQ(summary["file_content_type"], media_type.substr(0, media_type.find(';')));
  }
}

TEST_F(OpenAiMediaApiTest, UsesAFreshBoundaryForEachUpload) {
  ASSERT_TRUE(Transcribe().result.ok());
  ASSERT_TRUE(Transcribe().result.ok());
  const std::vector<RecordedMediaRequest> requests = server_->media_requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_NE(requests[0].Header("content-type"), requests[1].Header("content-type"));
  const std::string boundary = requests[0].Header("content-type").substr(30);
  EXPECT_GE(boundary.size(), 39u);  // "herald-" and 128 random bits in hex
  EXPECT_EQ(SomeAudio()->find(boundary), std::string::npos);
}

TEST_F(OpenAiMediaApiTest, AnswersWithTheTranscriptTheServerGives) {
  server_->SetTranscript("turn on the lights");
  EXPECT_EQ(*Transcribe().result, "turn on the lights");
  server_->EnqueueMedia(Answer::Text("¿qué hora es?"));
  EXPECT_EQ(*Transcribe().result, "¿qué hora es?");
  server_->EnqueueMedia(Answer::Text(""));
  EXPECT_EQ(*Transcribe().result, "");
}

TEST_F(OpenAiMediaApiTest, FailsInvalidArgumentWhenTheServerRefusesTheAudio) {
  Outcome<std::string> outcome = Transcribe(*api_, std::make_shared<const std::string>(""));
  ASSERT_FALSE(outcome.result.ok());
  EXPECT_EQ(outcome.result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Message(outcome.result.status()), HasSubstr("Audio file is too short"));
  EXPECT_THAT(Message(outcome.result.status()), StartsWith("openai: "));
}

TEST_F(OpenAiMediaApiTest, FailsInternalOnAnAnswerThatIsNotATranscript) {
  const std::string bodies[] = {"not json", "[1, 2]", "{\"txt\": \"hi\"}", "{\"text\": 42}",
                                "{\"text\": \"cut"};
  for (const std::string& body : bodies) {
    server_->EnqueueMedia(Answer::Malformed(body));
    Outcome<std::string> outcome = Transcribe();
    ASSERT_FALSE(outcome.result.ok()) << body;
    EXPECT_EQ(outcome.result.status().code(), absl::StatusCode::kInternal) << body;
    EXPECT_THAT(Message(outcome.result.status()), StartsWith("openai: transcription answer"));
  }
}

TEST_F(OpenAiMediaApiTest, FailsInternalOnATranscriptThatIsNotUtf8) {
  // Escaped lone surrogates decode to no valid UTF-8.
  server_->EnqueueMedia(Answer::Malformed("{\"text\": \"\\ud800 hi\"}"));
  EXPECT_EQ(Transcribe().result.status().code(), absl::StatusCode::kInternal);
  server_->EnqueueMedia(Answer::Malformed("{\"text\": \"caf\xe9\"}"));
  EXPECT_EQ(Transcribe().result.status().code(), absl::StatusCode::kInternal);
}

TEST_F(OpenAiMediaApiTest, FailsInternalOnAnOversizedTranscriptOrAnswer) {
  server_->EnqueueMedia(Answer::Text(std::string(kMaxTranscriptBytes + 1, 'a')));
  Outcome<std::string> long_text = Transcribe();
  EXPECT_EQ(long_text.result.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(Message(long_text.result.status()), HasSubstr("longer than 64 KiB"));

  server_->EnqueueMedia(Answer::Malformed("{\"text\": \"hi\", \"pad\": \"" +
                                          std::string(kMaxTranscriptionAnswerBytes, 'x') + "\"}"));
  Outcome<std::string> large = Transcribe();
  EXPECT_EQ(large.result.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(Message(large.result.status()), HasSubstr("larger than 1 MiB"));
}

// --- Text to speech ---

TEST_F(OpenAiMediaApiTest, SpeaksInOggOpusWithTheModelAndVoice) {
  Outcome<std::string> outcome = Speak("Hello there");
  ASSERT_TRUE(outcome.result.ok()) << outcome.result.status();
  EXPECT_EQ(outcome.done_calls, 1);
  EXPECT_EQ(*outcome.result, fakes::FakeSpeechOgg());

  const RecordedMediaRequest request = OnlyRequest();
  EXPECT_EQ(request.http.path, "/v1/audio/speech");
  EXPECT_EQ(request.Header("authorization"), std::string("Bearer ") + kKey);
  EXPECT_EQ(request.Header("content-type"), "application/json");
  EXPECT_EQ(json::parse(request.http.body), json({{"model", "tts-1"},
                                                  {"input", "Hello there"},
                                                  {"voice", "alloy"},
                                                  {"response_format", "opus"}}));
  EXPECT_EQ(request.summary["audio_sha256"], base::Sha256Hex(fakes::FakeSpeechOgg()));
}

TEST_F(OpenAiMediaApiTest, FailsInternalWhenTheAudioIsNotOggOpus) {
  server_->EnqueueMedia(Answer::Malformed("ID3\x03 an mp3 instead"));
  Outcome<std::string> outcome = Speak();
  EXPECT_EQ(outcome.result.status().code(), absl::StatusCode::kInternal);
  EXPECT_EQ(Message(outcome.result.status()), "openai: speech answer: not Ogg Opus audio");

  // An Ogg file of another codec.
  std::string vorbis(fakes::FakeSpeechOgg());
  vorbis.replace(28, 8, "\x01vorbis\0", 8);
  server_->EnqueueMedia(Answer::Malformed(vorbis));
  EXPECT_EQ(Speak().result.status().code(), absl::StatusCode::kInternal);
}

TEST_F(OpenAiMediaApiTest, FailsInternalOnSpeechLargerThanTheLimit) {
  std::string huge(fakes::FakeSpeechOgg());
  huge.resize(kMaxSpeechBytes + 1, '\0');
  server_->EnqueueMedia(Answer::Malformed(std::move(huge)));
  Outcome<std::string> outcome = Speak();
  EXPECT_EQ(outcome.result.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(Message(outcome.result.status()), HasSubstr("larger than 16 MiB"));
}

TEST_F(OpenAiMediaApiTest, FailsInvalidArgumentWhenTheServerRefusesTheText) {
  Outcome<std::string> outcome = Speak("");
  EXPECT_EQ(outcome.result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Message(outcome.result.status()), HasSubstr("input: must not be empty"));
}

// --- Images ---

TEST_F(OpenAiMediaApiTest, GeneratesAnImageDecodedFromBase64) {
  Outcome<OpenAiMediaApi::GeneratedImage> outcome = Draw("1024x1024");
  ASSERT_TRUE(outcome.result.ok()) << outcome.result.status();
  EXPECT_EQ(outcome.done_calls, 1);
  EXPECT_EQ(outcome.result->bytes, fakes::FakeImagePng("a red fox in the snow"));
  EXPECT_EQ(outcome.result->revised_prompt, "A picture of a red fox in the snow");

  const RecordedMediaRequest request = OnlyRequest();
  EXPECT_EQ(request.http.path, "/v1/images/generations");
  EXPECT_EQ(request.Header("authorization"), std::string("Bearer ") + kKey);
  EXPECT_EQ(json::parse(request.http.body), json({{"model", "dall-e-3"},
                                                  {"prompt", "a red fox in the snow"},
                                                  {"n", 1},
                                                  {"size", "1024x1024"},
                                                  {"response_format", "b64_json"}}));
  EXPECT_EQ(request.summary["image_sha256"], base::Sha256Hex(outcome.result->bytes));
}

TEST_F(OpenAiMediaApiTest, LeavesTheSizeOutWhenNoneIsGiven) {
  ASSERT_TRUE(Draw("").result.ok());
  EXPECT_FALSE(json::parse(OnlyRequest().http.body).contains("size"));
}

TEST_F(OpenAiMediaApiTest, TakesAnImageWithoutARevisedPrompt) {
  const std::string png = fakes::FakeImagePng("x");
  server_->EnqueueMedia(Answer::Malformed(
      json({{"created", 1}, {"data", {{{"b64_json", absl::Base64Escape(png)}}}}}).dump()));
  Outcome<OpenAiMediaApi::GeneratedImage> outcome = Draw();
  ASSERT_TRUE(outcome.result.ok()) << outcome.result.status();
  EXPECT_EQ(outcome.result->bytes, png);
  EXPECT_EQ(outcome.result->revised_prompt, "");
}

TEST_F(OpenAiMediaApiTest, FailsInternalOnAnAnswerThatIsNotAnImage) {
  const std::string png64 = absl::Base64Escape(fakes::FakeImagePng("x"));
  const std::pair<std::string, std::string> cases[] = {
      {"[]", "not a JSON object"},
      {"{\"created\": 1", "truncated JSON"},
      {"{\"created\": 1}", "no \"data\" array"},
      {"{\"data\": []}", "no \"data\" array"},
      {"{\"data\": [{\"url\": \"https://example.org/x.png\"}]}", "no \"b64_json\""},
      {"{\"data\": [{\"b64_json\": 7}]}", "no \"b64_json\""},
      {"{\"data\": [{\"b64_json\": \"!!not base64!!\"}]}", "not base64"},
      {"{\"data\": [{\"b64_json\": \"\"}]}", "not base64"},
      {"{\"data\": [{\"b64_json\": \"" + absl::Base64Escape("plain text") + "\"}]}", "not a PNG"},
      {"{\"data\": [{\"b64_json\": \"" + png64 + "\", \"revised_prompt\": \"\xff\"}]}",
       "not valid JSON"},
  };
  for (const auto& [body, expected] : cases) {
    server_->EnqueueMedia(Answer::Malformed(body));
    Outcome<OpenAiMediaApi::GeneratedImage> outcome = Draw();
    ASSERT_FALSE(outcome.result.ok()) << expected;
    EXPECT_EQ(outcome.result.status().code(), absl::StatusCode::kInternal) << expected;
    EXPECT_THAT(Message(outcome.result.status()), StartsWith("openai: image answer"));
    EXPECT_THAT(Message(outcome.result.status()), HasSubstr(expected));
  }
}

TEST_F(OpenAiMediaApiTest, FailsInternalOnAnImageLargerThanTheLimit) {
  std::string huge = fakes::FakeImagePng("x");
  huge.resize(kMaxImageBytes + 1, '\0');
  server_->EnqueueMedia(
      Answer::Malformed(json({{"data", {{{"b64_json", absl::Base64Escape(huge)}}}}}).dump()));
  Outcome<OpenAiMediaApi::GeneratedImage> outcome = Draw();
  EXPECT_EQ(outcome.result.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(Message(outcome.result.status()), HasSubstr("larger than"));
}

// --- What every endpoint shares ---

TEST_F(OpenAiMediaApiTest, SendsNoAuthorizationWithoutAKey) {
  server_->RequireApiKey("");
  std::unique_ptr<OpenAiMediaApi> keyless = MakeApi("", FastOptions());
  ASSERT_NE(keyless, nullptr);
  ASSERT_TRUE(Transcribe(*keyless, SomeAudio()).result.ok());
  ASSERT_TRUE(Run<std::string>([&](auto done) {
                keyless->Speak("tts-1", "alloy", "hi", std::move(done));
              }).result.ok());
  ASSERT_TRUE(Run<OpenAiMediaApi::GeneratedImage>([&](auto done) {
                keyless->GenerateImage("dall-e-3", "a fox", "", std::move(done));
              }).result.ok());
  for (const RecordedMediaRequest& request : server_->media_requests()) {
    EXPECT_EQ(request.Header("authorization"), "") << request.endpoint;
  }
}

TEST_F(OpenAiMediaApiTest, FailsUnauthenticatedOnAWrongKeyWithoutRevealingAnyKey) {
  constexpr char kWrong[] = "sk-wrong-9876543210";
  std::unique_ptr<OpenAiMediaApi> wrong = MakeApi(kWrong, FastOptions());
  Outcome<std::string> outcome = Transcribe(*wrong, SomeAudio());
  ASSERT_FALSE(outcome.result.ok());
  EXPECT_EQ(outcome.result.status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_THAT(Message(outcome.result.status()), Not(HasSubstr(kWrong)));
  EXPECT_THAT(Message(outcome.result.status()), Not(HasSubstr(kKey)));
  EXPECT_EQ(server_->media_requests().size(), 1u);  // 401 is not retried
}

TEST_F(OpenAiMediaApiTest, RedactsTheKeyWhenAnErrorBodyEchoesIt) {
  server_->EnqueueMedia(Answer::Error(400, std::string("bad request from key ") + kKey));
  Outcome<std::string> outcome = Speak();
  EXPECT_EQ(outcome.result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Message(outcome.result.status()), Not(HasSubstr(kKey)));
  EXPECT_THAT(Message(outcome.result.status()), HasSubstr("[redacted]"));
}

TEST_F(OpenAiMediaApiTest, RetriesA429AndA500ThenSucceeds) {
  server_->EnqueueMedia(Answer::Error(429, "Rate limit reached"));
  server_->EnqueueMedia(Answer::Error(500, "The server had an error"));
  Outcome<OpenAiMediaApi::GeneratedImage> outcome = Draw();
  ASSERT_TRUE(outcome.result.ok()) << outcome.result.status();
  EXPECT_EQ(server_->media_requests().size(), 3u);
}

TEST_F(OpenAiMediaApiTest, FailsUnavailableWhen429Or5xxOutlastsTheRetries) {
  for (int status : {429, 500, 503}) {
    for (int i = 0; i < 3; ++i) server_->EnqueueMedia(Answer::Error(status));
    Outcome<std::string> outcome = Speak();
    EXPECT_EQ(outcome.result.status().code(), absl::StatusCode::kUnavailable) << status;
    EXPECT_THAT(Message(outcome.result.status()), StartsWith("openai: ")) << status;
    EXPECT_EQ(outcome.done_calls, 1);
  }
  EXPECT_EQ(server_->media_requests().size(), 9u);
}

TEST_F(OpenAiMediaApiTest, FailsDeadlineExceededWhenTheServerNeverAnswers) {
  HttpCallOptions options = FastOptions();
  options.total_timeout = absl::Milliseconds(300);
  options.retry.max_retries = 0;
  std::unique_ptr<OpenAiMediaApi> impatient = MakeApi(kKey, options);
  server_->EnqueueMedia(Answer::Hang());
  Outcome<std::string> outcome = Transcribe(*impatient, SomeAudio());
  EXPECT_EQ(outcome.result.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(outcome.done_calls, 1);
}

TEST(OpenAiMediaApiCreateTest, RefusesABaseUrlThatIsNotHttp) {
  asio::io_context io;
  absl::StatusOr<std::unique_ptr<HttpClient>> http = HttpClient::Create(io);
  ASSERT_TRUE(http.ok());
  for (const char* url : {"", "api.openai.com/v1", "ftp://example.org", "http://"}) {
    absl::StatusOr<std::unique_ptr<OpenAiMediaApi>> api =
        OpenAiMediaApi::Create(http->get(), {.api_key = kKey, .base_url = url}, FastOptions());
    EXPECT_EQ(api.status().code(), absl::StatusCode::kInvalidArgument) << url;
    EXPECT_THAT(Message(api.status()), Not(HasSubstr(kKey)));
  }
  EXPECT_TRUE(
      OpenAiMediaApi::Create(http->get(), {.base_url = "http://localhost:8000/v1"}, FastOptions())
          .ok());
  EXPECT_FALSE(OpenAiMediaApi::Create(nullptr, {.base_url = "https://x.org"}, FastOptions()).ok());
}

}  // namespace
}  // namespace herald::providers
