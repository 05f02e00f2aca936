// AdminService.GetMetrics over a real runtime: a `read` token gets the Prometheus text that
// GET /metrics serves, gathered afresh on each call; other scopes are refused; every call is
// audited and counted like the others; a Herald without a collector says so.
#include <grpcpp/grpcpp.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "control/auth.h"
#include "control/metrics_collector.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "proto/herald/v1/admin.grpc.pb.h"
#include "tests/control/control_test_env.h"

namespace herald::control {
namespace {

namespace v1 = ::herald::v1;
using testing::ControlTestEnv;
using ::testing::HasSubstr;
using ::testing::Not;

class GetMetricsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(env_.Start().ok());
    // As the binary wires it: one collector over the services, rendered on the I/O loop.
    env_.OnLoop([this] {
      collector_ = std::make_unique<MetricsCollector>(env_.services());
      env_.services().metrics_text = [this] {
        collector_->Refresh();
        return collector_->metrics().Render();
      };
      env_.services().control_calls = [this] { return env_.server().CallCounts(); };
    });
    admin_ = v1::AdminService::NewStub(env_.Channel());
  }

  void TearDown() override {
    env_.OnLoop([this] {
      env_.services().metrics_text = nullptr;
      env_.services().control_calls = nullptr;
      collector_.reset();
    });
  }

  grpc::Status GetMetrics(const std::string& token, v1::GetMetricsResponse* response) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    if (!token.empty()) env_.Authorize(context, token);
    return admin_->GetMetrics(&context, {}, response);
  }

  std::string AuditText() { return env_.AuditText(); }

  ControlTestEnv env_;
  std::unique_ptr<MetricsCollector> collector_;
  std::unique_ptr<v1::AdminService::Stub> admin_;
};

TEST_F(GetMetricsTest, AReadTokenGetsThePrometheusTextOfMetricsGatheredAfresh) {
  env_.OnLoop([this] { env_.services().runtime.counters.messages_received = 3; });
  const int64_t before = absl::ToUnixMillis(absl::Now());
  v1::GetMetricsResponse response;
  grpc::Status status = GetMetrics("reader", &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_THAT(response.text(), HasSubstr("# TYPE herald_messages_received_total counter\n"));
  EXPECT_THAT(response.text(), HasSubstr("\nherald_messages_received_total 3\n"));
  EXPECT_THAT(response.text(), HasSubstr("herald_build_info{version=\""));
  EXPECT_GE(response.collected_unix_ms(), before);
  EXPECT_LE(response.collected_unix_ms(), absl::ToUnixMillis(absl::Now()));

  // The next call reads the counters again.
  env_.OnLoop([this] { env_.services().runtime.counters.messages_received = 5; });
  ASSERT_TRUE(GetMetrics("reader", &response).ok());
  EXPECT_THAT(response.text(), HasSubstr("\nherald_messages_received_total 5\n"));
  // Among the calls counted is the first GetMetrics itself.
  EXPECT_THAT(response.text(), HasSubstr("herald_control_calls_total{method=\"/herald.v1."
                                         "AdminService/GetMetrics\",code=\"OK\"} 1\n"));
}

TEST_F(GetMetricsTest, ATokenWithoutTheReadScopeOrNoTokenIsRefused) {
  for (const std::string token : {"operator", "executor", "administrator"}) {
    v1::GetMetricsResponse response;
    grpc::Status status = GetMetrics(token, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED) << token;
    EXPECT_EQ(status.error_message(),
              absl::StrCat("token '", token,
                           "' lacks the 'read' scope needed by AdminService/GetMetrics"));
    EXPECT_EQ(response.text(), "") << token;
  }
  v1::GetMetricsResponse response;
  EXPECT_EQ(GetMetrics("", &response).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(response.text(), "");
}

TEST_F(GetMetricsTest, EveryCallIsAuditedAllowedOrRefused) {
  v1::GetMetricsResponse response;
  ASSERT_TRUE(GetMetrics("reader", &response).ok());
  EXPECT_EQ(GetMetrics("operator", &response).error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(GetMetrics("", &response).error_code(), grpc::StatusCode::UNAUTHENTICATED);

  const std::string audit = AuditText();
  const std::string action = "\"action\":\"/herald.v1.AdminService/GetMetrics\"";
  EXPECT_THAT(audit, HasSubstr(absl::StrCat("\"actor\":\"reader\",", action,
                                            ",\"target\":\"\",\"outcome\":\"OK\"")));
  // A known token refused for its scope is the actor; no token at all is "anonymous".
  EXPECT_THAT(audit, HasSubstr(absl::StrCat(
                         "\"actor\":\"operator\",", action,
                         ",\"target\":\"\",\"outcome\":\"PERMISSION_DENIED\",\"detail\":\"token "
                         "'operator' lacks the 'read' scope needed by AdminService/GetMetrics\"")));
  EXPECT_THAT(audit, HasSubstr(absl::StrCat("\"actor\":\"anonymous\",", action,
                                            ",\"target\":\"\",\"outcome\":\"UNAUTHENTICATED\"")));
  EXPECT_THAT(audit, Not(HasSubstr(testing::TokenFor("reader"))));
}

TEST_F(GetMetricsTest, AHeraldThatGathersNoMetricsSaysSo) {
  env_.OnLoop([this] { env_.services().metrics_text = nullptr; });
  v1::GetMetricsResponse response;
  grpc::Status status = GetMetrics("reader", &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(status.error_message(), "this Herald gathers no metrics");
}

}  // namespace
}  // namespace herald::control
