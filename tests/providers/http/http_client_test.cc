#include "providers/http/http_client.h"

#include <atomic>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "asio.hpp"
#include "gtest/gtest.h"
#include "tests/fakes/fake_http_server.h"
#include "tests/providers/http/http_client_fixture.h"

namespace herald::providers {
namespace {

using fakes::FakeHttpRequest;
using fakes::FakeHttpResponse;
using fakes::FakeHttpServer;
using HttpClientTest = HttpClientFixture;

TEST_F(HttpClientTest, RoundTripsAPostWithHeadersAndBody) {
  auto server = StartServer([](const FakeHttpRequest& request) {
    return FakeHttpResponse{.status = 200,
                            .headers = {{"X-Request-Id", "r-1"}, {"Content-Type", "text/plain"}},
                            .body = "echo:" + request.body};
  });
  HttpRequest request{.url = server->base_url() + "/v1/messages?beta=1", .body = "{\"a\":1}"};
  request.headers = {{"content-type", "application/json"}, {"x-api-key", "k"}};
  absl::StatusOr<HttpResponse> response = SendAndWait(std::move(request));

  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->status, 200);
  EXPECT_EQ(response->body, "echo:{\"a\":1}");
  EXPECT_EQ(response->attempts, 1);
  EXPECT_EQ(response->Header("x-request-id"), "r-1");
  EXPECT_EQ(response->Header("content-type"), "text/plain");
  for (const auto& [name, value] : response->headers) {
    EXPECT_EQ(name, absl::AsciiStrToLower(name));
  }
  std::vector<FakeHttpRequest> seen = server->requests();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].method, "POST");
  EXPECT_EQ(seen[0].path, "/v1/messages?beta=1");
  EXPECT_EQ(seen[0].Header("content-type"), "application/json");
  EXPECT_EQ(seen[0].Header("x-api-key"), "k");
  EXPECT_EQ(seen[0].body, "{\"a\":1}");
  EXPECT_EQ(client_->in_flight(), 0u);
}

TEST_F(HttpClientTest, SendsAGetWithoutABody) {
  auto server = StartServer(
      [](const FakeHttpRequest& request) { return FakeHttpResponse{.body = request.method}; });
  absl::StatusOr<HttpResponse> response =
      SendAndWait(HttpRequest{.method = "GET", .url = server->base_url() + "/api/tags"});
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->body, "GET");
  ASSERT_EQ(server->request_count(), 1u);
  EXPECT_EQ(server->requests()[0].path, "/api/tags");
  EXPECT_TRUE(server->requests()[0].body.empty());
}

TEST_F(HttpClientTest, CountsARequestAsInFlightUntilItsCallbackIsDue) {
  auto server = StartServer([](const FakeHttpRequest&) { return FakeHttpResponse{}; });
  bool done = false;
  client_->Send(HttpRequest{.url = server->base_url()},
                [&done](absl::StatusOr<HttpResponse>) { done = true; });
  EXPECT_EQ(client_->in_flight(), 1u);
  ASSERT_TRUE(RunUntil([&] { return done; }));
  EXPECT_EQ(client_->in_flight(), 0u);
}

// More requests at once than one curl multi handle carries (256): they are spread over
// several, and each still gets its own answer.
TEST_F(HttpClientTest, ManyRequestsAtOnceEachGetTheirOwnAnswer) {
  auto server = StartServer([](const FakeHttpRequest& request) {
    return FakeHttpResponse{.body = "answer to " + request.path, .delay = absl::Milliseconds(200)};
  });
  constexpr int kRequests = 300;
  std::vector<std::optional<absl::StatusOr<HttpResponse>>> results(kRequests);
  int done = 0;
  for (int i = 0; i < kRequests; ++i) {
    client_->Send(HttpRequest{.method = "GET", .url = absl::StrCat(server->base_url(), "/", i)},
                  [&results, &done, i](absl::StatusOr<HttpResponse> response) {
                    results[i] = std::move(response);
                    ++done;
                  });
  }
  EXPECT_EQ(client_->in_flight(), static_cast<size_t>(kRequests));
  ASSERT_TRUE(RunUntil([&] { return done == kRequests; }, absl::Seconds(60)));
  for (int i = 0; i < kRequests; ++i) {
    ASSERT_TRUE(results[i]->ok()) << i << ": " << results[i]->status();
    EXPECT_EQ((*results[i])->body, absl::StrCat("answer to /", i));
  }
  EXPECT_EQ(server->request_count(), static_cast<size_t>(kRequests));
  EXPECT_EQ(client_->in_flight(), 0u);
}

