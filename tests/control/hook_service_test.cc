// HookService through a real gRPC channel: a program attaches with an admin token, registers,
// and answers the calls of a Converse turn at pre_turn and reply; bad registrations are
// refused; when its stream ends, the hook is gone; the call is audited.
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "proto/herald/v1/hooks.grpc.pb.h"
#include "proto/herald/v1/session.grpc.pb.h"
#include "tests/control/control_test_env.h"

namespace herald::control {
namespace {

using testing::ControlTestEnv;
using ::testing::HasSubstr;
using testing::PollUntil;
using Stream = grpc::ClientReaderWriter<v1::HookMessage, v1::HookEvent>;

class HookServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::Status started = env_.Start();
    ASSERT_TRUE(started.ok()) << started;
    hooks_ = v1::HookService::NewStub(env_.Channel());
    sessions_ = v1::SessionService::NewStub(env_.Channel());
  }

  std::unique_ptr<grpc::ClientContext> Context(const std::string& token) {
    auto context = std::make_unique<grpc::ClientContext>();
    context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    env_.Authorize(*context, token);
    return context;
  }

  static v1::HookMessage Registration(const std::string& name, std::vector<v1::HookPoint> points,
                                      uint32_t timeout_ms = 0) {
    v1::HookMessage message;
    message.mutable_registration()->set_name(name);
    for (v1::HookPoint point : points) message.mutable_registration()->add_points(point);
    message.mutable_registration()->set_timeout_ms(timeout_ms);
    return message;
  }

  // Writes `first` and returns how the stream ended (for registrations that are refused).
  grpc::Status Refusal(const v1::HookMessage& first) {
    auto context = Context("administrator");
    std::unique_ptr<Stream> stream = hooks_->Attach(context.get());
    stream->Write(first);
    v1::HookEvent event;
    while (stream->Read(&event)) {
    }
    return stream->Finish();
  }

  // A whole Converse call on a thread of its own (the test plays the hook meanwhile).
  std::thread ConverseInBackground(std::string conversation, std::string text,
                                   std::vector<v1::RunEvent>& events, grpc::Status& status) {
    return std::thread([this, conversation, text, &events, &status] {
      v1::ConverseRequest request;
      request.set_conversation(conversation);
      request.set_text(text);
      auto context = Context("operator");
      auto reader = sessions_->Converse(context.get(), request);
      v1::RunEvent event;
      while (reader->Read(&event)) events.push_back(event);
      status = reader->Finish();
    });
  }

  bool AnyHook(agent::HookPoint point) {
    bool any = false;
    env_.OnLoop([&] { any = env_.hooks().Any(point); });
    return any;
  }

  std::string AuditText() { return env_.AuditText(); }

  ControlTestEnv env_;
  std::unique_ptr<v1::HookService::Stub> hooks_;
  std::unique_ptr<v1::SessionService::Stub> sessions_;
};

