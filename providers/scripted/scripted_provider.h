// providers/scripted/scripted_provider.h
//
// ScriptedProvider is the `scripted` LLM provider (P4): it answers from ScriptedRules
// instead of a model — the demo's default when no API key is set, and a way for an operator
// to test a deployment (XMPP wiring, tools, quotas) without paying for a model. The model
// name is only a label ("scripted:demo"); the rules come from [llm.scripted] rules_file, or
// are the built-in demo rules when that is empty.
//
//   absl::StatusOr<std::unique_ptr<ScriptedProvider>> scripted =
//       ScriptedProvider::Create(config.llm.scripted, io.get_executor());
//   (*scripted)->Complete(request, on_text, done);   // done runs later, on the executor
//
// Usage counts words as tokens (runs of non-space bytes) so that quotas and the ledger work
// with it: input is the system prompt, every message, tool call and result, and the offered
// tools' names and descriptions; output is the reply or the tool call. A reply longer than
// request.max_tokens words is cut there (stop reason kMaxTokens). With request.stream the
// reply arrives in a few deltas before `done`. Images in the request are ignored: the rules
// match text, and images count for no tokens.
#pragma once

#include <asio.hpp>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "providers/llm_options.h"
#include "providers/provider.h"
#include "providers/scripted/scripted_rules.h"

namespace herald::providers {

class ScriptedProvider : public LlmProvider {
 public:
  // Reads the rules file (blocking: call at start-up, not on a running loop). Fails naming
  // the file, the line, the rule and the field. With a default-constructed `executor` the
  // callbacks run before Complete returns; give the I/O loop's executor to keep the
  // provider contract that Complete returns at once.
  static absl::StatusOr<std::unique_ptr<ScriptedProvider>> Create(
      const ScriptedProviderOptions& config, asio::any_io_executor executor = {});

  ScriptedProvider(ScriptedRules rules, asio::any_io_executor executor);

  std::string_view name() const override { return "scripted"; }
  void Complete(const LlmRequest& request, OnText on_text, Done done) override;

  // The complete answer to `request`, usage and max_tokens applied: what Complete delivers.
  LlmResponse Answer(const LlmRequest& request) const;

 private:
  ScriptedRules rules_;
  asio::any_io_executor executor_;
};

}  // namespace herald::providers
