#include "providers/factory.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "glog/logging.h"
#include "providers/anthropic/anthropic_provider.h"
#include "providers/http/http_client.h"
#include "providers/ollama/ollama_provider.h"
#include "providers/openai/openai_provider.h"
#include "providers/scripted/scripted_provider.h"

namespace herald::providers {
namespace {

// The providers the configured models name, in the order they are first named.
absl::StatusOr<std::vector<std::string>> NamedProviders(const LlmOptions& config) {
  std::vector<std::pair<std::string, std::string>> references = {
      {"llm.default", config.default_model}};
  for (const auto& [tier, model] : config.tiers) {
    references.emplace_back(absl::StrCat("llm.tiers.", tier), model);
  }
  for (size_t i = 0; i < config.fallback.size(); ++i) {
    references.emplace_back(absl::StrCat("llm.fallback[", i, "]"), config.fallback[i]);
  }
  std::vector<std::string> names;
  for (const auto& [setting, text] : references) {
    absl::StatusOr<ModelRef> ref = ModelRef::Parse(text);
    if (!ref.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(setting, ": ", ref.status().message()));
    }
    if (std::find(names.begin(), names.end(), ref->provider) == names.end()) {
      names.push_back(ref->provider);
    }
  }
  return names;
}

template <typename T>
absl::StatusOr<std::unique_ptr<LlmProvider>> Upcast(absl::StatusOr<std::unique_ptr<T>> provider) {
  if (!provider.ok()) return provider.status();
  return std::unique_ptr<LlmProvider>(*std::move(provider));
}

absl::StatusOr<std::unique_ptr<LlmProvider>> BuildProvider(const std::string& name,
                                                           const LlmOptions& config,
                                                           HttpClient* http,
                                                           const asio::any_io_executor& executor) {
  if (name == "scripted") {
    return Upcast(ScriptedProvider::Create(config.scripted, executor));
  }
  if (name == "anthropic" || name == "openai" || name == "ollama") {
    if (http == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("provider '", name, "' needs an HTTP client and none was given"));
    }
    absl::StatusOr<std::unique_ptr<LlmProvider>> provider;
    if (name == "anthropic") {
      provider = Upcast(AnthropicProvider::Create(http, config.anthropic, config));
    } else if (name == "openai") {
      provider = Upcast(OpenAiProvider::Create(http, config.openai, config));
    } else {
      provider = Upcast(OllamaProvider::Create(http, config.ollama, config));
    }
    if (!provider.ok()) {
      return absl::Status(provider.status().code(),
                          absl::StrCat("llm.", name, ": ", provider.status().message()));
    }
    return provider;
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown provider '", absl::CHexEscape(name),
                                                 "' (known: anthropic, openai, ollama, scripted)"));
}

}  // namespace

absl::StatusOr<std::unique_ptr<ModelRouter>> CreateModelRouter(const LlmOptions& config,
                                                               HttpClient* http,
                                                               asio::any_io_executor executor) {
  LlmOptions effective = config;
  if (effective.default_model.empty()) {
    effective.default_model = kNoModelConfiguredDefault;
    LOG(WARNING) << "LLM: no model is configured ([llm] default is unset); answering with "
                 << kNoModelConfiguredDefault
                 << " (the scripted provider's demo rules, see docs/scripted-provider.md)";
  }
  absl::StatusOr<std::vector<std::string>> names = NamedProviders(effective);
  if (!names.ok()) return names.status();

  std::vector<std::unique_ptr<LlmProvider>> providers;
  for (const std::string& name : *names) {
    absl::StatusOr<std::unique_ptr<LlmProvider>> provider =
        BuildProvider(name, effective, http, executor);
    if (!provider.ok()) return provider.status();
    providers.push_back(*std::move(provider));
  }
  return ModelRouter::Create(effective, std::move(providers));
}

}  // namespace herald::providers
