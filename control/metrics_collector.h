// control/metrics_collector.h
//
// What GET /metrics shows (Q4): the runtime's counters, read afresh at each scrape, and what
// the event bus tells as it happens, in Prometheus's names and units.
//
//   herald_messages_received_total                 chat and room messages taken in
//   herald_llm_calls_total                         model calls
//   herald_llm_tokens_total{model,direction}       tokens of answered runs (in, out)
//   herald_llm_call_duration_seconds{provider,model}  each attempt at a model (histogram)
//   herald_llm_errors_total{provider,model,code}   attempts that failed (circuit_open: refused)
//   herald_llm_circuit_state{provider,state}       1 for each breaker's state (closed, open,
//                                                  half_open), 0 for the others
//   herald_runs_total{outcome}                     runs completed / failed
//   herald_tool_runs_total{skill,outcome}          tool calls done / failed
//   herald_tool_run_duration_seconds{skill}        how long each took (histogram)
//   herald_actions_required_total{kind}            runs paused for an approval, credentials, a plan
//   herald_limit_events_total{kind}                limits warned of / reached
//   herald_feedback_total{verdict}                 👍 / 👎 on answers
//   herald_webhook_deliveries_total{outcome}       webhooks out: delivered, failed_attempt,
//                                                  dead_letter
//   herald_pending_actions                         runs waiting now
//   herald_conversations_loaded, herald_conversations_busy, herald_conversation_messages_queued
//   herald_xmpp_connections_total                  streams established (reconnects: more than 1)
//   herald_xmpp_outbound_dropped_total             stanzas the full outbound queue dropped
//   herald_control_calls_total{method,code}        control-plane calls answered
//   herald_xmpp_connected                          1 while the XMPP session is online
//   herald_event_subscribers                       Subscribe streams and other bus listeners
//   herald_uptime_seconds, herald_build_info{version}
//   process_cpu_seconds_total, process_resident_memory_bytes, process_virtual_memory_bytes,
//   process_open_fds, process_max_fds, process_start_time_seconds
//
// Labels take names Herald or the operator chose (skills, models, kinds), each family bounded
// (base::Metrics puts anything past its bound under "other").
//
//   MetricsCollector collector(services);   // subscribes to the bus
//   collector.Refresh();                     // on the I/O loop, before rendering
//   std::string text = collector.metrics().Render();
#pragma once

#include <cstdint>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "component/base/metrics.h"
#include "control/control_services.h"
#include "providers/routing/model_router.h"

namespace herald::control {

class MetricsCollector {
 public:
  // `services` must outlive the collector.
  explicit MetricsCollector(ControlServices& services);
  ~MetricsCollector();  // unsubscribes
  MetricsCollector(const MetricsCollector&) = delete;
  MetricsCollector& operator=(const MetricsCollector&) = delete;

  // Reads the counters and gauges a scrape shows afresh. I/O loop only.
  void Refresh();

  base::Metrics& metrics() { return metrics_; }

 private:
  static events::EventTypeSet CountedEvents();
  void OnEvent(const events::Event& event) ABSL_LOCKS_EXCLUDED(mu_);
  // An attempt at a model ended (providers/routing/model_router.h).
  void OnModelCall(const providers::CallReport& report);

  ControlServices& services_;
  base::Metrics metrics_;
  uint64_t subscription_ = 0;
  absl::Mutex mu_;
  // Tool calls started and not yet done, by call id: when they started.
  absl::flat_hash_map<std::string, absl::Time> started_ ABSL_GUARDED_BY(mu_);
};

}  // namespace herald::control
