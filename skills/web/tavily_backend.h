// skills/web/tavily_backend.h
//
// TavilyBackend asks Tavily's search API (https://docs.tavily.com):
//   POST {url}/search   Authorization: Bearer KEY   Content-Type: application/json
//   {"query": "...", "max_results": 5, "search_depth": "basic", "include_answer": false,
//    "include_raw_content": false, "include_images": false}
//   -> 200 {"query": "...", "results": [{"title", "url", "content", "score"}, ...], ...}
//   -> 401/403 (bad key), 429 (rate limit), 432/433 (plan or spending limit), errors as
//      {"detail": {"error": "..."}}
// The key travels only in the Authorization header (never in a URL or a log line).
//
//   TavilyBackend backend(http, {.api_key = key});
//   backend.Search("xmpp", 5, "conv-1", done);
#pragma once

#include <string>

#include "absl/time/time.h"
#include "providers/http/http_client.h"
#include "skills/web/search_backend.h"

namespace herald::skills::web {

struct TavilyOptions {
  std::string url = "https://api.tavily.com";  // tests point this at a fake
  std::string api_key;                         // a secret
  absl::Duration timeout = absl::Seconds(15);
  std::string search_depth = "basic";  // "basic" (1 credit) or "advanced" (2)
};

class TavilyBackend : public SearchBackend {
 public:
  // `http` must outlive the backend.
  TavilyBackend(providers::HttpClient& http, TavilyOptions options);

  std::string_view name() const override { return "tavily"; }
  void Search(const std::string& query, int max_results, const std::string& log_tag,
              Done done) override;

 private:
  providers::HttpClient& http_;
  TavilyOptions options_;
};

// The results in a Tavily answer, at most `max_results`; InvalidArgument when `body` is not
// one. Exposed for tests and fuzzing.
absl::StatusOr<std::vector<SearchResult>> ParseTavilyResults(std::string_view body,
                                                             int max_results);

}  // namespace herald::skills::web
