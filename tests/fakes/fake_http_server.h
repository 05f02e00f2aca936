// tests/fakes/fake_http_server.h
//
// FakeHttpServer is a small HTTP/1.1 server for tests of Herald's HTTP client and of the
// fake LLM servers built on it. It listens on 127.0.0.1 (a port the kernel picks), serves on
// its own thread, records every request, and answers with whatever the handler returns:
// any status and headers, a body sent at once or in chunks (chunked transfer encoding, for
// SSE and NDJSON streaming), after a delay, cut off mid-response, or never.
//
//   auto server = FakeHttpServer::Start([](const FakeHttpRequest& request) {
//     return FakeHttpResponse{.status = 200, .body = "{}"};
//   });
//   std::string url = (*server)->base_url() + "/v1/messages";
//   ...
//   EXPECT_EQ((*server)->requests().size(), 1u);
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace herald::fakes {

struct FakeHttpRequest {
  std::string method;
  std::string path;                                          // with the query string
  std::vector<std::pair<std::string, std::string>> headers;  // names in lower case
  std::string body;

  std::string Header(std::string_view name) const;  // "" when absent
};

struct FakeHttpResponse {
  int status = 200;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  // When not empty, the body is these chunks (chunked transfer encoding), one write each,
  // `chunk_interval` apart; `body` is ignored.
  std::vector<std::string> chunks;
  absl::Duration delay = absl::ZeroDuration();  // before the status line
  absl::Duration chunk_interval = absl::ZeroDuration();
  bool close_mid_body = false;  // send headers and half the body, then close the connection
  bool hang = false;            // accept the request and never answer
};

class FakeHttpServer {
 public:
  using Handler = std::function<FakeHttpResponse(const FakeHttpRequest&)>;

  static absl::StatusOr<std::unique_ptr<FakeHttpServer>> Start(Handler handler);
  ~FakeHttpServer();  // closes every connection, joins the thread

  uint16_t port() const;
  std::string base_url() const;  // "http://127.0.0.1:<port>"

  // Every request received so far, in arrival order (thread-safe copies).
  std::vector<FakeHttpRequest> requests() const;
  size_t request_count() const;
  // Waits until at least `count` requests have arrived.
  bool WaitForRequests(size_t count, absl::Duration timeout) const;

  void SetHandler(Handler handler);

  struct State;

 private:
  explicit FakeHttpServer(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace herald::fakes