TEST_F(HookServiceTest, AHookRewritesTheMessageAndTheAnswerOfATurn) {
  auto context = Context("administrator");
  std::unique_ptr<Stream> stream = hooks_->Attach(context.get());
  ASSERT_TRUE(
      stream->Write(Registration("masker", {v1::HOOK_POINT_PRE_TURN, v1::HOOK_POINT_REPLY}, 5000)));
  v1::HookEvent event;
  ASSERT_TRUE(stream->Read(&event));
  ASSERT_TRUE(event.has_registered()) << event.DebugString();
  EXPECT_EQ(event.registered().name(), "masker");
  EXPECT_TRUE(AnyHook(agent::HookPoint::kReply));

  // The turn runs on another thread; this one plays the hook.
  std::vector<v1::RunEvent> events;
  grpc::Status conversed;
  std::thread turn = ConverseInBackground("hooked", "darn, say hello", events, conversed);

  ASSERT_TRUE(stream->Read(&event));
  ASSERT_TRUE(event.has_call()) << event.DebugString();
  EXPECT_EQ(event.call().point(), v1::HOOK_POINT_PRE_TURN);
  EXPECT_EQ(event.call().conversation(), "api:hooked");
  EXPECT_EQ(event.call().text(), "darn, say hello");
  v1::HookMessage answer;
  answer.mutable_result()->set_call_id(event.call().call_id());
  answer.mutable_result()->set_verdict(v1::HookResult::REWRITE);
  answer.mutable_result()->set_text("****, say hello");
  ASSERT_TRUE(stream->Write(answer));

  ASSERT_TRUE(stream->Read(&event));
  ASSERT_TRUE(event.has_call()) << event.DebugString();
  EXPECT_EQ(event.call().point(), v1::HOOK_POINT_REPLY);
  EXPECT_EQ(event.call().text(), "Hello from the scripted provider, with several words to stream.");
  answer.mutable_result()->set_call_id(event.call().call_id());
  answer.mutable_result()->set_text("Hello (checked).");
  ASSERT_TRUE(stream->Write(answer));

  turn.join();
  ASSERT_TRUE(conversed.ok()) << conversed.error_message();
  ASSERT_FALSE(events.empty());
  ASSERT_TRUE(events.back().has_completed()) << events.back().DebugString();
  EXPECT_EQ(events.back().completed().text(), "Hello (checked).");
  // Nothing of the unchecked answer went out as it was written.
  for (const v1::RunEvent& e : events) {
    if (e.has_text_delta()) EXPECT_EQ(e.text_delta().text(), "Hello (checked).");
  }

  stream->WritesDone();
  while (stream->Read(&event)) {
  }
  EXPECT_TRUE(stream->Finish().ok());
  EXPECT_TRUE(PollUntil([&] { return !AnyHook(agent::HookPoint::kReply); }, absl::Seconds(10)))
      << "the hook is detached once its stream ended";
  EXPECT_THAT(AuditText(), HasSubstr("HookService/Attach"));
}

TEST_F(HookServiceTest, ARefusedMessageEndsTheRunWithTheReason) {
  auto context = Context("administrator");
  std::unique_ptr<Stream> stream = hooks_->Attach(context.get());
  ASSERT_TRUE(stream->Write(Registration("gate", {v1::HOOK_POINT_PRE_TURN})));
  v1::HookEvent event;
  ASSERT_TRUE(stream->Read(&event));
  ASSERT_TRUE(event.has_registered());
  std::vector<v1::RunEvent> events;
  grpc::Status conversed;
  std::thread turn = ConverseInBackground("gated", "hello", events, conversed);
  ASSERT_TRUE(stream->Read(&event));
  v1::HookMessage answer;
  answer.mutable_result()->set_call_id(event.call().call_id());
  answer.mutable_result()->set_verdict(v1::HookResult::REFUSE);
  answer.mutable_result()->set_reason("Not here.");
  ASSERT_TRUE(stream->Write(answer));
  turn.join();
  ASSERT_FALSE(events.empty());
  ASSERT_TRUE(events.back().has_failed()) << events.back().DebugString();
  EXPECT_EQ(events.back().failed().kind(), v1::RUN_FAILURE_KIND_REFUSED);
  EXPECT_EQ(events.back().failed().message(), "Not here.");
  stream->WritesDone();
  while (stream->Read(&event)) {
  }
  stream->Finish();
}

TEST_F(HookServiceTest, BadRegistrationsAreRefused) {
  v1::HookMessage result_first;
  result_first.mutable_result()->set_call_id("x");
  grpc::Status status = Refusal(result_first);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(status.error_message(), "the first message must be a registration");

  status = Refusal(Registration("bad name!", {v1::HOOK_POINT_PRE_TURN}));
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("registration.name"));

  status = Refusal(Registration("nothing", {}));
  EXPECT_EQ(status.error_message(), "registration.points: name at least one point");

  status = Refusal(Registration("slowpoke", {v1::HOOK_POINT_REPLY}, 60000));
  EXPECT_EQ(status.error_message(), "registration.timeout_ms: 50 to 30000 (0 = 2000)");
  EXPECT_FALSE(AnyHook(agent::HookPoint::kReply));
  EXPECT_FALSE(AnyHook(agent::HookPoint::kPreTurn));
}

TEST_F(HookServiceTest, OnlyAnAdminTokenAttaches) {
  auto context = Context("operator");
  std::unique_ptr<Stream> stream = hooks_->Attach(context.get());
  stream->Write(Registration("sneaky", {v1::HOOK_POINT_PRE_TURN}));
  v1::HookEvent event;
  while (stream->Read(&event)) {
  }
  EXPECT_EQ(stream->Finish().error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_FALSE(AnyHook(agent::HookPoint::kPreTurn));
}

}  // namespace
}  // namespace herald::control
