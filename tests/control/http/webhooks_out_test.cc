// Webhooks out against a local receiver: signed deliveries in order, retries with backoff,
// dead letters kept and replayed, a bounded queue, nothing dropped at shutdown.
#include "control/http/webhooks_out.h"

#include <chrono>
#include <filesystem>
#include <mutex>
#include <string>

#include "absl/strings/str_cat.h"
#include "control/http/webhook_signature.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/fakes/fake_http_server.h"

namespace herald::control::http {
namespace {

using fakes::FakeHttpRequest;
using fakes::FakeHttpResponse;
using fakes::FakeHttpServer;
using ::testing::HasSubstr;
using Json = nlohmann::json;

constexpr char kSecret[] = "ops-secret-0123456789";

class WebhooksOutTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = absl::StrCat(::testing::TempDir(), "/webhooks_out_", ::getpid(), "_",
                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    http_ = *providers::HttpClient::Create(io_);
    receiver_ = *FakeHttpServer::Start([this](const FakeHttpRequest&) {
      std::lock_guard<std::mutex> lock(mu_);
      if (failures_left_ > 0) {
        --failures_left_;
        return FakeHttpResponse{.status = 500, .body = "down"};
      }
      return FakeHttpResponse{.status = hang_ ? 200 : 204, .hang = hang_};
    });
  }

  void TearDown() override {
    out_.reset();
    workers_.join();
    std::filesystem::remove_all(dir_);
  }

  WebhookTarget Target(int max_attempts = 5) {
    return {.name = "ops",
            .url = receiver_->base_url() + "/herald",
            .secret = kSecret,
            .events = {events::EventType::kRunCompleted, events::EventType::kLimitBlocked},
            .max_attempts = max_attempts,
            .timeout = absl::Seconds(5),
            .first_retry = absl::Milliseconds(20)};
  }

  void StartOut(std::vector<WebhookTarget> targets) {
    out_ =
        *WebhooksOut::Start(io_, workers_, *http_, bus_, std::move(targets), dir_ + "/webhooks.db");
  }

  void Publish(events::EventType type, std::string run_id) {
    bus_.Publish(events::Event{.type = type,
                               .conversation = "direct:alice@localhost",
                               .jid = "alice@localhost",
                               .run_id = std::move(run_id),
                               .summary = "turn answered",
                               .attributes = {{"model", "scripted:test"}}});
  }

  bool RunUntil(const std::function<bool()>& done, absl::Duration limit = absl::Seconds(20)) {
    const absl::Time deadline = absl::Now() + limit;
    while (!done()) {
      if (absl::Now() > deadline) return false;
      io_.run_one_for(std::chrono::milliseconds(10));
    }
    return true;
  }

  std::vector<DeadLetter> DeadLetters() {
    std::optional<absl::StatusOr<std::vector<DeadLetter>>> listed;
    std::mutex mu;
    out_->ListDeadLetters(10, [&](absl::StatusOr<std::vector<DeadLetter>> letters) {
      std::lock_guard<std::mutex> lock(mu);
      listed = std::move(letters);
    });
    EXPECT_TRUE(RunUntil([&] {
      std::lock_guard<std::mutex> lock(mu);
      return listed.has_value();
    }));
    EXPECT_TRUE(listed->ok()) << listed->status();
    return listed->ok() ? **listed : std::vector<DeadLetter>{};
  }