TEST_F(HttpClientTest, RetriesA500AndReturnsThe200ThatFollows) {
  std::atomic<int> calls{0};
  auto server = StartServer([&calls](const FakeHttpRequest&) {
    return ++calls == 1 ? FakeHttpResponse{.status = 500, .body = "oops"}
                        : FakeHttpResponse{.status = 200, .body = "fine"};
  });
  absl::StatusOr<HttpResponse> response =
      SendAndWait(HttpRequest{.url = server->base_url(), .retry = QuickRetries(2)});
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->status, 200);
  EXPECT_EQ(response->body, "fine");
  EXPECT_EQ(response->attempts, 2);
  EXPECT_EQ(server->request_count(), 2u);
}

TEST_F(HttpClientTest, WaitsForRetryAfterSecondsBeforeRetryingA429) {
  std::atomic<int> calls{0};
  auto server = StartServer([&calls](const FakeHttpRequest&) {
    return ++calls == 1 ? FakeHttpResponse{.status = 429, .headers = {{"Retry-After", "1"}}}
                        : FakeHttpResponse{.status = 200, .body = "ok"};
  });
  const absl::Time start = absl::Now();
  absl::StatusOr<HttpResponse> response =
      SendAndWait(HttpRequest{.url = server->base_url(), .retry = QuickRetries(2)});
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->status, 200);
  EXPECT_EQ(response->attempts, 2);
  EXPECT_GE(absl::Now() - start, absl::Seconds(1));
}

TEST_F(HttpClientTest, ReturnsA429AtOnceWhenRetryAfterExceedsTheMaximum) {
  auto server = StartServer([](const FakeHttpRequest&) {
    return FakeHttpResponse{.status = 429, .headers = {{"Retry-After", "120"}}, .body = "slow"};
  });
  HttpRequest request{.url = server->base_url(), .retry = QuickRetries(2)};
  request.retry.max_retry_after = absl::Seconds(60);
  const absl::Time start = absl::Now();
  absl::StatusOr<HttpResponse> response = SendAndWait(std::move(request));
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->status, 429);
  EXPECT_EQ(response->body, "slow");
  EXPECT_EQ(response->attempts, 1);
  EXPECT_EQ(server->request_count(), 1u);
  EXPECT_LT(absl::Now() - start, absl::Seconds(60));
}

TEST_F(HttpClientTest, ReadsRetryAfterGivenAsAnHttpDate) {
  auto server = StartServer([](const FakeHttpRequest&) {
    return FakeHttpResponse{.status = 503,
                            .headers = {{"Retry-After", "Fri, 31 Dec 2100 23:59:59 GMT"}}};
  });
  absl::StatusOr<HttpResponse> response =
      SendAndWait(HttpRequest{.url = server->base_url(), .retry = QuickRetries(2)});
  ASSERT_TRUE(response.ok()) << response.status();
  // A date decades away is beyond any maximum: not waited for.
  EXPECT_EQ(response->status, 503);
  EXPECT_EQ(server->request_count(), 1u);
}

TEST_F(HttpClientTest, ReturnsTheLastResponseWhenRetriesRunOut) {
  auto server = StartServer(
      [](const FakeHttpRequest&) { return FakeHttpResponse{.status = 503, .body = "busy"}; });
  absl::StatusOr<HttpResponse> response =
      SendAndWait(HttpRequest{.url = server->base_url(), .retry = QuickRetries(2)});
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->status, 503);
  EXPECT_EQ(response->body, "busy");
  EXPECT_EQ(response->attempts, 3);
  EXPECT_EQ(server->request_count(), 3u);
}

