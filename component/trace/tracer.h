// component/trace/tracer.h
//
// Run traces (Q4): every run of the agent is a trace, its parts spans, in the OpenTelemetry
// data model — a 16-byte trace id, 8-byte span ids, a parent, a name, start and end times,
// string attributes and a status. The turn is the root span; its model calls, tool calls,
// approval waits and memory reads and writes are its children. The Tracer keeps the runs in
// progress and the last `keep` finished ones in memory (AdminService.ListTraces/GetTrace,
// the console), and hands each finished trace to an exporter (control/otlp_exporter.h) when
// one is set.
//
// Everything is bounded: at most `max_spans` spans per trace (more are counted as dropped),
// attribute values cut at a character boundary and marked "…" within `max_attribute_bytes`
// (at least 4), at most
// `max_active` runs in progress (older ones are finished as abandoned). What goes into an
// attribute is what the model saw or wrote (tool arguments and results, already without the
// run's secrets: skills/credentials/secret_redactor.h) and names — never a credential.
//
// Thread-safe. Spans are usually opened and closed on the I/O loop; readers come from the
// control plane's threads. A Tracer is owned by a shared_ptr: a Span (which may sit in a
// coroutine frame destroyed after everything else, component/base/event_loop.h) holds it
// weakly and does nothing once it is gone.
//
//   auto tracer = std::make_shared<trace::Tracer>(trace::TracerOptions{.keep = 100});
//   trace::Span turn = trace::Span::Root(tracer.get(), "run-1", "api:docs", "turn");
//   {
//     trace::Span call(tracer.get(), "run-1", "llm.call");
//     call.Set("gen_ai.request.model", "claude");
//     call.End(absl::OkStatus());
//   }
//   turn.End(absl::OkStatus());   // the trace is finished: kept and exported
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/time/time.h"
#include "component/base/mutex.h"

namespace herald::trace {

enum class SpanStatus { kUnset, kOk, kError };

struct SpanData {
  std::string span_id;         // 16 lower-case hex digits
  std::string parent_span_id;  // "" for the root
  std::string name;            // "turn", "llm.call", "tool current_time", ...
  absl::Time start;
  absl::Time end = absl::InfiniteFuture();  // InfiniteFuture while open
  std::vector<std::pair<std::string, std::string>> attributes;
  SpanStatus status = SpanStatus::kUnset;
  std::string status_message;
};

struct TraceData {
  std::string trace_id;  // 32 lower-case hex digits
  std::string run_id;
  std::string conversation;     // "direct:alice@localhost", "api:docs", ...
  std::vector<SpanData> spans;  // spans[0] is the root; List's summaries hold only it
  int span_count = 0;           // the spans the trace has
  int dropped_spans = 0;
  bool finished = false;

  const SpanData& root() const { return spans.front(); }
};

struct TracerOptions {
  size_t keep = 100;  // finished traces kept; 0 = tracing off
  size_t max_spans = 512;
  size_t max_attribute_bytes = 2048;
  size_t max_active = 4096;
  std::function<absl::Time()> clock = absl::Now;
};

class Tracer : public std::enable_shared_from_this<Tracer> {
 public:
  using Exporter = std::function<void(std::shared_ptr<const TraceData>)>;

  explicit Tracer(TracerOptions options);

  bool enabled() const { return options_.keep > 0; }

  // Called with each finished trace, on the thread that finished it; set before use.
  void SetExporter(Exporter exporter);

  // Starts the trace of `run_id` with its root span; "" when tracing is off or the run is
  // already traced. Returns the root's span id.
  std::string StartRun(std::string_view run_id, std::string_view conversation, std::string name);
  // A span of the run under `parent` ("" = the root); "" when the run is not traced or has
  // no room for another span.
  std::string StartSpan(std::string_view run_id, std::string name, std::string_view parent = "");
  void SetAttribute(std::string_view run_id, std::string_view span_id, std::string key,
                    std::string value);
  // Ends a span. Ending the root finishes the trace: its open spans end with it, and it is
  // kept and exported.
  void EndSpan(std::string_view run_id, std::string_view span_id, const absl::Status& status);

  // The traces, newest first: runs in progress and finished ones, only those of
  // `conversation` when it is not empty; at most `limit`. With `with_spans` false only each
  // root is copied.
  std::vector<TraceData> List(std::string_view conversation, size_t limit,
                              bool with_spans = false) const;
  // One trace by its trace id or its run id.
  std::optional<TraceData> Find(std::string_view id) const;

 private:
  struct Active {
    TraceData trace;
    absl::flat_hash_map<std::string, size_t> index;  // span id -> position in trace.spans
  };

  std::string RandomHex(size_t bytes) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Finish(Active& active, absl::Time at, std::vector<std::shared_ptr<const TraceData>>& out)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::string Cut(std::string value) const;

  const TracerOptions options_;
  Exporter exporter_;
  mutable base::Mutex mu_;
  std::mt19937_64 random_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, Active> active_ ABSL_GUARDED_BY(mu_);  // by run id
  std::deque<std::string> active_order_ ABSL_GUARDED_BY(mu_);             // run ids, oldest first
  std::deque<std::shared_ptr<const TraceData>> finished_ ABSL_GUARDED_BY(mu_);  // newest last
};

// A span held for the length of a piece of work; ends as cancelled when dropped open.
// Does nothing when `tracer` is null, off, not owned by a shared_ptr, or gone. Not copyable;
// movable.
class Span {
 public:
  Span() = default;
  Span(Tracer* tracer, std::string run_id, std::string name, std::string_view parent = "");
  // The root span of a run: starts its trace.
  static Span Root(Tracer* tracer, std::string run_id, std::string_view conversation,
                   std::string name);
  ~Span();
  Span(Span&& other) noexcept;
  Span& operator=(Span&& other) noexcept;
  Span(const Span&) = delete;
  Span& operator=(const Span&) = delete;

  void Set(std::string key, std::string value);
  void End(const absl::Status& status);
  const std::string& id() const { return span_id_; }

 private:
  std::weak_ptr<Tracer> tracer_;
  std::string run_id_;
  std::string span_id_;  // "" when not traced or ended
};

}  // namespace herald::trace
