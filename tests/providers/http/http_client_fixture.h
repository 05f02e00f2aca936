// tests/providers/http/http_client_fixture.h
//
// The fixture of the HttpClient tests: a client whose loop is the test's own io_context, fake
// servers to talk to, and ways to run the loop until something happened.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "asio.hpp"
#include "gtest/gtest.h"
#include "providers/http/http_client.h"
#include "tests/fakes/fake_http_server.h"

namespace herald::providers {

// Retries that do not slow the suite down.
inline RetryPolicy QuickRetries(int max_retries) {
  return RetryPolicy{.max_retries = max_retries,
                     .initial_backoff = absl::Milliseconds(10),
                     .max_backoff = absl::Milliseconds(50)};
}

// Everything on the test's own thread: the client's loop is this io_context.
class HttpClientFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<HttpClient>> client = HttpClient::Create(io_);
    ASSERT_TRUE(client.ok()) << client.status();
    client_ = std::move(*client);
  }

  std::unique_ptr<fakes::FakeHttpServer> StartServer(fakes::FakeHttpServer::Handler handler) {
    absl::StatusOr<std::unique_ptr<fakes::FakeHttpServer>> server =
        fakes::FakeHttpServer::Start(std::move(handler));
    EXPECT_TRUE(server.ok()) << server.status();
    return server.ok() ? std::move(*server) : nullptr;
  }

  // Runs the loop until `condition` holds; false on timeout.
  bool RunUntil(const std::function<bool()>& condition,
                absl::Duration timeout = absl::Seconds(20)) {
    const absl::Time deadline = absl::Now() + timeout;
    while (!condition()) {
      if (absl::Now() >= deadline) return false;
      io_.run_one_for(std::chrono::milliseconds(20));
    }
    return true;
  }

  void RunFor(absl::Duration duration) { io_.run_for(absl::ToChronoMilliseconds(duration)); }

  // Sends `request` and runs the loop until its callback ran.
  absl::StatusOr<HttpResponse> SendAndWait(HttpRequest request) {
    std::optional<absl::StatusOr<HttpResponse>> result;
    client_->Send(std::move(request), [&result](absl::StatusOr<HttpResponse> response) {
      result = std::move(response);
    });
    if (!RunUntil([&] { return result.has_value(); })) {
      return absl::DeadlineExceededError("test: no callback within 20 s");
    }
    return std::move(*result);
  }

  asio::io_context io_;
  asio::executor_work_guard<asio::io_context::executor_type> work_{io_.get_executor()};
  std::unique_ptr<HttpClient> client_;
};

}  // namespace herald::providers