TEST_F(HttpClientTest, DoesNotRetryAClientError) {
  auto server = StartServer(
      [](const FakeHttpRequest&) { return FakeHttpResponse{.status = 400, .body = "bad"}; });
  absl::StatusOr<HttpResponse> response =
      SendAndWait(HttpRequest{.url = server->base_url(), .retry = QuickRetries(2)});
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->status, 400);
  EXPECT_EQ(server->request_count(), 1u);
}

TEST_F(HttpClientTest, ReturnsARedirectInsteadOfFollowingIt) {
  auto server = StartServer([](const FakeHttpRequest&) {
    return FakeHttpResponse{.status = 302, .headers = {{"Location", "/elsewhere"}}};
  });
  absl::StatusOr<HttpResponse> response = SendAndWait(HttpRequest{.url = server->base_url()});
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->status, 302);
  EXPECT_EQ(response->Header("location"), "/elsewhere");
  EXPECT_EQ(server->request_count(), 1u);
}

TEST_F(HttpClientTest, FailsWithUnavailableWhenTheConnectionIsRefused) {
  // A port that was free a moment ago and has no listener now.
  uint16_t port = 0;
  {
    asio::ip::tcp::acceptor probe(io_, {asio::ip::make_address_v4("127.0.0.1"), 0});
    port = probe.local_endpoint().port();
  }
  absl::StatusOr<HttpResponse> response = SendAndWait(
      HttpRequest{.url = absl::StrCat("http://127.0.0.1:", port, "/"), .retry = QuickRetries(2)});
  EXPECT_EQ(response.status().code(), absl::StatusCode::kUnavailable) << response.status();
  EXPECT_TRUE(absl::StrContains(response.status().message(), "after 3 attempts"))
      << response.status();
}

TEST_F(HttpClientTest, TimesOutAHangingServerWithDeadlineExceeded) {
  auto server = StartServer([](const FakeHttpRequest&) { return FakeHttpResponse{.hang = true}; });
  const absl::Time start = absl::Now();
  absl::StatusOr<HttpResponse> response =
      SendAndWait(HttpRequest{.url = server->base_url(),
                              .total_timeout = absl::Milliseconds(300),
                              .retry = QuickRetries(1)});
  EXPECT_EQ(response.status().code(), absl::StatusCode::kDeadlineExceeded) << response.status();
  EXPECT_EQ(server->request_count(), 2u);
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
}

TEST_F(HttpClientTest, StreamsChunksInOrderAsTheyArrive) {
  auto server = StartServer([](const FakeHttpRequest&) {
    return FakeHttpResponse{.chunks = {"data: one\n\n", "data: two\n\n", "data: three\n\n"},
                            .chunk_interval = absl::Milliseconds(400)};
  });
  std::string streamed;
  std::optional<absl::Time> first_chunk_at;
  std::optional<absl::StatusOr<HttpResponse>> result;
  HttpRequest request{.url = server->base_url()};
  request.on_body_chunk = [&](std::string_view chunk) {
    if (!first_chunk_at.has_value()) first_chunk_at = absl::Now();
    streamed.append(chunk);
  };
  client_->Send(std::move(request),
                [&](absl::StatusOr<HttpResponse> response) { result = std::move(response); });
  ASSERT_TRUE(RunUntil([&] { return result.has_value(); }));
  const absl::Time done_at = absl::Now();

  ASSERT_TRUE(result->ok()) << result->status();
  EXPECT_EQ((*result)->status, 200);
  EXPECT_TRUE((*result)->body.empty());
  EXPECT_EQ(streamed, "data: one\n\ndata: two\n\ndata: three\n\n");
  ASSERT_TRUE(first_chunk_at.has_value());
  // The last chunk leaves the server 800 ms after the first: the first was already here.
  EXPECT_GE(done_at - *first_chunk_at, absl::Milliseconds(500));
}

