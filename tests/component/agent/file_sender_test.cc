// Files out: a slot asked of the server's upload service, the PUT with the slot's headers, the
// link sent as out-of-band data, and each way it can fail said in words for the person.
#include "component/agent/file_sender.h"

#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

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

xmpp::Jid J(std::string_view text) { return *xmpp::Jid::Parse(text); }

class FileSenderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<providers::HttpClient>> http =
        providers::HttpClient::Create(io_);
    ASSERT_TRUE(http.ok()) << http.status();
    http_ = *std::move(http);
    absl::StatusOr<std::unique_ptr<FakeHttpServer>> server = FakeHttpServer::Start(
        [this](const FakeHttpRequest&) { return FakeHttpResponse{.status = put_status_}; });
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    sender_ = std::make_unique<FileSender>(
        io_, *http_, [this](const xmpp::OutboundAction& action) { actions_.push_back(action); },
        FileSendOptions{.max_bytes = 1000, .timeout = absl::Seconds(10)});
  }

  skills::OutgoingFile File(std::string bytes, std::string caption = "") {
    return {.name = "chart.png",
            .media_type = "image/png",
            .bytes = std::make_shared<const std::string>(std::move(bytes)),
            .caption = std::move(caption)};
  }

  xmpp::SendMessage ToAlice() {
    return {.to = J("alice@localhost/phone"),
            .body = "the answer",
            .from = J("herald.localhost"),
            .chat_state = "active",
            .reply_id = "m-1",
            .id = "answer-1"};
  }

  // Runs the loop until `sent` has a value (30 s at most).
  void RunUntil(const std::optional<absl::Status>& sent) {
    const absl::Time deadline = absl::Now() + absl::Seconds(30);
    while (!sent.has_value() && absl::Now() < deadline) {
      io_.run_one_for(std::chrono::milliseconds(20));
    }
  }

  // The slot request the sender made last.
  const xmpp::RequestUploadSlot* LastSlotRequest() const {
    for (auto it = actions_.rbegin(); it != actions_.rend(); ++it) {
      if (const auto* request = std::get_if<xmpp::RequestUploadSlot>(&*it)) return request;
    }
    return nullptr;
  }

  std::vector<xmpp::SendMessage> Messages() const {
    std::vector<xmpp::SendMessage> out;
    for (const xmpp::OutboundAction& action : actions_) {
      if (const auto* message = std::get_if<xmpp::SendMessage>(&action)) out.push_back(*message);
    }
    return out;
  }

  asio::io_context io_;
  asio::executor_work_guard<asio::io_context::executor_type> work_{io_.get_executor()};
  std::unique_ptr<providers::HttpClient> http_;
  std::unique_ptr<FakeHttpServer> server_;
  std::unique_ptr<FileSender> sender_;
  std::vector<xmpp::OutboundAction> actions_;
  int put_status_ = 201;
};

