// `heraldctl traces` and `heraldctl trace ID` in process against FakeHerald: the ListTraces and
// GetTrace requests sent (limit, conversation, id), the table and the timeline printed (nesting,
// offsets and durations from the span times, errors, runs in progress), --json, and the
// argument and server errors with their exit codes.
#include <unistd.h>

#include <limits>
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

constexpr char kToken[] = "s3cr3t-t0ken-f0r-traces";
constexpr int64_t kJan2 = 1735787045;  // 2025-01-02 03:04:05 UTC

// `microseconds` after kJan2 (before it when negative).
google::protobuf::Timestamp At(int64_t microseconds) {
  const int64_t total = kJan2 * 1000000 + microseconds;
  google::protobuf::Timestamp time;
  time.set_seconds(total / 1000000);
  time.set_nanos(static_cast<int32_t>(total % 1000000 * 1000));
  return time;
}

// The end of a span still open.
constexpr int64_t kOpen = std::numeric_limits<int64_t>::min();

// A span from `start` to `end` microseconds after kJan2, or still open.
v1::Span MakeSpan(const std::string& id, const std::string& parent, const std::string& name,
                  int64_t start, int64_t end, v1::SpanStatus status = v1::SPAN_STATUS_OK) {
  v1::Span span;
  span.set_span_id(id);
  span.set_parent_span_id(parent);
  span.set_name(name);
  *span.mutable_start_time() = At(start);
  if (end != kOpen) *span.mutable_end_time() = At(end);
  span.set_status(end != kOpen ? status : v1::SPAN_STATUS_UNSET);
  return span;
}

void AddAttribute(v1::Span* span, const std::string& key, const std::string& value) {
  v1::SpanAttribute* attribute = span->add_attributes();
  attribute->set_key(key);
  attribute->set_value(value);
}

// A finished run: a turn with memory reads and writes, a model call, and a tool call that
// waited for an approval and failed. The spans are not in start order, as a server may send
// them.
v1::Trace FinishedTrace() {
  v1::Trace trace;
  trace.set_trace_id("4bf92f3577b34da6a3ce929d0e0e4736");
  trace.set_run_id("run-1");
  trace.set_conversation("direct:alice@example.org");
  trace.set_finished(true);
  v1::Span turn = MakeSpan("a000000000000001", "", "turn", 0, 1234400);
  AddAttribute(&turn, "gen_ai.usage.input_tokens", "120");
  AddAttribute(&turn, "gen_ai.usage.output_tokens", "40");
  *trace.add_spans() = turn;
  *trace.add_spans() = MakeSpan("a000000000000002", turn.span_id(), "memory.read", 200, 1500);
  *trace.add_spans() =
      MakeSpan("a000000000000006", turn.span_id(), "memory.write", 1201000, 1234400);
  v1::Span chat =
      MakeSpan("a000000000000003", turn.span_id(), "chat scripted:default", 2000, 1002000);
  AddAttribute(&chat, "gen_ai.request.model", "default");
  *trace.add_spans() = chat;
  v1::Span approval =
      MakeSpan("a000000000000005", "a000000000000004", "approval wait", 1020000, 1100000);
  AddAttribute(&approval, "herald.action.outcome", "approved");
  *trace.add_spans() = approval;
  v1::Span tool = MakeSpan("a000000000000004", turn.span_id(), "tool shell", 1010000, 1200000,
                           v1::SPAN_STATUS_ERROR);
  tool.set_status_message("exit status 1\nstderr: boom");
  AddAttribute(&tool, "herald.tool.arguments", "{\"command\":\x1b[2J\"make\ndeploy\"}");
  AddAttribute(&tool, "herald.tool.result", std::string(300, 'x'));
  *trace.add_spans() = tool;
  *trace.mutable_root() = turn;
  trace.set_span_count(6);
  return trace;
}

class TracesCommandTest : public ::testing::Test {
 protected:
  Result Run(const std::vector<std::string>& args) {
    return testing::RunAgainst(herald_, kToken, args);
  }

  FakeHerald herald_;
};

// --- traces ----------------------------------------------------------------------------------

