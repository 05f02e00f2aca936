// The OTLP/HTTP JSON exporter: the body it writes (an ExportTraceServiceRequest), and the
// exporter against a fake collector on Herald's own HTTP listener: batches per interval, a
// refused batch dropped and counted, a bounded queue.
#include "control/http/otlp_exporter.h"

#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "component/trace/tracer.h"
#include "control/http/http_server.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "providers/http/http_client.h"

namespace herald::control::http {
namespace {

using ::testing::ElementsAre;
using ::testing::UnorderedElementsAre;
using Json = nlohmann::json;
using TracePtr = std::shared_ptr<const trace::TraceData>;

constexpr char kTraceId[] = "0af7651916cd43dd8448eb211c80319c";
constexpr char kRootId[] = "b7ad6b7169203331";
constexpr char kCallId[] = "00f067aa0ba902b7";
constexpr char kToolId[] = "53995c3f42cd8ad8";

const absl::Time kStart = absl::FromUnixNanos(1'700'000'000'123'456'789);

// The stringValue of the attribute `key` in an OTLP attribute list, or nullopt.
std::optional<std::string> Attribute(const Json& attributes, const std::string& key) {
  for (const Json& attribute : attributes) {
    if (attribute.at("key") == key)
      return attribute.at("value").at("stringValue").get<std::string>();
  }
  return std::nullopt;
}

const Json* SpanNamed(const Json& spans, const std::string& name) {
  for (const Json& span : spans) {
    if (span.at("name") == name) return &span;
  }
  return nullptr;
}

// A finished run: the turn (ok), a model call (ok) and a tool call that failed.
TracePtr HandMadeTrace() {
  auto trace = std::make_shared<trace::TraceData>();
  trace->trace_id = kTraceId;
  trace->run_id = "run-1";
  trace->conversation = "api:docs";
  trace->finished = true;
  trace->spans.push_back(trace::SpanData{.span_id = kRootId,
                                         .name = "turn",
                                         .start = kStart,
                                         .end = kStart + absl::Milliseconds(900),
                                         .attributes = {{"herald.model", "claude"}},
                                         .status = trace::SpanStatus::kOk});
  trace->spans.push_back(trace::SpanData{
      .span_id = kCallId,
      .parent_span_id = kRootId,
      .name = "llm.call",
      .start = kStart + absl::Milliseconds(10),
      .end = kStart + absl::Milliseconds(400),
      .attributes = {{"gen_ai.request.model", "claude"}, {"gen_ai.usage.input_tokens", "12"}},
      .status = trace::SpanStatus::kOk});
  trace->spans.push_back(trace::SpanData{.span_id = kToolId,
                                         .parent_span_id = kCallId,
                                         .name = "tool url_fetch",
                                         .start = kStart + absl::Milliseconds(500),
                                         .end = kStart + absl::Milliseconds(800),
                                         .status = trace::SpanStatus::kError,
                                         .status_message = "the host did not answer"});
  trace->span_count = 3;
  return trace;
}

OtlpExporterOptions JsonOptions() {
  return {.service_version = "1.2.3", .instance_id = "herald.example.org"};
}

TEST(OtlpJsonTest, TheResourceNamesHeraldItsVersionAndInstance) {
  const Json body = Json::parse(OtlpJson({HandMadeTrace()}, JsonOptions()));
  ASSERT_EQ(body.at("resourceSpans").size(), 1u);
  const Json& resource = body["resourceSpans"][0].at("resource").at("attributes");
  EXPECT_EQ(Attribute(resource, "service.name"), "herald");
  EXPECT_EQ(Attribute(resource, "service.version"), "1.2.3");
  EXPECT_EQ(Attribute(resource, "service.instance.id"), "herald.example.org");
  const Json& scopes = body["resourceSpans"][0].at("scopeSpans");
  ASSERT_EQ(scopes.size(), 1u);
  EXPECT_EQ(scopes[0].at("scope").at("name"), "herald");
}

TEST(OtlpJsonTest, EachSpanCarriesItsIdsNameKindAndTimes) {
  const Json body = Json::parse(OtlpJson({HandMadeTrace()}, JsonOptions()));
  const Json& spans = body["resourceSpans"][0]["scopeSpans"][0].at("spans");
  ASSERT_EQ(spans.size(), 3u);

  const Json* root = SpanNamed(spans, "turn");
  ASSERT_NE(root, nullptr);
  EXPECT_EQ(root->at("traceId"), kTraceId);
  EXPECT_EQ(root->at("spanId"), kRootId);
  EXPECT_FALSE(root->contains("parentSpanId")) << "the root has no parent";
  EXPECT_EQ(root->at("kind"), 2);
  ASSERT_TRUE(root->at("startTimeUnixNano").is_string()) << "64-bit integers are strings";
  ASSERT_TRUE(root->at("endTimeUnixNano").is_string());
  EXPECT_EQ(root->at("startTimeUnixNano"), "1700000000123456789");
  EXPECT_EQ(root->at("startTimeUnixNano"), absl::StrCat(absl::ToUnixNanos(kStart)));
  EXPECT_EQ(root->at("endTimeUnixNano"),
            absl::StrCat(absl::ToUnixNanos(kStart + absl::Milliseconds(900))));

  const Json* call = SpanNamed(spans, "llm.call");
  ASSERT_NE(call, nullptr);
  EXPECT_EQ(call->at("traceId"), kTraceId);
  EXPECT_EQ(call->at("spanId"), kCallId);
  EXPECT_EQ(call->at("parentSpanId"), kRootId);
  EXPECT_EQ(call->at("kind"), 1);
  EXPECT_EQ(call->at("startTimeUnixNano"),
            absl::StrCat(absl::ToUnixNanos(kStart + absl::Milliseconds(10))));
  EXPECT_EQ(call->at("endTimeUnixNano"),
            absl::StrCat(absl::ToUnixNanos(kStart + absl::Milliseconds(400))));

  const Json* tool = SpanNamed(spans, "tool url_fetch");
  ASSERT_NE(tool, nullptr);
  EXPECT_EQ(tool->at("parentSpanId"), kCallId);
  EXPECT_EQ(tool->at("kind"), 1);
}

TEST(OtlpJsonTest, AttributesAreStringValuesAndTheRootNamesItsRunAndConversation) {
  const Json body = Json::parse(OtlpJson({HandMadeTrace()}, JsonOptions()));
  const Json& spans = body["resourceSpans"][0]["scopeSpans"][0]["spans"];

  const Json& root_attributes = SpanNamed(spans, "turn")->at("attributes");
  EXPECT_EQ(Attribute(root_attributes, "herald.model"), "claude");
  EXPECT_EQ(Attribute(root_attributes, "herald.run_id"), "run-1");
  EXPECT_EQ(Attribute(root_attributes, "herald.conversation"), "api:docs");

  const Json& call_attributes = SpanNamed(spans, "llm.call")->at("attributes");
  EXPECT_EQ(call_attributes,
            Json::parse(R"([{"key": "gen_ai.request.model", "value": {"stringValue": "claude"}},
                            {"key": "gen_ai.usage.input_tokens",
                             "value": {"stringValue": "12"}}])"));
  EXPECT_EQ(Attribute(call_attributes, "herald.run_id"), std::nullopt) << "only on the root";
}

TEST(OtlpJsonTest, StatusCodesAreOkErrorOrUnsetWithTheErrorsMessage) {
  TracePtr made = HandMadeTrace();
  auto trace = std::make_shared<trace::TraceData>(*made);
  trace->spans.push_back(trace::SpanData{.span_id = "1111111111111111",
                                         .parent_span_id = kRootId,
                                         .name = "memory.read",
                                         .start = kStart,
                                         .end = kStart + absl::Milliseconds(1)});
  const Json body = Json::parse(OtlpJson({trace}, JsonOptions()));
  const Json& spans = body["resourceSpans"][0]["scopeSpans"][0]["spans"];

  EXPECT_EQ(SpanNamed(spans, "turn")->at("status"), Json::parse(R"({"code": 1})"));
  EXPECT_EQ(SpanNamed(spans, "llm.call")->at("status"), Json::parse(R"({"code": 1})"));
  EXPECT_EQ(SpanNamed(spans, "tool url_fetch")->at("status"),
            Json::parse(R"({"code": 2, "message": "the host did not answer"})"));
  EXPECT_EQ(SpanNamed(spans, "memory.read")->at("status"), Json::parse(R"({"code": 0})"));
}

TEST(OtlpJsonTest, SeveralTracesShareOneRequestAndBadUtf8StaysValidJson) {
  TracePtr first = HandMadeTrace();
  auto second = std::make_shared<trace::TraceData>();
  second->trace_id = std::string(32, 'e');
  second->run_id = "run-2";
  second->conversation = "direct:alice@localhost";
  second->finished = true;
  second->spans.push_back(trace::SpanData{.span_id = std::string(16, 'f'),
                                          .name = "turn",
                                          .start = kStart,
                                          .end = kStart + absl::Seconds(1),
                                          .attributes = {{"tool.output", "bad \xff byte"}},
                                          .status = trace::SpanStatus::kOk});
  second->span_count = 1;

  const std::string text = OtlpJson({first, second}, JsonOptions());
  const Json body = Json::parse(text);  // throws on invalid JSON or UTF-8
  ASSERT_EQ(body["resourceSpans"].size(), 1u);
  const Json& spans = body["resourceSpans"][0]["scopeSpans"][0]["spans"];
  ASSERT_EQ(spans.size(), 4u);
  std::multiset<std::string> trace_ids;
  for (const Json& span : spans) trace_ids.insert(span.at("traceId"));
  EXPECT_EQ(trace_ids.count(kTraceId), 3u);
  EXPECT_EQ(trace_ids.count(std::string(32, 'e')), 1u);
}

// The exporter, its HttpClient and a fake collector (Herald's HttpServer) on an I/O loop run
// by a thread of its own. What touches the loop's objects runs on the loop (OnLoop).
class OtlpExporterTest : public ::testing::Test {
 protected:
  struct Post {
    std::string content_type;
    std::string body;
  };

