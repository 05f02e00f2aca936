// skills/web/searxng_backend.h
//
// SearxngBackend asks a SearXNG instance through its JSON API:
//   GET {url}/search?q=QUERY&format=json   ->   {"results": [{"title", "url", "content"}, ...]}
// The instance must allow JSON output (settings.yml: search.formats includes json; without
// it SearXNG answers 403) and, for a private instance, usually has its bot limiter off.
//
//   SearxngBackend backend(http, {.url = "http://127.0.0.1:8888"});
//   backend.Search("xmpp", 5, "conv-1", done);
#pragma once

#include <string>

#include "absl/time/time.h"
#include "providers/http/http_client.h"
#include "skills/web/search_backend.h"

namespace herald::skills::web {

struct SearxngOptions {
  std::string url;  // the instance's base URL, e.g. "http://127.0.0.1:8888" or ".../searx"
  absl::Duration timeout = absl::Seconds(15);
  std::string user_agent = "Herald web_search";
};

class SearxngBackend : public SearchBackend {
 public:
  // `http` must outlive the backend.
  SearxngBackend(providers::HttpClient& http, SearxngOptions options);

  std::string_view name() const override { return "searxng"; }
  void Search(const std::string& query, int max_results, const std::string& log_tag,
              Done done) override;

 private:
  providers::HttpClient& http_;
  SearxngOptions options_;
};

// The results in a SearXNG JSON answer, at most `max_results` (those without an http(s) URL
// are skipped); InvalidArgument when `body` is not one. Exposed for tests and fuzzing.
absl::StatusOr<std::vector<SearchResult>> ParseSearxngResults(std::string_view body,
                                                              int max_results);

// `text` percent-encoded for a query string (RFC 3986 unreserved characters kept).
std::string PercentEncode(std::string_view text);

}  // namespace herald::skills::web
