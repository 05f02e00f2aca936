#include "providers/routing/model_router.h"

#include <algorithm>
#include <memory>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "component/base/absl_string_view.h"
#include "glog/logging.h"
#include "providers/routing/circuit_breaker.h"

namespace herald::providers {
namespace {

// Longer than any real model name; bounds what a hostile config can make us copy and log.
constexpr size_t kMaxModelReferenceBytes = 256;
// Provider error messages are meant for logs, but a bound keeps one bad body from flooding them.
constexpr size_t kMaxLoggedErrorBytes = 300;

std::string Quoted(std::string_view text) {
  return absl::StrCat("'", absl::CHexEscape(AbslView(text.substr(0, kMaxModelReferenceBytes))),
                      text.size() > kMaxModelReferenceBytes ? "...'" : "'");
}

// "DEADLINE_EXCEEDED" → "deadline exceeded": the attempt list is read by people.
std::string CodeText(absl::StatusCode code) {
  std::string text = absl::AsciiStrToLower(absl::StatusCodeToString(code));
  std::replace(text.begin(), text.end(), '_', ' ');
  return text;
}

std::string Describe(const ModelRef& ref, const absl::Status& status) {
  std::string message(status.message());
  if (message.empty()) return absl::StrCat(ref.ToString(), ": ", CodeText(status.code()));
  return absl::StrCat(ref.ToString(), ": ", CodeText(status.code()), " (", message, ")");
}

std::string ForLog(const absl::Status& status) {
  std::string message = absl::CHexEscape(status.message().substr(0, kMaxLoggedErrorBytes));
  return absl::StrCat(CodeText(status.code()), message.empty() ? "" : ": ", message);
}

absl::StatusOr<Tier> TierNamed(std::string_view name) {
  if (name == "heavy") return Tier::kHeavy;
  if (name == "standard") return Tier::kStandard;
  if (name == "light") return Tier::kLight;
  if (name == "vision") return Tier::kVision;
  return absl::InvalidArgumentError(
      absl::StrCat("llm.tiers: unknown tier ", Quoted(name),
                   " (the tiers are heavy, standard, light and vision)"));
}

absl::StatusOr<ModelRef> ParseSetting(std::string_view setting, std::string_view text) {
  absl::StatusOr<ModelRef> ref = ModelRef::Parse(text);
  if (!ref.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(AbslView(setting), ": ", ref.status().message()));
  }
  return ref;
}

}  // namespace

absl::StatusOr<ModelRef> ModelRef::Parse(std::string_view text) {
  constexpr std::string_view kExpected =
      "expected \"<provider>:<model>\", as in \"anthropic:claude-sonnet-4-5\"";
  if (text.size() > kMaxModelReferenceBytes) {
    return absl::InvalidArgumentError(absl::StrCat("model reference ", Quoted(text), " is over ",
                                                   kMaxModelReferenceBytes, " bytes"));
  }
  for (char c : text) {
    auto byte = static_cast<unsigned char>(c);
    if (byte <= 0x20 || byte == 0x7f) {
      return absl::InvalidArgumentError(absl::StrCat(
          "model reference ", Quoted(text), " contains whitespace or a control character"));
    }
  }
  size_t colon = text.find(':');
  if (colon == std::string_view::npos || colon == 0) {
    return absl::InvalidArgumentError(absl::StrCat("model reference ", Quoted(text),
                                                   " names no provider: ", AbslView(kExpected)));
  }
  if (colon + 1 == text.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("model reference ", Quoted(text), " names no model: ", AbslView(kExpected)));
  }
  return ModelRef{std::string(text.substr(0, colon)), std::string(text.substr(colon + 1))};
}

std::string ModelRef::ToString() const { return absl::StrCat(provider, ":", model); }

class ModelRouter::Impl {
 public:
  Impl(absl::flat_hash_map<std::string, std::unique_ptr<LlmProvider>> providers,
       const LlmOptions& config, ModelRef default_model, absl::flat_hash_map<Tier, ModelRef> tiers,
       std::vector<ModelRef> fallback)
      : default_model_(std::move(default_model)),
        tiers_(std::move(tiers)),
        fallback_(std::move(fallback)),
        providers_(std::move(providers)) {
    for (const auto& [name, provider] : providers_) {
      breakers_[name] = std::make_unique<CircuitBreaker>(CircuitBreaker::Options{
          config.circuit_breaker_failures, absl::Seconds(config.circuit_breaker_cooldown_seconds)});
    }
  }

  ModelRef ModelFor(Tier tier) const {
    auto it = tiers_.find(tier);
    return it != tiers_.end() ? it->second : default_model_;
  }

  void set_call_observer(std::function<void(const CallReport&)> observer) {
    observer_ = std::move(observer);
  }

