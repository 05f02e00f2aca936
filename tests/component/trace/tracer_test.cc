// Run traces: a root and its children in the OpenTelemetry data model, bounded attributes,
// spans and runs, finished traces kept and exported once, List and Find, and trace::Span,
// which ends what it holds and does nothing once its Tracer is gone.
#include "component/trace/tracer.h"

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace herald::trace {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Pair;

bool IsLowerHex(const std::string& text) {
  for (const char c : text) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

// A copy: the trace it comes from is often a temporary.
std::optional<SpanData> SpanById(const TraceData& trace, const std::string& span_id) {
  for (const SpanData& span : trace.spans) {
    if (span.span_id == span_id) return span;
  }
  return std::nullopt;
}

std::vector<std::string> RunIds(const std::vector<TraceData>& traces) {
  std::vector<std::string> out;
  for (const TraceData& trace : traces) out.push_back(trace.run_id);
  return out;
}

class TracerTest : public ::testing::Test {
 protected:
  // A Tracer owned by a shared_ptr, on the test's clock.
  std::shared_ptr<Tracer> Make(TracerOptions options = {}) {
    options.clock = [this] { return now_; };
    return std::make_shared<Tracer>(std::move(options));
  }

  // A Tracer whose finished traces are collected in exported_.
  std::shared_ptr<Tracer> MakeExporting(TracerOptions options = {}) {
    auto tracer = Make(std::move(options));
    tracer->SetExporter(
        [this](std::shared_ptr<const TraceData> trace) { exported_.push_back(std::move(trace)); });
    return tracer;
  }

  void Advance(absl::Duration by) { now_ += by; }

  absl::Time now_ = absl::FromUnixSeconds(1'700'000'000);
  std::vector<std::shared_ptr<const TraceData>> exported_;
};

TEST_F(TracerTest, ARunIsATraceWhoseRootIsTheParentOfItsChildren) {
  auto tracer = Make();
  const absl::Time t0 = now_;
  const std::string root = tracer->StartRun("run-1", "api:docs", "turn");
  Advance(absl::Milliseconds(5));
  const std::string call = tracer->StartSpan("run-1", "llm.call");
  Advance(absl::Milliseconds(5));
  const std::string tool = tracer->StartSpan("run-1", "tool current_time", call);

  const std::optional<TraceData> trace = tracer->Find("run-1");
  ASSERT_TRUE(trace.has_value());
  EXPECT_EQ(trace->run_id, "run-1");
  EXPECT_EQ(trace->conversation, "api:docs");
  EXPECT_EQ(trace->trace_id.size(), 32u);
  EXPECT_TRUE(IsLowerHex(trace->trace_id)) << trace->trace_id;
  EXPECT_FALSE(trace->finished);
  EXPECT_EQ(trace->span_count, 3);
  EXPECT_EQ(trace->dropped_spans, 0);
  ASSERT_EQ(trace->spans.size(), 3u);

  for (const std::string& id : {root, call, tool}) {
    EXPECT_EQ(id.size(), 16u);
    EXPECT_TRUE(IsLowerHex(id)) << id;
  }
  EXPECT_NE(root, call);
  EXPECT_NE(root, tool);
  EXPECT_NE(call, tool);

  EXPECT_EQ(trace->root().span_id, root);
  EXPECT_EQ(trace->root().name, "turn");
  EXPECT_EQ(trace->root().parent_span_id, "");
  EXPECT_EQ(trace->root().start, t0);
  EXPECT_EQ(trace->root().end, absl::InfiniteFuture()) << "still open";
  EXPECT_EQ(trace->root().status, SpanStatus::kUnset);

  const std::optional<SpanData> call_span = SpanById(*trace, call);
  ASSERT_TRUE(call_span.has_value());
  EXPECT_EQ(call_span->name, "llm.call");
  EXPECT_EQ(call_span->parent_span_id, root);
  EXPECT_EQ(call_span->start, t0 + absl::Milliseconds(5));

  const std::optional<SpanData> tool_span = SpanById(*trace, tool);
  ASSERT_TRUE(tool_span.has_value());
  EXPECT_EQ(tool_span->name, "tool current_time");
  EXPECT_EQ(tool_span->parent_span_id, call);
  EXPECT_EQ(tool_span->start, t0 + absl::Milliseconds(10));
}

TEST_F(TracerTest, TwoRunsHaveDistinctTraceIds) {
  auto tracer = Make();
  ASSERT_NE(tracer->StartRun("run-1", "api:docs", "turn"), "");
  ASSERT_NE(tracer->StartRun("run-2", "api:docs", "turn"), "");
  EXPECT_NE(tracer->Find("run-1")->trace_id, tracer->Find("run-2")->trace_id);
}

TEST_F(TracerTest, AnAttributeIsSetAndASecondValueReplacesTheFirst) {
  auto tracer = Make();
  tracer->StartRun("run-1", "api:docs", "turn");
  const std::string call = tracer->StartSpan("run-1", "llm.call");
  tracer->SetAttribute("run-1", call, "gen_ai.request.model", "claude");
  tracer->SetAttribute("run-1", call, "gen_ai.usage.input_tokens", "12");
  tracer->SetAttribute("run-1", call, "gen_ai.request.model", "scripted:test");

  const std::optional<SpanData> span = SpanById(*tracer->Find("run-1"), call);
  ASSERT_TRUE(span.has_value());
  EXPECT_THAT(span->attributes, ElementsAre(Pair("gen_ai.request.model", "scripted:test"),
                                            Pair("gen_ai.usage.input_tokens", "12")));
}

TEST_F(TracerTest, ALongAttributeValueIsCutAtACharacterBoundaryAndMarked) {
  // 8 bytes at most, the mark "…" (3 bytes) included: a cut value keeps 5 bytes of its own.
  auto tracer = Make({.max_attribute_bytes = 8});
  const std::string root = tracer->StartRun("run-1", "api:docs", "turn");
  tracer->SetAttribute("run-1", root, "fits", "abcdefgh");
  tracer->SetAttribute("run-1", root, "ascii", "abcdefghij");
  // "é" is two bytes, the 5th and 6th: a cut at 5 would split it.
  tracer->SetAttribute("run-1", root, "accent", "abcdéfgh");
  // Each of these is three bytes: only the first fits whole.
  tracer->SetAttribute("run-1", root, "cjk", "日本語");

  EXPECT_THAT(tracer->Find("run-1")->root().attributes,
              ElementsAre(Pair("fits", "abcdefgh"), Pair("ascii", "abcde…"),
                          Pair("accent", "abcd…"), Pair("cjk", "日…")));
  for (const auto& [key, value] : tracer->Find("run-1")->root().attributes) {
    EXPECT_LE(value.size(), 8u) << key;
  }
}

TEST_F(TracerTest, EndingASpanRecordsItsEndAndStatus) {
  auto tracer = Make();
  tracer->StartRun("run-1", "api:docs", "turn");
  const std::string ok = tracer->StartSpan("run-1", "llm.call");
  const std::string failed = tracer->StartSpan("run-1", "tool url_fetch");
  Advance(absl::Milliseconds(30));
  const absl::Time t1 = now_;
  tracer->EndSpan("run-1", ok, absl::OkStatus());
  Advance(absl::Milliseconds(20));
  tracer->EndSpan("run-1", failed, absl::UnavailableError("the host did not answer"));
  // A second end changes nothing.
  Advance(absl::Milliseconds(20));
  tracer->EndSpan("run-1", ok, absl::InternalError("late"));

  const TraceData trace = *tracer->Find("run-1");
  EXPECT_FALSE(trace.finished);
  const std::optional<SpanData> ok_span = SpanById(trace, ok);
  ASSERT_TRUE(ok_span.has_value());
  EXPECT_EQ(ok_span->status, SpanStatus::kOk);
  EXPECT_EQ(ok_span->status_message, "");
  EXPECT_EQ(ok_span->end, t1);
  const std::optional<SpanData> failed_span = SpanById(trace, failed);
  ASSERT_TRUE(failed_span.has_value());
  EXPECT_EQ(failed_span->status, SpanStatus::kError);
  EXPECT_EQ(failed_span->status_message, "the host did not answer");
  EXPECT_EQ(failed_span->end, t1 + absl::Milliseconds(20));
}

TEST_F(TracerTest, EndingTheRootFinishesTheTraceAndClosesItsOpenSpansAsCancelled) {
  auto tracer = Make();
  const std::string root = tracer->StartRun("run-1", "api:docs", "turn");
  const std::string done = tracer->StartSpan("run-1", "llm.call");
  const std::string open = tracer->StartSpan("run-1", "approval.wait");
  Advance(absl::Milliseconds(10));
  tracer->EndSpan("run-1", done, absl::OkStatus());
  Advance(absl::Milliseconds(40));
  const absl::Time root_end = now_;
  tracer->EndSpan("run-1", root, absl::OkStatus());

  const std::optional<TraceData> trace = tracer->Find("run-1");
  ASSERT_TRUE(trace.has_value());
  EXPECT_TRUE(trace->finished);
  EXPECT_EQ(trace->root().status, SpanStatus::kOk);
  EXPECT_EQ(trace->root().end, root_end);
  EXPECT_EQ(SpanById(*trace, done)->status, SpanStatus::kOk);
  EXPECT_EQ(SpanById(*trace, done)->end, root_end - absl::Milliseconds(40));
  const std::optional<SpanData> cancelled = SpanById(*trace, open);
  ASSERT_TRUE(cancelled.has_value());
  EXPECT_EQ(cancelled->status, SpanStatus::kError);
  EXPECT_FALSE(cancelled->status_message.empty());
  EXPECT_EQ(cancelled->end, root_end);

  // The run is over: nothing more is added to it.
  EXPECT_EQ(tracer->StartSpan("run-1", "late"), "");
  tracer->SetAttribute("run-1", root, "late", "yes");
  EXPECT_THAT(tracer->Find("run-1")->root().attributes, IsEmpty());
}

TEST_F(TracerTest, TheExporterGetsEachFinishedTraceExactlyOnce) {
  auto tracer = MakeExporting();
  const std::string root1 = tracer->StartRun("run-1", "api:docs", "turn");
  const std::string child1 = tracer->StartSpan("run-1", "llm.call");
  const std::string root2 = tracer->StartRun("run-2", "api:docs", "turn");
  EXPECT_THAT(exported_, IsEmpty()) << "nothing is exported while in progress";

  tracer->EndSpan("run-1", child1, absl::OkStatus());
  EXPECT_THAT(exported_, IsEmpty()) << "a child's end does not finish the trace";
  tracer->EndSpan("run-1", root1, absl::OkStatus());
  ASSERT_EQ(exported_.size(), 1u);
  EXPECT_EQ(exported_[0]->run_id, "run-1");
  EXPECT_TRUE(exported_[0]->finished);
  EXPECT_EQ(exported_[0]->spans.size(), 2u);

  tracer->EndSpan("run-1", root1, absl::OkStatus());  // again: already finished
  tracer->EndSpan("run-2", root2, absl::InternalError("boom"));
  ASSERT_EQ(exported_.size(), 2u);
  EXPECT_EQ(exported_[1]->run_id, "run-2");
  EXPECT_EQ(exported_[1]->root().status, SpanStatus::kError);
}

TEST_F(TracerTest, TheExporterMayReadTheTracer) {
  auto tracer = Make();
  std::vector<bool> found;
  tracer->SetExporter([&found, reader = tracer.get()](std::shared_ptr<const TraceData> trace) {
    found.push_back(reader->Find(trace->run_id).has_value());
  });
  const std::string root = tracer->StartRun("run-1", "api:docs", "turn");
  tracer->EndSpan("run-1", root, absl::OkStatus());
  EXPECT_THAT(found, ElementsAre(true));
}

TEST_F(TracerTest, OnlyTheLastKeepFinishedTracesAreKept) {
  auto tracer = Make({.keep = 2});
  for (int i = 1; i <= 3; ++i) {
    const std::string run = absl::StrCat("run-", i);
    tracer->EndSpan(run, tracer->StartRun(run, "api:docs", "turn"), absl::OkStatus());
  }
  EXPECT_THAT(RunIds(tracer->List("", 10)), ElementsAre("run-3", "run-2"));
  EXPECT_FALSE(tracer->Find("run-1").has_value()) << "the oldest was dropped";
  EXPECT_TRUE(tracer->Find("run-2").has_value());
}

TEST_F(TracerTest, ListPutsRunsInProgressFirstThenFinishedOnesNewestFirst) {
  auto tracer = Make();
  std::vector<std::string> roots;
  for (int i = 1; i <= 4; ++i) {
    roots.push_back(tracer->StartRun(absl::StrCat("run-", i), "api:docs", "turn"));
    Advance(absl::Seconds(1));
  }
  tracer->EndSpan("run-2", roots[1], absl::OkStatus());
  Advance(absl::Seconds(1));
  tracer->EndSpan("run-1", roots[0], absl::OkStatus());

  const std::vector<TraceData> listed = tracer->List("", 10);
  EXPECT_THAT(RunIds(listed), ElementsAre("run-4", "run-3", "run-1", "run-2"));
  ASSERT_EQ(listed.size(), 4u);
  EXPECT_FALSE(listed[0].finished);
  EXPECT_FALSE(listed[1].finished);
  EXPECT_TRUE(listed[2].finished);
  EXPECT_TRUE(listed[3].finished);
}

TEST_F(TracerTest, ListKeepsToAConversationAndALimit) {
  auto tracer = Make();
  tracer->StartRun("run-1", "direct:alice@localhost", "turn");
  tracer->StartRun("run-2", "api:docs", "turn");
  tracer->EndSpan("run-2", tracer->Find("run-2")->root().span_id, absl::OkStatus());
  tracer->StartRun("run-3", "direct:alice@localhost", "turn");
  tracer->StartRun("run-4", "direct:alice@localhost", "turn");

  EXPECT_THAT(RunIds(tracer->List("direct:alice@localhost", 10)),
              ElementsAre("run-4", "run-3", "run-1"));
  EXPECT_THAT(RunIds(tracer->List("api:docs", 10)), ElementsAre("run-2"));
  EXPECT_THAT(RunIds(tracer->List("direct:bob@localhost", 10)), IsEmpty());
  EXPECT_THAT(RunIds(tracer->List("", 2)), ElementsAre("run-4", "run-3"));
  EXPECT_THAT(RunIds(tracer->List("direct:alice@localhost", 2)), ElementsAre("run-4", "run-3"));
  EXPECT_THAT(RunIds(tracer->List("", 0)), IsEmpty());
}

TEST_F(TracerTest, ASummaryHoldsOnlyTheRootButCountsEverySpan) {
  auto tracer = Make({.max_spans = 3});
  const std::string root = tracer->StartRun("run-1", "api:docs", "turn");
  tracer->SetAttribute("run-1", root, "herald.model", "claude");
  tracer->StartSpan("run-1", "llm.call");
  tracer->StartSpan("run-1", "tool current_time");
  tracer->StartSpan("run-1", "one too many");

  const std::vector<TraceData> summaries = tracer->List("", 10);
  ASSERT_EQ(summaries.size(), 1u);
  ASSERT_EQ(summaries[0].spans.size(), 1u);
  EXPECT_EQ(summaries[0].root().span_id, root);
  EXPECT_EQ(summaries[0].root().name, "turn");
  EXPECT_THAT(summaries[0].root().attributes, ElementsAre(Pair("herald.model", "claude")));
  EXPECT_EQ(summaries[0].span_count, 3);
  EXPECT_EQ(summaries[0].dropped_spans, 1);
  EXPECT_EQ(summaries[0].trace_id, tracer->Find("run-1")->trace_id);

  const std::vector<TraceData> full = tracer->List("", 10, /*with_spans=*/true);
  ASSERT_EQ(full.size(), 1u);
  EXPECT_EQ(full[0].spans.size(), 3u);
  EXPECT_EQ(full[0].span_count, 3);

  tracer->EndSpan("run-1", root, absl::OkStatus());
  const std::vector<TraceData> finished = tracer->List("", 10);
  ASSERT_EQ(finished.size(), 1u);
  EXPECT_TRUE(finished[0].finished);
  EXPECT_EQ(finished[0].spans.size(), 1u);
  EXPECT_EQ(finished[0].span_count, 3);
}

TEST_F(TracerTest, FindTakesARunIdOrATraceId) {
  auto tracer = Make();
  const std::string root1 = tracer->StartRun("run-1", "api:docs", "turn");
  tracer->StartRun("run-2", "api:docs", "turn");
  const std::string trace1 = tracer->Find("run-1")->trace_id;
  const std::string trace2 = tracer->Find("run-2")->trace_id;

  // In progress.
  ASSERT_TRUE(tracer->Find(trace2).has_value());
  EXPECT_EQ(tracer->Find(trace2)->run_id, "run-2");
  // Finished.
  tracer->EndSpan("run-1", root1, absl::OkStatus());
  ASSERT_TRUE(tracer->Find("run-1").has_value());
  EXPECT_EQ(tracer->Find("run-1")->trace_id, trace1);
  ASSERT_TRUE(tracer->Find(trace1).has_value());
  EXPECT_EQ(tracer->Find(trace1)->run_id, "run-1");
  EXPECT_TRUE(tracer->Find(trace1)->finished);

  EXPECT_FALSE(tracer->Find("run-3").has_value());
  EXPECT_FALSE(tracer->Find(std::string(32, '0')).has_value());
  EXPECT_FALSE(tracer->Find("").has_value());
}

TEST_F(TracerTest, SpansPastMaxSpansAreCountedAsDropped) {
  auto tracer = MakeExporting({.max_spans = 3});
  const std::string root = tracer->StartRun("run-1", "api:docs", "turn");
  EXPECT_NE(tracer->StartSpan("run-1", "a"), "");
  EXPECT_NE(tracer->StartSpan("run-1", "b"), "");
  EXPECT_EQ(tracer->StartSpan("run-1", "c"), "");
  EXPECT_EQ(tracer->StartSpan("run-1", "d"), "");
  // What is done with a dropped span is nothing.
  tracer->SetAttribute("run-1", "", "key", "value");
  tracer->EndSpan("run-1", "", absl::OkStatus());

  std::optional<TraceData> trace = tracer->Find("run-1");
  EXPECT_EQ(trace->spans.size(), 3u);
  EXPECT_EQ(trace->span_count, 3);
  EXPECT_EQ(trace->dropped_spans, 2);
  EXPECT_FALSE(trace->finished);

  tracer->EndSpan("run-1", root, absl::OkStatus());
  ASSERT_EQ(exported_.size(), 1u);
  EXPECT_EQ(exported_[0]->dropped_spans, 2);
  EXPECT_EQ(exported_[0]->span_count, 3);
}

TEST_F(TracerTest, PastMaxActiveTheOldestRunInProgressIsFinishedAsAbandoned) {
  auto tracer = MakeExporting({.max_active = 2});
  tracer->StartRun("run-1", "api:docs", "turn");
  const std::string child = tracer->StartSpan("run-1", "approval.wait");
  Advance(absl::Seconds(1));
  tracer->StartRun("run-2", "api:docs", "turn");
  Advance(absl::Seconds(1));
  const absl::Time t2 = now_;
  EXPECT_THAT(exported_, IsEmpty());

  EXPECT_NE(tracer->StartRun("run-3", "api:docs", "turn"), "");

  ASSERT_EQ(exported_.size(), 1u);
  const TraceData& abandoned = *exported_[0];
  EXPECT_EQ(abandoned.run_id, "run-1");
  EXPECT_TRUE(abandoned.finished);
  EXPECT_EQ(abandoned.root().status, SpanStatus::kError);
  EXPECT_FALSE(abandoned.root().status_message.empty());
  EXPECT_EQ(abandoned.root().end, t2);
  EXPECT_EQ(SpanById(abandoned, child)->status, SpanStatus::kError);
  EXPECT_EQ(SpanById(abandoned, child)->end, t2);

  const std::vector<TraceData> listed = tracer->List("", 10);
  EXPECT_THAT(RunIds(listed), ElementsAre("run-3", "run-2", "run-1"));
  EXPECT_TRUE(listed[2].finished);
  EXPECT_EQ(tracer->StartSpan("run-1", "late"), "") << "an abandoned run takes no more spans";
  EXPECT_NE(tracer->StartSpan("run-2", "llm.call"), "");
}

TEST_F(TracerTest, KeepZeroTurnsTracingOff) {
  auto tracer = MakeExporting({.keep = 0});
  EXPECT_FALSE(tracer->enabled());
  EXPECT_EQ(tracer->StartRun("run-1", "api:docs", "turn"), "");
  EXPECT_EQ(tracer->StartSpan("run-1", "llm.call"), "");
  {
    Span root = Span::Root(tracer.get(), "run-2", "api:docs", "turn");
    Span child(tracer.get(), "run-2", "llm.call", root.id());
    EXPECT_EQ(root.id(), "");
    EXPECT_EQ(child.id(), "");
    child.Set("key", "value");
    root.End(absl::OkStatus());
  }
  EXPECT_THAT(tracer->List("", 10, true), IsEmpty());
  EXPECT_FALSE(tracer->Find("run-1").has_value());
  EXPECT_THAT(exported_, IsEmpty());
}

TEST_F(TracerTest, ASecondStartOfTheSameRunIsRefused) {
  auto tracer = Make();
  const std::string root = tracer->StartRun("run-1", "api:docs", "turn");
  ASSERT_NE(root, "");
  EXPECT_EQ(tracer->StartRun("run-1", "direct:alice@localhost", "again"), "");
  const std::optional<TraceData> trace = tracer->Find("run-1");
  EXPECT_EQ(trace->root().span_id, root);
  EXPECT_EQ(trace->conversation, "api:docs");
  EXPECT_EQ(trace->span_count, 1);
  EXPECT_EQ(tracer->List("", 10).size(), 1u);
  EXPECT_EQ(tracer->StartRun("", "api:docs", "turn"), "") << "a run needs an id";
}

TEST_F(TracerTest, ASpanEndsAsCancelledWhenDroppedOpen) {
  auto tracer = MakeExporting();
  std::string child_id;
  {
    Span root = Span::Root(tracer.get(), "run-1", "api:docs", "turn");
    ASSERT_NE(root.id(), "");
    {
      Span child(tracer.get(), "run-1", "llm.call", root.id());
      child_id = child.id();
      ASSERT_NE(child_id, "");
      child.Set("gen_ai.request.model", "claude");
      Advance(absl::Milliseconds(10));
    }
    const std::optional<TraceData> trace = tracer->Find("run-1");
    EXPECT_FALSE(trace->finished);
    const std::optional<SpanData> child = SpanById(*trace, child_id);
    ASSERT_TRUE(child.has_value());
    EXPECT_EQ(child->parent_span_id, root.id());
    EXPECT_EQ(child->status, SpanStatus::kError);
    EXPECT_FALSE(child->status_message.empty());
    EXPECT_EQ(child->end, now_);
    EXPECT_THAT(child->attributes, ElementsAre(Pair("gen_ai.request.model", "claude")));
    Advance(absl::Milliseconds(10));
  }
  // The root, dropped open, finished the trace.
  ASSERT_EQ(exported_.size(), 1u);
  EXPECT_TRUE(exported_[0]->finished);
  EXPECT_EQ(exported_[0]->root().status, SpanStatus::kError);
  EXPECT_EQ(exported_[0]->root().end, now_);
}

TEST_F(TracerTest, ASpanEndedExplicitlyIsNotEndedAgain) {
  auto tracer = Make();
  Span root = Span::Root(tracer.get(), "run-1", "api:docs", "turn");
  std::string child_id;
  {
    Span child(tracer.get(), "run-1", "llm.call");
    child_id = child.id();
    child.End(absl::OkStatus());
    EXPECT_EQ(child.id(), "");
    child.Set("late", "yes");  // does nothing
  }
  const std::optional<SpanData> child = SpanById(*tracer->Find("run-1"), child_id);
  ASSERT_TRUE(child.has_value());
  EXPECT_EQ(child->status, SpanStatus::kOk);
  EXPECT_THAT(child->attributes, IsEmpty());
}

TEST_F(TracerTest, AMovedSpanIsEndedOnceByItsNewHolder) {
  auto tracer = Make();
  Span root = Span::Root(tracer.get(), "run-1", "api:docs", "turn");
  Span first(tracer.get(), "run-1", "first");
  const std::string first_id = first.id();

  Span moved(std::move(first));
  EXPECT_EQ(moved.id(), first_id);
  EXPECT_EQ(first.id(), "");  // NOLINT(bugprone-use-after-move): moved-from is empty
  first.Set("from", "moved-from");
  first.End(absl::InternalError("moved-from"));
  EXPECT_EQ(SpanById(*tracer->Find("run-1"), first_id)->end, absl::InfiniteFuture())
      << "the moved-from span does nothing";

  // Move assignment ends what the target held.
  Span second(tracer.get(), "run-1", "second");
  const std::string second_id = second.id();
  Advance(absl::Milliseconds(5));
  second = std::move(moved);
  EXPECT_EQ(second.id(), first_id);
  EXPECT_EQ(moved.id(), "");  // NOLINT(bugprone-use-after-move)
  const std::optional<SpanData> replaced = SpanById(*tracer->Find("run-1"), second_id);
  ASSERT_TRUE(replaced.has_value());
  EXPECT_EQ(replaced->status, SpanStatus::kError) << "replaced open: cancelled";
  EXPECT_EQ(replaced->end, now_);

  second.Set("holder", "second");
  second.End(absl::OkStatus());
  const std::optional<SpanData> ended = SpanById(*tracer->Find("run-1"), first_id);
  ASSERT_TRUE(ended.has_value());
  EXPECT_EQ(ended->status, SpanStatus::kOk);
  EXPECT_THAT(ended->attributes, ElementsAre(Pair("holder", "second")));

  // The root moves too.
  Span root_holder = std::move(root);
  root_holder.End(absl::OkStatus());
  EXPECT_TRUE(tracer->Find("run-1")->finished);
  EXPECT_EQ(tracer->Find("run-1")->root().status, SpanStatus::kOk);
}

TEST_F(TracerTest, ASpanWithoutATracerDoesNothing) {
  Span root = Span::Root(nullptr, "run-1", "api:docs", "turn");
  Span child(nullptr, "run-1", "llm.call");
  Span empty;
  EXPECT_EQ(root.id(), "");
  EXPECT_EQ(child.id(), "");
  EXPECT_EQ(empty.id(), "");
  child.Set("key", "value");
  child.End(absl::OkStatus());
  empty.End(absl::OkStatus());
  root.End(absl::OkStatus());
}

TEST_F(TracerTest, ASpanDoesNothingWithATracerNotOwnedByASharedPtr) {
  Tracer tracer(TracerOptions{.clock = [this] { return now_; }});
  {
    Span root = Span::Root(&tracer, "run-1", "api:docs", "turn");
    Span child(&tracer, "run-1", "llm.call");
    EXPECT_EQ(root.id(), "");
    EXPECT_EQ(child.id(), "");
    child.Set("key", "value");
  }
  EXPECT_THAT(tracer.List("", 10), IsEmpty());
  // The Tracer itself still works.
  EXPECT_NE(tracer.StartRun("run-2", "api:docs", "turn"), "");
}

TEST_F(TracerTest, ASpanDoesNothingOnceItsTracerIsGone) {
  auto tracer = Make();
  Span root = Span::Root(tracer.get(), "run-1", "api:docs", "turn");
  Span child(tracer.get(), "run-1", "llm.call", root.id());
  ASSERT_NE(child.id(), "");
  tracer.reset();  // the last owner: the Tracer is destroyed while the spans live
  child.Set("key", "value");
  child.End(absl::OkStatus());
  EXPECT_EQ(child.id(), "");
  Span moved = std::move(root);
  // `moved` and the others are destroyed here, after the Tracer: nothing is touched.
}

TEST(TracerConcurrencyTest, SpansOnManyRunsWhileOthersRead) {
  constexpr int kWriters = 4;
  constexpr int kRunsPerWriter = 40;
  constexpr int kChildren = 4;
  auto tracer = std::make_shared<Tracer>(TracerOptions{.keep = kWriters * kRunsPerWriter});
  std::atomic<int> exported{0};
  tracer->SetExporter([&](std::shared_ptr<const TraceData> trace) {
    if (trace->finished && trace->span_count == 1 + kChildren) ++exported;
  });

  std::atomic<bool> writing{true};
  std::atomic<int> reads{0};
  std::thread reader([&] {
    do {
      for (const TraceData& trace : tracer->List("", 50, /*with_spans=*/true)) {
        EXPECT_EQ(static_cast<int>(trace.spans.size()), trace.span_count);
        if (const std::optional<TraceData> found = tracer->Find(trace.trace_id)) {
          EXPECT_EQ(found->run_id, trace.run_id);
        }
      }
      tracer->List("writer-1", 10);
      tracer->Find("writer-0-run-3");
      ++reads;
    } while (writing.load());
  });

  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; ++w) {
    writers.emplace_back([&, w] {
      while (reads.load() == 0) std::this_thread::yield();  // the reader is reading
      const std::string conversation = absl::StrCat("writer-", w);
      for (int r = 0; r < kRunsPerWriter; ++r) {
        const std::string run = absl::StrCat(conversation, "-run-", r);
        Span root = Span::Root(tracer.get(), run, conversation, "turn");
        for (int c = 0; c < kChildren; ++c) {
          Span child(tracer.get(), run, absl::StrCat("child ", c), root.id());
          child.Set("index", absl::StrCat(c));
          if (c % 2 == 0) child.End(absl::OkStatus());  // the others end when dropped
        }
        root.End(absl::OkStatus());
      }
    });
  }
  for (std::thread& writer : writers) writer.join();
  writing = false;
  reader.join();

  EXPECT_GT(reads.load(), 0);
  EXPECT_EQ(exported.load(), kWriters * kRunsPerWriter);
  const std::vector<TraceData> all = tracer->List("", 1000, /*with_spans=*/true);
  ASSERT_EQ(all.size(), static_cast<size_t>(kWriters * kRunsPerWriter));
  for (const TraceData& trace : all) {
    EXPECT_TRUE(trace.finished);
    EXPECT_EQ(trace.span_count, 1 + kChildren);
    EXPECT_EQ(trace.spans.size(), static_cast<size_t>(1 + kChildren));
    EXPECT_EQ(trace.root().status, SpanStatus::kOk);
  }
  EXPECT_EQ(tracer->List("writer-2", 1000).size(), static_cast<size_t>(kRunsPerWriter));
}

}  // namespace
}  // namespace herald::trace
