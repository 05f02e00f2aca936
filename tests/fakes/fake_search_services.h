// tests/fakes/fake_search_services.h
//
// Fakes of the two web search services web_search speaks to, each speaking its real wire
// format over HTTP on 127.0.0.1 (FakeHttpServer underneath), answering from a fixed list of
// hits and recording what it was asked:
//
// - FakeSearxng: GET /search?q=QUERY&format=json -> SearXNG's JSON answer
//   ({"query", "number_of_results", "results": [{"url", "title", "content", "engine", ...}],
//   "answers", "suggestions", "unresponsive_engines", ...}). Another format, or JSON switched
//   off, is 403 as with a real instance whose settings.yml lacks "json".
// - FakeTavily: POST /search, Authorization: Bearer KEY, JSON body {"query", "max_results",
//   ...} -> Tavily's answer ({"query", "answer", "images", "results": [{"title", "url",
//   "content", "score", "raw_content"}], "response_time"}); a wrong key is 401 and a bad body
//   400, both as {"detail": {"error": "..."}}; it honours max_results.
//
//   auto searxng = FakeSearxng::Start({{.title = "A", .url = "https://a.example/", .content =
//   "a"}}); SearxngBackend backend(http, {.url = (*searxng)->base_url()});
//   ...
//   EXPECT_EQ((*searxng)->queries(), std::vector<std::string>{"xmpp components"});
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "tests/fakes/fake_http_server.h"

namespace herald::fakes {

struct FakeSearchHit {
  std::string title;
  std::string url;
  std::string content;
};

class FakeSearxng {
 public:
  static absl::StatusOr<std::unique_ptr<FakeSearxng>> Start(std::vector<FakeSearchHit> hits);

  std::string base_url() const { return server_->base_url(); }
  // The decoded q of every search request, in order.
  std::vector<std::string> queries() const;
  // false: answer 403 to every request, as an instance without "json" in search.formats.
  void SetJsonEnabled(bool enabled);
  // Non-zero: answer every request with this status and `body`.
  void SetFailure(int status, std::string body);

 private:
  FakeSearxng() = default;
  FakeHttpResponse Answer(const FakeHttpRequest& request);

  mutable std::mutex mu_;
  std::vector<FakeSearchHit> hits_;
  std::vector<std::string> queries_;
  bool json_enabled_ = true;
  int failure_status_ = 0;
  std::string failure_body_;
  // Last: destroyed first, so that no request is served from a half-destroyed fake.
  std::unique_ptr<FakeHttpServer> server_;
};

class FakeTavily {
 public:
  static absl::StatusOr<std::unique_ptr<FakeTavily>> Start(std::string api_key,
                                                           std::vector<FakeSearchHit> hits);

  std::string base_url() const { return server_->base_url(); }
  // The JSON body of every request that carried the right key, in order.
  std::vector<nlohmann::json> requests() const;
  // The Authorization header of every request, in order.
  std::vector<std::string> authorizations() const;
  // Non-zero: answer every request with this status and a Tavily error body.
  void SetFailure(int status, std::string error);

 private:
  FakeTavily() = default;
  FakeHttpResponse Answer(const FakeHttpRequest& request);

  std::string api_key_;
  mutable std::mutex mu_;
  std::vector<FakeSearchHit> hits_;
  std::vector<nlohmann::json> requests_;
  std::vector<std::string> authorizations_;
  int failure_status_ = 0;
  std::string failure_error_;
  // Last: destroyed first, so that no request is served from a half-destroyed fake.
  std::unique_ptr<FakeHttpServer> server_;
};

}  // namespace herald::fakes
