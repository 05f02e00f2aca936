// providers/routing/model_router.h
//
// ModelRouter decides which model answers a call (P3): [llm] default, the model of a tier
// ([llm.tiers] heavy / standard / light / vision; an unset tier uses the default), and the
// fallback chain ([llm] fallback, tried in order when the chosen model fails). Each provider
// sits behind a circuit breaker: after [llm] circuit_breaker_failures consecutive failures
// its calls fail fast (and fall over) until circuit_breaker_cooldown_seconds have passed,
// when one trial call is let through. A call whose text was already streamed is not retried
// elsewhere (the user saw part of it); it fails instead.
//
//   auto router = ModelRouter::Create(config.llm, std::move(providers));
//   (*router)->Complete(Tier::kLight, request, on_text, done);   // request.model is set here
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "providers/llm_options.h"
#include "providers/provider.h"

namespace herald::providers {

enum class Tier { kDefault, kHeavy, kStandard, kLight, kVision };

// "anthropic:claude-sonnet-4-5" → {provider "anthropic", model "claude-sonnet-4-5"}; the model
// may itself contain ':' ("ollama:llama3.1:8b").
struct ModelRef {
  std::string provider;
  std::string model;

  static absl::StatusOr<ModelRef> Parse(std::string_view text);
  std::string ToString() const;
  friend bool operator==(const ModelRef&, const ModelRef&) = default;
};

// One attempt at one model, as the router saw it (for metrics): how long the provider took,
// and how it ended — kOk, its error's code, or refused at once by an open circuit.
struct CallReport {
  std::string provider;
  std::string model;
  absl::Duration latency = absl::ZeroDuration();  // zero when the circuit refused it
  absl::StatusCode code = absl::StatusCode::kOk;
  bool circuit_open = false;
};

class ModelRouter {
 public:
  // Fails when a configured model names a provider that is not among `providers`.
  static absl::StatusOr<std::unique_ptr<ModelRouter>> Create(
      const LlmOptions& config, std::vector<std::unique_ptr<LlmProvider>> providers);
  ~ModelRouter();

  // The model a tier resolves to.
  ModelRef ModelFor(Tier tier) const;

  // Runs `request` on the tier's model, falling over along the chain. `done` gets the first
  // success, or the last failure with every attempt named in its message.
  void Complete(Tier tier, LlmRequest request, LlmProvider::OnText on_text, LlmProvider::Done done);

  // Told of every attempt, where the attempt ends (the I/O loop). Set it before calls start,
  // and clear it (nullptr) before the observer goes.
  void set_call_observer(std::function<void(const CallReport&)> observer);

  // Each provider's circuit breaker: provider name → "closed", "open" or "half_open", sorted.
  // Thread-safe.
  std::vector<std::pair<std::string, std::string>> CircuitStates() const;

 private:
  class Impl;
  explicit ModelRouter(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace herald::providers
