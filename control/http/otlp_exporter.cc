// control/http/otlp_exporter.cc
#include "control/http/otlp_exporter.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "glog/logging.h"
#include "nlohmann/json.hpp"

namespace herald::control::http {
namespace {

using Json = nlohmann::json;

std::string UnixNanos(absl::Time time) { return absl::StrCat(absl::ToUnixNanos(time)); }

Json StringAttribute(const std::string& key, const std::string& value) {
  return Json{{"key", key}, {"value", {{"stringValue", value}}}};
}

Json SpanJson(const trace::TraceData& trace, const trace::SpanData& span) {
  Json attributes = Json::array();
  for (const auto& [key, value] : span.attributes) {
    attributes.push_back(StringAttribute(key, value));
  }
  if (span.parent_span_id.empty()) {
    attributes.push_back(StringAttribute("herald.run_id", trace.run_id));
    attributes.push_back(StringAttribute("herald.conversation", trace.conversation));
  }
  // OTLP's status codes: 0 unset, 1 ok, 2 error.
  const int code = span.status == trace::SpanStatus::kOk      ? 1
                   : span.status == trace::SpanStatus::kError ? 2
                                                              : 0;
  Json status{{"code", code}};
  if (!span.status_message.empty()) status["message"] = span.status_message;
  Json out{{"traceId", trace.trace_id},
           {"spanId", span.span_id},
           {"name", span.name},
           {"kind", span.parent_span_id.empty() ? 2 : 1},  // SERVER for the turn, INTERNAL
           {"startTimeUnixNano", UnixNanos(span.start)},
           {"endTimeUnixNano", UnixNanos(span.end)},
           {"attributes", std::move(attributes)},
           {"status", std::move(status)}};
  if (!span.parent_span_id.empty()) out["parentSpanId"] = span.parent_span_id;
  return out;
}

}  // namespace

std::string OtlpJson(const std::vector<std::shared_ptr<const trace::TraceData>>& traces,
                     const OtlpExporterOptions& options) {
  Json spans = Json::array();
  for (const auto& trace : traces) {
    for (const trace::SpanData& span : trace->spans) spans.push_back(SpanJson(*trace, span));
  }
  Json resource{
      {"attributes", Json::array({StringAttribute("service.name", "herald"),
                                  StringAttribute("service.version", options.service_version),
                                  StringAttribute("service.instance.id", options.instance_id)})}};
  Json scope{{"scope", {{"name", "herald"}, {"version", options.service_version}}},
             {"spans", std::move(spans)}};
  Json body{
      {"resourceSpans", Json::array({Json{{"resource", std::move(resource)},
                                          {"scopeSpans", Json::array({std::move(scope)})}}})}};
  return body.dump(-1, ' ', false, Json::error_handler_t::replace);
}

OtlpExporter::OtlpExporter(asio::io_context& io, providers::HttpClient& http,
                           OtlpExporterOptions options)
    : io_(io), http_(http), options_(std::move(options)), timer_(io) {
  Tick();
}

OtlpExporter::~OtlpExporter() {
  *alive_ = false;
  timer_.cancel();
}

void OtlpExporter::Offer(std::shared_ptr<const trace::TraceData> trace) {
  base::MutexLock lock(&mu_);
  if (options_.max_queued == 0) {
    ++dropped_;
    return;
  }
  if (queued_.size() >= options_.max_queued) {
    queued_.erase(queued_.begin());
    ++dropped_;
  }
  queued_.push_back(std::move(trace));
}

uint64_t OtlpExporter::exported() const {
  base::MutexLock lock(&mu_);
  return exported_;
}

uint64_t OtlpExporter::dropped() const {
  base::MutexLock lock(&mu_);
  return dropped_;
}

void OtlpExporter::Tick() {
  timer_.expires_after(absl::ToChronoNanoseconds(options_.interval));
  timer_.async_wait([this, alive = alive_](const asio::error_code& ec) {
    if (ec || !*alive) return;
    Send();
    Tick();
  });
}

void OtlpExporter::Send() {
  if (sending_) return;  // one request at a time; the rest waits for the next tick
  std::vector<std::shared_ptr<const trace::TraceData>> batch;
  {
    base::MutexLock lock(&mu_);
    batch.swap(queued_);
  }
  if (batch.empty()) return;
  sending_ = true;
  providers::HttpRequest request{
      .method = "POST",
      .url = options_.endpoint,
      .headers = {{"Content-Type", "application/json"}},
      .body = OtlpJson(batch, options_),
      .total_timeout = absl::Seconds(30),
      .max_body_bytes = 64 * 1024,
      .truncate_body = true,
  };
  const size_t count = batch.size();
  http_.Send(std::move(request),
             [this, alive = alive_, count](absl::StatusOr<providers::HttpResponse> response) {
               if (!*alive) return;
               sending_ = false;
               base::MutexLock lock(&mu_);
               if (response.ok() && response->status / 100 == 2) {
                 exported_ += count;
                 return;
               }
               dropped_ += count;
               LOG(WARNING) << "traces: the collector at " << options_.endpoint << " did not take "
                            << count << " trace(s): "
                            << (response.ok() ? absl::StrCat("HTTP ", response->status)
                                              : response.status().ToString());
             });
}

}  // namespace herald::control::http