  void SetUp() override {
    loop_ = std::thread([this] { io_.run(); });
    OnLoop([this] {
      auto server = HttpServer::Start(io_, {.listen = "127.0.0.1:0"});
      ASSERT_TRUE(server.ok()) << server.status();
      server_ = *std::move(server);
      server_->Route(
          "/v1/traces", {.methods = {"POST"}, .max_body_bytes = 1 << 20},
          [this](const HttpRequest& request, HttpServer::Respond respond) {
            int status;
            {
              std::lock_guard<std::mutex> lock(mu_);
              posts_.push_back({std::string(request.Header("content-type")), request.body});
              status = status_;
            }
            respond({.status = status,
                     .content_type = "application/json",
                     .body = status == 200 ? "{}" : "down"});
          });
      port_ = server_->port();
      auto http = providers::HttpClient::Create(io_);
      ASSERT_TRUE(http.ok()) << http.status();
      http_ = *std::move(http);
    });
    ASSERT_NE(server_, nullptr);
    ASSERT_NE(http_, nullptr);
  }

  void TearDown() override {
    OnLoop([this] {
      exporter_.reset();
      http_.reset();
      server_.reset();
    });
    work_.reset();
    io_.stop();
    loop_.join();
  }

  // Runs `f` on the loop and waits for it.
  void OnLoop(const std::function<void()>& f) {
    std::promise<void> done;
    asio::post(io_, [&] {
      f();
      done.set_value();
    });
    done.get_future().wait();
  }

