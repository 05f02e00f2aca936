// `heraldctl metrics` in process against FakeHerald: it calls AdminService.GetMetrics with the
// token and prints the Prometheus text as it came, or the response as JSON; a refusal exits
// with its class.
#include <unistd.h>

#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "proto/herald/v1/admin.pb.h"
#include "tests/tools/heraldctl/fake_herald.h"
#include "tests/tools/heraldctl/run_against.h"
#include "tools/heraldctl/heraldctl.h"

namespace herald::heraldctl {
namespace {

using testing::FakeHerald;
using Result = testing::HeraldctlRun;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kToken[] = "s3cr3t-t0ken-f0r-metrics";
constexpr char kText[] =
    "# HELP herald_messages_received_total Chat and room messages Herald took in.\n"
    "# TYPE herald_messages_received_total counter\n"
    "herald_messages_received_total 7\n";

class MetricsCommandTest : public ::testing::Test {
 protected:
  Result Run(const std::vector<std::string>& args) {
    return testing::RunAgainst(herald_, kToken, args);
  }

  FakeHerald herald_;
};

TEST_F(MetricsCommandTest, PrintsThePrometheusTextAsHeraldSentIt) {
  v1::GetMetricsResponse metrics;
  metrics.set_text(kText);
  metrics.set_collected_unix_ms(1735787045000);
  herald_.Answer("GetMetrics", metrics);

  Result result = Run({"metrics"});
  EXPECT_EQ(result.code, 0) << result.err;
  EXPECT_EQ(result.err, "");
  EXPECT_EQ(result.out, kText);
  FakeHerald::ReceivedCall call = herald_.Received("GetMetrics");
  EXPECT_EQ(call.authorization, std::string("Bearer ") + kToken);
}

TEST_F(MetricsCommandTest, WithJsonPrintsTheResponseAsOneObject) {
  v1::GetMetricsResponse metrics;
  metrics.set_text(kText);
  metrics.set_collected_unix_ms(1735787045000);
  herald_.Answer("GetMetrics", metrics);

  Result result = Run({"--json", "metrics"});
  EXPECT_EQ(result.code, 0) << result.err;
  nlohmann::json json = nlohmann::json::parse(result.out);
  EXPECT_EQ(json["text"], kText);
  EXPECT_EQ(json["collectedUnixMs"], "1735787045000") << "int64 is a string in proto3 JSON";
}

TEST_F(MetricsCommandTest, ATokenWithoutTheReadScopeExitsFour) {
  herald_.Fail(
      "GetMetrics",
      grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                   "token 'ops' lacks the 'read' scope needed by AdminService/GetMetrics"));
  Result result = Run({"metrics"});
  EXPECT_EQ(result.code, 4);
  EXPECT_EQ(result.out, "");
  EXPECT_THAT(result.err, HasSubstr("lacks the 'read' scope needed by AdminService/GetMetrics"));
}

TEST_F(MetricsCommandTest, TakesNoArguments) {
  Result result = Run({"metrics", "extra"});
  EXPECT_EQ(result.code, 2);
  EXPECT_EQ(herald_.CallCount("GetMetrics"), 0u);
}

}  // namespace
}  // namespace herald::heraldctl
