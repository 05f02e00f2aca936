#include "skills/web/guarded_fetch.h"

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/fakes/fake_http_server.h"

namespace herald::skills::web {
namespace {

using fakes::FakeHttpRequest;
using fakes::FakeHttpResponse;
using fakes::FakeHttpServer;

// The fake server listens on 127.0.0.1, which the guard refuses: these tests fetch from it
// through an allow_hosts exemption, under made-up names their resolver maps to it.
class GuardedFetchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<providers::HttpClient>> http =
        providers::HttpClient::Create(io_);
    ASSERT_TRUE(http.ok()) << http.status();
    http_ = std::move(*http);
    absl::StatusOr<std::unique_ptr<FakeHttpServer>> server =
        FakeHttpServer::Start([this](const FakeHttpRequest& request) {
          std::lock_guard<std::mutex> lock(mu_);
          auto it = pages_.find(request.path);
          if (it == pages_.end()) return FakeHttpResponse{.status = 404, .body = "missing"};
          return it->second;
        });
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
    names_["site.test"] = {asio::ip::make_address("127.0.0.1")};
    names_["other.test"] = {asio::ip::make_address("127.0.0.1")};
  }

  void Serve(const std::string& path, FakeHttpResponse response) {
    std::lock_guard<std::mutex> lock(mu_);
    pages_[path] = std::move(response);
  }

  static FakeHttpResponse Redirect(int status, std::string location) {
    return FakeHttpResponse{.status = status, .headers = {{"Location", std::move(location)}}};
  }

  static FakeHttpResponse Html(std::string body) {
    return FakeHttpResponse{.headers = {{"Content-Type", "text/html; charset=utf-8"}},
                            .body = std::move(body)};
  }

  std::string Url(const std::string& host, const std::string& path) const {
    return absl::StrCat("http://", host, ":", server_->port(), path);
  }

  std::unique_ptr<GuardedFetcher> Fetcher(std::vector<std::string> allow_hosts,
                                          FetchLimits limits = {}) {
    absl::StatusOr<AddressPolicy> policy = AddressPolicy::Create(allow_hosts);
    EXPECT_TRUE(policy.ok()) << policy.status();
    HostResolver resolver = [this](const std::string& host,
                                   std::function<void(absl::StatusOr<ResolvedAddresses>)> done) {
      auto it = names_.find(host);
      absl::StatusOr<ResolvedAddresses> answer =
          it == names_.end()
              ? absl::StatusOr<ResolvedAddresses>(absl::NotFoundError("no such host"))
              : absl::StatusOr<ResolvedAddresses>(it->second);
      asio::post(io_, [done = std::move(done), answer = std::move(answer)]() { done(answer); });
    };
    return std::make_unique<GuardedFetcher>(
        io_, *http_, AddressGuard(io_, *std::move(policy), std::move(resolver)), std::move(limits));
  }

  absl::StatusOr<FetchedPage> Fetch(GuardedFetcher& fetcher, const std::string& url) {
    return Fetch(fetcher, FetchRequest{.url = url});
  }

  absl::StatusOr<FetchedPage> Fetch(GuardedFetcher& fetcher, FetchRequest request) {
    std::optional<absl::StatusOr<FetchedPage>> result;
    fetcher.Fetch(std::move(request), "test",
                  [&](absl::StatusOr<FetchedPage> page) { result = std::move(page); });
    EXPECT_FALSE(result.has_value()) << "answered inside Fetch";
    const absl::Time deadline = absl::Now() + absl::Seconds(30);
    while (!result.has_value() && absl::Now() < deadline) {
      io_.run_one_for(std::chrono::milliseconds(20));
    }
    if (!result.has_value()) return absl::DeadlineExceededError("test: no answer within 30 s");
    return *std::move(result);
  }

  asio::io_context io_;
  asio::executor_work_guard<asio::io_context::executor_type> work_{io_.get_executor()};
  std::unique_ptr<providers::HttpClient> http_;
  std::mutex mu_;
  std::map<std::string, FakeHttpResponse> pages_;
  std::map<std::string, ResolvedAddresses> names_;
  std::unique_ptr<FakeHttpServer> server_;
};