TEST_F(TracesCommandTest, ListsTracesNewestFirstWithDurationSpansAndStatus) {
  v1::ListTracesResponse list;
  v1::Trace* running = list.add_traces();
  running->set_trace_id("0af7651916cd43dd8448eb211c80319c");
  running->set_run_id("run-2");
  running->set_conversation("api:docs");
  *running->mutable_root() = MakeSpan("b000000000000001", "", "turn", 55000000, kOpen);
  running->set_span_count(2);
  v1::Trace* failed = list.add_traces();
  failed->set_trace_id("4bf92f3577b34da6a3ce929d0e0e4736");
  failed->set_run_id("run-1");
  failed->set_conversation("direct:alice@example.org");
  failed->set_finished(true);
  *failed->mutable_root() =
      MakeSpan("a000000000000001", "", "turn", 0, 1234400, v1::SPAN_STATUS_ERROR);
  failed->mutable_root()->set_status_message("provider down");
  failed->set_span_count(512);
  failed->set_dropped_spans(3);
  v1::Trace* ok = list.add_traces();
  ok->set_run_id("run-0");
  ok->set_conversation("room:lobby@muc.example.org");
  ok->set_finished(true);
  *ok->mutable_root() = MakeSpan("c000000000000001", "", "turn", -60000000, -59999600);
  ok->set_span_count(3);
  herald_.Answer("ListTraces", list);

  Result result = Run({"traces"});
  EXPECT_EQ(result.code, 0) << result.err;
  EXPECT_EQ(result.err, "");
  EXPECT_EQ(result.out,
            "STARTED                  CONVERSATION                RUN    DURATION  SPANS           "
            "  STATUS\n"
            "2025-01-02 03:05:00 UTC  api:docs                    run-2   running  2               "
            "  running\n"
            "2025-01-02 03:04:05 UTC  direct:alice@example.org    run-1  1,234 ms  512 (+3 "
            "dropped)  error: provider down\n"
            "2025-01-02 03:03:05 UTC  room:lobby@muc.example.org  run-0    0.4 ms  3               "
            "  ok\n");
  FakeHerald::ReceivedCall call = herald_.Received("ListTraces");
  EXPECT_EQ(call.authorization, std::string("Bearer ") + kToken);
  v1::ListTracesRequest request = call.As<v1::ListTracesRequest>();
  EXPECT_EQ(request.conversation(), "") << "every conversation";
  EXPECT_EQ(request.limit(), 0) << "the server's default";
}

TEST_F(TracesCommandTest, WithoutTracesSaysSo) {
  herald_.Answer("ListTraces", v1::ListTracesResponse());
  Result result = Run({"traces"});
  EXPECT_EQ(result.code, 0) << result.err;
  EXPECT_EQ(result.out, "no traces\n");
}

TEST_F(TracesCommandTest, SendsTheConversationAsALabelAndTheLimit) {
  herald_.Answer("ListTraces", v1::ListTracesResponse());
  ASSERT_EQ(Run({"traces", "--conversation", "alice@example.org", "--limit", "5"}).code, 0);
  ASSERT_EQ(Run({"traces", "--conversation", "api:docs", "--limit", "1000"}).code, 0);
  ASSERT_EQ(Run({"traces", "--conversation", "room:lobby@muc.example.org"}).code, 0);

  v1::ListTracesRequest direct = herald_.Received("ListTraces", 0).As<v1::ListTracesRequest>();
  EXPECT_EQ(direct.conversation(), "direct:alice@example.org") << "a bare JID is a 1:1 chat";
  EXPECT_EQ(direct.limit(), 5);
  v1::ListTracesRequest api = herald_.Received("ListTraces", 1).As<v1::ListTracesRequest>();
  EXPECT_EQ(api.conversation(), "api:docs");
  EXPECT_EQ(api.limit(), 1000);
  v1::ListTracesRequest room = herald_.Received("ListTraces", 2).As<v1::ListTracesRequest>();
  EXPECT_EQ(room.conversation(), "room:lobby@muc.example.org");
  EXPECT_EQ(room.limit(), 0);
}

TEST_F(TracesCommandTest, RefusesALimitOutsideOneToAThousandBeforeCalling) {
  for (const char* limit : {"0", "1001", "-3", "five", ""}) {
    Result result = Run({"traces", "--limit", limit});
    EXPECT_EQ(result.code, 2) << limit;
    EXPECT_EQ(result.out, "") << limit;
    EXPECT_THAT(result.err, HasSubstr("--limit")) << limit;
  }
  Result bad_conversation = Run({"traces", "--conversation", "room:"});
  EXPECT_EQ(bad_conversation.code, 2);
  Result extra = Run({"traces", "run-1"});
  EXPECT_EQ(extra.code, 2);
  EXPECT_EQ(herald_.CallCount("ListTraces"), 0u);
}

