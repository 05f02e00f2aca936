// tests/component/agent/scripted_model.h
//
// Test doubles for the agent runtime's tests: ScriptedModel, a provider that answers from a
// script (or a function) after a chosen delay on the I/O loop and records every request; and
// ShoutSkill (tests/skills/shout_skill.h), a tool that upper-cases its argument.
//
//   auto model = std::make_unique<ScriptedModel>(io);
//   model->script.push_back({.calls = {{.id = "t1", .name = "shout", .arguments = ...}}});
//   model->script.push_back({.text = "done"});
#pragma once

#include <asio.hpp>
#include <cctype>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "providers/provider.h"
#include "skills/skill.h"
#include "tests/skills/shout_skill.h"

namespace herald::agent::testing {

using providers::LlmRequest;
using providers::LlmResponse;

// One scripted answer of the test-double model.
struct Step {
  std::string text;
  std::vector<providers::ToolCall> calls;
  absl::Status error = absl::OkStatus();
  absl::Duration delay = absl::ZeroDuration();
  // Streamed before the answer, one by one on the loop (when the request streams); `text`
  // is still the whole answer.
  std::vector<std::string> deltas;
};

class ScriptedModel : public providers::LlmProvider {
 public:
  explicit ScriptedModel(asio::io_context& io) : io_(io) {}
  std::string_view name() const override { return "fake"; }

  void Complete(const LlmRequest& request, OnText on_text, Done done) override {
    requests.push_back(request);
    Step step;
    if (respond) {
      step = respond(request);
    } else if (!script.empty()) {
      step = script.front();
      script.pop_front();
    } else {
      step.text = "ok";
    }
    absl::StatusOr<LlmResponse> response = absl::UnknownError("unset");
    if (!step.error.ok()) {
      response = step.error;
    } else {
      response = LlmResponse{.text = step.text,
                             .tool_calls = step.calls,
                             .usage = {.input_tokens = 10, .output_tokens = 5},
                             .model = "model",
                             .provider = "fake"};
    }
    if (on_text && request.stream) {
      for (size_t i = 0; i < step.deltas.size(); ++i) {
        asio::post(io_, [this, on_text, i, delta = step.deltas[i]] {
          if (before_delta) before_delta(i);
          on_text(delta);
        });
      }
    }
    auto timer = std::make_shared<asio::steady_timer>(io_, absl::ToChronoNanoseconds(step.delay));
    timer->async_wait(
        [timer, done = std::move(done), response](const asio::error_code&) { done(response); });
  }

  // Called before each streamed delta (a test moves its clock here).
  std::function<void(size_t index)> before_delta;

  std::deque<Step> script;
  std::function<Step(const LlmRequest&)> respond;
  std::vector<LlmRequest> requests;

 private:
  asio::io_context& io_;
};

using ShoutSkill = skills::testing::ShoutSkill;

}  // namespace herald::agent::testing
