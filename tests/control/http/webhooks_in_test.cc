// Webhooks in over a real HTTP listener: a signed delivery is said, everything else gets its
// status and is said nowhere; every delivery is audited.
#include "control/http/webhooks_in.h"

#include <atomic>
#include <filesystem>
#include <fstream>
#include <future>
#include <mutex>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "component/ledger/audit_log.h"
#include "control/http/webhook_signature.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/control/http/http_test_client.h"

namespace herald::control::http {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr char kSecret[] = "ci-secret-0123456789";

class WebhooksInTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/webhooks_in_" + std::to_string(::getpid());
    audit_ = *ledger::AuditLog::Open(dir_ + "/audit.log");
  }

  void Start(std::vector<WebhookEndpoint> endpoints) {
    // std::promise, not absl::Notification: Debian's Abseil is invisible to TSan.
    std::promise<void> started;
    thread_ = std::thread([&] {
      server_ = *HttpServer::Start(io_, {.listen = "127.0.0.1:0"});
      auto deliver = [this](const std::string& to, std::string text) -> absl::Status {
        std::lock_guard<std::mutex> lock(mu_);
        if (to == "offline@conference.localhost") {
          return absl::UnavailableError("Herald is not in the room right now; retry later");
        }
        said_.push_back(to + ": " + text);
        return absl::OkStatus();
      };
      webhooks_ = *WebhooksIn::Serve(*server_, std::move(endpoints), deliver, audit_.get(),
                                     [this] { return Now(); });
      port_ = server_->port();
      started.set_value();
      io_.run();
    });
    started.get_future().wait();
  }

  void TearDown() override {
    asio::post(io_, [this] {
      server_.reset();
      webhooks_.reset();
    });
    work_.reset();
    io_.stop();
    if (thread_.joinable()) thread_.join();
    audit_.reset();
    std::filesystem::remove_all(dir_);
  }

  std::string Post(const std::string& path, const std::string& body, const std::string& signature) {
    std::string request =
        absl::StrCat("POST ", path, " HTTP/1.1\r\nHost: h\r\nConnection: close\r\n",
                     "Content-Type: application/json\r\nContent-Length: ", body.size(), "\r\n");
    if (!signature.empty()) absl::StrAppend(&request, "X-Herald-Signature: ", signature, "\r\n");
    absl::StrAppend(&request, "\r\n", body);
    return http::testing::HttpExchange(port_, request);
  }

  // The clock the endpoint reads, on the server's thread.
  absl::Time Now() const { return absl::FromUnixSeconds(now_seconds_.load()); }
  std::string Signed(const std::string& body) { return SignWebhook(kSecret, Now(), body); }

  std::vector<std::string> Said() {
    std::lock_guard<std::mutex> lock(mu_);
    return said_;
  }

  std::string AuditText() {
    EXPECT_TRUE(audit_->Flush().ok());
    std::ifstream in(dir_ + "/audit.log");
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  static WebhookEndpoint Ci() {
    return {
        .name = "ci",
        .secret = kSecret,
        .to = "lobby@conference.localhost",
        .template_text = "Build {{status}} on {{repo.name}} ({{count}}, {{labels}}){{missing}}"};
  }

  std::string dir_;
  std::unique_ptr<ledger::AuditLog> audit_;
  asio::io_context io_;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work_{
      io_.get_executor()};
  std::unique_ptr<HttpServer> server_;
  uint16_t port_ = 0;  // set before the server's thread says it started
  std::unique_ptr<WebhooksIn> webhooks_;
  std::thread thread_;
  std::mutex mu_;
  std::vector<std::string> said_;
  std::atomic<int64_t> now_seconds_{1'700'000'000};
};

TEST_F(WebhooksInTest, ASignedDeliveryIsSaidFilledFromItsBody) {
  Start({Ci()});
  const std::string body =
      R"({"status": "passed", "repo": {"name": "herald"}, "count": 3, "labels": ["a", "b"]})";
  const std::string answer = Post("/webhooks/ci", body, Signed(body));
  EXPECT_THAT(answer, StartsWith("HTTP/1.1 202 Accepted\r\n"));
  EXPECT_THAT(Said(), ::testing::ElementsAre(
                          "lobby@conference.localhost: Build passed on herald (3, [\"a\",\"b\"])"));
  const std::string audit = AuditText();
  EXPECT_THAT(audit, HasSubstr("webhook:ci"));
  EXPECT_THAT(audit, HasSubstr("delivered"));
  EXPECT_THAT(audit, ::testing::Not(HasSubstr("passed"))) << "the body is never audited";
  EXPECT_THAT(audit, ::testing::Not(HasSubstr(kSecret)));
}

TEST_F(WebhooksInTest, AForgedStaleOrMissingSignatureIsRefusedAndNothingIsSaid) {
  Start({Ci()});
  const std::string body = R"({"status": "failed"})";
  EXPECT_THAT(Post("/webhooks/ci", body, ""), StartsWith("HTTP/1.1 401 "));
  EXPECT_THAT(Post("/webhooks/ci", body, SignWebhook("not-the-secret-at-all", Now(), body)),
              HasSubstr("does not match the body"));
  EXPECT_THAT(Post("/webhooks/ci", body, Signed(R"({"status": "passed"})")),
              StartsWith("HTTP/1.1 401 "));
  EXPECT_THAT(Post("/webhooks/ci", body, SignWebhook(kSecret, Now() - absl::Seconds(301), body)),
              HasSubstr("more than 300 s from now"));
  EXPECT_TRUE(Said().empty());
  EXPECT_THAT(AuditText(), HasSubstr("HTTP 401"));
}

TEST_F(WebhooksInTest, RefusalsFillTheAuditLogNoFasterThanTheRateAllows) {
  WebhookEndpoint ci = Ci();
  ci.rate_per_minute = 3;
  Start({ci});
  const std::string body = R"({"status": "x"})";
  for (int i = 0; i < 10; ++i) {
    EXPECT_THAT(Post("/webhooks/ci", body, "t=1,v1=00"), StartsWith("HTTP/1.1 401 "));
  }
  now_seconds_ += 60;
  EXPECT_THAT(Post("/webhooks/ci", body, "t=1,v1=00"), StartsWith("HTTP/1.1 401 "));
  const std::string audit = AuditText();
  size_t entries = 0;
  for (size_t at = 0; (at = audit.find("webhook in", at)) != std::string::npos; ++at) ++entries;
  EXPECT_EQ(entries, 4u) << audit;
  EXPECT_THAT(audit, HasSubstr("and 7 refusals not audited before"));
}

TEST_F(WebhooksInTest, ABodyNestedTooDeeplyIsRefusedBeforeItIsRead) {
  Start({Ci()});
  // Past 64 levels: refused before it is parsed (a field holding it would be written out
  // again level by level).
  const std::string deep =
      absl::StrCat(R"({"status": )", std::string(65, '['), std::string(65, ']'), "}");
  const std::string refused = Post("/webhooks/ci", deep, Signed(deep));
  EXPECT_THAT(refused, StartsWith("HTTP/1.1 400 "));
  EXPECT_THAT(refused, HasSubstr("nests deeper than 64 levels"));
  // Brackets inside a string are text.
  const std::string text = absl::StrCat(R"({"status": ")", std::string(100, '['), R"("})");
  EXPECT_THAT(Post("/webhooks/ci", text, Signed(text)), StartsWith("HTTP/1.1 202 "));
  EXPECT_EQ(Said().size(), 1u);
}

TEST_F(WebhooksInTest, ADeliveryIsTakenOnceAndAReplayIsRefused) {
  Start({Ci()});
  const std::string body = R"({"status": "passed"})";
  const std::string signature = Signed(body);
  EXPECT_THAT(Post("/webhooks/ci", body, signature), StartsWith("HTTP/1.1 202 "));
  EXPECT_THAT(Post("/webhooks/ci", body, signature), StartsWith("HTTP/1.1 409 "));
  // The same signature spelled otherwise is the same delivery.
  const std::string mac = signature.substr(signature.find("v1=") + 3);
  std::string upper = mac;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  const std::string t = signature.substr(2, signature.find(',') - 2);
  EXPECT_THAT(Post("/webhooks/ci", body, absl::StrCat("v1=", upper, ", t=", t)),
              StartsWith("HTTP/1.1 409 "));
  EXPECT_EQ(Said().size(), 1u);
}

TEST_F(WebhooksInTest, BadBodiesTooManyDeliveriesAndAnAbsentRoomGetTheirStatus) {
  WebhookEndpoint small = Ci();
  small.name = "small";
  small.max_body_bytes = 50;
  small.rate_per_minute = 2;
  WebhookEndpoint offline = Ci();
  offline.name = "offline";
  offline.to = "offline@conference.localhost";
  Start({small, offline});
  EXPECT_THAT(Post("/webhooks/small", "[1, 2]", Signed("[1, 2]")), StartsWith("HTTP/1.1 400 "));
  EXPECT_THAT(Post("/webhooks/small", "not json", Signed("not json")),
              HasSubstr("the body must be a JSON object"));
  const std::string big = absl::StrCat(R"({"status": ")", std::string(100, 'x'), R"("})");
  EXPECT_THAT(Post("/webhooks/small", big, Signed(big)), StartsWith("HTTP/1.1 413 "));
  for (int i = 0; i < 2; ++i) {
    const std::string body = absl::StrCat(R"({"status": ")", i, R"("})");
    EXPECT_THAT(Post("/webhooks/small", body, Signed(body)), StartsWith("HTTP/1.1 202 "));
  }
  const std::string third = R"({"status": "3"})";
  const std::string limited = Post("/webhooks/small", third, Signed(third));
  EXPECT_THAT(limited, StartsWith("HTTP/1.1 429 "));
  EXPECT_THAT(limited, HasSubstr("Retry-After: 60\r\n"));
  now_seconds_ += 60;
  const std::string later = R"({"status": "4"})";
  EXPECT_THAT(Post("/webhooks/small", later, Signed(later)), StartsWith("HTTP/1.1 202 "));

  const std::string body = R"({"status": "x"})";
  const std::string absent = Post("/webhooks/offline", body, Signed(body));
  EXPECT_THAT(absent, StartsWith("HTTP/1.1 503 "));
  EXPECT_THAT(absent, HasSubstr("not in the room"));
  EXPECT_THAT(Post("/webhooks/nope", body, Signed(body)), StartsWith("HTTP/1.1 404 "));
  EXPECT_EQ(Said().size(), 3u);
}

TEST(FillWebhookTemplateTest, ControlCharactersGoAndLongTextIsCut) {
  const auto text = *base::FieldTemplate::Parse("{{a}}");
  EXPECT_EQ(FillWebhookTemplate(text, {{"a", "line\r\nnext\x01\tend"}}), "line\nnext\tend");
  const std::string filled = FillWebhookTemplate(text, {{"a", std::string(5000, 'y')}});
  EXPECT_EQ(filled, std::string(kMaxWebhookTextBytes, 'y') + "…");
  EXPECT_EQ(FillWebhookTemplate(text, {{"a", nullptr}}), "");
  EXPECT_EQ(FillWebhookTemplate(text, {{"b", 1}}), "");
}

TEST(WebhooksInServeTest, ABadTemplateOrANameUsedTwiceIsRefused) {
  asio::io_context io;
  auto server = HttpServer::Start(io, {.listen = "127.0.0.1:0"});
  ASSERT_TRUE(server.ok());
  auto deliver = [](const std::string&, std::string) { return absl::OkStatus(); };
  WebhookEndpoint bad{.name = "x", .secret = kSecret, .to = "a@b", .template_text = "{{oops"};
  EXPECT_THAT(WebhooksIn::Serve(**server, {bad}, deliver, nullptr, absl::Now).status().message(),
              HasSubstr("webhook x: template:"));
  WebhookEndpoint good{.name = "x", .secret = kSecret, .to = "a@b"};
  good.template_text = "{{text}}";
  EXPECT_THAT(
      WebhooksIn::Serve(**server, {good, good}, deliver, nullptr, absl::Now).status().message(),
      HasSubstr("defined twice"));
}

}  // namespace
}  // namespace herald::control::http
