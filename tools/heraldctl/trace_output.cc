// tools/heraldctl/trace_output.cc
//
// output.h's run traces: the `traces` table and the `trace ID` timeline.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "tools/heraldctl/output.h"
#include "tools/heraldctl/table.h"

namespace herald::heraldctl {
namespace {

// An attribute value or an error message is shown on one line of at most this many characters.
constexpr size_t kMaxValueCharacters = 120;

bool IsSet(const google::protobuf::Timestamp& time) {
  return time.seconds() != 0 || time.nanos() != 0;
}

absl::Time ToTime(const google::protobuf::Timestamp& time) {
  return absl::FromUnixSeconds(time.seconds()) + absl::Nanoseconds(time.nanos());
}

// One line for the terminal: control characters gone, line breaks as spaces, cut.
std::string OneLine(const std::string& text) {
  return CutTo(CleanForTerminal(text, /*keep_line_breaks=*/false), kMaxValueCharacters);
}

bool IsOpen(const v1::Span& span) { return !IsSet(span.end_time()); }

// "1,234 ms", or "running" while the span is open.
std::string SpanDuration(const v1::Span& span) {
  if (IsOpen(span)) return "running";
  return FormatMilliseconds(ToTime(span.end_time()) - ToTime(span.start_time()));
}

// "ok", "error: MESSAGE"; "" without a status (an open span: its duration says "running").
std::string SpanStatusText(const v1::Span& span) {
  switch (span.status()) {
    case v1::SPAN_STATUS_OK:
      return "ok";
    case v1::SPAN_STATUS_ERROR:
      return span.status_message().empty()
                 ? "error"
                 : absl::StrCat("error: ", OneLine(span.status_message()));
    default:
      return "";
  }
}

std::string TraceDuration(const v1::Trace& trace) {
  if (!trace.finished() || !trace.has_root()) return "running";
  return SpanDuration(trace.root());
}

std::string TraceStatus(const v1::Trace& trace) {
  if (!trace.finished()) return "running";
  std::string status = SpanStatusText(trace.root());
  return status.empty() ? "-" : status;
}

// "5", "512 (+3 dropped)".
std::string SpanCount(const v1::Trace& trace) {
  std::string count = FormatCount(trace.span_count());
  if (trace.dropped_spans() > 0) {
    absl::StrAppend(&count, " (+", FormatCount(trace.dropped_spans()), " dropped)");
  }
  return count;
}

// The spans in timeline order, each with its depth: every span right after its parent,
// siblings by start time. A span whose parent is not in the trace (or that is its own
// ancestor) stands at the top level.
std::vector<std::pair<const v1::Span*, int>> Timeline(const std::vector<const v1::Span*>& spans) {
  absl::flat_hash_map<std::string, size_t> by_id;
  for (size_t i = 0; i < spans.size(); ++i) by_id.emplace(spans[i]->span_id(), i);
  std::vector<std::vector<size_t>> children(spans.size());
  std::vector<size_t> top;
  for (size_t i = 0; i < spans.size(); ++i) {
    auto parent = by_id.find(spans[i]->parent_span_id());
    if (spans[i]->parent_span_id().empty() || parent == by_id.end() || parent->second == i) {
      top.push_back(i);
    } else {
      children[parent->second].push_back(i);
    }
  }
  auto by_start = [&](size_t a, size_t b) {
    return ToTime(spans[a]->start_time()) < ToTime(spans[b]->start_time());
  };
  std::stable_sort(top.begin(), top.end(), by_start);
  for (std::vector<size_t>& list : children) std::stable_sort(list.begin(), list.end(), by_start);

  std::vector<std::pair<const v1::Span*, int>> ordered;
  std::vector<bool> visited(spans.size(), false);
  auto visit_from = [&](size_t first) {
    std::vector<std::pair<size_t, int>> stack = {{first, 0}};
    while (!stack.empty()) {
      auto [index, depth] = stack.back();
      stack.pop_back();
      if (visited[index]) continue;
      visited[index] = true;
      ordered.emplace_back(spans[index], depth);
      for (auto child = children[index].rbegin(); child != children[index].rend(); ++child) {
        stack.emplace_back(*child, depth + 1);
      }
    }
  };
  for (size_t index : top) visit_from(index);
  // Spans in a cycle of parents reach no top-level span.
  for (size_t i = 0; i < spans.size(); ++i) visit_from(i);
  return ordered;
}

}  // namespace

std::string RenderTraces(const v1::ListTracesResponse& traces) {
  if (traces.traces().empty()) return "no traces\n";
  Table table(
      {{"STARTED"}, {"CONVERSATION"}, {"RUN"}, {"DURATION", Align::kRight}, {"SPANS"}, {"STATUS"}});
  for (const v1::Trace& trace : traces.traces()) {
    table.AddRow({FormatTime(trace.root().start_time()),
                  trace.conversation().empty() ? "-" : trace.conversation(), trace.run_id(),
                  TraceDuration(trace), SpanCount(trace), TraceStatus(trace)});
  }
  return table.Render();
}

std::string RenderTrace(const v1::Trace& trace) {
  std::vector<const v1::Span*> spans;
  for (const v1::Span& span : trace.spans()) spans.push_back(&span);
  if (spans.empty() && trace.has_root()) spans.push_back(&trace.root());
  const v1::Span& root = trace.has_root() ? trace.root() : v1::Span::default_instance();

  Table summary({{"name"}, {"value"}});
  summary.AddRow({"trace", trace.trace_id()});
  summary.AddRow({"run", trace.run_id()});
  summary.AddRow({"conversation", trace.conversation().empty() ? "-" : trace.conversation()});
  summary.AddRow({"started", FormatTime(root.start_time())});
  summary.AddRow({"duration", TraceDuration(trace)});
  summary.AddRow({"status", TraceStatus(trace)});
  summary.AddRow({"spans", SpanCount(trace)});
  std::string text = summary.RenderRows();
  if (spans.empty()) return text + "\nno spans\n";

  // Offsets count from the root's start (the first top-level span's when there is no root).
  std::vector<std::pair<const v1::Span*, int>> timeline = Timeline(spans);
  const absl::Time origin =
      ToTime(trace.has_root() ? root.start_time() : timeline.front().first->start_time());
  struct Line {
    std::string start;
    std::string duration;
    const v1::Span* span;
    int depth;
  };
  std::vector<Line> lines;
  size_t start_width = DisplayWidth("START");
  size_t duration_width = DisplayWidth("DURATION");
  for (const auto& [span, depth] : timeline) {
    Line line{FormatMilliseconds(ToTime(span->start_time()) - origin), SpanDuration(*span), span,
              depth};
    start_width = std::max(start_width, DisplayWidth(line.start));
    duration_width = std::max(duration_width, DisplayWidth(line.duration));
    lines.push_back(std::move(line));
  }
  auto right = [](const std::string& cell, size_t width) {
    return std::string(width - DisplayWidth(cell), ' ') + cell;
  };
  absl::StrAppend(&text, "\n", right("START", start_width), "  ", right("DURATION", duration_width),
                  "  SPAN\n");
  const std::string columns(start_width + 2 + duration_width + 2, ' ');
  for (const Line& line : lines) {
    const std::string indent(2 * static_cast<size_t>(line.depth), ' ');
    std::string heading =
        absl::StrCat(right(line.start, start_width), "  ", right(line.duration, duration_width),
                     "  ", indent, OneLine(line.span->name()));
    if (std::string status = SpanStatusText(*line.span); !status.empty()) {
      absl::StrAppend(&heading, "  ", status);
    }
    absl::StrAppend(&text, heading, "\n");
    for (const v1::SpanAttribute& attribute : line.span->attributes()) {
      std::string value = OneLine(attribute.value());
      std::string entry = absl::StrCat(columns, indent, "  ", OneLine(attribute.key()), ":");
      if (!value.empty()) absl::StrAppend(&entry, " ", value);
      absl::StrAppend(&text, entry, "\n");
    }
  }
  return text;
}

}  // namespace herald::heraldctl
