#include "skills/web/search_backend.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "component/base/absl_string_view.h"
#include "component/base/utf8.h"
#include "glog/logging.h"
#include "nlohmann/json.hpp"
#include "skills/web/text_encoding.h"
#include "skills/web/web_url.h"

namespace herald::skills::web {
namespace {

// Clean UTF-8 on one line, single spaces, cut to `max_bytes` with an ellipsis.
std::string OneLine(std::string_view text, size_t max_bytes) {
  const std::string clean = ToCleanUtf8(text);
  std::string out;
  out.reserve(clean.size());
  bool space = false;
  for (char c : clean) {
    if (c == ' ' || c == '\t' || c == '\n') {
      space = !out.empty();
      continue;
    }
    if (space) out.push_back(' ');
    space = false;
    out.push_back(c);
  }
  if (base::TruncateUtf8(out, max_bytes)) {
    while (!out.empty() && out.back() == ' ') out.pop_back();
    out += "…";
  }
  return out;
}

std::string StringField(const nlohmann::json& object, const char* key) {
  const auto it = object.find(key);
  if (it == object.end() || !it->is_string()) return "";
  return it->get<std::string>();
}

}  // namespace

std::optional<SearchResult> MakeSearchResult(std::string_view title, std::string_view url,
                                             std::string_view snippet) {
  absl::StatusOr<WebUrl> parsed = ParseWebUrl(ToCleanUtf8(url));
  if (!parsed.ok()) return std::nullopt;
  SearchResult result;
  result.url = parsed->url;
  result.title = OneLine(title, kMaxResultTitleBytes);
  if (result.title.empty()) result.title = parsed->host;
  result.snippet = OneLine(snippet, kMaxResultSnippetBytes);
  return result;
}

absl::StatusOr<std::vector<SearchResult>> ParseJsonResults(std::string_view body, int max_results,
                                                           const char* title_key,
                                                           const char* url_key,
                                                           const char* snippet_key) {
  const nlohmann::json answer = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (answer.is_discarded() || !answer.is_object()) {
    return absl::InvalidArgumentError("the answer is not a JSON object");
  }
  const auto results = answer.find("results");
  if (results == answer.end() || !results->is_array()) {
    return absl::InvalidArgumentError("the answer has no \"results\" array");
  }
  std::vector<SearchResult> found;
  for (const nlohmann::json& item : *results) {
    if (static_cast<int>(found.size()) >= max_results) break;
    if (!item.is_object()) continue;
    std::optional<SearchResult> result = MakeSearchResult(
        StringField(item, title_key), StringField(item, url_key), StringField(item, snippet_key));
    if (result.has_value()) found.push_back(*std::move(result));
  }
  return found;
}

absl::Status SearchFailure(std::string_view backend, const std::string& log_tag,
                           const absl::StatusOr<providers::HttpResponse>& response,
                           std::string_view operator_hint,
                           const std::vector<std::string>& request_secrets) {
  if (!response.ok()) {
    LOG(WARNING) << "conversation " << log_tag << ": web_search (" << backend
                 << "): " << response.status();
    if (response.status().code() == absl::StatusCode::kDeadlineExceeded) {
      return absl::DeadlineExceededError("web search timed out; try again or answer without it");
    }
    return absl::UnavailableError(
        "web search is unavailable right now (the search service did not answer)");
  }
  const int status = response->status;
  // The body of an error may explain it; a short, clean excerpt is enough for the log.
  // A service may quote the credentials it was sent back in its error: never into the log.
  std::string excerpt = response->body;
  for (const std::string& secret : request_secrets) {
    if (!secret.empty()) absl::StrReplaceAll({{secret, "[redacted]"}}, &excerpt);
  }
  LOG(WARNING) << "conversation " << log_tag << ": web_search (" << backend << ") answered HTTP "
               << status << ": " << OneLine(excerpt, 300) << (operator_hint.empty() ? "" : " — ")
               << operator_hint;
  if (status == 401 || status == 403) {
    return absl::UnavailableError(
        "web search is unavailable: the search service refused Herald's request");
  }
  if (status == 429 || status == 432 || status == 433) {
    return absl::ResourceExhaustedError(
        "web search is rate-limited or out of credits right now; try again later or answer "
        "without it");
  }
  return absl::UnavailableError(absl::StrCat("web search failed (HTTP ", status, ")"));
}

void SendSearchRequest(providers::HttpClient& http, providers::HttpRequest request,
                       absl::Duration timeout, std::string_view backend, int max_results,
                       const std::string& log_tag,
                       std::function<std::string(int status)> operator_hint,
                       SearchResultParser parse, SearchBackend::Done done) {
  request.total_timeout = timeout;
  request.connect_timeout = std::min(timeout, absl::Seconds(10));
  request.retry.max_retries = 1;
  request.retry.initial_backoff = absl::Milliseconds(300);
  request.retry.max_retry_after = absl::Seconds(5);
  request.max_body_bytes = 4 << 20;
  // What the request authenticates with, so that an error quoting it is not logged with it.
  std::vector<std::string> secrets;
  for (const auto& [name, value] : request.headers) {
    if (!absl::EqualsIgnoreCase(name, "authorization") &&
        !absl::EqualsIgnoreCase(name, "x-api-key")) {
      continue;
    }
    secrets.push_back(value);
    if (const size_t space = value.find(' '); space != std::string::npos) {
      secrets.push_back(value.substr(space + 1));  // "Bearer <token>": the token alone too
    }
  }
  std::sort(secrets.begin(), secrets.end(),
            [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
  http.Send(std::move(request),
            [backend = std::string(backend), max_results, log_tag,
             operator_hint = std::move(operator_hint), parse, done = std::move(done),
             secrets = std::move(secrets)](absl::StatusOr<providers::HttpResponse> response) {
              if (!response.ok() || response->status < 200 || response->status > 299) {
                done(SearchFailure(backend, log_tag, response,
                                   response.ok() ? operator_hint(response->status) : "", secrets));
                return;
              }
              absl::StatusOr<std::vector<SearchResult>> results =
                  parse(response->body, max_results);
              if (!results.ok()) {
                LOG(WARNING) << "conversation " << log_tag << ": web_search (" << backend
                             << "): unreadable answer: " << results.status();
                done(absl::UnavailableError(
                    "web search failed: the search service sent an answer Herald could not "
                    "read"));
                return;
              }
              done(std::move(results));
            });
}

}  // namespace herald::skills::web