TEST_F(FileSenderTest, WithoutAnUploadServiceASendFailsAtOnceSayingSo) {
  std::optional<absl::Status> sent;
  sender_->Send(File("png bytes"), ToAlice(), [&](absl::Status s) { sent = s; });
  EXPECT_FALSE(sent.has_value());  // never inside Send
  RunUntil(sent);
  ASSERT_TRUE(sent.has_value());
  EXPECT_EQ(sent->code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(sent->message(), HasSubstr("no file upload service"));
  EXPECT_TRUE(actions_.empty());

  // A new stream forgets the last one's service until its own discovery names one.
  sender_->OnUploadService({.jid = J("upload.localhost")}, J("herald.localhost"));
  sender_->OnSessionOnline();
  sent.reset();
  sender_->Send(File("png bytes"), ToAlice(), [&](absl::Status s) { sent = s; });
  RunUntil(sent);
  ASSERT_TRUE(sent.has_value());
  EXPECT_EQ(sent->code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(actions_.empty());
}

TEST_F(FileSenderTest, AFileIsPutWithTheSlotsHeadersAndItsLinkSentAsOutOfBandData) {
  sender_->OnUploadService({.jid = J("upload.localhost"), .max_file_size = 5000},
                           J("herald.localhost"));
  std::optional<absl::Status> sent;
  sender_->Send(File("png bytes", "Sales by week"), ToAlice(), [&](absl::Status s) { sent = s; });
  const xmpp::RequestUploadSlot* request = LastSlotRequest();
  ASSERT_NE(request, nullptr);
  EXPECT_EQ(request->service.ToString(), "upload.localhost");
  EXPECT_EQ(request->from.ToString(), "herald.localhost");
  EXPECT_EQ(request->filename, "chart.png");
  EXPECT_EQ(request->size, 9u);
  EXPECT_EQ(request->content_type, "image/png");
  const std::string get_url = "http://localhost/share/abc/chart.png";
  EXPECT_TRUE(
      sender_->OnUploadSlot({.request_id = request->request_id,
                             .service = J("upload.localhost"),
                             .put_url = absl::StrCat(server_->base_url(), "/share/abc/chart.png"),
                             .put_headers = {{"Authorization", "Bearer slot-token"}},
                             .get_url = get_url}));
  RunUntil(sent);
  ASSERT_TRUE(sent.has_value());
  ASSERT_TRUE(sent->ok()) << *sent;
  ASSERT_EQ(server_->requests().size(), 1u);
  const FakeHttpRequest put = server_->requests()[0];
  EXPECT_EQ(put.method, "PUT");
  EXPECT_EQ(put.path, "/share/abc/chart.png");
  EXPECT_EQ(put.body, "png bytes");
  EXPECT_EQ(put.Header("authorization"), "Bearer slot-token");
  EXPECT_EQ(put.Header("content-type"), "image/png");
  // The caption first, then the bare link (which clients show inline), both new messages
  // addressed like the answer.
  const std::vector<xmpp::SendMessage> messages = Messages();
  ASSERT_EQ(messages.size(), 2u);
  EXPECT_EQ(messages[0].body, "Sales by week");
  EXPECT_EQ(messages[1].body, get_url);
  EXPECT_EQ(messages[1].oob_url, get_url);
  EXPECT_EQ(messages[1].oob_desc, "Sales by week");
  for (const xmpp::SendMessage& message : messages) {
    EXPECT_EQ(message.to.ToString(), "alice@localhost/phone");
    EXPECT_EQ(message.from.ToString(), "herald.localhost");
    EXPECT_EQ(message.type, "chat");
    EXPECT_EQ(message.id, "");
    EXPECT_EQ(message.reply_id, "");
    EXPECT_EQ(message.chat_state, "");
  }
}

TEST_F(FileSenderTest, AFileOverEitherLimitIsRefusedBeforeASlotIsAskedFor) {
  sender_->OnUploadService({.jid = J("upload.localhost"), .max_file_size = 100},
                           J("herald.localhost"));
  std::optional<absl::Status> sent;
  sender_->Send(File(std::string(200, 'x')), ToAlice(), [&](absl::Status s) { sent = s; });
  RunUntil(sent);
  ASSERT_TRUE(sent.has_value());
  EXPECT_EQ(sent->code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(sent->message(), HasSubstr("more than"));
  EXPECT_TRUE(actions_.empty());
}

TEST_F(FileSenderTest, ARefusedSlotOrAFailedPutIsSaidAndNoLinkGoesOut) {
  sender_->OnUploadService({.jid = J("upload.localhost")}, J("herald.localhost"));
  std::optional<absl::Status> sent;
  sender_->Send(File("png bytes"), ToAlice(), [&](absl::Status s) { sent = s; });
  ASSERT_NE(LastSlotRequest(), nullptr);
  EXPECT_TRUE(sender_->OnUploadSlot({.request_id = LastSlotRequest()->request_id,
                                     .service = J("upload.localhost"),
                                     .condition = "file-too-large"}));
  ASSERT_TRUE(sent.has_value());
  EXPECT_THAT(sent->message(), HasSubstr("refused it as too large"));

  put_status_ = 403;
  sent.reset();
  sender_->Send(File("png bytes"), ToAlice(), [&](absl::Status s) { sent = s; });
  EXPECT_TRUE(sender_->OnUploadSlot({.request_id = LastSlotRequest()->request_id,
                                     .service = J("upload.localhost"),
                                     .put_url = absl::StrCat(server_->base_url(), "/p"),
                                     .get_url = "http://localhost/p"}));
  RunUntil(sent);
  ASSERT_TRUE(sent.has_value());
  EXPECT_THAT(sent->message(), HasSubstr("HTTP 403"));
  EXPECT_TRUE(Messages().empty());
  // Someone else's slot (the attachments probe) is not the sender's.
  EXPECT_FALSE(sender_->OnUploadSlot({.request_id = "attachments-probe"}));
}

TEST(SafeFileNameTest, KeepsOnlyPlainCharactersAndAddsTheExtension) {
  EXPECT_EQ(SafeFileName("chart.png", "png"), "chart.png");
  EXPECT_EQ(SafeFileName("../../etc/passwd", "txt"), "etcpasswd.txt");
  EXPECT_EQ(SafeFileName(".hidden", "md"), "hidden.md");
  EXPECT_EQ(SafeFileName("a b\n<c>", "pdf"), "abc.pdf");
  EXPECT_EQ(SafeFileName("", "ogg"), "file.ogg");
  EXPECT_EQ(SafeFileName("report..", "pdf"), "report.pdf");
  EXPECT_EQ(SafeFileName(std::string(200, 'a'), "png").size(), 68u);
  EXPECT_EQ(ExtensionFor("image/png"), "png");
  EXPECT_EQ(ExtensionFor("application/x-unknown"), "bin");
}

}  // namespace
}  // namespace herald::agent
