#include "skills/web/searxng_backend.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "component/base/hex.h"

namespace herald::skills::web {

std::string PercentEncode(std::string_view text) {
  std::string out;
  out.reserve(text.size() * 3);
  for (char c : text) {
    const unsigned char byte = static_cast<unsigned char>(c);
    if (absl::ascii_isalnum(byte) || c == '-' || c == '.' || c == '_' || c == '~') {
      out.push_back(c);
    } else {
      out.push_back('%');
      base::AppendHexByte(byte, base::HexCase::kUpper, out);
    }
  }
  return out;
}

absl::StatusOr<std::vector<SearchResult>> ParseSearxngResults(std::string_view body,
                                                              int max_results) {
  return ParseJsonResults(body, max_results, "title", "url", "content");
}

SearxngBackend::SearxngBackend(providers::HttpClient& http, SearxngOptions options)
    : http_(http), options_(std::move(options)) {
  while (!options_.url.empty() && options_.url.back() == '/') options_.url.pop_back();
}

void SearxngBackend::Search(const std::string& query, int max_results, const std::string& log_tag,
                            Done done) {
  providers::HttpRequest request{
      .method = "GET",
      .url = absl::StrCat(options_.url, "/search?q=", PercentEncode(query), "&format=json")};
  request.headers = {{"accept", "application/json"}, {"user-agent", options_.user_agent}};
  SendSearchRequest(
      http_, std::move(request), options_.timeout, "searxng", max_results, log_tag,
      [](int status) {
        return std::string(status == 403 ? "is \"json\" listed in search.formats of "
                                           "the instance's settings.yml?"
                                         : "");
      },
      &ParseSearxngResults, std::move(done));
}

}  // namespace herald::skills::web
