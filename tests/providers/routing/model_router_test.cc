#include "providers/routing/model_router.h"

#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "component/config/config.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "providers/provider.h"

namespace herald::providers {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// A provider whose answers the test scripts: each call takes the next Script (or, when none
// is left, succeeds with "<name>:<model>"), streams its deltas, then completes — at once, or
// when the test calls ReleaseHeld().
class FakeProvider : public LlmProvider {
 public:
  struct Script {
    std::vector<std::string> deltas;
    absl::Status error;  // ok: the call succeeds
    bool hold = false;
  };

  explicit FakeProvider(std::string name) : name_(std::move(name)) {}

  std::string_view name() const override { return name_; }

  void Complete(const LlmRequest& request, OnText on_text, Done done) override {
    models.push_back(request.model);
    Script script;
    if (!scripts.empty()) {
      script = std::move(scripts.front());
      scripts.pop_front();
    }
    for (const std::string& delta : script.deltas) on_text(delta);
    auto finish = [this, script, model = request.model, done = std::move(done)] {
      if (!script.error.ok()) return done(script.error);
      LlmResponse response;
      response.text = absl::StrCat(name_, ":", model);
      done(std::move(response));
    };
    if (script.hold) {
      held_.push_back(std::move(finish));
    } else {
      finish();
    }
  }

  void ReleaseHeld() {
    std::vector<std::function<void()>> held = std::move(held_);
    held_.clear();
    for (auto& finish : held) finish();
  }

  std::deque<Script> scripts;
  std::vector<std::string> models;  // request.model of every call, in order

 private:
  std::string name_;
  std::vector<std::function<void()>> held_;
};

struct Result {
  std::optional<absl::StatusOr<LlmResponse>> response;
  std::string streamed;
};

class ModelRouterTest : public ::testing::Test {
 protected:
  ModelRouterTest() {
    config_.default_model = "anthropic:claude-x";
    config_.circuit_breaker_failures = 5;
    config_.circuit_breaker_cooldown_seconds = 3600;
  }

  absl::StatusOr<std::unique_ptr<ModelRouter>> Create() {
    std::vector<std::unique_ptr<LlmProvider>> providers;
    auto anthropic = std::make_unique<FakeProvider>("anthropic");
    auto openai = std::make_unique<FakeProvider>("openai");
    auto ollama = std::make_unique<FakeProvider>("ollama");
    anthropic_ = anthropic.get();
    openai_ = openai.get();
    ollama_ = ollama.get();
    providers.push_back(std::move(anthropic));
    providers.push_back(std::move(openai));
    providers.push_back(std::move(ollama));
    return ModelRouter::Create(config_, std::move(providers));
  }

  static std::shared_ptr<Result> Run(ModelRouter& router, Tier tier = Tier::kDefault) {
    auto result = std::make_shared<Result>();
    LlmRequest request;
    request.messages.push_back({.text = "hello"});
    router.Complete(
        tier, request, [result](std::string_view delta) { result->streamed += delta; },
        [result](absl::StatusOr<LlmResponse> response) { result->response = std::move(response); });
    return result;
  }

