// Where AttachmentReader downloads from: public addresses, the operator's exemptions, and the
// XMPP server's upload service — that service's path on its host and port only.
#include "component/agent/attachments.h"

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "providers/http/http_client.h"
#include "tests/fakes/fake_http_server.h"

namespace herald::agent {
namespace {

using fakes::FakeHttpRequest;
using fakes::FakeHttpResponse;
using fakes::FakeHttpServer;
using ::testing::HasSubstr;
namespace web = skills::web;

// The fake server listens on 127.0.0.1, which the guard refuses unless exempted; the names
// below resolve to it.
class AttachmentReaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<providers::HttpClient>> http =
        providers::HttpClient::Create(io_);
    ASSERT_TRUE(http.ok()) << http.status();
    http_ = std::move(*http);
    absl::StatusOr<std::unique_ptr<FakeHttpServer>> server =
        FakeHttpServer::Start([](const FakeHttpRequest& request) {
          return FakeHttpResponse{.headers = {{"Content-Type", "application/octet-stream"}},
                                  .body = absl::StrCat("bytes of ", request.path)};
        });
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
  }

  std::unique_ptr<AttachmentReader> Reader(AttachmentOptions options = {}) {
    web::HostResolver resolver =
        [this](const std::string& host,
               std::function<void(absl::StatusOr<web::ResolvedAddresses>)> done) {
          absl::StatusOr<web::ResolvedAddresses> answer =
              host == "files.test" || host == "localhost"
                  ? absl::StatusOr<web::ResolvedAddresses>(
                        web::ResolvedAddresses{asio::ip::make_address("127.0.0.1")})
                  : absl::StatusOr<web::ResolvedAddresses>(absl::NotFoundError("no such host"));
          asio::post(io_, [done = std::move(done), answer = std::move(answer)] { done(answer); });
        };
    absl::StatusOr<std::unique_ptr<AttachmentReader>> reader =
        AttachmentReader::Create(io_, *http_, std::move(options), std::move(resolver));
    EXPECT_TRUE(reader.ok()) << reader.status();
    return reader.ok() ? *std::move(reader) : nullptr;
  }

  std::string Url(const std::string& host, const std::string& path) const {
    return absl::StrCat("http://", host, ":", server_->port(), path);
  }

  absl::StatusOr<web::FetchedPage> Download(AttachmentReader& reader, const std::string& url) {
    std::optional<absl::StatusOr<web::FetchedPage>> result;
    reader.Download(url, "test",
                    [&](absl::StatusOr<web::FetchedPage> page) { result = std::move(page); });
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
  std::unique_ptr<FakeHttpServer> server_;
};

TEST_F(AttachmentReaderTest, APrivateAddressIsRefusedUnlessTheOperatorExemptsIt) {
  std::unique_ptr<AttachmentReader> reader = Reader();
  absl::StatusOr<web::FetchedPage> page = Download(*reader, Url("localhost", "/x.png"));
  EXPECT_EQ(page.status().code(), absl::StatusCode::kPermissionDenied) << page.status();
  EXPECT_THAT(page.status().message(), HasSubstr("loopback"));
  EXPECT_EQ(server_->request_count(), 0u);

  std::unique_ptr<AttachmentReader> exempted = Reader({.allow_hosts = {"files.test"}});
  page = Download(*exempted, Url("files.test", "/x.png"));
  ASSERT_TRUE(page.ok()) << page.status();
  EXPECT_EQ(page->body, "bytes of /x.png");
}

TEST_F(AttachmentReaderTest, TheUploadServicesPathOnItsHostAndPortIsTrustedAndNothingElse) {
  std::unique_ptr<AttachmentReader> reader = Reader();
  // A slot the server's upload service gave Herald named this URL.
  reader->TrustUploadUrl(Url("localhost", "/file_share/slot-1/probe.txt"));

  absl::StatusOr<web::FetchedPage> page =
      Download(*reader, Url("localhost", "/file_share/slot-2/photo.png"));
  ASSERT_TRUE(page.ok()) << page.status();
  EXPECT_EQ(page->body, "bytes of /file_share/slot-2/photo.png");

  // Another path on the same host and port, the same path on another port, a climb out of
  // the prefix, another scheme: all refused as any loopback address is.
  for (const std::string& url :
       {Url("localhost", "/admin/"), Url("localhost", "/file_share_other/x"),
        absl::StrCat("http://localhost:", server_->port() + 1, "/file_share/slot/x"),
        Url("localhost", "/file_share/../admin/x"), Url("127.0.0.1", "/file_share/slot/x"),
        absl::StrCat("https://localhost:", server_->port(), "/file_share/slot/x")}) {
    absl::StatusOr<web::FetchedPage> refused = Download(*reader, url);
    EXPECT_FALSE(refused.ok()) << url;
  }
  EXPECT_EQ(server_->request_count(), 1u);
}

TEST_F(AttachmentReaderTest, AServicesPathIsItsFirstSegmentWhateverDepthItsSlotsHave) {
  std::unique_ptr<AttachmentReader> reader = Reader();
  // ejabberd: /upload/<the requester's hash>/<slot>/<name>; alice's hash is not Herald's.
  reader->TrustUploadUrl(Url("localhost", "/upload/herald-hash/slot/probe.txt"));
  EXPECT_TRUE(Download(*reader, Url("localhost", "/upload/alice-hash/slot/photo.png")).ok());
  EXPECT_FALSE(Download(*reader, Url("localhost", "/api/x")).ok());
}

TEST_F(AttachmentReaderTest, AFileLargerThanTheLimitIsCutAndSaidToBe) {
  std::unique_ptr<AttachmentReader> reader =
      Reader({.max_bytes = 8, .allow_hosts = {"files.test"}});
  absl::StatusOr<web::FetchedPage> page = Download(*reader, Url("files.test", "/big.pdf"));
  ASSERT_TRUE(page.ok()) << page.status();
  EXPECT_TRUE(page->truncated);
  EXPECT_LE(page->body.size(), 8u);
}

TEST(WithAttachmentsTest, TheMessagesTextComesFirst) {
  EXPECT_EQ(WithAttachments("look", "[picture]"), "look\n\n[picture]");
  EXPECT_EQ(WithAttachments("", "[picture]"), "[picture]");
  EXPECT_EQ(WithAttachments("look", ""), "look");
}

}  // namespace
}  // namespace herald::agent
