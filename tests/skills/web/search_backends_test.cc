// Both search backends against fakes speaking their services' wire formats.
#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "skills/web/searxng_backend.h"
#include "skills/web/tavily_backend.h"
#include "tests/fakes/fake_search_services.h"
#include "tests/support/captured_log.h"

namespace herald::skills::web {
namespace {

using fakes::FakeSearchHit;
using fakes::FakeSearxng;
using fakes::FakeTavily;
using ::testing::ElementsAre;

const std::vector<FakeSearchHit> kHits = {
    {.title = "XEP-0114: Jabber Component Protocol",
     .url = "https://xmpp.org/extensions/xep-0114.html",
     .content = "This specification documents the existing protocol used for\n communication "
                "between servers and \"external\" components."},
    {.title = "Prosody: Components", .url = "https://prosody.im/doc/components", .content = ""},
    {.title = "not a web page", .url = "magnet:?xt=urn:btih:abc", .content = "skipped"},
    {.title = "", .url = "http://example.org/untitled", .content = "no title"},
};

class SearchBackendsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<providers::HttpClient>> http =
        providers::HttpClient::Create(io_);
    ASSERT_TRUE(http.ok()) << http.status();
    http_ = std::move(*http);
  }

  absl::StatusOr<std::vector<SearchResult>> Search(SearchBackend& backend, const std::string& query,
                                                   int max_results) {
    std::optional<absl::StatusOr<std::vector<SearchResult>>> result;
    backend.Search(query, max_results, "test",
                   [&](absl::StatusOr<std::vector<SearchResult>> r) { result = std::move(r); });
    EXPECT_FALSE(result.has_value()) << "answered inside Search";
    const absl::Time deadline = absl::Now() + absl::Seconds(30);
    while (!result.has_value() && absl::Now() < deadline) {
      io_.run_one_for(std::chrono::milliseconds(20));
    }
    if (!result.has_value()) return absl::DeadlineExceededError("test: no answer");
    return *std::move(result);
  }

  asio::io_context io_;
  asio::executor_work_guard<asio::io_context::executor_type> work_{io_.get_executor()};
  std::unique_ptr<providers::HttpClient> http_;
};

TEST_F(SearchBackendsTest, SearxngSendsTheQueryAndReadsTitlesUrlsAndSnippets) {
  absl::StatusOr<std::unique_ptr<FakeSearxng>> searxng = FakeSearxng::Start(kHits);
  ASSERT_TRUE(searxng.ok()) << searxng.status();
  SearxngBackend backend(*http_, {.url = (*searxng)->base_url() + "/"});
  absl::StatusOr<std::vector<SearchResult>> results =
      Search(backend, "xmpp component & \"protocol\" ü", 10);
  ASSERT_TRUE(results.ok()) << results.status();
  EXPECT_THAT((*searxng)->queries(), ElementsAre("xmpp component & \"protocol\" ü"));
  ASSERT_EQ(results->size(), 3u);
  EXPECT_EQ((*results)[0].title, "XEP-0114: Jabber Component Protocol");
  EXPECT_EQ((*results)[0].url, "https://xmpp.org/extensions/xep-0114.html");
  EXPECT_EQ((*results)[0].snippet,
            "This specification documents the existing protocol used for communication "
            "between servers and \"external\" components.");
  EXPECT_EQ((*results)[1].snippet, "");
  EXPECT_EQ((*results)[2].title, "example.org");  // an untitled result is named by its host
}

TEST_F(SearchBackendsTest, SearxngReturnsAtMostTheResultsAskedFor) {
  absl::StatusOr<std::unique_ptr<FakeSearxng>> searxng = FakeSearxng::Start(kHits);
  ASSERT_TRUE(searxng.ok());
  SearxngBackend backend(*http_, {.url = (*searxng)->base_url()});
  absl::StatusOr<std::vector<SearchResult>> results = Search(backend, "xmpp", 1);
  ASSERT_TRUE(results.ok()) << results.status();
  EXPECT_EQ(results->size(), 1u);
}