// A model's call reads through a 1 KiB receive buffer; a body far larger arrives whole,
// held or streamed.
TEST_F(HttpClientTest, ReadsALargeBodyWholeThroughASmallReceiveBuffer) {
  std::string body;
  for (int i = 0; body.size() < 256 * 1024; ++i) absl::StrAppend(&body, i, ",");
  auto server =
      StartServer([&body](const FakeHttpRequest&) { return FakeHttpResponse{.body = body}; });
  for (bool streamed : {false, true}) {
    SCOPED_TRACE(streamed ? "streamed" : "held");
    std::string chunks;
    HttpRequest request{.url = server->base_url()};
    request.receive_buffer_bytes = 1024;
    if (streamed) request.on_body_chunk = [&](std::string_view chunk) { chunks.append(chunk); };
    absl::StatusOr<HttpResponse> response = SendAndWait(std::move(request));
    ASSERT_TRUE(response.ok()) << response.status();
    EXPECT_EQ(response->status, 200);
    EXPECT_EQ(streamed ? chunks : response->body, body);
  }
}

TEST_F(HttpClientTest, CollectsAnErrorBodyWholeEvenWhenStreaming) {
  auto server = StartServer([](const FakeHttpRequest&) {
    return FakeHttpResponse{.status = 400, .chunks = {"{\"error\":", "\"bad\"}"}};
  });
  int chunk_calls = 0;
  HttpRequest request{.url = server->base_url()};
  request.on_body_chunk = [&](std::string_view) { ++chunk_calls; };
  absl::StatusOr<HttpResponse> response = SendAndWait(std::move(request));
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->status, 400);
  EXPECT_EQ(response->body, "{\"error\":\"bad\"}");
  EXPECT_EQ(chunk_calls, 0);
}

TEST_F(HttpClientTest, DoesNotRetryAStreamCutOffAfterAChunk) {
  auto server = StartServer([](const FakeHttpRequest&) {
    return FakeHttpResponse{.chunks = {"data: one\n\n", "data: two\n\n"}, .close_mid_body = true};
  });
  std::string streamed;
  HttpRequest request{.url = server->base_url(), .retry = QuickRetries(2)};
  request.on_body_chunk = [&](std::string_view chunk) { streamed.append(chunk); };
  absl::StatusOr<HttpResponse> response = SendAndWait(std::move(request));
  EXPECT_EQ(response.status().code(), absl::StatusCode::kUnavailable) << response.status();
  EXPECT_EQ(streamed, "data: one\n\n");
  EXPECT_EQ(server->request_count(), 1u);
}

TEST_F(HttpClientTest, RetriesABodyCutOffWhenNothingWasStreamed) {
  std::atomic<int> calls{0};
  auto server = StartServer([&calls](const FakeHttpRequest&) {
    return ++calls == 1 ? FakeHttpResponse{.body = "0123456789", .close_mid_body = true}
                        : FakeHttpResponse{.body = "complete"};
  });
  absl::StatusOr<HttpResponse> response =
      SendAndWait(HttpRequest{.url = server->base_url(), .retry = QuickRetries(2)});
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->body, "complete");
  EXPECT_EQ(response->attempts, 2);
}

