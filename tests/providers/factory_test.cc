#include "providers/factory.h"

#include <chrono>
#include <cstdint>
#include <fstream>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "component/config/config.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "providers/http/http_client.h"

namespace herald::providers {
namespace {

using ::testing::HasSubstr;

std::optional<absl::StatusOr<LlmResponse>> Ask(ModelRouter& router, Tier tier, std::string text) {
  LlmRequest request;
  request.messages.push_back({.role = LlmMessage::Role::kUser, .text = std::move(text)});
  std::optional<absl::StatusOr<LlmResponse>> answer;
  router.Complete(tier, request, nullptr,
                  [&](absl::StatusOr<LlmResponse> response) { answer = std::move(response); });
  return answer;
}

TEST(CreateModelRouterTest, AnswersWithTheScriptedDemoWhenNoModelIsConfigured) {
  absl::StatusOr<std::unique_ptr<ModelRouter>> router = CreateModelRouter(LlmOptions{}, nullptr);
  ASSERT_TRUE(router.ok()) << router.status();
  EXPECT_EQ((*router)->ModelFor(Tier::kDefault), (ModelRef{"scripted", "demo"}));
  std::optional<absl::StatusOr<LlmResponse>> answer = Ask(**router, Tier::kDefault, "hello");
  ASSERT_TRUE(answer.has_value());
  ASSERT_TRUE(answer->ok()) << answer->status();
  EXPECT_THAT((*answer)->text, HasSubstr("scripted demo provider"));
  EXPECT_EQ((*answer)->provider, "scripted");
  EXPECT_EQ((*answer)->model, "demo");
}

TEST(CreateModelRouterTest, BuildsTheScriptedProviderFromItsRulesFile) {
  std::string path = ::testing::TempDir() + "/factory_rules.toml";
  std::ofstream(path, std::ios::trunc) << "[[rule]]\nreply = \"{model} here\"\n";
  LlmOptions config;
  config.default_model = "scripted:main";
  config.tiers["light"] = "scripted:small";
  config.scripted.rules_file = path;
  absl::StatusOr<std::unique_ptr<ModelRouter>> router = CreateModelRouter(config, nullptr);
  ASSERT_TRUE(router.ok()) << router.status();
  EXPECT_EQ((*Ask(**router, Tier::kDefault, "x"))->text, "main here");
  EXPECT_EQ((*Ask(**router, Tier::kLight, "x"))->text, "small here");
}

TEST(CreateModelRouterTest, DeliversOnTheGivenExecutor) {
  asio::io_context io;
  absl::StatusOr<std::unique_ptr<ModelRouter>> router =
      CreateModelRouter(LlmOptions{}, nullptr, io.get_executor());
  ASSERT_TRUE(router.ok()) << router.status();
  std::optional<absl::StatusOr<LlmResponse>> answer;
  LlmRequest request;
  request.messages.push_back({.text = "thanks"});
  (*router)->Complete(Tier::kDefault, request, nullptr,
                      [&](absl::StatusOr<LlmResponse> response) { answer = std::move(response); });
  EXPECT_FALSE(answer.has_value());
  io.run();
  ASSERT_TRUE(answer.has_value());
  EXPECT_EQ((*answer)->text, "You're welcome!");
}

TEST(CreateModelRouterTest, RefusesAMalformedRulesFileNamingIt) {
  std::string path = ::testing::TempDir() + "/factory_bad_rules.toml";
  std::ofstream(path, std::ios::trunc) << "[[rule]]\nreply = \"{oops}\"\n";
  LlmOptions config;
  config.scripted.rules_file = path;
  absl::StatusOr<std::unique_ptr<ModelRouter>> router = CreateModelRouter(config, nullptr);
  EXPECT_TRUE(absl::IsInvalidArgument(router.status()));
  EXPECT_THAT(std::string(router.status().message()),
              HasSubstr(path + ":2: rule 1, 'reply': unknown placeholder '{oops}'"));
}

TEST(CreateModelRouterTest, RefusesAnUnknownProviderAndAMalformedReference) {
  LlmOptions config;
  config.default_model = "scripted:demo";
  config.fallback = {"mistral:large"};
  absl::StatusOr<std::unique_ptr<ModelRouter>> router = CreateModelRouter(config, nullptr);
  EXPECT_THAT(std::string(router.status().message()), HasSubstr("unknown provider 'mistral'"));

  config.fallback = {};
  config.tiers["light"] = "nomodel";
  router = CreateModelRouter(config, nullptr);
  EXPECT_THAT(std::string(router.status().message()), HasSubstr("llm.tiers.light: "));
}

TEST(CreateModelRouterTest, RefusesAnHttpProviderWithoutAnHttpClient) {
  LlmOptions config;
  config.default_model = "anthropic:claude-sonnet-4-5";
  absl::StatusOr<std::unique_ptr<ModelRouter>> router = CreateModelRouter(config, nullptr);
  EXPECT_TRUE(absl::IsInvalidArgument(router.status()));
  EXPECT_THAT(std::string(router.status().message()), HasSubstr("needs an HTTP client"));
}

TEST(CreateModelRouterTest, BuildsTheHttpProvidersTheModelsName) {
  asio::io_context io;
  absl::StatusOr<std::unique_ptr<HttpClient>> http = HttpClient::Create(io);
  ASSERT_TRUE(http.ok()) << http.status();
  LlmOptions config;
  config.default_model = "anthropic:claude-sonnet-4-5";
  config.anthropic.api_key = "test-key";
  config.tiers["heavy"] = "openai:gpt-4o";
  config.tiers["light"] = "ollama:llama3.1:8b";
  absl::StatusOr<std::unique_ptr<ModelRouter>> router = CreateModelRouter(config, http->get());
  ASSERT_TRUE(router.ok()) << router.status();
  EXPECT_EQ((*router)->ModelFor(Tier::kHeavy), (ModelRef{"openai", "gpt-4o"}));
  EXPECT_EQ((*router)->ModelFor(Tier::kLight), (ModelRef{"ollama", "llama3.1:8b"}));
}

TEST(CreateModelRouterTest, NamesTheSectionOfAProviderThatCannotBeBuilt) {
  asio::io_context io;
  absl::StatusOr<std::unique_ptr<HttpClient>> http = HttpClient::Create(io);
  ASSERT_TRUE(http.ok()) << http.status();
  LlmOptions config;
  config.default_model = "anthropic:claude-sonnet-4-5";  // and no API key
  absl::StatusOr<std::unique_ptr<ModelRouter>> router = CreateModelRouter(config, http->get());
  EXPECT_FALSE(router.ok());
  EXPECT_THAT(std::string(router.status().message()), HasSubstr("llm.anthropic: "));
}

TEST(CreateModelRouterTest, FallsOverFromAnUnreachableProviderToTheScriptedFallback) {
  asio::io_context io;
  // A port that was free a moment ago and has no listener: connections are refused.
  asio::ip::tcp::acceptor probe(io, {asio::ip::make_address("127.0.0.1"), 0});
  uint16_t port = probe.local_endpoint().port();
  probe.close();
  absl::StatusOr<std::unique_ptr<HttpClient>> http = HttpClient::Create(io);
  ASSERT_TRUE(http.ok()) << http.status();
  LlmOptions config;
  config.default_model = "openai:gpt-4o";
  config.openai.base_url = absl::StrCat("http://127.0.0.1:", port, "/v1");
  config.max_retries = 0;
  config.fallback = {"scripted:demo"};
  absl::StatusOr<std::unique_ptr<ModelRouter>> router =
      CreateModelRouter(config, http->get(), io.get_executor());
  ASSERT_TRUE(router.ok()) << router.status();

  std::optional<absl::StatusOr<LlmResponse>> answer;
  LlmRequest request;
  request.messages.push_back({.text = "thanks"});
  asio::post(io, [&] {
    (*router)->Complete(Tier::kDefault, request, nullptr, [&](absl::StatusOr<LlmResponse> r) {
      answer = std::move(r);
      io.stop();
    });
  });
  io.run_for(std::chrono::seconds(30));
  ASSERT_TRUE(answer.has_value());
  ASSERT_TRUE(answer->ok()) << answer->status();
  EXPECT_EQ((*answer)->provider, "scripted");
  EXPECT_EQ((*answer)->text, "You're welcome!");
}

}  // namespace
}  // namespace herald::providers
