// AdminService.ListTraces and GetTrace over a real runtime: a Converse that calls a tool is
// one trace — the turn, the memory read, each model call, the tool call with its arguments
// and result, the memory write — readable with a `read` token, newest first, filtered by
// conversation, found by trace id or run id.
#include <grpcpp/grpcpp.h>

#include <chrono>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "proto/herald/v1/admin.grpc.pb.h"
#include "proto/herald/v1/session.grpc.pb.h"
#include "tests/control/control_test_env.h"

namespace herald::control {
namespace {

namespace v1 = ::herald::v1;
using testing::ControlTestEnv;
using ::testing::HasSubstr;

class TracesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(env_.Start().ok());
    admin_ = v1::AdminService::NewStub(env_.Channel());
    sessions_ = v1::SessionService::NewStub(env_.Channel());
  }

  std::unique_ptr<grpc::ClientContext> Context(const std::string& token) {
    auto context = std::make_unique<grpc::ClientContext>();
    context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    env_.Authorize(*context, token);
    return context;
  }

  // One Converse turn to its end; the run id it reported.
  std::string Converse(const std::string& conversation, const std::string& text) {
    auto context = Context("operator");
    v1::ConverseRequest request;
    request.set_conversation(conversation);
    request.set_text(text);
    auto reader = sessions_->Converse(context.get(), request);
    v1::RunEvent event;
    std::string run_id;
    while (reader->Read(&event)) {
      if (!event.run_id().empty()) run_id = event.run_id();
    }
    EXPECT_TRUE(reader->Finish().ok());
    return run_id;
  }

  ControlTestEnv env_;
  std::unique_ptr<v1::AdminService::Stub> admin_;
  std::unique_ptr<v1::SessionService::Stub> sessions_;
};

const v1::Span* Named(const v1::Trace& trace, const std::string& name) {
  for (const v1::Span& span : trace.spans()) {
    if (span.name() == name) return &span;
  }
  return nullptr;
}

std::string Attribute(const v1::Span& span, const std::string& key) {
  for (const v1::SpanAttribute& attribute : span.attributes()) {
    if (attribute.key() == key) return attribute.value();
  }
  return "";
}

TEST_F(TracesTest, ATurnWithAToolCallIsOneTraceOfSpans) {
  const std::string run_id = Converse("traced", "shout hello there");
  ASSERT_FALSE(run_id.empty());

  // The answer reaches the caller before the memory write ends the turn's root span.
  v1::ListTracesResponse list;
  ASSERT_TRUE(testing::PollUntil(
      [&] {
        list.Clear();
        return admin_->ListTraces(Context("reader").get(), {}, &list).ok() &&
               list.traces_size() >= 1 && list.traces(0).finished();
      },
      absl::Seconds(20)));
  const v1::Trace& summary = list.traces(0);
  EXPECT_EQ(summary.run_id(), run_id);
  EXPECT_EQ(summary.conversation(), "api:traced");
  EXPECT_TRUE(summary.finished());
  EXPECT_EQ(summary.root().name(), "turn");
  EXPECT_EQ(summary.root().status(), v1::SPAN_STATUS_OK);
  EXPECT_EQ(summary.spans_size(), 0) << "a list carries summaries only";
  EXPECT_GE(summary.span_count(), 6);

  v1::GetTraceRequest by_trace;
  by_trace.set_id(summary.trace_id());
  v1::Trace trace;
  ASSERT_TRUE(admin_->GetTrace(Context("reader").get(), by_trace, &trace).ok());
  EXPECT_EQ(trace.trace_id().size(), 32u);
  ASSERT_EQ(trace.spans_size(), summary.span_count());
  const v1::Span& root = trace.spans(0);
  EXPECT_EQ(root.name(), "turn");
  EXPECT_TRUE(root.parent_span_id().empty());
  for (const v1::Span& span : trace.spans()) {
    EXPECT_EQ(span.span_id().size(), 16u);
    EXPECT_EQ(span.status(), v1::SPAN_STATUS_OK) << span.name();
    EXPECT_TRUE(span.has_end_time()) << span.name();
    EXPECT_GE(span.end_time().seconds() * 1000000000LL + span.end_time().nanos(),
              span.start_time().seconds() * 1000000000LL + span.start_time().nanos());
  }
  ASSERT_NE(Named(trace, "memory.read"), nullptr);
  ASSERT_NE(Named(trace, "memory.write"), nullptr);
  const v1::Span* tool = Named(trace, "tool shout");
  ASSERT_NE(tool, nullptr);
  EXPECT_EQ(tool->parent_span_id(), root.span_id());
  EXPECT_EQ(Attribute(*tool, "gen_ai.tool.name"), "shout");
  EXPECT_THAT(Attribute(*tool, "herald.tool.arguments"), HasSubstr("hello there"));
  EXPECT_THAT(Attribute(*tool, "herald.tool.result"), HasSubstr("HELLO THERE"));
  int model_calls = 0;
  for (const v1::Span& span : trace.spans()) {
    if (span.name().rfind("chat ", 0) != 0) continue;
    ++model_calls;
    EXPECT_FALSE(Attribute(span, "gen_ai.request.model").empty());
    EXPECT_FALSE(Attribute(span, "gen_ai.usage.output_tokens").empty());
  }
  EXPECT_EQ(model_calls, 2) << "one call that asks for the tool, one that answers";

  // Found by its run id too.
  v1::GetTraceRequest by_run;
  by_run.set_id(run_id);
  v1::Trace again;
  ASSERT_TRUE(admin_->GetTrace(Context("reader").get(), by_run, &again).ok());
  EXPECT_EQ(again.trace_id(), trace.trace_id());
}

TEST_F(TracesTest, NewestFirstFilteredByConversationAndBounded) {
  Converse("first", "hello");
  Converse("second", "hello");
  Converse("first", "hello again");
  v1::ListTracesResponse all;
  ASSERT_TRUE(admin_->ListTraces(Context("reader").get(), {}, &all).ok());
  ASSERT_EQ(all.traces_size(), 3);
  EXPECT_EQ(all.traces(0).conversation(), "api:first");
  EXPECT_EQ(all.traces(1).conversation(), "api:second");

  v1::ListTracesRequest filtered;
  filtered.set_conversation("api:first");
  filtered.set_limit(1);
  v1::ListTracesResponse first;
  ASSERT_TRUE(admin_->ListTraces(Context("reader").get(), filtered, &first).ok());
  ASSERT_EQ(first.traces_size(), 1);
  EXPECT_EQ(first.traces(0).trace_id(), all.traces(0).trace_id());

  v1::ListTracesRequest too_many;
  too_many.set_limit(5000);
  v1::ListTracesResponse refused;
  EXPECT_EQ(admin_->ListTraces(Context("reader").get(), too_many, &refused).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  v1::GetTraceRequest unknown;
  unknown.set_id("00000000000000000000000000000000");
  v1::Trace missing;
  EXPECT_EQ(admin_->GetTrace(Context("reader").get(), unknown, &missing).error_code(),
            grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(admin_->ListTraces(Context("operator").get(), {}, &refused).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
}

}  // namespace
}  // namespace herald::control