  std::string dir_;
  asio::io_context io_;
  asio::executor_work_guard<asio::io_context::executor_type> work_{io_.get_executor()};
  asio::thread_pool workers_{2};
  std::unique_ptr<providers::HttpClient> http_;
  events::EventBus bus_;
  std::unique_ptr<FakeHttpServer> receiver_;
  std::unique_ptr<WebhooksOut> out_;
  std::mutex mu_;
  int failures_left_ = 0;
  bool hang_ = false;
};

TEST_F(WebhooksOutTest, AnEventOfASubscribedTypeIsPostedSigned) {
  StartOut({Target()});
  Publish(events::EventType::kRunStarted, "r0");  // not subscribed
  Publish(events::EventType::kRunCompleted, "r1");
  ASSERT_TRUE(RunUntil([&] { return out_->delivered() == 1; }));
  ASSERT_EQ(receiver_->request_count(), 1u);
  const FakeHttpRequest sent = receiver_->requests()[0];
  EXPECT_EQ(sent.method, "POST");
  EXPECT_EQ(sent.path, "/herald");
  EXPECT_EQ(sent.Header("content-type"), "application/json");
  EXPECT_EQ(sent.Header("x-herald-event"), "run_completed");
  EXPECT_TRUE(
      VerifyWebhookSignature(sent.Header("x-herald-signature"), kSecret, sent.body, absl::Now())
          .ok());
  const Json payload = Json::parse(sent.body);
  EXPECT_EQ(payload["type"], "run_completed");
  EXPECT_EQ(payload["id"], sent.Header("x-herald-delivery"));
  EXPECT_EQ(payload["run_id"], "r1");
  EXPECT_EQ(payload["jid"], "alice@localhost");
  EXPECT_EQ(payload["attributes"]["model"], "scripted:test");
}

TEST_F(WebhooksOutTest, AFailedDeliveryIsRetriedUntilItIsTaken) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    failures_left_ = 2;
  }
  StartOut({Target()});
  Publish(events::EventType::kRunCompleted, "r1");
  Publish(events::EventType::kLimitBlocked, "r2");
  ASSERT_TRUE(RunUntil([&] { return out_->delivered() == 2; }));
  EXPECT_EQ(out_->failed_attempts(), 2u);
  const std::vector<FakeHttpRequest> sent = receiver_->requests();
  ASSERT_EQ(sent.size(), 4u);
  // In order: the first event three times (two failures), then the second.
  EXPECT_EQ(sent[0].Header("x-herald-delivery"), sent[2].Header("x-herald-delivery"));
  EXPECT_EQ(sent[2].Header("x-herald-event"), "run_completed");
  EXPECT_EQ(sent[3].Header("x-herald-event"), "limit_blocked");
  EXPECT_TRUE(DeadLetters().empty());
}

TEST_F(WebhooksOutTest, ADeliveryThatKeepsFailingIsADeadLetterThatCanBeReplayed) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    failures_left_ = 2;
  }
  StartOut({Target(/*max_attempts=*/2)});
  Publish(events::EventType::kRunCompleted, "r1");
  ASSERT_TRUE(RunUntil([&] { return out_->dead_lettered() == 1; }));
  std::vector<DeadLetter> letters;
  ASSERT_TRUE(RunUntil([&] { return !(letters = DeadLetters()).empty(); }));
  ASSERT_EQ(letters.size(), 1u);
  EXPECT_EQ(letters[0].target, "ops");
  EXPECT_EQ(letters[0].event_type, "run_completed");
  EXPECT_EQ(letters[0].attempts, 2);
  EXPECT_EQ(letters[0].error, "2 attempts failed; the last: HTTP 500");
  EXPECT_EQ(Json::parse(letters[0].payload)["run_id"], "r1");

  std::optional<absl::Status> replayed;
  out_->Replay(letters[0].id, [&](absl::Status status) { replayed = status; });
  ASSERT_TRUE(RunUntil([&] { return replayed.has_value() && out_->delivered() == 1; }));
  EXPECT_TRUE(replayed->ok()) << *replayed;
  EXPECT_EQ(receiver_->requests().back().Header("x-herald-delivery"), letters[0].id)
      << "a replay keeps its delivery id";
  EXPECT_TRUE(DeadLetters().empty());

  std::optional<absl::Status> unknown;
  out_->Replay("d-0000", [&](absl::Status status) { unknown = status; });
  ASSERT_TRUE(RunUntil([&] { return unknown.has_value(); }));
  EXPECT_EQ(unknown->code(), absl::StatusCode::kNotFound);
}

TEST_F(WebhooksOutTest, AFullQueueAndAStopKeepDeadLettersNotLosses) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    hang_ = true;  // the receiver takes the first delivery and never answers
  }
  WebhookTarget target = Target();
  target.max_queue = 2;
  StartOut({target});
  for (int i = 0; i < 4; ++i) Publish(events::EventType::kRunCompleted, absl::StrCat("r", i));
  ASSERT_TRUE(
      RunUntil([&] { return out_->dead_lettered() == 2 && receiver_->request_count() == 1; }));
  ASSERT_TRUE(RunUntil([&] { return DeadLetters().size() == 2; }));  // written
  out_.reset();  // two still queued (one of them in flight): kept
  StartOut({Target()});
  std::vector<DeadLetter> letters = DeadLetters();
  ASSERT_EQ(letters.size(), 4u);
  int full = 0;
  int stopped = 0;
  for (const DeadLetter& letter : letters) {
    full += letter.error.find("queue was full") != std::string::npos;
    stopped += letter.error.find("stopped") != std::string::npos;
  }
  EXPECT_EQ(full, 2);
  EXPECT_EQ(stopped, 2);
}

}  // namespace
}  // namespace herald::control::http