TEST_F(HttpClientTest, CancelsAStreamAndDeliversNothingAfterwards) {
  auto server = StartServer([](const FakeHttpRequest&) {
    return FakeHttpResponse{.chunks = {"one", "two", "three"},
                            .chunk_interval = absl::Milliseconds(200)};
  });
  int chunk_calls = 0;
  int done_calls = 0;
  absl::Status final_status;
  HttpClient::RequestId id = 0;
  HttpRequest request{.url = server->base_url()};
  request.on_body_chunk = [&](std::string_view) {
    if (++chunk_calls == 1) client_->Cancel(id);
  };
  id = client_->Send(std::move(request), [&](absl::StatusOr<HttpResponse> response) {
    ++done_calls;
    final_status = response.status();
  });
  ASSERT_TRUE(RunUntil([&] { return done_calls > 0; }));
  RunFor(absl::Milliseconds(700));  // long enough for the remaining chunks to have come
  EXPECT_EQ(final_status.code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(done_calls, 1);
  EXPECT_EQ(chunk_calls, 1);
  EXPECT_EQ(client_->in_flight(), 0u);
}

TEST_F(HttpClientTest, CancelsARequestWaitingToBeRetried) {
  auto server = StartServer([](const FakeHttpRequest&) { return FakeHttpResponse{.status = 503}; });
  HttpRequest request{.url = server->base_url()};
  request.retry.initial_backoff = absl::Seconds(30);
  request.retry.max_backoff = absl::Seconds(30);
  std::optional<absl::Status> final_status;
  const HttpClient::RequestId id = client_->Send(
      std::move(request),
      [&](absl::StatusOr<HttpResponse> response) { final_status = response.status(); });
  ASSERT_TRUE(RunUntil([&] { return server->request_count() == 1; }));
  RunFor(absl::Milliseconds(100));  // let the 503 arrive and the backoff start
  client_->Cancel(id);
  ASSERT_TRUE(RunUntil([&] { return final_status.has_value(); }, absl::Seconds(5)));
  EXPECT_EQ(final_status->code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(server->request_count(), 1u);
}

TEST_F(HttpClientTest, RunsNoCallbackOnceDestroyedWithARequestInFlight) {
  auto server = StartServer([](const FakeHttpRequest&) {
    return FakeHttpResponse{.body = "late", .delay = absl::Milliseconds(300)};
  });
  int done_calls = 0;
  client_->Send(HttpRequest{.url = server->base_url()},
                [&done_calls](absl::StatusOr<HttpResponse>) { ++done_calls; });
  ASSERT_TRUE(RunUntil([&] { return server->request_count() == 1; }));
  client_.reset();
  RunFor(absl::Milliseconds(600));
  EXPECT_EQ(done_calls, 0);
}

TEST_F(HttpClientTest, SurvivesBeingDestroyedFromItsOwnChunkCallback) {
  auto server = StartServer([](const FakeHttpRequest&) {
    return FakeHttpResponse{.chunks = {"one", "two"}, .chunk_interval = absl::Milliseconds(100)};
  });
  int chunk_calls = 0;
  int done_calls = 0;
  HttpRequest request{.url = server->base_url()};
  request.on_body_chunk = [&](std::string_view) {
    ++chunk_calls;
    client_.reset();
  };
  client_->Send(std::move(request), [&done_calls](absl::StatusOr<HttpResponse>) { ++done_calls; });
  ASSERT_TRUE(RunUntil([&] { return client_ == nullptr; }));
  RunFor(absl::Milliseconds(300));
  EXPECT_EQ(chunk_calls, 1);
  EXPECT_EQ(done_calls, 0);
}

TEST_F(HttpClientTest, AcceptsANewRequestFromADoneCallback) {
  auto server = StartServer(
      [](const FakeHttpRequest& request) { return FakeHttpResponse{.body = request.path}; });
  std::string second_body;
  client_->Send(HttpRequest{.url = server->base_url() + "/first"},
                [&](absl::StatusOr<HttpResponse>) {
                  client_->Send(HttpRequest{.url = server->base_url() + "/second"},
                                [&](absl::StatusOr<HttpResponse> response) {
                                  if (response.ok()) second_body = response->body;
                                });
                });
  ASSERT_TRUE(RunUntil([&] { return !second_body.empty(); }));
  EXPECT_EQ(second_body, "/second");
}

TEST_F(HttpClientTest, RunsNoCallbackWhenDestroyedWithADoneCallbackQueued) {
  auto server = StartServer([](const FakeHttpRequest&) { return FakeHttpResponse{}; });
  int done_calls = 0;
  const HttpClient::RequestId id =
      client_->Send(HttpRequest{.url = server->base_url()},
                    [&done_calls](absl::StatusOr<HttpResponse>) { ++done_calls; });
  client_->Cancel(id);  // its Cancelled callback is now queued on the loop
  client_.reset();
  RunFor(absl::Milliseconds(100));
  EXPECT_EQ(done_calls, 0);
}

TEST_F(HttpClientTest, OverlapsAHundredSlowRequestsOnOneThread) {
  auto server = StartServer([](const FakeHttpRequest& request) {
    return FakeHttpResponse{.body = request.path, .delay = absl::Milliseconds(200)};
  });
  constexpr int kRequests = 100;
  int ok = 0;
  int done = 0;
  const absl::Time start = absl::Now();
  for (int i = 0; i < kRequests; ++i) {
    const std::string path = absl::StrCat("/r", i);
    client_->Send(HttpRequest{.url = server->base_url() + path},
                  [&, path](absl::StatusOr<HttpResponse> response) {
                    ++done;
                    if (response.ok() && response->status == 200 && response->body == path) ++ok;
                  });
  }
  EXPECT_EQ(client_->in_flight(), static_cast<size_t>(kRequests));
  ASSERT_TRUE(RunUntil([&] { return done == kRequests; }));
  EXPECT_EQ(ok, kRequests);
  // One after another they would take 20 s; overlapped, a fraction of a second.
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
}

TEST_F(HttpClientTest, RefusesABodyLargerThanSixteenMebibytes) {
  auto server = StartServer([](const FakeHttpRequest&) {
    return FakeHttpResponse{.body = std::string(17 * 1024 * 1024, 'x')};
  });
  absl::StatusOr<HttpResponse> response =
      SendAndWait(HttpRequest{.url = server->base_url(), .retry = QuickRetries(2)});
  EXPECT_EQ(response.status().code(), absl::StatusCode::kResourceExhausted) << response.status();
  EXPECT_EQ(server->request_count(), 1u);
}

TEST_F(HttpClientTest, RefusesAFloodOfResponseHeaders) {
  auto server = StartServer([](const FakeHttpRequest&) {
    FakeHttpResponse response;
    for (int i = 0; i < 1000; ++i) response.headers.emplace_back(absl::StrCat("x-h", i), "v");
    return response;
  });
  absl::StatusOr<HttpResponse> response = SendAndWait(HttpRequest{.url = server->base_url()});
  EXPECT_EQ(response.status().code(), absl::StatusCode::kResourceExhausted) << response.status();
}

TEST_F(HttpClientTest, RefusesSchemesOtherThanHttpAndHttps) {
  absl::StatusOr<HttpResponse> response =
      SendAndWait(HttpRequest{.method = "GET", .url = "file:///etc/passwd"});
  EXPECT_EQ(response.status().code(), absl::StatusCode::kInvalidArgument) << response.status();
}

TEST_F(HttpClientTest, RefusesAHeaderValueThatWouldInjectAnotherHeader) {
  auto server = StartServer([](const FakeHttpRequest&) { return FakeHttpResponse{}; });
  HttpRequest request{.url = server->base_url()};
  request.headers = {{"x-api-key", "k\r\nx-injected: yes"}};
  absl::StatusOr<HttpResponse> response = SendAndWait(std::move(request));
  EXPECT_EQ(response.status().code(), absl::StatusCode::kInvalidArgument) << response.status();
  EXPECT_EQ(server->request_count(), 0u);
}

TEST_F(HttpClientTest, TruncatesABodyAtMaxBodyBytesWhenAskedTo) {
  auto server = StartServer([](const FakeHttpRequest&) {
    return FakeHttpResponse{.body = std::string(1024 * 1024, 'x')};
  });
  absl::StatusOr<HttpResponse> response = SendAndWait(HttpRequest{
      .method = "GET", .url = server->base_url(), .max_body_bytes = 1000, .truncate_body = true});
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->status, 200);
  EXPECT_EQ(response->body, std::string(1000, 'x'));
  EXPECT_TRUE(response->body_truncated);
}

TEST_F(HttpClientTest, RefusesABodyOverMaxBodyBytesWithoutTruncation) {
  auto server = StartServer(
      [](const FakeHttpRequest&) { return FakeHttpResponse{.body = std::string(5000, 'x')}; });
  absl::StatusOr<HttpResponse> response =
      SendAndWait(HttpRequest{.method = "GET", .url = server->base_url(), .max_body_bytes = 1000});
  EXPECT_EQ(response.status().code(), absl::StatusCode::kResourceExhausted) << response.status();
  EXPECT_NE(response.status().message().find("1000 bytes"), std::string::npos);
}

TEST_F(HttpClientTest, DeliversABodyWithinMaxBodyBytesWhole) {
  auto server = StartServer(
      [](const FakeHttpRequest&) { return FakeHttpResponse{.body = std::string(1000, 'x')}; });
  absl::StatusOr<HttpResponse> response = SendAndWait(HttpRequest{
      .method = "GET", .url = server->base_url(), .max_body_bytes = 1000, .truncate_body = true});
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->body.size(), 1000u);
  EXPECT_FALSE(response->body_truncated);
}

