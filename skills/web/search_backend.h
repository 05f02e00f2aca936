// skills/web/search_backend.h
//
// SearchBackend is where web_search sends a query: a SearXNG instance (searxng_backend.h) or
// Tavily's API (tavily_backend.h), chosen by [skills.web_search] backend. Each speaks its own
// wire format and hands back the same thing: a ranked list of results with a title, an
// http(s) URL and a snippet, clean UTF-8 of bounded length, ready to be numbered for the
// model to cite.
//
// A backend's address is the operator's choice, not the model's: it is not SSRF-guarded
// like url_fetch (a SearXNG on the same host or LAN is the usual setup), and the model never
// chooses or sees it. Errors therefore never name the backend's address or key; the detail
// goes to the log.
//
//   backend->Search("xmpp component protocol", 5, "conv-1",
//                   [](absl::StatusOr<std::vector<SearchResult>> results) { ... });
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "providers/http/http_client.h"

namespace herald::skills::web {

struct SearchResult {
  std::string title;
  std::string url;
  std::string snippet;
};

class SearchBackend {
 public:
  using Done = std::function<void(absl::StatusOr<std::vector<SearchResult>>)>;

  virtual ~SearchBackend() = default;

  // "searxng", "tavily": for logs and the skill's description.
  virtual std::string_view name() const = 0;

  // Called on the I/O loop; `done` runs once, on the loop, with at most `max_results`
  // results, or with an error whose message the model may read. `log_tag` (a conversation
  // id) prefixes the log lines that carry the detail.
  virtual void Search(const std::string& query, int max_results, const std::string& log_tag,
                      Done done) = 0;
};

// --- for implementations ---

// The longest title and snippet kept, in bytes (cut at a code point).
inline constexpr size_t kMaxResultTitleBytes = 200;
inline constexpr size_t kMaxResultSnippetBytes = 500;

// A result from a backend's fields, or nullopt when its URL is not an http(s) URL. Text is
// made clean UTF-8, whitespace collapsed, and cut to the limits above (with "…").
std::optional<SearchResult> MakeSearchResult(std::string_view title, std::string_view url,
                                             std::string_view snippet);

// The results of a JSON answer shaped {"results": [{TITLE, URL, SNIPPET...}, ...]} (both
// SearXNG and Tavily answer so), at most `max_results`, skipping entries without an http(s)
// URL; InvalidArgument when `body` is not such an answer.
absl::StatusOr<std::vector<SearchResult>> ParseJsonResults(std::string_view body, int max_results,
                                                           const char* title_key,
                                                           const char* url_key,
                                                           const char* snippet_key);

// The error the model reads when a backend's HTTP call failed or answered other than 2xx,
// with the detail logged under `log_tag`. `hint_for_status` adds a hint for the operator to
// the log line for a given status (e.g. SearXNG's 403 when JSON output is off).
// `request_secrets` (the credentials the request carried) are cut out of the logged excerpt.
absl::Status SearchFailure(std::string_view backend, const std::string& log_tag,
                           const absl::StatusOr<providers::HttpResponse>& response,
                           std::string_view operator_hint = "",
                           const std::vector<std::string>& request_secrets = {});

// Sends a backend's search `request` with the limits every backend uses (`timeout` in all,
// at most 10 s to connect, one retry, a 4 MiB answer) and hands `done` the results `parse`
// reads from a 2xx answer — or the error the model reads: SearchFailure, with
// `operator_hint(status)` for an HTTP error, or an unreadable answer (detail logged).
using SearchResultParser = absl::StatusOr<std::vector<SearchResult>> (*)(std::string_view body,
                                                                         int max_results);
void SendSearchRequest(providers::HttpClient& http, providers::HttpRequest request,
                       absl::Duration timeout, std::string_view backend, int max_results,
                       const std::string& log_tag,
                       std::function<std::string(int status)> operator_hint,
                       SearchResultParser parse, SearchBackend::Done done);

}  // namespace herald::skills::web
