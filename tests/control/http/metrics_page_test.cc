// GET /metrics over a real runtime: what MetricsCollector counts, how the page is served, and
// who may read it from off loopback.
#include "control/http/metrics_page.h"

#include <atomic>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "proto/herald/v1/admin.grpc.pb.h"
#include "tests/control/control_test_env.h"
#include "tests/control/http/http_test_client.h"

namespace herald::control::http {
namespace {

using ::herald::control::testing::ControlTestEnv;
using ::herald::control::testing::TokenFor;
using ::testing::HasSubstr;

class MetricsPageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(env_.Start().ok());
    env_.OnLoop([this] {
      collector_ = std::make_unique<MetricsCollector>(env_.services());
      authenticator_.emplace(*Authenticator::Create(env_.config().control.tokens));
      server_ = *HttpServer::Start(env_.services().io, {.listen = "127.0.0.1:0"});
      ServeMetrics(*server_, *collector_, *authenticator_);
    });
  }

  void TearDown() override {
    env_.OnLoop([this] {
      server_.reset();
      collector_.reset();
    });
  }

  std::string Get(const std::string& path) {
    return http::testing::HttpExchange(
        server_->port(),
        absl::StrCat("GET ", path, " HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n"));
  }

  void Publish(events::EventType type, std::string run_id,
               std::vector<std::pair<std::string, std::string>> attributes, absl::Time time) {
    env_.events().Publish(events::Event{.type = type,
                                        .time = time,
                                        .run_id = std::move(run_id),
                                        .attributes = std::move(attributes)});
  }

  // One turn of the API conversation `name` (a model call), run to its end; whether it ended.
  bool ConverseToTheEnd(const std::string& name) {
    std::atomic<bool> done{false};
    bool started = false;
    env_.OnLoop([&] {
      started = env_.agent()
                    .Converse(name, "hello",
                              [&](const agent::RunEvent& event) {
                                if (event.kind == agent::RunEvent::Kind::kCompleted ||
                                    event.kind == agent::RunEvent::Kind::kFailed) {
                                  done = true;
                                }
                              })
                    .ok();
    });
    return started && control::testing::PollUntil([&] { return done.load(); }, absl::Seconds(20));
  }

  ControlTestEnv env_;
  std::unique_ptr<MetricsCollector> collector_;
  std::optional<Authenticator> authenticator_;
  std::unique_ptr<HttpServer> server_;
};

