#include "providers/embeddings/embeddings_client.h"

#include <asio.hpp>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/fakes/fake_embeddings.h"
#include "tests/fakes/fake_llm_server.h"

namespace herald::providers {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

const EmbeddingsOptions kOpenAi{.provider = "openai", .model = "m"};
const EmbeddingsOptions kOllama{.provider = "ollama", .model = "m"};

TEST(EmbeddingsWireTest, BothApisTakeTheModelAndTheTexts) {
  EXPECT_EQ(nlohmann::json::parse(EmbeddingsRequestBody(kOpenAi, {"a", "b"})),
            nlohmann::json({{"model", "m"}, {"input", {"a", "b"}}}));
  EXPECT_EQ(EmbeddingsRequestBody(kOllama, {"x"}), R"({"input":["x"],"model":"m"})");
}

TEST(EmbeddingsWireTest, PlacesOpenAiVectorsByTheirIndex) {
  auto vectors = ParseEmbeddingsResponse(
      kOpenAi, R"({"data":[{"index":1,"embedding":[3,4]},{"index":0,"embedding":[1,2]}]})", 2);
  ASSERT_TRUE(vectors.ok()) << vectors.status();
  EXPECT_THAT(*vectors, ElementsAre(ElementsAre(1, 2), ElementsAre(3, 4)));
  vectors = ParseEmbeddingsResponse(kOllama, R"({"embeddings":[[0.5],[-0.5]]})", 2);
  ASSERT_TRUE(vectors.ok()) << vectors.status();
  EXPECT_THAT(*vectors, ElementsAre(ElementsAre(0.5f), ElementsAre(-0.5f)));
}

TEST(EmbeddingsWireTest, RefusesAnswersThatDoNotFitTheQuestion) {
  const std::vector<std::pair<std::string, std::string>> openai = {
      {R"({"data":[{"index":0,"embedding":[1]}]})", "1 vectors for 2 texts"},
      {R"({"data":[{"index":0,"embedding":[1]},{"index":0,"embedding":[2]}]})", "appears twice"},
      {R"({"data":[{"index":0,"embedding":[1]},{"index":7,"embedding":[2]}]})", "out of range"},
      {R"({"data":[{"index":0,"embedding":[1]},{"index":1,"embedding":[2,3]}]})",
       "different lengths"},
      {R"({"data":[{"index":0,"embedding":[1]},{"index":1,"embedding":["x"]}]})", "non-number"},
      {R"({"data":[{"index":0,"embedding":[1]},{"index":1,"embedding":[1e300]}]})", "non-finite"},
      {R"({"data":[{"index":0,"embedding":[1]},{"index":1,"embedding":[]}]})", "1 to 8192"},
      {R"({"data":[{"index":0},{"index":1,"embedding":[1]}]})", "no \"embedding\""},
      {R"({"object":"list"})", "no \"data\""},
      {R"([1,2)", "embeddings response"},
  };
  for (const auto& [body, problem] : openai) {
    auto vectors = ParseEmbeddingsResponse(kOpenAi, body, 2);
    EXPECT_TRUE(absl::IsDataLoss(vectors.status()) || absl::IsInvalidArgument(vectors.status()))
        << body;
    EXPECT_THAT(vectors.status().message(), HasSubstr(problem)) << body;
  }
  auto vectors = ParseEmbeddingsResponse(kOllama, R"({"embeddings":[[1]]})", 2);
  EXPECT_THAT(vectors.status().message(), HasSubstr("1 vectors for 2 texts"));
  vectors = ParseEmbeddingsResponse(kOllama, R"({"embedding":[1]})", 1);
  EXPECT_THAT(vectors.status().message(), HasSubstr("no \"embeddings\" array"));
}

class EmbeddingsClientTest : public ::testing::TestWithParam<fakes::LlmWireFormat> {
 protected:
  void SetUp() override {
    auto server = fakes::FakeLlmServer::Start(GetParam());
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    auto http = HttpClient::Create(io_);
    ASSERT_TRUE(http.ok());
    http_ = *std::move(http);
    const bool ollama = GetParam() == fakes::LlmWireFormat::kOllama;
    options_ = EmbeddingsOptions{.provider = ollama ? "ollama" : "openai",
                                 .model = "fake-embed",
                                 .base_url = server_->base_url(),
                                 .api_key = ollama ? "" : "sk-secret-123",
                                 .max_retries = 0};
  }

