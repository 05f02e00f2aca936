#include "tests/fakes/fake_search_services.h"

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "component/base/absl_string_view.h"

namespace herald::fakes {
namespace {

// application/x-www-form-urlencoded: '+' is a space, %XX a byte.
std::string FormDecode(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '+') {
      out.push_back(' ');
    } else if (text[i] == '%' && i + 2 < text.size()) {
      int value = 0;
      if (absl::SimpleHexAtoi(AbslView(text.substr(i + 1, 2)), &value)) {
        out.push_back(static_cast<char>(value));
        i += 2;
      } else {
        out.push_back('%');
      }
    } else {
      out.push_back(text[i]);
    }
  }
  return out;
}

// The value of `name` in the query string of `path`, decoded; "" when absent.
std::string QueryParameter(const std::string& path, std::string_view name) {
  const size_t question = path.find('?');
  if (question == std::string::npos) return "";
  for (absl::string_view pair : absl::StrSplit(path.substr(question + 1), '&')) {
    const size_t equals = pair.find('=');
    if (pair.substr(0, equals) == AbslView(name)) {
      return equals == absl::string_view::npos
                 ? ""
                 : FormDecode(std::string_view(pair.data(), pair.size()).substr(equals + 1));
    }
  }
  return "";
}

FakeHttpResponse Json(int status, const nlohmann::json& body) {
  return FakeHttpResponse{
      .status = status, .headers = {{"Content-Type", "application/json"}}, .body = body.dump()};
}

FakeHttpResponse TavilyError(int status, const std::string& error) {
  return Json(status, {{"detail", {{"error", error}}}});
}

}  // namespace

// --- FakeSearxng ---

absl::StatusOr<std::unique_ptr<FakeSearxng>> FakeSearxng::Start(std::vector<FakeSearchHit> hits) {
  std::unique_ptr<FakeSearxng> fake(new FakeSearxng());
  fake->hits_ = std::move(hits);
  FakeSearxng* raw = fake.get();
  absl::StatusOr<std::unique_ptr<FakeHttpServer>> server =
      FakeHttpServer::Start([raw](const FakeHttpRequest& request) { return raw->Answer(request); });
  if (!server.ok()) return server.status();
  fake->server_ = std::move(*server);
  return fake;
}

std::vector<std::string> FakeSearxng::queries() const {
  std::lock_guard<std::mutex> lock(mu_);
  return queries_;
}

void FakeSearxng::SetJsonEnabled(bool enabled) {
  std::lock_guard<std::mutex> lock(mu_);
  json_enabled_ = enabled;
}

void FakeSearxng::SetFailure(int status, std::string body) {
  std::lock_guard<std::mutex> lock(mu_);
  failure_status_ = status;
  failure_body_ = std::move(body);
}

FakeHttpResponse FakeSearxng::Answer(const FakeHttpRequest& request) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string path = request.path.substr(0, request.path.find('?'));
  if (path != "/search" || (request.method != "GET" && request.method != "POST")) {
    return FakeHttpResponse{.status = 404, .body = "Not Found"};
  }
  const std::string query = QueryParameter(request.path, "q");
  queries_.push_back(query);
  if (failure_status_ != 0) {
    return FakeHttpResponse{.status = failure_status_, .body = failure_body_};
  }
  if (!json_enabled_ || QueryParameter(request.path, "format") != "json") {
    // What SearXNG answers for a format not listed in search.formats.
    return FakeHttpResponse{.status = 403, .body = "<html><body>Forbidden</body></html>"};
  }
  nlohmann::json results = nlohmann::json::array();
  int position = 0;
  for (const FakeSearchHit& hit : hits_) {
    ++position;
    results.push_back({{"url", hit.url},
                       {"title", hit.title},
                       {"content", hit.content},
                       {"engine", "duckduckgo"},
                       {"parsed_url", {"https", "example", "/", "", "", ""}},
                       {"template", "default.html"},
                       {"engines", {"duckduckgo", "brave"}},
                       {"positions", {position}},
                       {"score", 2.0 / position},
                       {"category", "general"}});
  }
  return Json(200, {{"query", query},
                    {"number_of_results", 0},
                    {"results", results},
                    {"answers", nlohmann::json::array()},
                    {"corrections", nlohmann::json::array()},
                    {"infoboxes", nlohmann::json::array()},
                    {"suggestions", {"related search"}},
                    {"unresponsive_engines", nlohmann::json::array()}});
}

// --- FakeTavily ---

absl::StatusOr<std::unique_ptr<FakeTavily>> FakeTavily::Start(std::string api_key,
                                                              std::vector<FakeSearchHit> hits) {
  std::unique_ptr<FakeTavily> fake(new FakeTavily());
  fake->api_key_ = std::move(api_key);
  fake->hits_ = std::move(hits);
  FakeTavily* raw = fake.get();
  absl::StatusOr<std::unique_ptr<FakeHttpServer>> server =
      FakeHttpServer::Start([raw](const FakeHttpRequest& request) { return raw->Answer(request); });
  if (!server.ok()) return server.status();
  fake->server_ = std::move(*server);
  return fake;
}

std::vector<nlohmann::json> FakeTavily::requests() const {
  std::lock_guard<std::mutex> lock(mu_);
  return requests_;
}

std::vector<std::string> FakeTavily::authorizations() const {
  std::lock_guard<std::mutex> lock(mu_);
  return authorizations_;
}

void FakeTavily::SetFailure(int status, std::string error) {
  std::lock_guard<std::mutex> lock(mu_);
  failure_status_ = status;
  failure_error_ = std::move(error);
}

FakeHttpResponse FakeTavily::Answer(const FakeHttpRequest& request) {
  std::lock_guard<std::mutex> lock(mu_);
  if (request.path != "/search") return TavilyError(404, "Not Found");
  if (request.method != "POST") return TavilyError(405, "Method Not Allowed");
  authorizations_.push_back(request.Header("authorization"));
  if (request.Header("authorization") != "Bearer " + api_key_) {
    // Some services quote the key they were given back in the error: Herald must not log it.
    return TavilyError(
        401, "Unauthorized: missing or invalid API key: " + request.Header("authorization"));
  }
  nlohmann::json body = nlohmann::json::parse(request.body, nullptr, false);
  if (body.is_discarded() || !body.is_object() || !body.contains("query") ||
      !body["query"].is_string()) {
    return TavilyError(400, "Invalid request body: 'query' is required.");
  }
  requests_.push_back(body);
  if (failure_status_ != 0) return TavilyError(failure_status_, failure_error_);
  size_t max_results = 5;
  if (body.contains("max_results") && body["max_results"].is_number_integer()) {
    const int wanted = body["max_results"].get<int>();
    if (wanted < 0 || wanted > 20) {
      return TavilyError(400, "max_results must be between 0 and 20.");
    }
    max_results = static_cast<size_t>(wanted);
  }
  nlohmann::json results = nlohmann::json::array();
  for (size_t i = 0; i < hits_.size() && i < max_results; ++i) {
    results.push_back({{"title", hits_[i].title},
                       {"url", hits_[i].url},
                       {"content", hits_[i].content},
                       {"score", 0.9 - 0.1 * static_cast<double>(i)},
                       {"raw_content", nullptr}});
  }
  return Json(200, {{"query", body["query"]},
                    {"follow_up_questions", nullptr},
                    {"answer", nullptr},
                    {"images", nlohmann::json::array()},
                    {"results", results},
                    {"response_time", 0.42}});
}

}  // namespace herald::fakes