TEST_F(MetricsPageTest, TheRuntimesCountsAndTheEventsAreServedFromLoopbackWithoutAToken) {
  env_.OnLoop([this] { env_.services().runtime.counters.messages_received = 3; });
  const absl::Time start = absl::FromUnixSeconds(1'700'000'000);
  Publish(events::EventType::kToolStarted, "r1", {{"tool", "url_fetch"}, {"call_id", "c1"}}, start);
  Publish(events::EventType::kToolCompleted, "r1", {{"tool", "url_fetch"}, {"call_id", "c1"}},
          start + absl::Milliseconds(250));
  Publish(events::EventType::kToolFailed, "r1", {{"tool", "shout"}, {"call_id", "c2"}}, start);
  Publish(events::EventType::kRunCompleted, "r1",
          {{"model", "scripted:test"}, {"input_tokens", "120"}, {"output_tokens", "30"}}, start);
  Publish(events::EventType::kRunFailed, "r2", {}, start);
  Publish(events::EventType::kActionRequired, "r3", {{"kind", "approval"}}, start);

  const std::string page = Get("/metrics");
  EXPECT_THAT(page, ::testing::StartsWith("HTTP/1.1 200 OK\r\n"));
  EXPECT_THAT(page, HasSubstr("Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n"));
  EXPECT_THAT(page, HasSubstr("\nherald_messages_received_total 3\n"));
  EXPECT_THAT(page,
              HasSubstr("herald_tool_runs_total{skill=\"url_fetch\",outcome=\"completed\"} 1"));
  EXPECT_THAT(page, HasSubstr("herald_tool_runs_total{skill=\"shout\",outcome=\"failed\"} 1"));
  EXPECT_THAT(
      page, HasSubstr("herald_tool_run_duration_seconds_bucket{skill=\"url_fetch\",le=\"0.1\"} 0"));
  EXPECT_THAT(
      page,
      HasSubstr("herald_tool_run_duration_seconds_bucket{skill=\"url_fetch\",le=\"0.25\"} 1"));
  EXPECT_THAT(page,
              HasSubstr("herald_llm_tokens_total{model=\"scripted:test\",direction=\"in\"} 120"));
  EXPECT_THAT(page, HasSubstr("herald_runs_total{outcome=\"completed\"} 1"));
  EXPECT_THAT(page, HasSubstr("herald_runs_total{outcome=\"failed\"} 1"));
  EXPECT_THAT(page, HasSubstr("herald_actions_required_total{kind=\"approval\"} 1"));
  EXPECT_THAT(page, HasSubstr("herald_build_info{version=\""));
  EXPECT_THAT(page, HasSubstr("\nprocess_open_fds "));
  EXPECT_THAT(page, ::testing::Not(HasSubstr("\nprocess_resident_memory_bytes 0\n")));
  EXPECT_THAT(Get("/metrics/other"), ::testing::StartsWith("HTTP/1.1 404"));
}

TEST_F(MetricsPageTest, ModelCallsAreTimedAndEachProvidersCircuitIsShown) {
  ASSERT_TRUE(ConverseToTheEnd("metrics"));
  const std::string page = Get("/metrics");
  EXPECT_THAT(page, ::testing::ContainsRegex(
                        "herald_llm_call_duration_seconds_count\\{provider=\"scripted\","
                        "model=\"demo\"\\} [1-9]"));
  EXPECT_THAT(page,
              HasSubstr("herald_llm_circuit_state{provider=\"scripted\",state=\"closed\"} 1"));
  EXPECT_THAT(page, HasSubstr("herald_llm_circuit_state{provider=\"scripted\",state=\"open\"} 0"));
  EXPECT_THAT(page, ::testing::Not(HasSubstr("herald_llm_errors_total{")));
}

TEST_F(MetricsPageTest, ControlCallsStreamsAndConversationsAreCounted) {
  env_.OnLoop([this] {
    env_.services().control_calls = [this] { return env_.server().CallCounts(); };
    env_.services().stream_counters = [] {
      return ControlServices::StreamCounters{.connections = 3, .dropped_stanzas = 7};
    };
  });
  auto admin = herald::v1::AdminService::NewStub(env_.Channel());
  for (const std::string token : {"root", "nobody"}) {
    grpc::ClientContext context;
    env_.Authorize(context, token);
    herald::v1::GetStatusResponse status;
    (void)admin->GetStatus(&context, {}, &status);
  }
  ASSERT_TRUE(ConverseToTheEnd("counted"));
  // The turn goes on a moment after its answer (it writes the session down), so the page is
  // read again until the conversation is idle; one that never becomes idle fails below.
  std::string page;
  control::testing::PollUntil(
      [&] {
        page = Get("/metrics");
        return absl::StrContains(page, "\nherald_conversations_busy 0\n");
      },
      absl::Seconds(20));
  EXPECT_THAT(page, HasSubstr("herald_control_calls_total{method=\"/herald.v1.AdminService/"
                              "GetStatus\",code=\"OK\"} 1"));
  EXPECT_THAT(page, HasSubstr("herald_control_calls_total{method=\"/herald.v1.AdminService/"
                              "GetStatus\",code=\"UNAUTHENTICATED\"} 1"));
  EXPECT_THAT(page, HasSubstr("\nherald_xmpp_connections_total 3\n"));
  EXPECT_THAT(page, HasSubstr("\nherald_xmpp_outbound_dropped_total 7\n"));
  EXPECT_THAT(page, HasSubstr("\nherald_conversations_loaded 1\n"));
  EXPECT_THAT(page, HasSubstr("\nherald_conversations_busy 0\n"));
  EXPECT_THAT(page, HasSubstr("\nherald_conversation_messages_queued 0\n"));
}

TEST_F(MetricsPageTest, OffLoopbackAReadTokenIsNeeded) {
  HttpRequest far{.method = "GET", .path = "/metrics", .peer = asio::ip::make_address("192.0.2.7")};
  std::optional<HttpResponse> refused = RefuseMetricsAccess(far, *authenticator_);
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(refused->status, 401);
  far.headers = {{"authorization", "Bearer not-a-token"}};
  EXPECT_EQ(RefuseMetricsAccess(far, *authenticator_)->status, 401);
  far.headers = {{"authorization", "Bearer " + TokenFor("operator")}};
  refused = RefuseMetricsAccess(far, *authenticator_);
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(refused->status, 403);
  EXPECT_THAT(refused->body, HasSubstr("lacks the 'read' scope"));
  far.headers = {{"authorization", "Bearer " + TokenFor("reader")}};
  EXPECT_FALSE(RefuseMetricsAccess(far, *authenticator_).has_value());
  // An IPv4-mapped loopback peer is loopback.
  HttpRequest mapped{.peer = asio::ip::make_address("::ffff:127.0.0.1")};
  EXPECT_FALSE(RefuseMetricsAccess(mapped, *authenticator_).has_value());
}

}  // namespace
}  // namespace herald::control::http