TEST_F(HttpClientTest, StopsReadingABodyWhoseContentTypeWasNotAccepted) {
  auto server = StartServer([](const FakeHttpRequest&) {
    return FakeHttpResponse{.headers = {{"Content-Type", "image/png"}},
                            .body = std::string(4 * 1024 * 1024, 'x')};
  });
  HttpRequest request{.method = "GET", .url = server->base_url()};
  request.accepted_content_types = {"text/html", "text/*"};
  absl::StatusOr<HttpResponse> response = SendAndWait(std::move(request));
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->status, 200);
  EXPECT_EQ(response->Header("content-type"), "image/png");
  EXPECT_TRUE(response->body_truncated);
  EXPECT_TRUE(response->body.empty());
}

TEST_F(HttpClientTest, ReadsABodyWhoseContentTypeMatchesAWildcard) {
  auto server = StartServer([](const FakeHttpRequest&) {
    return FakeHttpResponse{.headers = {{"Content-Type", "Text/Plain; charset=utf-8"}},
                            .body = "hello"};
  });
  HttpRequest request{.method = "GET", .url = server->base_url()};
  request.accepted_content_types = {"application/json", "text/*"};
  absl::StatusOr<HttpResponse> response = SendAndWait(std::move(request));
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->body, "hello");
  EXPECT_FALSE(response->body_truncated);
}

