// control/http/otlp_exporter.h
//
// Sends finished run traces (component/trace/tracer.h) to an OpenTelemetry collector as
// OTLP/HTTP JSON ([traces] otlp_endpoint, e.g. "http://127.0.0.1:4318/v1/traces"): every
// `interval` the traces finished meanwhile go in one ExportTraceServiceRequest —
// resourceSpans with the resource (service.name "herald", service.version,
// service.instance.id), one scopeSpans ("herald"), the spans with their hex ids, times in
// Unix nanoseconds (as strings, as OTLP's JSON mapping writes 64-bit integers), string
// attributes and status.
//
// Bounded: at most `max_queued` traces wait (older ones are dropped and counted); a request
// the collector refuses or that fails after the HTTP client's retries is dropped with a log
// line, not retried forever. Runs on the I/O loop; Offer may be called from any thread.
//
//   OtlpExporter exporter(io, http, {.endpoint = config.traces.otlp_endpoint, ...});
//   tracer.SetExporter([&](auto trace) { exporter.Offer(std::move(trace)); });
#pragma once

#include <asio.hpp>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/time/time.h"
#include "component/base/mutex.h"
#include "component/trace/tracer.h"
#include "providers/http/http_client.h"

namespace herald::control::http {

struct OtlpExporterOptions {
  std::string endpoint;  // the collector's /v1/traces URL
  absl::Duration interval = absl::Seconds(5);
  size_t max_queued = 1000;
  std::string service_version;
  std::string instance_id;  // service.instance.id: the component domain or account
};

// The OTLP/HTTP JSON body for `traces` (an ExportTraceServiceRequest).
std::string OtlpJson(const std::vector<std::shared_ptr<const trace::TraceData>>& traces,
                     const OtlpExporterOptions& options);

class OtlpExporter {
 public:
  OtlpExporter(asio::io_context& io, providers::HttpClient& http, OtlpExporterOptions options);
  ~OtlpExporter();  // on the loop; what is queued is not sent
  OtlpExporter(const OtlpExporter&) = delete;
  OtlpExporter& operator=(const OtlpExporter&) = delete;

  // Queues a finished trace (any thread).
  void Offer(std::shared_ptr<const trace::TraceData> trace) ABSL_LOCKS_EXCLUDED(mu_);

  uint64_t exported() const ABSL_LOCKS_EXCLUDED(mu_);
  uint64_t dropped() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  void Tick();
  void Send();

  asio::io_context& io_;
  providers::HttpClient& http_;
  const OtlpExporterOptions options_;
  asio::steady_timer timer_;
  bool sending_ = false;  // I/O loop only
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
  mutable base::Mutex mu_;
  std::vector<std::shared_ptr<const trace::TraceData>> queued_ ABSL_GUARDED_BY(mu_);
  uint64_t exported_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t dropped_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace herald::control::http