  LlmOptions config_;
  FakeProvider* anthropic_ = nullptr;
  FakeProvider* openai_ = nullptr;
  FakeProvider* ollama_ = nullptr;
};

TEST(ModelRefTest, SplitsProviderAndModelAtTheFirstColon) {
  absl::StatusOr<ModelRef> ref = ModelRef::Parse("ollama:llama3.1:8b");
  ASSERT_TRUE(ref.ok()) << ref.status();
  EXPECT_EQ(ref->provider, "ollama");
  EXPECT_EQ(ref->model, "llama3.1:8b");
  EXPECT_EQ(ref->ToString(), "ollama:llama3.1:8b");
}

TEST(ModelRefTest, RefusesAReferenceWithoutAProvider) {
  for (std::string_view text : {"claude-sonnet-4-5", ":claude-sonnet-4-5", ""}) {
    absl::StatusOr<ModelRef> ref = ModelRef::Parse(text);
    EXPECT_TRUE(absl::IsInvalidArgument(ref.status())) << text;
    EXPECT_THAT(std::string(ref.status().message()), HasSubstr("names no provider")) << text;
  }
}

TEST(ModelRefTest, RefusesAReferenceWithoutAModel) {
  absl::StatusOr<ModelRef> ref = ModelRef::Parse("anthropic:");
  EXPECT_TRUE(absl::IsInvalidArgument(ref.status()));
  EXPECT_THAT(std::string(ref.status().message()), HasSubstr("names no model"));
}

TEST(ModelRefTest, RefusesWhitespaceControlCharactersAndOverlongReferences) {
  EXPECT_FALSE(ModelRef::Parse("anthropic:claude x").ok());
  EXPECT_FALSE(ModelRef::Parse(std::string("anthropic:claude\0x", 18)).ok());
  EXPECT_FALSE(ModelRef::Parse("anthropic:" + std::string(300, 'a')).ok());
}

TEST_F(ModelRouterTest, RefusesAModelOfAProviderThatIsNotConfigured) {
  config_.tiers["light"] = "scripted:demo";
  absl::StatusOr<std::unique_ptr<ModelRouter>> router = Create();
  EXPECT_TRUE(absl::IsInvalidArgument(router.status()));
  EXPECT_THAT(std::string(router.status().message()),
              HasSubstr("llm.tiers.light: model 'scripted:demo' names provider 'scripted', "
                        "which is not configured (configured: anthropic, ollama, openai)"));
}

TEST_F(ModelRouterTest, RefusesAnUnknownFallbackProviderNamingItsPosition) {
  config_.fallback = {"openai:gpt-y", "mistral:large"};
  absl::StatusOr<std::unique_ptr<ModelRouter>> router = Create();
  EXPECT_THAT(std::string(router.status().message()), HasSubstr("llm.fallback[1]"));
}

TEST_F(ModelRouterTest, RefusesAMissingDefaultAndAnUnknownTier) {
  config_.default_model = "";
  EXPECT_THAT(std::string(Create().status().message()), HasSubstr("llm.default"));
  config_.default_model = "anthropic:claude-x";
  config_.tiers["huge"] = "openai:gpt-y";
  EXPECT_THAT(std::string(Create().status().message()), HasSubstr("unknown tier 'huge'"));
}

TEST_F(ModelRouterTest, EveryTierUsesTheDefaultWhenNoTiersAreConfigured) {
  absl::StatusOr<std::unique_ptr<ModelRouter>> router = Create();
  ASSERT_TRUE(router.ok()) << router.status();
  ModelRef expected{"anthropic", "claude-x"};
  for (Tier tier : {Tier::kDefault, Tier::kHeavy, Tier::kStandard, Tier::kLight, Tier::kVision}) {
    EXPECT_EQ((*router)->ModelFor(tier), expected);
  }
}

TEST_F(ModelRouterTest, AConfiguredTierResolvesToItsModelAndTheOthersToTheDefault) {
  config_.tiers["light"] = "ollama:llama3.1:8b";
  config_.tiers["heavy"] = "openai:gpt-big";
  absl::StatusOr<std::unique_ptr<ModelRouter>> router = Create();
  ASSERT_TRUE(router.ok()) << router.status();
  EXPECT_EQ((*router)->ModelFor(Tier::kLight), (ModelRef{"ollama", "llama3.1:8b"}));
  EXPECT_EQ((*router)->ModelFor(Tier::kHeavy), (ModelRef{"openai", "gpt-big"}));
  EXPECT_EQ((*router)->ModelFor(Tier::kVision), (ModelRef{"anthropic", "claude-x"}));

  std::shared_ptr<Result> result = Run(**router, Tier::kLight);
  ASSERT_TRUE(result->response.has_value());
  ASSERT_TRUE(result->response->ok()) << result->response->status();
  EXPECT_EQ((*result->response)->text, "ollama:llama3.1:8b");
  EXPECT_EQ((*result->response)->provider, "ollama");
  EXPECT_THAT(ollama_->models, ElementsAre("llama3.1:8b"));
  EXPECT_THAT(anthropic_->models, IsEmpty());
}

TEST_F(ModelRouterTest, FallsOverAlongTheChainInOrder) {
  config_.fallback = {"openai:gpt-y", "ollama:llama3"};
  absl::StatusOr<std::unique_ptr<ModelRouter>> router = Create();
  ASSERT_TRUE(router.ok()) << router.status();
  anthropic_->scripts.push_back({.error = absl::UnavailableError("HTTP 503")});
  openai_->scripts.push_back({.error = absl::DeadlineExceededError("no answer in 120s")});

  std::shared_ptr<Result> result = Run(**router);
  ASSERT_TRUE(result->response.has_value());
  ASSERT_TRUE(result->response->ok()) << result->response->status();
  EXPECT_EQ((*result->response)->text, "ollama:llama3");
  EXPECT_THAT(anthropic_->models, ElementsAre("claude-x"));
  EXPECT_THAT(openai_->models, ElementsAre("gpt-y"));
  EXPECT_THAT(ollama_->models, ElementsAre("llama3"));
}

TEST_F(ModelRouterTest, TheFinalErrorNamesEveryAttempt) {
  config_.fallback = {"openai:gpt-y"};
  absl::StatusOr<std::unique_ptr<ModelRouter>> router = Create();
  ASSERT_TRUE(router.ok()) << router.status();
  anthropic_->scripts.push_back({.error = absl::UnavailableError("HTTP 503")});
  openai_->scripts.push_back({.error = absl::DeadlineExceededError("no answer in 120s")});

  std::shared_ptr<Result> result = Run(**router);
  ASSERT_TRUE(result->response.has_value());
  EXPECT_TRUE(absl::IsDeadlineExceeded(result->response->status()));
  EXPECT_EQ(result->response->status().message(),
            "anthropic:claude-x: unavailable (HTTP 503); "
            "openai:gpt-y: deadline exceeded (no answer in 120s)");
}

TEST_F(ModelRouterTest, ATierModelFallsOverToTheFallbackChain) {
  config_.tiers["light"] = "ollama:small";
  config_.fallback = {"anthropic:claude-x"};
  absl::StatusOr<std::unique_ptr<ModelRouter>> router = Create();
  ASSERT_TRUE(router.ok()) << router.status();
  ollama_->scripts.push_back({.error = absl::UnavailableError("connection refused")});

  std::shared_ptr<Result> result = Run(**router, Tier::kLight);
  ASSERT_TRUE(result->response.has_value());
  ASSERT_TRUE(result->response->ok()) << result->response->status();
  EXPECT_EQ((*result->response)->text, "anthropic:claude-x");
}

TEST_F(ModelRouterTest, AModelListedTwiceIsTriedOnce) {
  config_.fallback = {"anthropic:claude-x", "openai:gpt-y"};
  absl::StatusOr<std::unique_ptr<ModelRouter>> router = Create();
  ASSERT_TRUE(router.ok()) << router.status();
  anthropic_->scripts.push_back({.error = absl::UnavailableError("down")});
  anthropic_->scripts.push_back({.error = absl::UnavailableError("down")});

  std::shared_ptr<Result> result = Run(**router);
  ASSERT_TRUE(result->response.has_value());
  ASSERT_TRUE(result->response->ok()) << result->response->status();
  EXPECT_THAT(anthropic_->models, ElementsAre("claude-x"));
  EXPECT_THAT(openai_->models, ElementsAre("gpt-y"));
}

TEST_F(ModelRouterTest, DoesNotFallOverOnceTextWasStreamed) {
  config_.fallback = {"openai:gpt-y"};
  absl::StatusOr<std::unique_ptr<ModelRouter>> router = Create();
  ASSERT_TRUE(router.ok()) << router.status();
  anthropic_->scripts.push_back(
      {.deltas = {"The answer ", "is"}, .error = absl::UnavailableError("stream cut")});

  std::shared_ptr<Result> result = Run(**router);
  ASSERT_TRUE(result->response.has_value());
  EXPECT_TRUE(absl::IsUnavailable(result->response->status()));
  EXPECT_THAT(std::string(result->response->status().message()),
              HasSubstr("anthropic:claude-x: unavailable (stream cut)"));
  EXPECT_EQ(result->streamed, "The answer is");
  EXPECT_THAT(openai_->models, IsEmpty());
}

TEST_F(ModelRouterTest, ACancelledCallIsNotRetried) {
  config_.fallback = {"openai:gpt-y"};
  absl::StatusOr<std::unique_ptr<ModelRouter>> router = Create();
  ASSERT_TRUE(router.ok()) << router.status();
  anthropic_->scripts.push_back({.error = absl::CancelledError("turn cancelled")});

  std::shared_ptr<Result> result = Run(**router);
  ASSERT_TRUE(result->response.has_value());
  EXPECT_TRUE(absl::IsCancelled(result->response->status()));
  EXPECT_THAT(openai_->models, IsEmpty());
}

TEST_F(ModelRouterTest, AnOpenCircuitSkipsTheProviderWithoutCallingIt) {
  config_.fallback = {"openai:gpt-y"};
  config_.circuit_breaker_failures = 2;
  absl::StatusOr<std::unique_ptr<ModelRouter>> router = Create();
  ASSERT_TRUE(router.ok()) << router.status();
  anthropic_->scripts.push_back({.error = absl::UnavailableError("down")});
  anthropic_->scripts.push_back({.error = absl::UnavailableError("down")});
  Run(**router);
  Run(**router);
  ASSERT_THAT(anthropic_->models, ElementsAre("claude-x", "claude-x"));

  std::shared_ptr<Result> result = Run(**router);
  ASSERT_TRUE(result->response.has_value());
  ASSERT_TRUE(result->response->ok()) << result->response->status();
  EXPECT_EQ((*result->response)->text, "openai:gpt-y");
  EXPECT_EQ(anthropic_->models.size(), 2u);

  openai_->scripts.push_back({.error = absl::UnavailableError("down too")});
  result = Run(**router);
  EXPECT_EQ(anthropic_->models.size(), 2u);
  EXPECT_THAT(std::string(result->response->status().message()),
              HasSubstr("anthropic:claude-x: unavailable (circuit open for provider anthropic, "
                        "next trial in 1h); openai:gpt-y: unavailable (down too)"));
}

TEST_F(ModelRouterTest, AHalfOpenCircuitLetsOnlyItsTrialCallThroughUntilItSucceeds) {
  // A zero cooldown (the config loader allows 1 s at least) makes the circuit half-open as
  // soon as it opens, without a clock to advance.
  config_.fallback = {"openai:gpt-y"};
  config_.circuit_breaker_failures = 1;
  config_.circuit_breaker_cooldown_seconds = 0;
  absl::StatusOr<std::unique_ptr<ModelRouter>> router = Create();
  ASSERT_TRUE(router.ok()) << router.status();
  anthropic_->scripts.push_back({.error = absl::UnavailableError("down")});
  anthropic_->scripts.push_back({.hold = true});
  Run(**router);  // opens the circuit

  std::shared_ptr<Result> trial = Run(**router);
  EXPECT_FALSE(trial->response.has_value());
  std::shared_ptr<Result> during_trial = Run(**router);
  ASSERT_TRUE(during_trial->response.has_value());
  EXPECT_EQ((*during_trial->response)->text, "openai:gpt-y");
  EXPECT_EQ(anthropic_->models.size(), 2u);

  anthropic_->ReleaseHeld();
  ASSERT_TRUE(trial->response.has_value());
  EXPECT_EQ((*trial->response)->text, "anthropic:claude-x");
  std::shared_ptr<Result> after = Run(**router);
  EXPECT_EQ((*after->response)->text, "anthropic:claude-x");
}

TEST_F(ModelRouterTest, ARefusedRequestFallsOverButDoesNotOpenTheCircuit) {
  config_.fallback = {"openai:gpt-y"};
  config_.circuit_breaker_failures = 1;
  absl::StatusOr<std::unique_ptr<ModelRouter>> router = Create();
  ASSERT_TRUE(router.ok()) << router.status();
  anthropic_->scripts.push_back({.error = absl::InvalidArgumentError("prompt is too long")});

  std::shared_ptr<Result> first = Run(**router);
  EXPECT_EQ((*first->response)->text, "openai:gpt-y");
  std::shared_ptr<Result> second = Run(**router);
  EXPECT_EQ((*second->response)->text, "anthropic:claude-x");
}

TEST_F(ModelRouterTest, TheObserverHearsOfEveryAttemptAndTheCircuitsAreReported) {
  config_.fallback = {"openai:gpt-y"};
  config_.circuit_breaker_failures = 1;
  absl::StatusOr<std::unique_ptr<ModelRouter>> router = Create();
  ASSERT_TRUE(router.ok()) << router.status();
  std::vector<CallReport> reports;
  (*router)->set_call_observer([&](const CallReport& report) { reports.push_back(report); });
  anthropic_->scripts.push_back({.error = absl::UnavailableError("down")});
  Run(**router);  // anthropic fails (its circuit opens), openai answers
  Run(**router);  // anthropic refused at once, openai answers
  ASSERT_EQ(reports.size(), 4u);
  EXPECT_EQ(reports[0].provider, "anthropic");
  EXPECT_EQ(reports[0].model, "claude-x");
  EXPECT_EQ(reports[0].code, absl::StatusCode::kUnavailable);
  EXPECT_FALSE(reports[0].circuit_open);
  EXPECT_EQ(reports[1].provider, "openai");
  EXPECT_EQ(reports[1].code, absl::StatusCode::kOk);
  EXPECT_GE(reports[1].latency, absl::ZeroDuration());
  EXPECT_TRUE(reports[2].circuit_open);
  EXPECT_EQ(reports[2].latency, absl::ZeroDuration());
  EXPECT_EQ(reports[3].code, absl::StatusCode::kOk);
  EXPECT_THAT((*router)->CircuitStates(),
              ElementsAre(std::pair<std::string, std::string>("anthropic", "open"),
                          std::pair<std::string, std::string>("ollama", "closed"),
                          std::pair<std::string, std::string>("openai", "closed")));
  (*router)->set_call_observer(nullptr);
  Run(**router);
  EXPECT_EQ(reports.size(), 4u);
}

}  // namespace
}  // namespace herald::providers