TEST_F(HttpClientTest, ConnectsAPinnedRequestToItsAddressWithoutResolvingTheHost) {
  auto server = StartServer([](const FakeHttpRequest&) { return FakeHttpResponse{.body = "ok"}; });
  // ".invalid" never resolves (RFC 6761): only the pin can make this request reach anything.
  HttpRequest request{.method = "GET",
                      .url = absl::StrCat("http://pinned.invalid:", server->port(), "/page")};
  request.connect_to_address = "127.0.0.1";
  absl::StatusOr<HttpResponse> response = SendAndWait(std::move(request));
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->body, "ok");
  ASSERT_EQ(server->request_count(), 1u);
  EXPECT_EQ(server->requests()[0].Header("host"), absl::StrCat("pinned.invalid:", server->port()));
  EXPECT_EQ(server->requests()[0].path, "/page");
}

TEST_F(HttpClientTest, ConnectsOnlyToThePinnedAddressEvenWhenTheUrlNamesAnother) {
  auto server = StartServer([](const FakeHttpRequest&) { return FakeHttpResponse{.body = "ok"}; });
  // The server listens on 127.0.0.1 only; pinned to 127.0.0.2 the request cannot reach it.
  HttpRequest request{.method = "GET", .url = server->base_url(), .retry = QuickRetries(0)};
  request.connect_to_address = "127.0.0.2";
  absl::StatusOr<HttpResponse> response = SendAndWait(std::move(request));
  EXPECT_EQ(response.status().code(), absl::StatusCode::kUnavailable) << response.status();
  EXPECT_EQ(server->request_count(), 0u);
}

TEST_F(HttpClientTest, RefusesAPinThatIsNotAnIpAddress) {
  auto server = StartServer([](const FakeHttpRequest&) { return FakeHttpResponse{}; });
  HttpRequest request{.method = "GET", .url = server->base_url()};
  request.connect_to_address = "localhost";
  absl::StatusOr<HttpResponse> response = SendAndWait(std::move(request));
  EXPECT_EQ(response.status().code(), absl::StatusCode::kInvalidArgument) << response.status();
  EXPECT_EQ(server->request_count(), 0u);
}

}  // namespace
}  // namespace herald::providers