  void StartExporter(size_t max_queued = 1000) {
    OnLoop([&] {
      exporter_ = std::make_unique<OtlpExporter>(
          io_, *http_,
          OtlpExporterOptions{.endpoint = absl::StrCat("http://127.0.0.1:", port_, "/v1/traces"),
                              .interval = absl::Milliseconds(50),
                              .max_queued = max_queued,
                              .service_version = "1.2.3",
                              .instance_id = "herald.example.org"});
    });
  }

  // Offers `traces` in one go on the loop: no tick can come between them.
  void Offer(const std::vector<TracePtr>& traces) {
    OnLoop([&] {
      for (const TracePtr& trace : traces) exporter_->Offer(trace);
    });
  }

  void SetStatus(int status) {
    std::lock_guard<std::mutex> lock(mu_);
    status_ = status;
  }

  std::vector<Post> Posts() {
    std::lock_guard<std::mutex> lock(mu_);
    return posts_;
  }

  static bool WaitFor(const std::function<bool()>& done, absl::Duration limit = absl::Seconds(20)) {
    const absl::Time deadline = absl::Now() + limit;
    while (!done()) {
      if (absl::Now() > deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return true;
  }

  // Finished traces from a real Tracer: run `run_id` with `children` model calls.
  std::vector<TracePtr> Traces(const std::vector<std::pair<std::string, int>>& runs) {
    std::vector<TracePtr> out;
    auto tracer = std::make_shared<trace::Tracer>(trace::TracerOptions{});
    tracer->SetExporter([&out](TracePtr trace) { out.push_back(std::move(trace)); });
    for (const auto& [run_id, children] : runs) {
      trace::Span root = trace::Span::Root(tracer.get(), run_id, "api:docs", "turn");
      for (int i = 0; i < children; ++i) {
        trace::Span call(tracer.get(), run_id, "llm.call", root.id());
        call.Set("gen_ai.request.model", "claude");
        call.End(absl::OkStatus());
      }
      root.End(absl::OkStatus());
    }
    return out;
  }

  // The trace ids of the spans in an OTLP body, with how many spans each has.
  static std::multiset<std::string> SpanTraceIds(const std::string& body) {
    std::multiset<std::string> out;
    const Json parsed = Json::parse(body);
    for (const Json& span : parsed.at("resourceSpans")[0].at("scopeSpans")[0].at("spans")) {
      out.insert(span.at("traceId").get<std::string>());
    }
    return out;
  }

  asio::io_context io_;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work_{
      io_.get_executor()};
  std::thread loop_;
  // Loop only (set up and torn down through OnLoop).
  std::unique_ptr<HttpServer> server_;
  std::unique_ptr<providers::HttpClient> http_;
  std::unique_ptr<OtlpExporter> exporter_;
  uint16_t port_ = 0;
  // The collector's, from the loop; read by the test.
  std::mutex mu_;
  std::vector<Post> posts_;
  int status_ = 200;
};

TEST_F(OtlpExporterTest, TracesFinishedBetweenTwoTicksGoInOneRequest) {
  StartExporter();
  const std::vector<TracePtr> traces = Traces({{"run-1", 1}, {"run-2", 2}});
  ASSERT_EQ(traces.size(), 2u);
  Offer(traces);

  ASSERT_TRUE(WaitFor([&] { return exporter_->exported() == 2; }))
      << "exported " << exporter_->exported() << ", dropped " << exporter_->dropped();
  std::vector<Post> posts = Posts();
  ASSERT_EQ(posts.size(), 1u);
  EXPECT_EQ(posts[0].content_type, "application/json");
  EXPECT_EQ(
      SpanTraceIds(posts[0].body),
      (std::multiset<std::string>{traces[0]->trace_id, traces[0]->trace_id, traces[1]->trace_id,
                                  traces[1]->trace_id, traces[1]->trace_id}));
  const Json body = Json::parse(posts[0].body);
  EXPECT_EQ(Attribute(body["resourceSpans"][0]["resource"]["attributes"], "service.instance.id"),
            "herald.example.org");
  EXPECT_EQ(exporter_->dropped(), 0u);

  // Empty ticks send nothing; the next trace goes alone in the next request.
  const std::vector<TracePtr> third = Traces({{"run-3", 0}});
  Offer(third);
  ASSERT_TRUE(WaitFor([&] { return exporter_->exported() == 3; }));
  posts = Posts();
  ASSERT_EQ(posts.size(), 2u);
  EXPECT_THAT(SpanTraceIds(posts[1].body), ElementsAre(third[0]->trace_id));
}

TEST_F(OtlpExporterTest, ABatchTheCollectorRefusesIsDroppedAndCounted) {
  SetStatus(500);
  StartExporter();
  Offer(Traces({{"run-1", 1}, {"run-2", 0}}));

  ASSERT_TRUE(WaitFor([&] { return exporter_->dropped() == 2; }))
      << "exported " << exporter_->exported() << ", dropped " << exporter_->dropped();
  EXPECT_EQ(exporter_->exported(), 0u);
  EXPECT_GE(Posts().size(), 1u);

  // The exporter goes on: the next batch, taken, is counted as exported.
  SetStatus(200);
  const size_t refused = Posts().size();
  const std::vector<TracePtr> next = Traces({{"run-3", 0}});
  Offer(next);
  ASSERT_TRUE(WaitFor([&] { return exporter_->exported() == 1; }));
  EXPECT_EQ(exporter_->dropped(), 2u);
  const std::vector<Post> posts = Posts();
  ASSERT_EQ(posts.size(), refused + 1) << "the refused batch is not sent again";
  EXPECT_THAT(SpanTraceIds(posts.back().body), ElementsAre(next[0]->trace_id));
}

TEST_F(OtlpExporterTest, PastMaxQueuedTheOldestTracesAreDropped) {
  StartExporter(/*max_queued=*/2);
  const std::vector<TracePtr> traces =
      Traces({{"run-1", 0}, {"run-2", 0}, {"run-3", 0}, {"run-4", 0}, {"run-5", 0}});
  ASSERT_EQ(traces.size(), 5u);
  Offer(traces);
  EXPECT_EQ(exporter_->dropped(), 3u);

  ASSERT_TRUE(WaitFor([&] { return exporter_->exported() == 2; }));
  EXPECT_EQ(exporter_->dropped(), 3u);
  const std::vector<Post> posts = Posts();
  ASSERT_EQ(posts.size(), 1u);
  EXPECT_THAT(SpanTraceIds(posts[0].body),
              UnorderedElementsAre(traces[3]->trace_id, traces[4]->trace_id));
}

}  // namespace
}  // namespace herald::control::http
