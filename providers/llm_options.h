// providers/llm_options.h
//
// What the providers module is configured with: the models to use (default, tiers, fallback
// chain), how to reach each provider, and the limits of every call. component/config fills it
// from [llm] (docs/configuration.md); CreateModelRouter (providers/factory.h) builds the
// router and the providers it names from it.
//
//   LlmOptions options;
//   options.default_model = "anthropic:claude-sonnet-4-5";
//   options.anthropic.api_key = key;
//   auto router = CreateModelRouter(options, http.get(), io.get_executor());
#pragma once

#include <map>
#include <string>
#include <vector>

#include "providers/http/http_version.h"

namespace herald::providers {

// [llm.anthropic] and [llm.openai] (any OpenAI-compatible Chat Completions server).
struct HostedProviderOptions {
  std::string api_key;  // a secret: never logged
  std::string base_url;
  // http2 = "auto" (HTTP/2 when the TLS server offers it) or "off" (HTTP/1.1 only).
  HttpVersion http_version = HttpVersion::kAuto;
  std::string tls_ca_file;  // PEM CAs trusted instead of the system's; "" = the system's

  friend bool operator==(const HostedProviderOptions&, const HostedProviderOptions&) = default;
};

struct OllamaOptions {
  std::string host = "http://localhost:11434";

  friend bool operator==(const OllamaOptions&, const OllamaOptions&) = default;
};

// The `scripted` provider (P4): deterministic replies and tool calls from a rules file.
struct ScriptedProviderOptions {
  std::string rules_file;  // empty: the built-in demo rules

  friend bool operator==(const ScriptedProviderOptions&, const ScriptedProviderOptions&) = default;
};

struct LlmOptions {
  std::string default_model;  // "<provider>:<model>"; empty when the file does not set one
  std::vector<std::string> fallback;
  // "heavy" | "standard" | "light" | "vision" -> "<provider>:<model>"; only the tiers set.
  std::map<std::string, std::string> tiers;
  HostedProviderOptions anthropic = {"", "https://api.anthropic.com"};
  HostedProviderOptions openai = {"", "https://api.openai.com/v1"};
  OllamaOptions ollama;
  ScriptedProviderOptions scripted;
  int max_tokens = 1024;  // per LLM call
  bool stream = true;     // stream answers where the provider can
  int connect_timeout_seconds = 10;
  int request_timeout_seconds = 120;
  int max_retries = 2;                        // on 429/5xx/transport errors, with backoff
  int circuit_breaker_failures = 5;           // consecutive failures that open the circuit
  int circuit_breaker_cooldown_seconds = 30;  // before one trial call is let through

  friend bool operator==(const LlmOptions&, const LlmOptions&) = default;
};

}  // namespace herald::providers
