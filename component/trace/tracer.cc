// component/trace/tracer.cc
#include "component/trace/tracer.h"

#include <algorithm>

#include "component/base/absl_string_view.h"
#include "component/base/hex.h"
#include "component/base/utf8.h"

namespace herald::trace {
namespace {

SpanData* FindSpan(TraceData& trace, const absl::flat_hash_map<std::string, size_t>& index,
                   std::string_view span_id) {
  const auto it = index.find(AbslView(span_id));
  return it == index.end() ? nullptr : &trace.spans[it->second];
}

void Close(SpanData& span, absl::Time at, const absl::Status& status) {
  if (span.end != absl::InfiniteFuture()) return;
  span.end = std::max(at, span.start);
  if (status.ok()) {
    span.status = SpanStatus::kOk;
  } else {
    span.status = SpanStatus::kError;
    span.status_message = std::string(status.message());
  }
}

}  // namespace

Tracer::Tracer(TracerOptions options)
    : options_(std::move(options)), random_(std::random_device{}()) {}

void Tracer::SetExporter(Exporter exporter) { exporter_ = std::move(exporter); }

std::string Tracer::RandomHex(size_t bytes) {
  std::string raw(bytes, '\0');
  for (size_t i = 0; i < bytes; i += 8) {
    const uint64_t word = random_();
    for (size_t j = 0; j < 8 && i + j < bytes; ++j) raw[i + j] = static_cast<char>(word >> (8 * j));
  }
  return base::HexEncode(raw);
}

std::string Tracer::Cut(std::string value) const {
  static constexpr std::string_view kMark = "…";
  if (value.size() <= options_.max_attribute_bytes) return value;
  base::TruncateUtf8(value, options_.max_attribute_bytes > kMark.size()
                                ? options_.max_attribute_bytes - kMark.size()
                                : 0);
  value += kMark;
  return value;
}

std::string Tracer::StartRun(std::string_view run_id, std::string_view conversation,
                             std::string name) {
  if (!enabled() || run_id.empty()) return "";
  const absl::Time now = options_.clock();
  std::vector<std::shared_ptr<const TraceData>> finished;
  std::string root_id;
  {
    base::MutexLock lock(&mu_);
    if (active_.contains(AbslView(run_id))) return "";
    // Past the bound, the oldest run in progress is finished as abandoned.
    while (active_.size() >= options_.max_active && !active_order_.empty()) {
      const auto oldest = active_.find(active_order_.front());
      active_order_.pop_front();
      if (oldest != active_.end()) {
        Finish(oldest->second, now, finished);
        active_.erase(oldest);
      }
    }
    Active active;
    active.trace.trace_id = RandomHex(16);
    active.trace.run_id = std::string(run_id);
    active.trace.conversation = std::string(conversation);
    root_id = RandomHex(8);
    active.trace.spans.push_back(
        SpanData{.span_id = root_id, .name = std::move(name), .start = now});
    active.trace.span_count = 1;
    active.index.emplace(root_id, 0);
    active_.emplace(std::string(run_id), std::move(active));
    active_order_.emplace_back(run_id);
  }
  if (exporter_) {
    for (auto& trace : finished) exporter_(std::move(trace));
  }
  return root_id;
}

std::string Tracer::StartSpan(std::string_view run_id, std::string name, std::string_view parent) {
  if (!enabled() || run_id.empty()) return "";
  const absl::Time now = options_.clock();
  base::MutexLock lock(&mu_);
  const auto it = active_.find(AbslView(run_id));
  if (it == active_.end()) return "";
  TraceData& trace = it->second.trace;
  if (trace.spans.size() >= options_.max_spans) {
    ++trace.dropped_spans;
    return "";
  }
  const std::string parent_id = parent.empty() || !it->second.index.contains(AbslView(parent))
                                    ? trace.root().span_id
                                    : std::string(parent);
  std::string span_id = RandomHex(8);
  it->second.index.emplace(span_id, trace.spans.size());
  trace.spans.push_back(SpanData{
      .span_id = span_id, .parent_span_id = parent_id, .name = std::move(name), .start = now});
  trace.span_count = static_cast<int>(trace.spans.size());
  return span_id;
}

void Tracer::SetAttribute(std::string_view run_id, std::string_view span_id, std::string key,
                          std::string value) {
  if (span_id.empty()) return;
  value = Cut(std::move(value));
  base::MutexLock lock(&mu_);
  const auto it = active_.find(AbslView(run_id));
  if (it == active_.end()) return;
  if (SpanData* span = FindSpan(it->second.trace, it->second.index, span_id)) {
    for (auto& [existing, old] : span->attributes) {
      if (existing == key) {
        old = std::move(value);
        return;
      }
    }
    span->attributes.emplace_back(std::move(key), std::move(value));
  }
}

void Tracer::EndSpan(std::string_view run_id, std::string_view span_id,
                     const absl::Status& status) {
  if (span_id.empty()) return;
  const absl::Time now = options_.clock();
  std::vector<std::shared_ptr<const TraceData>> finished;
  {
    base::MutexLock lock(&mu_);
    const auto it = active_.find(AbslView(run_id));
    if (it == active_.end()) return;
    SpanData* span = FindSpan(it->second.trace, it->second.index, span_id);
    if (span == nullptr) return;
    Close(*span, now, status);
    if (span->parent_span_id.empty()) {
      Finish(it->second, now, finished);
      active_.erase(it);
      const auto order = std::find(active_order_.begin(), active_order_.end(), run_id);
      if (order != active_order_.end()) active_order_.erase(order);
    }
  }
  if (exporter_) {
    for (auto& trace : finished) exporter_(std::move(trace));
  }
}

void Tracer::Finish(Active& active, absl::Time at,
                    std::vector<std::shared_ptr<const TraceData>>& out) {
  for (SpanData& span : active.trace.spans) {
    Close(span, at, absl::CancelledError("the run ended first"));
  }
  active.trace.finished = true;
  auto done = std::make_shared<const TraceData>(std::move(active.trace));
  finished_.push_back(done);
  while (finished_.size() > options_.keep) finished_.pop_front();
  out.push_back(std::move(done));
}

std::vector<TraceData> Tracer::List(std::string_view conversation, size_t limit,
                                    bool with_spans) const {
  std::vector<TraceData> out;
  auto add = [&](const TraceData& trace) {
    if (out.size() >= limit) return;
    if (!conversation.empty() && trace.conversation != conversation) return;
    if (with_spans) {
      out.push_back(trace);
      return;
    }
    TraceData summary{.trace_id = trace.trace_id,
                      .run_id = trace.run_id,
                      .conversation = trace.conversation,
                      .spans = {trace.root()},
                      .span_count = trace.span_count,
                      .dropped_spans = trace.dropped_spans,
                      .finished = trace.finished};
    out.push_back(std::move(summary));
  };
  base::MutexLock lock(&mu_);
  for (auto run = active_order_.rbegin(); run != active_order_.rend(); ++run) {
    if (const auto it = active_.find(*run); it != active_.end()) add(it->second.trace);
  }
  for (auto it = finished_.rbegin(); it != finished_.rend(); ++it) add(**it);
  return out;
}

std::optional<TraceData> Tracer::Find(std::string_view id) const {
  base::MutexLock lock(&mu_);
  if (const auto it = active_.find(AbslView(id)); it != active_.end()) return it->second.trace;
  for (const auto& [run_id, active] : active_) {
    if (active.trace.trace_id == id) return active.trace;
  }
  for (auto it = finished_.rbegin(); it != finished_.rend(); ++it) {
    if ((*it)->trace_id == id || (*it)->run_id == id) return **it;
  }
  return std::nullopt;
}

Span::Span(Tracer* tracer, std::string run_id, std::string name, std::string_view parent)
    : run_id_(std::move(run_id)) {
  if (tracer == nullptr || !tracer->enabled()) return;
  tracer_ = tracer->weak_from_this();
  if (!tracer_.expired()) span_id_ = tracer->StartSpan(run_id_, std::move(name), parent);
}

Span Span::Root(Tracer* tracer, std::string run_id, std::string_view conversation,
                std::string name) {
  Span span;
  span.run_id_ = std::move(run_id);
  if (tracer == nullptr || !tracer->enabled()) return span;
  span.tracer_ = tracer->weak_from_this();
  if (!span.tracer_.expired()) {
    span.span_id_ = tracer->StartRun(span.run_id_, conversation, std::move(name));
  }
  return span;
}

Span::~Span() {
  if (!span_id_.empty()) End(absl::CancelledError("cancelled"));
}

Span::Span(Span&& other) noexcept
    : tracer_(other.tracer_),
      run_id_(std::move(other.run_id_)),
      span_id_(std::exchange(other.span_id_, "")) {}

Span& Span::operator=(Span&& other) noexcept {
  if (this != &other) {
    if (!span_id_.empty()) End(absl::CancelledError("cancelled"));
    tracer_ = other.tracer_;
    run_id_ = std::move(other.run_id_);
    span_id_ = std::exchange(other.span_id_, "");
  }
  return *this;
}

void Span::Set(std::string key, std::string value) {
  if (span_id_.empty()) return;
  if (auto tracer = tracer_.lock()) {
    tracer->SetAttribute(run_id_, span_id_, std::move(key), std::move(value));
  }
}

void Span::End(const absl::Status& status) {
  if (span_id_.empty()) return;
  if (auto tracer = tracer_.lock()) tracer->EndSpan(run_id_, span_id_, status);
  span_id_.clear();
}

}  // namespace herald::trace
