// DelegateClient (control/delegate_client.h) against a real control plane (control_test_env.h):
// a skill run and a question answered through another Herald's gRPC API, the hop count and the
// deadline that travel with them, and the refusals that come back as statuses.
#include "control/delegate_client.h"

#include <asio.hpp>
#include <future>
#include <thread>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "proto/herald/v1/skill.grpc.pb.h"
#include "tests/control/control_test_env.h"

namespace herald::control {
namespace {

using testing::ControlTestEnv;
using testing::EnvOptions;

class DelegateClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    EnvOptions options;
    options.configure = [](config::Config& config) { config.agent_protocol.max_hops = 2; };
    absl::Status started = env_.Start(std::move(options));
    ASSERT_TRUE(started.ok()) << started;
    target_ = {.name = "other",
               .grpc = env_.server().address(),
               .token = "token-of-root",
               .timeout_seconds = 30};
    loop_ = std::thread([this] { io_.run(); });
    client_ = DelegateClient::Create(io_, {target_}).value();
  }

  void TearDown() override {
    guard_.reset();
    loop_.join();
  }

  // One delegation; its outcome, as delivered on the client's I/O loop.
  absl::StatusOr<agent::DelegateResult> Call(agent::DelegateRequest request,
                                             const agent::DelegateTarget& target) {
    std::promise<absl::StatusOr<agent::DelegateResult>> outcome;
    asio::post(io_, [&] {
      client_->Call(target, std::move(request), [&](absl::StatusOr<agent::DelegateResult> result) {
        EXPECT_TRUE(io_.get_executor().running_in_this_thread());
        outcome.set_value(std::move(result));
      });
    });
    return outcome.get_future().get();
  }
  absl::StatusOr<agent::DelegateResult> Call(agent::DelegateRequest request) {
    return Call(std::move(request), target_);
  }

  ControlTestEnv env_;
  agent::DelegateTarget target_;
  asio::io_context io_;
  asio::executor_work_guard<asio::io_context::executor_type> guard_{io_.get_executor()};
  std::thread loop_;
  std::unique_ptr<DelegateClient> client_;
};

TEST_F(DelegateClientTest, RunsASkillOfTheOtherHerald) {
  absl::StatusOr<agent::DelegateResult> result =
      Call({.skill = "shout", .arguments_json = R"({"text":"hello"})", .hops = 1});
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE(result->ok);
  EXPECT_EQ(result->output, "HELLO");
}

TEST_F(DelegateClientTest, AsksTheOtherHeraldAQuestionInItsOwnConversation) {
  absl::StatusOr<agent::DelegateResult> result =
      Call({.question = "shout hello world", .conversation = "delegated-direct_alice", .hops = 1});
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE(result->ok) << result->failure;
  EXPECT_EQ(result->output, "The shout tool says: HELLO WORLD");
  EXPECT_FALSE(result->model.empty());
  EXPECT_GT(result->input_tokens + result->output_tokens, 0);
  bool loaded = false;
  env_.OnLoop([&] {
    loaded = env_.agent().FindConversation({.kind = base::ConversationRef::Kind::kApi,
                                            .address = "delegated-direct_alice"}) != nullptr;
  });
  EXPECT_TRUE(loaded);
}

TEST_F(DelegateClientTest, ARequestPastTheOtherHeraldsHopLimitIsRefused) {
  absl::StatusOr<agent::DelegateResult> result = Call({.skill = "shout", .hops = 3});
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(result.status().message(), "hop limit 2")) << result.status();
  result = Call({.question = "shout hi", .conversation = "c", .hops = 3});
  EXPECT_EQ(result.status().code(), absl::StatusCode::kFailedPrecondition) << result.status();
  // At the limit it still runs.
  result = Call({.skill = "shout", .arguments_json = R"({"text":"x"})", .hops = 2});
  EXPECT_TRUE(result.ok()) << result.status();
}

TEST_F(DelegateClientTest, TheDeadlineTravelsWithTheCall) {
  // The slow skill waits for the test; the call gives up at its timeout.
  absl::StatusOr<agent::DelegateResult> result =
      Call({.skill = "slow", .hops = 1, .timeout = absl::Milliseconds(300)});
  EXPECT_EQ(result.status().code(), absl::StatusCode::kDeadlineExceeded) << result.status();
  env_.ReleaseSlowSkill();
}

TEST_F(DelegateClientTest, RefusalsComeBackAsStatuses) {
  absl::StatusOr<agent::DelegateResult> result = Call({.skill = "no_such_skill", .hops = 1});
  EXPECT_EQ(result.status().code(), absl::StatusCode::kNotFound) << result.status();
  agent::DelegateTarget wrong_token = target_;
  wrong_token.token = "not-a-token";
  std::unique_ptr<DelegateClient> other = DelegateClient::Create(io_, {wrong_token}).value();
  client_.swap(other);
  result = Call({.skill = "shout", .hops = 1}, wrong_token);
  EXPECT_EQ(result.status().code(), absl::StatusCode::kUnauthenticated) << result.status();
  client_.swap(other);
  agent::DelegateTarget unknown = target_;
  unknown.name = "unknown";
  result = Call({.skill = "shout", .hops = 1}, unknown);
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument) << result.status();
}

TEST_F(DelegateClientTest, AnUnreadableCaFileIsAnErrorNamingTheTarget) {
  agent::DelegateTarget tls = target_;
  tls.tls_ca_file = "/nonexistent/ca.pem";
  absl::StatusOr<std::unique_ptr<DelegateClient>> client = DelegateClient::Create(io_, {tls});
  ASSERT_FALSE(client.ok());
  EXPECT_TRUE(absl::StrContains(client.status().message(), "other")) << client.status();
}

TEST(DelegationMetadataTest, AHopCountThatIsNotANumberIsRefused) {
  ControlTestEnv env;
  ASSERT_TRUE(env.Start().ok());
  auto stub = herald::v1::SkillService::NewStub(env.Channel());
  grpc::ClientContext context;
  env.Authorize(context, "root");
  context.AddMetadata(kHopsMetadata, "many");
  herald::v1::ExecuteSkillRequest request;
  request.set_name("shout");
  auto reader = stub->ExecuteSkill(&context, request);
  herald::v1::ExecuteSkillEvent event;
  while (reader->Read(&event)) {
  }
  grpc::Status status = reader->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(absl::StrContains(status.error_message(), kHopsMetadata)) << status.error_message();
}

}  // namespace
}  // namespace herald::control