  absl::StatusOr<Embeddings> Embed(std::vector<std::string> texts) {
    EmbeddingsClient client(*http_, options_);
    std::optional<absl::StatusOr<Embeddings>> result;
    client.Embed(std::move(texts), [&](absl::StatusOr<Embeddings> got) {
      result = std::move(got);
      io_.stop();
    });
    io_.run_for(std::chrono::seconds(10));
    io_.restart();
    if (!result.has_value()) return absl::DeadlineExceededError("no answer");
    return *result;
  }

  asio::io_context io_;
  std::unique_ptr<fakes::FakeLlmServer> server_;
  std::unique_ptr<HttpClient> http_;
  EmbeddingsOptions options_;
};

INSTANTIATE_TEST_SUITE_P(BothApis, EmbeddingsClientTest,
                         ::testing::Values(fakes::LlmWireFormat::kOpenAi,
                                           fakes::LlmWireFormat::kOllama),
                         [](const auto& info) {
                           return info.param == fakes::LlmWireFormat::kOllama ? "Ollama" : "OpenAi";
                         });

TEST_P(EmbeddingsClientTest, EmbedsABatchInOneRequest) {
  auto vectors = Embed({"my cat", "my feline", "the car"});
  ASSERT_TRUE(vectors.ok()) << vectors.status();
  ASSERT_EQ(vectors->size(), 3u);
  EXPECT_EQ((*vectors)[0], fakes::FakeEmbedding("my cat"));
  EXPECT_EQ((*vectors)[2], fakes::FakeEmbedding("the car"));
  const auto requests = server_->embedding_requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].model, "fake-embed");
  EXPECT_EQ(requests[0].body["input"], nlohmann::json({"my cat", "my feline", "the car"}));
  if (GetParam() == fakes::LlmWireFormat::kOpenAi) {
    EXPECT_EQ(requests[0].Header("authorization"), "Bearer sk-secret-123");
  } else {
    EXPECT_EQ(requests[0].Header("authorization"), "");
  }
  EXPECT_EQ(server_->request_count(), 0u);  // no chat call
}

// [llm.openai]'s server behind a private CA: the embeddings trust its tls_ca_file as the chat
// calls do, and go over HTTP/2.
TEST(EmbeddingsOverTlsTest, TrustTheCaFileAndSpeakHttp2) {
  auto server = fakes::FakeLlmServer::Start(fakes::LlmWireFormat::kOpenAi, {.tls = true});
  ASSERT_TRUE(server.ok()) << server.status();
  asio::io_context io;
  auto http = HttpClient::Create(io);
  ASSERT_TRUE(http.ok());
  EmbeddingsClient client(**http, EmbeddingsOptions{.provider = "openai",
                                                    .model = "fake-embed",
                                                    .base_url = (*server)->base_url(),
                                                    .ca_file = (*server)->certificate_path(),
                                                    .max_retries = 0});
  std::optional<absl::StatusOr<Embeddings>> result;
  client.Embed({"my cat"}, [&](absl::StatusOr<Embeddings> got) {
    result = std::move(got);
    io.stop();
  });
  io.run_for(std::chrono::seconds(10));
  ASSERT_TRUE(result.has_value());
  ASSERT_TRUE(result->ok()) << result->status();
  EXPECT_EQ((**result)[0], fakes::FakeEmbedding("my cat"));
  ASSERT_EQ((*server)->embedding_requests().size(), 1u);
  EXPECT_EQ((*server)->embedding_requests()[0].http.version, "HTTP/2");
}

TEST_P(EmbeddingsClientTest, ReportsAFailingServerWithoutItsKey) {
  server_->FailEmbeddings(401);
  auto vectors = Embed({"x"});
  EXPECT_TRUE(absl::IsUnauthenticated(vectors.status())) << vectors.status();
  EXPECT_THAT(vectors.status().message(), Not(HasSubstr("sk-secret")));
  server_->FailEmbeddings(503);
  vectors = Embed({"x"});
  EXPECT_TRUE(absl::IsUnavailable(vectors.status())) << vectors.status();
  EXPECT_THAT(vectors.status().message(), HasSubstr("embeddings"));
}

TEST_P(EmbeddingsClientTest, RefusesABatchOfAWrongSizeAtOnce) {
  auto vectors = Embed({});
  EXPECT_TRUE(absl::IsInvalidArgument(vectors.status()));
  vectors = Embed(std::vector<std::string>(EmbeddingsClient::kMaxBatch + 1, "x"));
  EXPECT_TRUE(absl::IsInvalidArgument(vectors.status()));
  EXPECT_TRUE(server_->embedding_requests().empty());
}

}  // namespace
}  // namespace herald::providers
