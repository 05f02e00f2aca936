// GET /console/ on the HTTP listener: the page, its script and style from the binary, the
// security headers on every answer, revalidation by ETag, and the redirects.
#include "control/http/console_page.h"

#include <future>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "control/console/assets.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/control/http/http_test_client.h"

namespace herald::control::http {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

class ConsolePageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::promise<void> started;
    thread_ = std::thread([&] {
      auto server = HttpServer::Start(io_, {.listen = "127.0.0.1:0"});
      ASSERT_TRUE(server.ok()) << server.status();
      server_ = *std::move(server);
      ServeConsole(*server_);
      server_->Route(
          "/metrics", {.methods = {"GET"}},
          [](const HttpRequest&, HttpServer::Respond respond) { respond({.body = "metrics"}); });
      port_ = server_->port();
      started.set_value();
      io_.run();
    });
    started.get_future().wait();
    ASSERT_NE(server_, nullptr);
  }

  void TearDown() override {
    asio::post(io_, [this] { server_.reset(); });
    work_.reset();
    io_.stop();
    if (thread_.joinable()) thread_.join();
  }

  std::string Get(const std::string& path, const std::string& headers = "") {
    return http::testing::HttpExchange(port_, absl::StrCat("GET ", path, " HTTP/1.1\r\nHost: h\r\n",
                                                           headers, "Connection: close\r\n\r\n"));
  }

  static std::string Body(const std::string& answer) {
    const size_t end = answer.find("\r\n\r\n");
    return end == std::string::npos ? "" : answer.substr(end + 4);
  }

  static std::string HeaderOf(const std::string& answer, const std::string& name) {
    const size_t at = answer.find(absl::StrCat("\r\n", name, ": "));
    if (at == std::string::npos) return "";
    const size_t begin = at + name.size() + 4;
    return answer.substr(begin, answer.find("\r\n", begin) - begin);
  }

  asio::io_context io_;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work_{
      io_.get_executor()};
  std::unique_ptr<HttpServer> server_;
  uint16_t port_ = 0;
  std::thread thread_;
};

TEST_F(ConsolePageTest, ThePageItsScriptAndItsStyleComeFromTheBinary) {
  const std::string page = Get("/console/");
  EXPECT_THAT(page, StartsWith("HTTP/1.1 200"));
  EXPECT_EQ(HeaderOf(page, "Content-Type"), "text/html; charset=utf-8");
  EXPECT_THAT(Body(page), HasSubstr("<title>Herald console</title>"));
  EXPECT_THAT(Body(page), HasSubstr("src=\"main.js\""));
  EXPECT_EQ(Get("/console/index.html"), page);

  const std::string script = Get("/console/main.js");
  EXPECT_THAT(script, StartsWith("HTTP/1.1 200"));
  EXPECT_EQ(HeaderOf(script, "Content-Type"), "text/javascript; charset=utf-8");
  std::string_view built;
  for (const console::ConsoleAsset& asset : console::ConsoleAssets()) {
    if (asset.name == "main.js") built = asset.bytes;
  }
  ASSERT_GT(built.size(), 1000u);
  EXPECT_EQ(Body(script), built);  // byte for byte, the bundle as committed
  EXPECT_EQ(HeaderOf(Get("/console/console.css"), "Content-Type"), "text/css; charset=utf-8");
}

TEST_F(ConsolePageTest, EveryAnswerCarriesThePolicyThatKeepsThePageToItsOwnScript) {
  for (const std::string path : {"/console/", "/console/main.js", "/console/nope", "/"}) {
    const std::string answer = Get(path);
    EXPECT_EQ(HeaderOf(answer, "Content-Security-Policy"), kConsoleSecurityPolicy) << path;
    EXPECT_EQ(HeaderOf(answer, "X-Content-Type-Options"), "nosniff") << path;
    EXPECT_EQ(HeaderOf(answer, "X-Frame-Options"), "DENY") << path;
    EXPECT_EQ(HeaderOf(answer, "Referrer-Policy"), "no-referrer") << path;
  }
  EXPECT_THAT(std::string(kConsoleSecurityPolicy), HasSubstr("script-src 'self';"));
  EXPECT_THAT(std::string(kConsoleSecurityPolicy), Not(HasSubstr("unsafe")));
  EXPECT_THAT(std::string(kConsoleSecurityPolicy), HasSubstr("frame-ancestors 'none'"));
}

TEST_F(ConsolePageTest, ABrowserThatHasTheFileRevalidatesWithItsETag) {
  const std::string first = Get("/console/main.js");
  const std::string etag = HeaderOf(first, "ETag");
  ASSERT_THAT(etag, StartsWith("\""));
  EXPECT_EQ(HeaderOf(first, "Cache-Control"), "no-cache");

  const std::string again = Get("/console/main.js", absl::StrCat("If-None-Match: ", etag, "\r\n"));
  EXPECT_THAT(again, StartsWith("HTTP/1.1 304"));
  EXPECT_EQ(Body(again), "");
  EXPECT_THAT(Get("/console/main.js", absl::StrCat("If-None-Match: \"x\", W/", etag, "\r\n")),
              StartsWith("HTTP/1.1 304"));
  EXPECT_THAT(Get("/console/main.js", "If-None-Match: \"other\"\r\n"), StartsWith("HTTP/1.1 200"));
  // Each file has its own tag.
  EXPECT_NE(HeaderOf(Get("/console/console.css"), "ETag"), etag);
}

TEST_F(ConsolePageTest, TheRootRedirectsAndUnknownPathsAreNotFound) {
  const std::string root = Get("/");
  EXPECT_THAT(root, StartsWith("HTTP/1.1 302"));
  EXPECT_EQ(HeaderOf(root, "Location"), "/console/");
  EXPECT_EQ(HeaderOf(Get("/console"), "Location"), "/console/");
  EXPECT_THAT(Get("/console/../metrics"), StartsWith("HTTP/1.1 404"));
  EXPECT_THAT(Get("/console/main.js.map"), StartsWith("HTTP/1.1 404"));
  EXPECT_THAT(Get("/elsewhere"), StartsWith("HTTP/1.1 404"));
  // Other routes keep their paths.
  EXPECT_EQ(Body(Get("/metrics")), "metrics");
}

}  // namespace
}  // namespace herald::control::http