  std::vector<std::pair<std::string, std::string>> CircuitStates() const {
    std::vector<std::pair<std::string, std::string>> states;
    for (const auto& [name, breaker] : breakers_) {
      const CircuitBreaker::State state = breaker->state();
      states.emplace_back(name, state == CircuitBreaker::State::kOpen       ? "open"
                                : state == CircuitBreaker::State::kHalfOpen ? "half_open"
                                                                            : "closed");
    }
    std::sort(states.begin(), states.end());
    return states;
  }

  void Complete(Tier tier, LlmRequest request, LlmProvider::OnText on_text,
                LlmProvider::Done done) {
    auto call = std::make_shared<Call>();
    call->request = std::move(request);
    call->on_text = std::move(on_text);
    call->done = std::move(done);
    call->chain.push_back(ModelFor(tier));
    for (const ModelRef& ref : fallback_) {
      if (std::find(call->chain.begin(), call->chain.end(), ref) == call->chain.end()) {
        call->chain.push_back(ref);
      }
    }
    Next(call);
  }

 private:
  // One routed call as it walks the chain; shared by the callbacks of its attempts.
  struct Call {
    LlmRequest request;
    LlmProvider::OnText on_text;
    LlmProvider::Done done;
    std::vector<ModelRef> chain;
    size_t next = 0;
    bool streamed = false;
    std::vector<std::string> failures;
    absl::StatusCode last_code = absl::StatusCode::kUnavailable;
  };

  void Next(const std::shared_ptr<Call>& call) {
    while (call->next < call->chain.size()) {
      const ModelRef ref = call->chain[call->next++];
      CircuitBreaker& breaker = *breakers_.at(ref.provider);
      CircuitBreaker::Admission admission = breaker.Admit();
      if (admission == CircuitBreaker::Admission::kRejected) {
        absl::Status open = absl::UnavailableError(absl::StrCat(
            "circuit open for provider ", ref.provider, ", next trial in ",
            absl::FormatDuration(absl::Ceil(breaker.RemainingCooldown(), absl::Seconds(1)))));
        Report(ref, absl::ZeroDuration(), open.code(), /*circuit_open=*/true);
        Failed(call, ref, open);
        continue;
      }
      call->request.model = ref.model;
      LlmProvider& provider = *providers_.at(ref.provider);
      provider.Complete(
          call->request,
          [call](std::string_view delta) {
            call->streamed = true;
            if (call->on_text) call->on_text(delta);
          },
          [this, call, ref, admission,
           started = absl::Now()](absl::StatusOr<LlmResponse> response) {
            Report(ref, absl::Now() - started, response.status().code(), false);
            Finished(call, ref, admission, std::move(response));
          });
      return;
    }
    call->done(absl::Status(call->last_code, absl::StrJoin(call->failures, "; ")));
  }

  void Finished(const std::shared_ptr<Call>& call, const ModelRef& ref,
                CircuitBreaker::Admission admission, absl::StatusOr<LlmResponse> response) {
    CircuitBreaker& breaker = *breakers_.at(ref.provider);
    if (response.ok()) {
      breaker.Record(admission, CircuitBreaker::Outcome::kSuccess);
      if (response->provider.empty()) response->provider = ref.provider;
      if (response->model.empty()) response->model = ref.model;
      call->done(std::move(response));
      return;
    }
    const absl::Status& status = response.status();
    if (absl::IsCancelled(status)) {
      // The caller gave up; nothing to learn about the provider and nothing to retry.
      breaker.Record(admission, CircuitBreaker::Outcome::kNeutral);
      call->done(status);
      return;
    }
    // A refused request (4xx) proves the provider is up and answering; only failures of the
    // provider itself count towards opening its circuit.
    breaker.Record(admission, absl::IsInvalidArgument(status) ? CircuitBreaker::Outcome::kSuccess
                                                              : CircuitBreaker::Outcome::kFailure);
    if (call->streamed) {
      call->failures.push_back(Describe(ref, status));
      call->last_code = status.code();
      LOG(WARNING) << "LLM: " << ref.ToString() << " failed after streaming part of its answer ("
                   << ForLog(status) << "); not falling over";
      call->done(absl::Status(
          status.code(),
          absl::StrCat(absl::StrJoin(call->failures, "; "),
                       "; not retried elsewhere because part of the answer was already sent")));
      return;
    }
    Failed(call, ref, status);
    Next(call);
  }

  void Report(const ModelRef& ref, absl::Duration latency, absl::StatusCode code,
              bool circuit_open) {
    if (!observer_) return;
    observer_(CallReport{.provider = ref.provider,
                         .model = ref.model,
                         .latency = latency,
                         .code = code,
                         .circuit_open = circuit_open});
  }

