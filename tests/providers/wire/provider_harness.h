// tests/providers/wire/provider_harness.h
//
// Runs LLM provider calls to completion in integration tests: an Asio loop and the real
// HttpClient, with short retry backoffs, and a Call() that drives the loop until the
// provider's `done` runs (or a deadline passes), collecting the streamed deltas.
//
//   ProviderHarness harness;
//   auto provider = AnthropicProvider::Create(harness.http(), config, FastOptions());
//   CallResult result = harness.Call(**provider, UserAsks("hi", /*stream=*/true));
//   EXPECT_EQ(result.response->text, "...");
#pragma once

#include <asio.hpp>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "providers/http/http_client.h"
#include "providers/provider.h"
#include "providers/wire/http_call.h"

namespace herald::providers {

struct CallResult {
  absl::StatusOr<LlmResponse> response = absl::UnknownError("the call never finished");
  std::vector<std::string> deltas;
  int done_calls = 0;
  absl::Duration elapsed;
};

// Timeouts of a few seconds, two retries, backoffs of milliseconds.
HttpCallOptions FastOptions();

// A request with one user message.
LlmRequest UserAsks(std::string text, bool stream);

class ProviderHarness {
 public:
  ProviderHarness();
  ~ProviderHarness();

  HttpClient* http() { return http_.get(); }

  // Calls `provider` on the loop and runs the loop until `done` ran, then a little longer to
  // catch a second `done`.
  CallResult Call(LlmProvider& provider, const LlmRequest& request,
                  absl::Duration timeout = absl::Seconds(30));

 private:
  asio::io_context io_;
  std::unique_ptr<HttpClient> http_;
};

}  // namespace herald::providers
