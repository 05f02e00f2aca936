#include "tests/providers/wire/provider_harness.h"

#include <chrono>
#include <utility>

#include "absl/time/clock.h"

namespace herald::providers {

HttpCallOptions FastOptions() {
  HttpCallOptions options;
  options.connect_timeout = absl::Seconds(5);
  options.total_timeout = absl::Seconds(10);
  options.retry.max_retries = 2;
  options.retry.initial_backoff = absl::Milliseconds(10);
  options.retry.max_backoff = absl::Milliseconds(50);
  return options;
}

LlmRequest UserAsks(std::string text, bool stream) {
  LlmRequest request;
  request.model = "test-model";
  request.system = "You are a test.";
  request.stream = stream;
  request.messages.push_back({.role = LlmMessage::Role::kUser, .text = std::move(text)});
  return request;
}

ProviderHarness::ProviderHarness() {
  absl::StatusOr<std::unique_ptr<HttpClient>> http = HttpClient::Create(io_);
  if (http.ok()) http_ = *std::move(http);
}

ProviderHarness::~ProviderHarness() {
  http_.reset();
  io_.run_for(std::chrono::milliseconds(10));  // let cancelled work unwind
}

CallResult ProviderHarness::Call(LlmProvider& provider, const LlmRequest& request,
                                 absl::Duration timeout) {
  CallResult result;
  const absl::Time start = absl::Now();
  io_.restart();
  asio::post(io_, [&] {
    provider.Complete(
        request, [&](std::string_view delta) { result.deltas.emplace_back(delta); },
        [&](absl::StatusOr<LlmResponse> response) {
          result.response = std::move(response);
          ++result.done_calls;
          result.elapsed = absl::Now() - start;
        });
  });
  const absl::Time deadline = start + timeout;
  while (result.done_calls == 0 && absl::Now() < deadline) {
    io_.run_one_for(std::chrono::milliseconds(50));
    if (io_.stopped()) io_.restart();
  }
  io_.run_for(std::chrono::milliseconds(20));
  return result;
}

}  // namespace herald::providers
