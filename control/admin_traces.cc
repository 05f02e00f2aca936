// control/admin_traces.cc
//
// AdminService.ListTraces and GetTrace: the Tracer's runs in progress and last finished
// traces (component/trace/tracer.h). The Tracer is thread-safe, so these answer on gRPC's
// thread without a hop.
#include <algorithm>
#include <string>

#include "component/trace/tracer.h"
#include "control/admin_service.h"
#include "control/auth.h"
#include "control/event_messages.h"

namespace herald::control {
namespace {

constexpr int kDefaultTraces = 50;
constexpr int kMaxTraces = 1000;

v1::SpanStatus StatusOf(trace::SpanStatus status) {
  switch (status) {
    case trace::SpanStatus::kOk:
      return v1::SPAN_STATUS_OK;
    case trace::SpanStatus::kError:
      return v1::SPAN_STATUS_ERROR;
    case trace::SpanStatus::kUnset:
      break;
  }
  return v1::SPAN_STATUS_UNSET;
}

void ToProto(const trace::SpanData& span, v1::Span* out) {
  out->set_span_id(span.span_id);
  out->set_parent_span_id(span.parent_span_id);
  out->set_name(span.name);
  SetTimestamp(span.start, out->mutable_start_time());
  if (span.end != absl::InfiniteFuture()) SetTimestamp(span.end, out->mutable_end_time());
  for (const auto& [key, value] : span.attributes) {
    v1::SpanAttribute* attribute = out->add_attributes();
    attribute->set_key(key);
    attribute->set_value(value);
  }
  out->set_status(StatusOf(span.status));
  out->set_status_message(span.status_message);
}

// `trace` as the API shows it; its spans only when `with_spans`.
void ToProto(const trace::TraceData& trace, bool with_spans, v1::Trace* out) {
  out->set_trace_id(trace.trace_id);
  out->set_run_id(trace.run_id);
  out->set_conversation(trace.conversation);
  out->set_finished(trace.finished);
  out->set_dropped_spans(trace.dropped_spans);
  if (trace.spans.empty()) return;
  ToProto(trace.root(), out->mutable_root());
  out->set_span_count(trace.span_count);
  if (!with_spans) return;
  for (const trace::SpanData& span : trace.spans) ToProto(span, out->add_spans());
}

}  // namespace

grpc::ServerUnaryReactor* AdminService::ListTraces(grpc::CallbackServerContext* context,
                                                   const v1::ListTracesRequest* request,
                                                   v1::ListTracesResponse* response) {
  auto call = control_.BeginUnary(context, methods::kListTraces);
  if (!call->authorized()) return call->reactor();
  if (request->limit() < 0 || request->limit() > kMaxTraces) {
    call->Finish(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                              "limit must be between 1 and 1000 (0 means 50)"));
    return call->reactor();
  }
  const trace::Tracer* tracer = control_.services().tracer;
  if (tracer == nullptr || !tracer->enabled()) {
    call->Finish(
        grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, "tracing is off ([traces] keep = 0)"));
    return call->reactor();
  }
  call->set_target(request->conversation());
  const size_t limit =
      static_cast<size_t>(request->limit() == 0 ? kDefaultTraces : request->limit());
  for (const trace::TraceData& trace : tracer->List(request->conversation(), limit)) {
    ToProto(trace, /*with_spans=*/false, response->add_traces());
  }
  call->Finish(grpc::Status::OK);
  return call->reactor();
}

grpc::ServerUnaryReactor* AdminService::GetTrace(grpc::CallbackServerContext* context,
                                                 const v1::GetTraceRequest* request,
                                                 v1::Trace* response) {
  auto call = control_.BeginUnary(context, methods::kGetTrace);
  if (!call->authorized()) return call->reactor();
  call->set_target(request->id());
  const trace::Tracer* tracer = control_.services().tracer;
  if (tracer == nullptr || !tracer->enabled()) {
    call->Finish(
        grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, "tracing is off ([traces] keep = 0)"));
    return call->reactor();
  }
  std::optional<trace::TraceData> found =
      request->id().empty() ? std::nullopt : tracer->Find(request->id());
  if (!found.has_value()) {
    call->Finish(grpc::Status(grpc::StatusCode::NOT_FOUND,
                              "no trace with that id: it may be older than the ones kept"));
    return call->reactor();
  }
  ToProto(*found, /*with_spans=*/true, response);
  call->Finish(grpc::Status::OK);
  return call->reactor();
}

}  // namespace herald::control