TEST_F(SearchBackendsTest, SearxngWithoutJsonOutputIsUnavailableWithoutNamingTheInstance) {
  absl::StatusOr<std::unique_ptr<FakeSearxng>> searxng = FakeSearxng::Start(kHits);
  ASSERT_TRUE(searxng.ok());
  (*searxng)->SetJsonEnabled(false);
  SearxngBackend backend(*http_, {.url = (*searxng)->base_url()});
  absl::StatusOr<std::vector<SearchResult>> results = Search(backend, "xmpp", 5);
  EXPECT_EQ(results.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_FALSE(absl::StrContains(results.status().message(), "127.0.0.1")) << results.status();
}

TEST_F(SearchBackendsTest, SearxngThatCannotBeReachedIsUnavailable) {
  std::string url;
  {
    absl::StatusOr<std::unique_ptr<FakeSearxng>> searxng = FakeSearxng::Start(kHits);
    ASSERT_TRUE(searxng.ok());
    url = (*searxng)->base_url();
  }
  SearxngBackend backend(*http_, {.url = url});
  absl::StatusOr<std::vector<SearchResult>> results = Search(backend, "xmpp", 5);
  EXPECT_EQ(results.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_FALSE(absl::StrContains(results.status().message(), url)) << results.status();
}

TEST_F(SearchBackendsTest, SearxngAnswerThatIsNotJsonIsAnError) {
  absl::StatusOr<std::unique_ptr<FakeSearxng>> searxng = FakeSearxng::Start(kHits);
  ASSERT_TRUE(searxng.ok());
  (*searxng)->SetFailure(200, "<html>not json</html>");
  SearxngBackend backend(*http_, {.url = (*searxng)->base_url()});
  absl::StatusOr<std::vector<SearchResult>> results = Search(backend, "xmpp", 5);
  EXPECT_EQ(results.status().code(), absl::StatusCode::kUnavailable);
}

TEST_F(SearchBackendsTest, TavilySendsTheKeyAsABearerTokenAndTheQueryAsJson) {
  absl::StatusOr<std::unique_ptr<FakeTavily>> tavily = FakeTavily::Start("tvly-secret", kHits);
  ASSERT_TRUE(tavily.ok()) << tavily.status();
  TavilyBackend backend(*http_, {.url = (*tavily)->base_url(), .api_key = "tvly-secret"});
  absl::StatusOr<std::vector<SearchResult>> results = Search(backend, "xmpp components", 2);
  ASSERT_TRUE(results.ok()) << results.status();
  ASSERT_EQ(results->size(), 2u);
  EXPECT_EQ((*results)[0].url, "https://xmpp.org/extensions/xep-0114.html");
  EXPECT_EQ((*results)[1].title, "Prosody: Components");
  ASSERT_EQ((*tavily)->requests().size(), 1u);
  const nlohmann::json body = (*tavily)->requests()[0];
  EXPECT_EQ(body["query"], "xmpp components");
  EXPECT_EQ(body["max_results"], 2);
  EXPECT_EQ(body["search_depth"], "basic");
  EXPECT_EQ(body["include_answer"], false);
  EXPECT_FALSE(body.contains("api_key"));  // the key travels in the header only
  EXPECT_THAT((*tavily)->authorizations(), ElementsAre("Bearer tvly-secret"));
}

TEST_F(SearchBackendsTest, TavilyWithAWrongKeyIsUnavailableWithoutShowingTheKey) {
  absl::StatusOr<std::unique_ptr<FakeTavily>> tavily = FakeTavily::Start("tvly-right", kHits);
  ASSERT_TRUE(tavily.ok());
  TavilyBackend backend(*http_, {.url = (*tavily)->base_url(), .api_key = "tvly-wrong"});
  herald::testing::CapturedLog log;
  absl::StatusOr<std::vector<SearchResult>> results = Search(backend, "xmpp", 5);
  EXPECT_EQ(results.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_FALSE(absl::StrContains(results.status().message(), "tvly")) << results.status();
  // The fake quotes the key it was sent in its error, which is logged: without the key.
  EXPECT_THAT(log.Text(), ::testing::HasSubstr("invalid API key: [redacted]"));
  EXPECT_THAT(log.Text(), ::testing::Not(::testing::HasSubstr("tvly-wrong")));
}

TEST_F(SearchBackendsTest, TavilyOutOfCreditsIsResourceExhausted) {
  absl::StatusOr<std::unique_ptr<FakeTavily>> tavily = FakeTavily::Start("k", kHits);
  ASSERT_TRUE(tavily.ok());
  (*tavily)->SetFailure(432, "This request exceeds your plan's set usage limit.");
  TavilyBackend backend(*http_, {.url = (*tavily)->base_url(), .api_key = "k"});
  absl::StatusOr<std::vector<SearchResult>> results = Search(backend, "xmpp", 5);
  EXPECT_EQ(results.status().code(), absl::StatusCode::kResourceExhausted) << results.status();
}

TEST(SearchResultTest, CleansAndBoundsWhatABackendReturns) {
  std::optional<SearchResult> result =
      MakeSearchResult("  A\n\ttitle \xff ", "https://example.org/x", std::string(2000, 's'));
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->title, "A title \ufffd");
  EXPECT_LE(result->snippet.size(), kMaxResultSnippetBytes + 3);
  EXPECT_TRUE(absl::EndsWith(result->snippet, "…"));
  EXPECT_FALSE(MakeSearchResult("t", "javascript:alert(1)", "").has_value());
  EXPECT_FALSE(MakeSearchResult("t", "/relative", "").has_value());
}

TEST(SearchResultTest, ParsesOnlyWellFormedAnswers) {
  EXPECT_FALSE(ParseSearxngResults("[]", 5).ok());
  EXPECT_FALSE(ParseSearxngResults("{\"results\": 3}", 5).ok());
  EXPECT_FALSE(ParseTavilyResults("{", 5).ok());
  absl::StatusOr<std::vector<SearchResult>> results = ParseTavilyResults(
      R"({"results": [1, {"title": 2, "url": "https://a.example/"}, {"url": null}]})", 5);
  ASSERT_TRUE(results.ok()) << results.status();
  ASSERT_EQ(results->size(), 1u);
  EXPECT_EQ(results->front().title, "a.example");
}

TEST(SearchResultTest, PercentEncodesAQuery) {
  EXPECT_EQ(PercentEncode("a b&c=d/é~"), "a%20b%26c%3Dd%2F%C3%A9~");
}

}  // namespace
}  // namespace herald::skills::web