  void Failed(const std::shared_ptr<Call>& call, const ModelRef& ref, const absl::Status& status) {
    call->failures.push_back(Describe(ref, status));
    call->last_code = status.code();
    if (call->next < call->chain.size()) {
      LOG(WARNING) << "LLM: " << ref.ToString() << " failed (" << ForLog(status)
                   << "); falling over to " << call->chain[call->next].ToString();
    } else {
      LOG(WARNING) << "LLM: " << ref.ToString() << " failed (" << ForLog(status)
                   << "); no model left in the fallback chain";
    }
  }

  absl::flat_hash_map<std::string, std::unique_ptr<CircuitBreaker>> breakers_;
  std::function<void(const CallReport&)> observer_;
  ModelRef default_model_;
  absl::flat_hash_map<Tier, ModelRef> tiers_;
  std::vector<ModelRef> fallback_;
  // Last, so the providers go first: a provider that completes its calls while it is being
  // destroyed still finds the breakers and the chain.
  absl::flat_hash_map<std::string, std::unique_ptr<LlmProvider>> providers_;
};

absl::StatusOr<std::unique_ptr<ModelRouter>> ModelRouter::Create(
    const LlmOptions& config, std::vector<std::unique_ptr<LlmProvider>> providers) {
  absl::flat_hash_map<std::string, std::unique_ptr<LlmProvider>> by_name;
  for (std::unique_ptr<LlmProvider>& provider : providers) {
    if (provider == nullptr) return absl::InvalidArgumentError("a provider is null");
    std::string name(provider->name());
    if (by_name.contains(name)) {
      return absl::InvalidArgumentError(
          absl::StrCat("provider ", Quoted(name), " is given more than once"));
    }
    by_name[name] = std::move(provider);
  }
  std::vector<std::string> known;
  for (const auto& [name, provider] : by_name) known.push_back(name);
  std::sort(known.begin(), known.end());
  auto check_provider = [&](std::string_view setting, const ModelRef& ref) -> absl::Status {
    if (by_name.contains(ref.provider)) return absl::OkStatus();
    return absl::InvalidArgumentError(
        absl::StrCat(AbslView(setting), ": model ", Quoted(ref.ToString()), " names provider ",
                     Quoted(ref.provider), ", which is not configured (configured: ",
                     known.empty() ? "none" : absl::StrJoin(known, ", "), ")"));
  };

  if (config.default_model.empty()) {
    return absl::InvalidArgumentError("llm.default: no model is set");
  }
  absl::StatusOr<ModelRef> default_model = ParseSetting("llm.default", config.default_model);
  if (!default_model.ok()) return default_model.status();
  if (absl::Status s = check_provider("llm.default", *default_model); !s.ok()) return s;

  absl::flat_hash_map<Tier, ModelRef> tiers;
  for (const auto& [name, model] : config.tiers) {
    std::string setting = absl::StrCat("llm.tiers.", name);
    absl::StatusOr<Tier> tier = TierNamed(name);
    if (!tier.ok()) return tier.status();
    absl::StatusOr<ModelRef> ref = ParseSetting(setting, model);
    if (!ref.ok()) return ref.status();
    if (absl::Status s = check_provider(setting, *ref); !s.ok()) return s;
    tiers[*tier] = *std::move(ref);
  }

  std::vector<ModelRef> fallback;
  for (size_t i = 0; i < config.fallback.size(); ++i) {
    std::string setting = absl::StrCat("llm.fallback[", i, "]");
    absl::StatusOr<ModelRef> ref = ParseSetting(setting, config.fallback[i]);
    if (!ref.ok()) return ref.status();
    if (absl::Status s = check_provider(setting, *ref); !s.ok()) return s;
    fallback.push_back(*std::move(ref));
  }

  return std::unique_ptr<ModelRouter>(
      new ModelRouter(std::make_unique<Impl>(std::move(by_name), config, *std::move(default_model),
                                             std::move(tiers), std::move(fallback))));
}

ModelRouter::ModelRouter(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ModelRouter::~ModelRouter() = default;

ModelRef ModelRouter::ModelFor(Tier tier) const { return impl_->ModelFor(tier); }

void ModelRouter::set_call_observer(std::function<void(const CallReport&)> observer) {
  impl_->set_call_observer(std::move(observer));
}

std::vector<std::pair<std::string, std::string>> ModelRouter::CircuitStates() const {
  return impl_->CircuitStates();
}

void ModelRouter::Complete(Tier tier, LlmRequest request, LlmProvider::OnText on_text,
                           LlmProvider::Done done) {
  impl_->Complete(tier, std::move(request), std::move(on_text), std::move(done));
}

}  // namespace herald::providers
