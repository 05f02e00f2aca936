#include "skills/web/tavily_backend.h"

#include <algorithm>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "glog/logging.h"
#include "nlohmann/json.hpp"

namespace herald::skills::web {

absl::StatusOr<std::vector<SearchResult>> ParseTavilyResults(std::string_view body,
                                                             int max_results) {
  return ParseJsonResults(body, max_results, "title", "url", "content");
}

TavilyBackend::TavilyBackend(providers::HttpClient& http, TavilyOptions options)
    : http_(http), options_(std::move(options)) {
  while (!options_.url.empty() && options_.url.back() == '/') options_.url.pop_back();
}

void TavilyBackend::Search(const std::string& query, int max_results, const std::string& log_tag,
                           Done done) {
  const nlohmann::json body = {
      {"query", query},
      {"max_results", max_results},
      {"search_depth", options_.search_depth},
      {"include_answer", false},
      {"include_raw_content", false},
      {"include_images", false},
  };
  providers::HttpRequest request{.method = "POST", .url = absl::StrCat(options_.url, "/search")};
  request.headers = {{"content-type", "application/json"},
                     {"accept", "application/json"},
                     {"authorization", absl::StrCat("Bearer ", options_.api_key)}};
  request.body =
      body.dump(-1, ' ', /*ensure_ascii=*/false, nlohmann::json::error_handler_t::replace);
  request.total_timeout = options_.timeout;
  request.connect_timeout = std::min(options_.timeout, absl::Seconds(10));
  request.retry.max_retries = 1;
  request.retry.initial_backoff = absl::Milliseconds(300);
  request.retry.max_retry_after = absl::Seconds(5);
  request.max_body_bytes = 4 << 20;
  http_.Send(std::move(request), [max_results, log_tag, done = std::move(done)](
                                     absl::StatusOr<providers::HttpResponse> response) {
    if (!response.ok() || response->status < 200 || response->status > 299) {
      done(SearchFailure("tavily", log_tag, response,
                         response.ok() && (response->status == 401 || response->status == 403)
                             ? "check [skills.web_search] api_key"
                             : ""));
      return;
    }
    absl::StatusOr<std::vector<SearchResult>> results =
        ParseTavilyResults(response->body, max_results);
    if (!results.ok()) {
      LOG(WARNING) << "conversation " << log_tag
                   << ": web_search (tavily): unreadable answer: " << results.status();
      done(absl::UnavailableError(
          "web search failed: the search service sent an answer Herald could not read"));
      return;
    }
    done(std::move(results));
  });
}

}  // namespace herald::skills::web