TEST_F(TracesCommandTest, WithJsonPrintsTheResponseAsOneObject) {
  v1::ListTracesResponse list;
  v1::Trace trace = FinishedTrace();
  trace.clear_spans();  // ListTraces sends the root only
  *list.add_traces() = trace;
  herald_.Answer("ListTraces", list);

  Result result = Run({"--json", "traces"});
  EXPECT_EQ(result.code, 0) << result.err;
  ASSERT_EQ(result.out.find('\n'), result.out.size() - 1) << "one line";
  nlohmann::json json = nlohmann::json::parse(result.out);
  ASSERT_EQ(json["traces"].size(), 1u);
  EXPECT_EQ(json["traces"][0]["traceId"], "4bf92f3577b34da6a3ce929d0e0e4736");
  EXPECT_EQ(json["traces"][0]["runId"], "run-1");
  EXPECT_EQ(json["traces"][0]["finished"], true);
  EXPECT_EQ(json["traces"][0]["spanCount"], 6);
  EXPECT_EQ(json["traces"][0]["droppedSpans"], 0) << "defaults are printed too";
  EXPECT_EQ(json["traces"][0]["root"]["startTime"], "2025-01-02T03:04:05Z");
  EXPECT_EQ(json["traces"][0]["root"]["status"], "SPAN_STATUS_OK");
}

TEST_F(TracesCommandTest, TracingOffIsAFailedPreconditionExitingSix) {
  herald_.Fail("ListTraces", grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                                          "tracing is off ([traces] keep = 0)"));
  Result result = Run({"traces"});
  EXPECT_EQ(result.code, 6);
  EXPECT_EQ(result.out, "");
  EXPECT_EQ(result.err, "heraldctl: FAILED_PRECONDITION: tracing is off ([traces] keep = 0)\n");
}

TEST_F(TracesCommandTest, ATokenWithoutTheReadScopeExitsFour) {
  herald_.Fail(
      "ListTraces",
      grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                   "token 'ops' lacks the 'read' scope needed by AdminService/ListTraces"));
  Result result = Run({"traces"});
  EXPECT_EQ(result.code, 4);
  EXPECT_THAT(result.err, HasSubstr("lacks the 'read' scope"));
}

// --- trace ID --------------------------------------------------------------------------------

TEST_F(TracesCommandTest, ShowsATraceAsATimelineNestedByParent) {
  herald_.Answer("GetTrace", FinishedTrace());

  Result result = Run({"trace", "run-1"});
  EXPECT_EQ(result.code, 0) << result.err;
  EXPECT_EQ(result.err, "");
  EXPECT_EQ(result.out,
            "trace         4bf92f3577b34da6a3ce929d0e0e4736\n"
            "run           run-1\n"
            "conversation  direct:alice@example.org\n"
            "started       2025-01-02 03:04:05 UTC\n"
            "duration      1,234 ms\n"
            "status        ok\n"
            "spans         6\n"
            "\n"
            "   START  DURATION  SPAN\n"
            "  0.0 ms  1,234 ms  turn  ok\n"
            "                      gen_ai.usage.input_tokens: 120\n"
            "                      gen_ai.usage.output_tokens: 40\n"
            "  0.2 ms    1.3 ms    memory.read  ok\n"
            "  2.0 ms  1,000 ms    chat scripted:default  ok\n"
            "                        gen_ai.request.model: default\n"
            "1,010 ms    190 ms    tool shell  error: exit status 1 stderr: boom\n"
            "                        herald.tool.arguments: {\"command\":[2J\"make deploy\"}\n"
            "                        herald.tool.result: " +
                std::string(119, 'x') +
                "…\n"
                "1,020 ms   80.0 ms      approval wait  ok\n"
                "                          herald.action.outcome: approved\n"
                "1,201 ms   33.4 ms    memory.write  ok\n");
  v1::GetTraceRequest request = herald_.Received("GetTrace").As<v1::GetTraceRequest>();
  EXPECT_EQ(request.id(), "run-1");
  EXPECT_EQ(herald_.Received("GetTrace").authorization, std::string("Bearer ") + kToken);
}

