#include "skills/web/tavily_backend.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
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
  SendSearchRequest(
      http_, std::move(request), options_.timeout, "tavily", max_results, log_tag,
      [](int status) {
        return std::string(status == 401 || status == 403 ? "check [skills.web_search] api_key"
                                                          : "");
      },
      &ParseTavilyResults, std::move(done));
}

}  // namespace herald::skills::web