TEST_F(GuardedFetchTest, RefusesTheLoopbackServerWithoutAnExemption) {
  Serve("/", Html("<p>secret</p>"));
  absl::StatusOr<FetchedPage> page = Fetch(*Fetcher({}), Url("127.0.0.1", "/"));
  EXPECT_EQ(page.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_TRUE(absl::StartsWith(page.status().message(), "refused: 127.0.0.1 is a loopback address"))
      << page.status();
  EXPECT_EQ(server_->request_count(), 0u);
}

TEST_F(GuardedFetchTest, FetchesAnAllowedAddress) {
  Serve("/", Html("<p>hello</p>"));
  absl::StatusOr<FetchedPage> page = Fetch(*Fetcher({"127.0.0.1"}), Url("127.0.0.1", "/"));
  ASSERT_TRUE(page.ok()) << page.status();
  EXPECT_EQ(page->status, 200);
  EXPECT_EQ(page->content_type, "text/html");
  EXPECT_EQ(page->charset, "utf-8");
  EXPECT_EQ(page->body, "<p>hello</p>");
  EXPECT_FALSE(page->truncated);
  EXPECT_EQ(server_->requests()[0].Header("user-agent"), "Herald url_fetch");
}

// site.test exists only in this test's resolver: curl could not resolve it, so a page that
// arrives proves the connection went to the address the guard checked.
TEST_F(GuardedFetchTest, ConnectsToTheCheckedAddressNotToWhatCurlWouldResolve) {
  Serve("/page", Html("<p>pinned</p>"));
  absl::StatusOr<FetchedPage> page = Fetch(*Fetcher({"site.test"}), Url("site.test", "/page"));
  ASSERT_TRUE(page.ok()) << page.status();
  EXPECT_EQ(page->body, "<p>pinned</p>");
  EXPECT_EQ(server_->requests()[0].Header("host"), absl::StrCat("site.test:", server_->port()));
}

TEST_F(GuardedFetchTest, FollowsRedirectsAndReportsTheFinalUrl) {
  Serve("/a", Redirect(301, "/b"));
  Serve("/b", Redirect(302, Url("other.test", "/c")));
  Serve("/c", Redirect(303, "c2?x=1"));
  Serve("/c2?x=1", Html("<p>arrived</p>"));
  absl::StatusOr<FetchedPage> page =
      Fetch(*Fetcher({"site.test", "other.test"}), Url("site.test", "/a"));
  ASSERT_TRUE(page.ok()) << page.status();
  EXPECT_EQ(page->body, "<p>arrived</p>");
  EXPECT_EQ(page->url, Url("other.test", "/c2?x=1"));
  EXPECT_EQ(page->redirects, 3);
}

TEST_F(GuardedFetchTest, RefusesARedirectFromAnAllowedHostToAPrivateAddress) {
  Serve("/", Redirect(302, "http://10.0.0.5/admin"));
  absl::StatusOr<FetchedPage> page = Fetch(*Fetcher({"127.0.0.1"}), Url("127.0.0.1", "/"));
  EXPECT_EQ(page.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_TRUE(absl::StartsWith(page.status().message(), "refused: 10.0.0.5 is a private address"))
      << page.status();
  EXPECT_TRUE(absl::StrContains(page.status().message(), "redirected")) << page.status();
  EXPECT_EQ(server_->request_count(), 1u);
}

TEST_F(GuardedFetchTest, RefusesARedirectToCloudMetadata) {
  for (const char* target :
       {"http://169.254.169.254/latest/meta-data/",
        "http://metadata.google.internal/computeMetadata/v1/", "http://[fd00:ec2::254]/"}) {
    Serve("/", Redirect(307, target));
    absl::StatusOr<FetchedPage> page = Fetch(*Fetcher({"127.0.0.1"}), Url("127.0.0.1", "/"));
    EXPECT_EQ(page.status().code(), absl::StatusCode::kPermissionDenied) << target;
    EXPECT_TRUE(absl::StrContains(page.status().message(), "metadata")) << page.status();
  }
}

// The exemption is for a name; a redirect to another name that resolves to the same
// loopback address is checked afresh and refused.
TEST_F(GuardedFetchTest, ChecksEveryRedirectTargetAfresh) {
  Serve("/", Redirect(302, Url("other.test", "/secret")));
  Serve("/secret", Html("<p>secret</p>"));
  absl::StatusOr<FetchedPage> page = Fetch(*Fetcher({"site.test"}), Url("site.test", "/"));
  EXPECT_EQ(page.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_TRUE(absl::StartsWith(page.status().message(),
                               "refused: other.test resolves to a loopback address"))
      << page.status();
  EXPECT_EQ(server_->request_count(), 1u);
}

TEST_F(GuardedFetchTest, RefusesARedirectToAnotherScheme) {
  Serve("/", Redirect(302, "file:///etc/passwd"));
  absl::StatusOr<FetchedPage> page = Fetch(*Fetcher({"127.0.0.1"}), Url("127.0.0.1", "/"));
  EXPECT_EQ(page.status().code(), absl::StatusCode::kPermissionDenied) << page.status();
}

TEST_F(GuardedFetchTest, FollowsFiveRedirectsButNotSix) {
  for (int i = 0; i < 6; ++i)
    Serve(absl::StrCat("/r", i), Redirect(302, absl::StrCat("/r", i + 1)));
  Serve("/r6", Html("end"));
  absl::StatusOr<FetchedPage> five = Fetch(*Fetcher({"127.0.0.1"}), Url("127.0.0.1", "/r1"));
  ASSERT_TRUE(five.ok()) << five.status();
  EXPECT_EQ(five->redirects, 5);
  absl::StatusOr<FetchedPage> six = Fetch(*Fetcher({"127.0.0.1"}), Url("127.0.0.1", "/r0"));
  EXPECT_EQ(six.status().code(), absl::StatusCode::kFailedPrecondition) << six.status();
  EXPECT_EQ(six.status().message(), "the page redirected more than 5 times");
}

TEST_F(GuardedFetchTest, ReportsARedirectWithoutALocation) {
  Serve("/", FakeHttpResponse{.status = 302});
  absl::StatusOr<FetchedPage> page = Fetch(*Fetcher({"127.0.0.1"}), Url("127.0.0.1", "/"));
  EXPECT_EQ(page.status().code(), absl::StatusCode::kUnavailable) << page.status();
}

TEST_F(GuardedFetchTest, CutsAnOversizeBodyAtTheLimit) {
  Serve("/big", FakeHttpResponse{.headers = {{"Content-Type", "text/plain"}},
                                 .body = std::string(300 * 1024, 'x')});
  absl::StatusOr<FetchedPage> page =
      Fetch(*Fetcher({"127.0.0.1"}, FetchLimits{.max_bytes = 10000}), Url("127.0.0.1", "/big"));
  ASSERT_TRUE(page.ok()) << page.status();
  EXPECT_EQ(page->body.size(), 10000u);
  EXPECT_TRUE(page->truncated);
}

TEST_F(GuardedFetchTest, GivesUpOnASlowBodyAtTheDeadline) {
  Serve("/slow", FakeHttpResponse{.headers = {{"Content-Type", "text/plain"}},
                                  .chunks = {"first ", "second ", "third"},
                                  .chunk_interval = absl::Seconds(30)});
  absl::StatusOr<FetchedPage> page = Fetch(
      *Fetcher({"127.0.0.1"}, FetchLimits{.timeout = absl::Seconds(1)}), Url("127.0.0.1", "/slow"));
  EXPECT_EQ(page.status().code(), absl::StatusCode::kDeadlineExceeded) << page.status();
  EXPECT_EQ(page.status().message(), "the page did not load within 1 seconds");
}

TEST_F(GuardedFetchTest, GivesUpOnAServerThatNeverAnswers) {
  Serve("/hang", FakeHttpResponse{.hang = true});
  absl::StatusOr<FetchedPage> page = Fetch(
      *Fetcher({"127.0.0.1"}, FetchLimits{.timeout = absl::Seconds(1)}), Url("127.0.0.1", "/hang"));
  EXPECT_EQ(page.status().code(), absl::StatusCode::kDeadlineExceeded) << page.status();
}

TEST_F(GuardedFetchTest, RefusesAContentTypeOutsideTheAllowlistWithoutReadingIt) {
  Serve("/image", FakeHttpResponse{.headers = {{"Content-Type", "image/png"}},
                                   .body = std::string(2 * 1024 * 1024, 'p')});
  absl::StatusOr<FetchedPage> page = Fetch(*Fetcher({"127.0.0.1"}), Url("127.0.0.1", "/image"));
  EXPECT_EQ(page.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(page.status().message(),
            "refused: the page is image/png; url_fetch reads only text/html, text/plain");
}

TEST_F(GuardedFetchTest, AcceptsWildcardContentTypesAndSniffsAMissingOne) {
  Serve("/md", FakeHttpResponse{.headers = {{"Content-Type", "Text/Markdown"}}, .body = "# md"});
  Serve("/bare", FakeHttpResponse{.body = "<html><p>no type</p>"});
  FetchLimits limits{.content_types = {"text/*"}};
  absl::StatusOr<FetchedPage> md = Fetch(*Fetcher({"127.0.0.1"}, limits), Url("127.0.0.1", "/md"));
  ASSERT_TRUE(md.ok()) << md.status();
  EXPECT_EQ(md->content_type, "text/markdown");
  absl::StatusOr<FetchedPage> bare =
      Fetch(*Fetcher({"127.0.0.1"}, limits), Url("127.0.0.1", "/bare"));
  ASSERT_TRUE(bare.ok()) << bare.status();
  EXPECT_EQ(bare->content_type, "text/html");
}

TEST_F(GuardedFetchTest, PassesAnErrorStatusThroughWithoutCheckingItsType) {
  absl::StatusOr<FetchedPage> page = Fetch(*Fetcher({"127.0.0.1"}), Url("127.0.0.1", "/none"));
  ASSERT_TRUE(page.ok()) << page.status();
  EXPECT_EQ(page->status, 404);
}

TEST_F(GuardedFetchTest, ReportsAnUnresolvableHost) {
  absl::StatusOr<FetchedPage> page = Fetch(*Fetcher({}), "http://nowhere.test/");
  EXPECT_EQ(page.status().code(), absl::StatusCode::kNotFound);
}

TEST_F(GuardedFetchTest, RefusesAUrlThatIsNotHttp) {
  absl::StatusOr<FetchedPage> page = Fetch(*Fetcher({}), "file:///etc/passwd");
  EXPECT_EQ(page.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(GuardedFetchTest, SaysSoWhenNothingListens) {
  const uint16_t port = server_->port();
  server_.reset();
  absl::StatusOr<FetchedPage> page =
      Fetch(*Fetcher({"127.0.0.1"}), absl::StrCat("http://127.0.0.1:", port, "/"));
  EXPECT_EQ(page.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(page.status().message(), "could not connect to 127.0.0.1");
}

TEST_F(GuardedFetchTest, SendsARequestsMethodHeadersAndBody) {
  Serve("/api", FakeHttpResponse{.headers = {{"Content-Type", "text/plain"}}, .body = "made"});
  absl::StatusOr<FetchedPage> page =
      Fetch(*Fetcher({"site.test"}),
            FetchRequest{.method = "POST",
                         .url = Url("site.test", "/api"),
                         .headers = {{"X-Key", "k1"}, {"Accept", "application/json"}},
                         .body = R"({"a":1})"});
  ASSERT_TRUE(page.ok()) << page.status();
  EXPECT_EQ(page->body, "made");
  const FakeHttpRequest sent = server_->requests().at(0);
  EXPECT_EQ(sent.method, "POST");
  EXPECT_EQ(sent.body, R"({"a":1})");
  EXPECT_EQ(sent.Header("x-key"), "k1");
  EXPECT_EQ(sent.Header("accept"), "application/json") << "the request's Accept replaces ours";
  EXPECT_EQ(sent.Header("user-agent"), "Herald url_fetch");
}

TEST_F(GuardedFetchTest, ARedirectIsFollowedWithoutTheFirstRequestsHeadersAndBody) {
  Serve("/api", Redirect(302, Url("other.test", "/landing")));
  Serve("/landing", FakeHttpResponse{.headers = {{"Content-Type", "text/plain"}}, .body = "ok"});
  absl::StatusOr<FetchedPage> page =
      Fetch(*Fetcher({"site.test", "other.test"}), FetchRequest{.method = "POST",
                                                                .url = Url("site.test", "/api"),
                                                                .headers = {{"X-Key", "k1"}},
                                                                .body = "b"});
  ASSERT_TRUE(page.ok()) << page.status();
  ASSERT_EQ(server_->request_count(), 2u);
  const FakeHttpRequest second = server_->requests()[1];
  EXPECT_EQ(second.method, "GET");
  EXPECT_EQ(second.body, "");
  EXPECT_EQ(second.Header("x-key"), "") << "a header meant for the first host went on";
}

TEST_F(GuardedFetchTest, ARequestThatFollowsNoRedirectGetsTheRedirectAsItsAnswer) {
  Serve("/api", Redirect(307, Url("other.test", "/landing")));
  absl::StatusOr<FetchedPage> page =
      Fetch(*Fetcher({"site.test", "other.test"}),
            FetchRequest{.url = Url("site.test", "/api"), .follow_redirects = false});
  ASSERT_TRUE(page.ok()) << page.status();
  EXPECT_EQ(page->status, 307);
  EXPECT_EQ(server_->request_count(), 1u);
}

}  // namespace
}  // namespace herald::skills::web
