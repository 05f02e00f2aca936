#include "providers/scripted/scripted_provider.h"

#include <asio.hpp>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_join.h"
#include "component/config/config.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace herald::providers {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

std::string WriteFile(const std::string& name, const std::string& text) {
  std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
  return path;
}

LlmRequest UserSays(std::string text) {
  LlmRequest request;
  request.model = "demo";
  request.messages.push_back({.role = LlmMessage::Role::kUser, .text = std::move(text)});
  return request;
}

struct Delivery {
  std::vector<std::string> deltas;
  std::optional<absl::StatusOr<LlmResponse>> response;
  size_t deltas_before_done = 0;
};

void Complete(LlmProvider& provider, const LlmRequest& request, Delivery& delivery) {
  provider.Complete(
      request, [&](std::string_view delta) { delivery.deltas.emplace_back(delta); },
      [&](absl::StatusOr<LlmResponse> response) {
        delivery.deltas_before_done = delivery.deltas.size();
        delivery.response = std::move(response);
      });
}

TEST(ScriptedProviderTest, UsesTheBuiltInDemoRulesWithoutARulesFile) {
  absl::StatusOr<std::unique_ptr<ScriptedProvider>> provider =
      ScriptedProvider::Create(ScriptedProviderOptions{});
  ASSERT_TRUE(provider.ok()) << provider.status();
  EXPECT_EQ((*provider)->name(), "scripted");
  LlmResponse response = (*provider)->Answer(UserSays("hello"));
  EXPECT_THAT(response.text, HasSubstr("I'm Herald"));
  EXPECT_EQ(response.provider, "scripted");
  EXPECT_EQ(response.model, "demo");
}

TEST(ScriptedProviderTest, ReadsTheRulesFileOfTheConfig) {
  std::string path = WriteFile("ok_rules.toml", "[[rule]]\nequals = \"ping\"\nreply = \"pong\"\n");
  absl::StatusOr<std::unique_ptr<ScriptedProvider>> provider =
      ScriptedProvider::Create({.rules_file = path});
  ASSERT_TRUE(provider.ok()) << provider.status();
  EXPECT_EQ((*provider)->Answer(UserSays("Ping!")).text, "pong");
}

TEST(ScriptedProviderTest, NamesTheFileRuleAndFieldOfAMalformedRulesFile) {
  std::string path =
      WriteFile("bad_rules.toml", "[[rule]]\nreply = \"a\"\n\n[[rule]]\nreply = 7\n");
  absl::StatusOr<std::unique_ptr<ScriptedProvider>> provider =
      ScriptedProvider::Create({.rules_file = path});
  EXPECT_TRUE(absl::IsInvalidArgument(provider.status()));
  EXPECT_THAT(std::string(provider.status().message()),
              HasSubstr(path + ":5: rule 2, 'reply': must be a string"));
}

TEST(ScriptedProviderTest, RefusesAMissingRulesFileNamingIt) {
  std::string path = ::testing::TempDir() + "/no_such_rules.toml";
  absl::StatusOr<std::unique_ptr<ScriptedProvider>> provider =
      ScriptedProvider::Create({.rules_file = path});
  EXPECT_TRUE(absl::IsNotFound(provider.status()));
  EXPECT_THAT(std::string(provider.status().message()), HasSubstr(path));
}

TEST(ScriptedProviderTest, CountsWordsAsTokens) {
  ScriptedProvider provider(
      *ScriptedRules::Parse("[[rule]]\nreply = \"one two  three\"\n", "rules"), {});
  LlmRequest request = UserSays("four words in\tthis");
  request.system = "be brief";
  request.tools.push_back({.name = "current_time", .description = "The time now."});
  LlmResponse response = provider.Answer(request);
  EXPECT_EQ(response.usage.input_tokens, 2 + 4 + 1 + 3);
  EXPECT_EQ(response.usage.output_tokens, 3);
}

TEST(ScriptedProviderTest, IgnoresImages) {
  absl::StatusOr<std::unique_ptr<ScriptedProvider>> provider =
      ScriptedProvider::Create(ScriptedProviderOptions{});
  ASSERT_TRUE(provider.ok()) << provider.status();
  LlmRequest with_image = UserSays("hello");
  with_image.messages[0].images.push_back(
      ImagePart::FromBytes("image/png", "pretend these are the many words of an image"));
  const LlmResponse plain = (*provider)->Answer(UserSays("hello"));
  const LlmResponse seen = (*provider)->Answer(with_image);
  EXPECT_EQ(seen.text, plain.text);
  EXPECT_EQ(seen.usage.input_tokens, plain.usage.input_tokens);
}

TEST(ScriptedProviderTest, CutsAReplyAtMaxTokensWords) {
  ScriptedProvider provider(*ScriptedRules::Parse("[[rule]]\nreply = \"a b c d e f\"\n", "rules"),
                            {});
  LlmRequest request = UserSays("x");
  request.max_tokens = 4;
  LlmResponse response = provider.Answer(request);
  EXPECT_EQ(response.text, "a b c d");
  EXPECT_EQ(response.stop_reason, StopReason::kMaxTokens);
  EXPECT_EQ(response.usage.output_tokens, 4);
}

TEST(ScriptedProviderTest, StreamsTheReplyInSeveralDeltasBeforeDone) {
  asio::io_context io;
  ScriptedProvider provider(ScriptedRules::Demo(), io.get_executor());
  LlmRequest request = UserSays("Tell me about the universe");
  request.stream = true;
  Delivery delivery;
  Complete(provider, request, delivery);
  EXPECT_FALSE(delivery.response.has_value());  // asynchronous: nothing before the loop runs
  io.run();
  ASSERT_TRUE(delivery.response.has_value());
  ASSERT_TRUE(delivery.response->ok());
  EXPECT_GT(delivery.deltas.size(), 1u);
  EXPECT_EQ(delivery.deltas_before_done, delivery.deltas.size());
  EXPECT_EQ(absl::StrJoin(delivery.deltas, ""), (*delivery.response)->text);
}

TEST(ScriptedProviderTest, SendsNoDeltasWhenNotStreaming) {
  ScriptedProvider provider(ScriptedRules::Demo(), {});
  Delivery delivery;
  Complete(provider, UserSays("hello"), delivery);
  ASSERT_TRUE(delivery.response.has_value());
  EXPECT_THAT(delivery.deltas, IsEmpty());
  EXPECT_THAT((*delivery.response)->text, HasSubstr("Hello"));
}

TEST(ScriptedProviderTest, DeliversToolCallsThroughComplete) {
  ScriptedProvider provider(ScriptedRules::Demo(), {});
  LlmRequest request = UserSays("what time is it?");
  request.stream = true;
  request.tools.push_back({.name = "current_time"});
  Delivery delivery;
  Complete(provider, request, delivery);
  ASSERT_TRUE(delivery.response.has_value());
  EXPECT_THAT(delivery.deltas, IsEmpty());
  ASSERT_THAT((*delivery.response)->tool_calls, SizeIs(1));
  EXPECT_EQ((*delivery.response)->stop_reason, StopReason::kToolUse);
  EXPECT_GT((*delivery.response)->usage.output_tokens, 0);
}

}  // namespace
}  // namespace herald::providers
