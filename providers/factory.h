// providers/factory.h
//
// CreateModelRouter turns the [llm] section of the config into a working ModelRouter: it
// builds one provider for each provider that a configured model names (default, tiers,
// fallback) and nothing else, so an unused provider needs no key. With no [llm] default,
// Herald runs on `scripted:demo` (the built-in demo rules, docs/scripted-provider.md) and
// says so in the log, so a fresh install answers without any API key.
//
//   absl::StatusOr<std::unique_ptr<ModelRouter>> router =
//       CreateModelRouter(config.llm, http.get(), io.get_executor());
//   if (!router.ok()) { LOG(ERROR) << router.status(); return 2; }
//   (*router)->Complete(Tier::kDefault, request, on_text, done);
//
// Call it at start-up: the scripted provider reads its rules file here.
#pragma once

#include <asio.hpp>
#include <memory>

#include "absl/status/statusor.h"
#include "providers/llm_options.h"
#include "providers/routing/model_router.h"

namespace herald::providers {

class HttpClient;

// The model Herald uses when [llm] default is unset.
inline constexpr char kNoModelConfiguredDefault[] = "scripted:demo";

// Fails when a model reference is malformed, names an unknown provider, or its provider cannot
// be built (a rules file that does not parse; an HTTP provider without `http`). `http` may be
// null when only `scripted` models are configured; it must outlive the router. `executor`
// is the I/O loop's: the scripted provider delivers its answers there (with none, before
// Complete returns).
absl::StatusOr<std::unique_ptr<ModelRouter>> CreateModelRouter(const LlmOptions& config,
                                                               HttpClient* http,
                                                               asio::any_io_executor executor = {});

}  // namespace herald::providers