TEST_F(TracesCommandTest, ARunInProgressShowsItsOpenSpansAsRunning) {
  v1::Trace trace;
  trace.set_trace_id("0af7651916cd43dd8448eb211c80319c");
  trace.set_run_id("run-2");
  trace.set_conversation("api:docs");
  v1::Span turn = MakeSpan("b000000000000001", "", "turn", 0, kOpen);
  *trace.mutable_root() = turn;
  *trace.add_spans() = turn;
  *trace.add_spans() =
      MakeSpan("b000000000000002", turn.span_id(), "chat scripted:default", 1500, 251500);
  v1::Span tool = MakeSpan("b000000000000003", turn.span_id(), "tool current_time", 252000, kOpen);
  AddAttribute(&tool, "gen_ai.tool.name", "current_time");
  AddAttribute(&tool, "herald.tool.arguments", "");
  *trace.add_spans() = tool;
  trace.set_span_count(3);
  herald_.Answer("GetTrace", trace);

  Result result = Run({"trace", "0af7651916cd43dd8448eb211c80319c"});
  EXPECT_EQ(result.code, 0) << result.err;
  EXPECT_EQ(result.out,
            "trace         0af7651916cd43dd8448eb211c80319c\n"
            "run           run-2\n"
            "conversation  api:docs\n"
            "started       2025-01-02 03:04:05 UTC\n"
            "duration      running\n"
            "status        running\n"
            "spans         3\n"
            "\n"
            " START  DURATION  SPAN\n"
            "0.0 ms   running  turn\n"
            "1.5 ms    250 ms    chat scripted:default  ok\n"
            "252 ms   running    tool current_time\n"
            "                      gen_ai.tool.name: current_time\n"
            "                      herald.tool.arguments:\n");
  EXPECT_EQ(herald_.Received("GetTrace").As<v1::GetTraceRequest>().id(),
            "0af7651916cd43dd8448eb211c80319c");
}

TEST_F(TracesCommandTest, AFailedRunShowsTheRootsErrorAndTheDroppedSpans) {
  v1::Trace trace;
  trace.set_trace_id("4bf92f3577b34da6a3ce929d0e0e4736");
  trace.set_run_id("run-3");
  trace.set_conversation("room:lobby@muc.example.org");
  trace.set_finished(true);
  v1::Span turn = MakeSpan("a000000000000001", "", "turn", 0, 2000000, v1::SPAN_STATUS_ERROR);
  turn.set_status_message("cancelled");
  *trace.mutable_root() = turn;
  *trace.add_spans() = turn;
  trace.set_span_count(512);
  trace.set_dropped_spans(7);
  herald_.Answer("GetTrace", trace);

  Result result = Run({"trace", "run-3"});
  EXPECT_EQ(result.code, 0) << result.err;
  EXPECT_THAT(result.out, HasSubstr("\nstatus        error: cancelled\n"));
  EXPECT_THAT(result.out, HasSubstr("\nspans         512 (+7 dropped)\n"));
  EXPECT_THAT(result.out, HasSubstr("\n0.0 ms  2,000 ms  turn  error: cancelled\n"));
}

TEST_F(TracesCommandTest, TraceWithJsonPrintsEverySpan) {
  herald_.Answer("GetTrace", FinishedTrace());
  Result result = Run({"trace", "run-1", "--json"});
  EXPECT_EQ(result.code, 0) << result.err;
  nlohmann::json json = nlohmann::json::parse(result.out);
  EXPECT_EQ(json["runId"], "run-1");
  ASSERT_EQ(json["spans"].size(), 6u);
  EXPECT_EQ(json["spans"][0]["name"], "turn");
  EXPECT_EQ(json["spans"][0]["parentSpanId"], "");
  EXPECT_EQ(json["spans"][5]["name"], "tool shell");
  EXPECT_EQ(json["spans"][5]["status"], "SPAN_STATUS_ERROR");
  EXPECT_EQ(json["spans"][5]["statusMessage"], "exit status 1\nstderr: boom")
      << "JSON carries the value as the server sent it";
  EXPECT_EQ(json["spans"][5]["attributes"][1]["value"], std::string(300, 'x'));
  EXPECT_EQ(json["spans"][5]["endTime"], "2025-01-02T03:04:06.200Z");
}

TEST_F(TracesCommandTest, AnUnknownIdIsNotFoundExitingFive) {
  herald_.Fail("GetTrace",
               grpc::Status(grpc::StatusCode::NOT_FOUND,
                            "no trace with that id: it may be older than the ones kept"));
  Result result = Run({"trace", "run-404"});
  EXPECT_EQ(result.code, 5);
  EXPECT_EQ(result.out, "");
  EXPECT_EQ(result.err,
            "heraldctl: NOT_FOUND: no trace with that id: it may be older than the ones kept\n");
}

TEST_F(TracesCommandTest, TraceNeedsExactlyOneId) {
  Result missing = Run({"trace"});
  EXPECT_EQ(missing.code, 2);
  EXPECT_EQ(missing.out, "");
  EXPECT_THAT(missing.err, HasSubstr("ID"));
  EXPECT_EQ(Run({"trace", "run-1", "run-2"}).code, 2);
  Result spaced = Run({"trace", "run 1"});
  EXPECT_EQ(spaced.code, 2);
  EXPECT_THAT(spaced.err, HasSubstr("ID contains whitespace"));
  EXPECT_EQ(herald_.CallCount("GetTrace"), 0u);
}

}  // namespace
}  // namespace herald::heraldctl
