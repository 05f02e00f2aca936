// control/metrics_collector.cc
#include "control/metrics_collector.h"

#include <sys/resource.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string_view>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "component/base/absl_string_view.h"
#include "skills/approvals/pending_actions.h"

namespace herald::control {
namespace {

std::string_view Attribute(const events::Event& event, std::string_view key) {
  for (const auto& [name, value] : event.attributes) {
    if (name == key) return value;
  }
  return "";
}

double Number(std::string_view text) {
  double value = 0;
  return absl::SimpleAtod(AbslView(text), &value) ? value : 0;
}

struct ProcessStats {
  double cpu_seconds = 0;
  double resident_bytes = 0;
  double virtual_bytes = 0;
  double start_time = 0;  // seconds since the epoch
  double open_fds = 0;
  double max_fds = 0;
};

// /proc/self/stat fields 14 and 15 (utime, stime in clock ticks), 22 (starttime, ticks after
// boot), 23 (vsize, bytes) and 24 (rss, pages); the boot time from /proc/stat's btime.
ProcessStats ReadProcessStats() {
  ProcessStats stats;
  const double ticks = static_cast<double>(::sysconf(_SC_CLK_TCK));
  const double page = static_cast<double>(::sysconf(_SC_PAGESIZE));
  std::ifstream stat_file("/proc/self/stat");
  std::string line;
  if (std::getline(stat_file, line)) {
    const size_t close = line.rfind(')');  // the command name may hold spaces
    std::istringstream fields(close == std::string::npos ? "" : line.substr(close + 2));
    std::vector<std::string> values;
    for (std::string value; fields >> value;) values.push_back(value);
    // values[0] is field 3 (state).
    auto field = [&values](size_t number) {
      return number >= 3 && number - 3 < values.size() ? Number(values[number - 3]) : 0.0;
    };
    if (ticks > 0) {
      stats.cpu_seconds = (field(14) + field(15)) / ticks;
      double boot = 0;
      std::ifstream proc_stat("/proc/stat");
      for (std::string entry; std::getline(proc_stat, entry);) {
        if (entry.rfind("btime ", 0) == 0) boot = Number(std::string_view(entry).substr(6));
      }
      stats.start_time = boot + field(22) / ticks;
    }
    stats.virtual_bytes = field(23);
    stats.resident_bytes = field(24) * page;
  }
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator("/proc/self/fd", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    ++stats.open_fds;
  }
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) == 0) stats.max_fds = static_cast<double>(limit.rlim_cur);
  return stats;
}

}  // namespace

MetricsCollector::MetricsCollector(ControlServices& services) : services_(services) {
  base::Metrics& m = metrics_;
  m.DeclareCounter("herald_messages_received_total",
                   "Chat and room messages Herald took in (allowed senders).");
  m.DeclareCounter("herald_llm_calls_total", "Calls of a language model.");
  m.DeclareCounter("herald_llm_tokens_total", "Tokens of answered runs, by model and direction.",
                   {"model", "direction"}, 100);
  m.DeclareHistogram("herald_llm_call_duration_seconds",
                     "How long a model took to answer one attempt (failed ones too).",
                     {"provider", "model"}, {0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120}, 50);
  m.DeclareCounter("herald_llm_errors_total",
                   "Attempts at a model that failed, by code (circuit_open: refused at once).",
                   {"provider", "model", "code"}, 200);
  m.DeclareGauge("herald_llm_circuit_state",
                 "Each provider's circuit breaker: 1 for the state it is in, 0 for the others.",
                 {"provider", "state"}, 60);
  m.DeclareCounter("herald_runs_total", "Runs (turns) by outcome.", {"outcome"});
  m.DeclareCounter("herald_tool_runs_total", "Tool calls by skill and outcome.",
                   {"skill", "outcome"});
  m.DeclareHistogram("herald_tool_run_duration_seconds", "How long a tool call took.", {"skill"},
                     {0.005, 0.025, 0.1, 0.25, 1, 2.5, 10, 30, 120});
  m.DeclareCounter("herald_actions_required_total",
                   "Runs that paused for a person: an approval, credentials, a plan choice.",
                   {"kind"}, 10);
  m.DeclareCounter("herald_limit_events_total", "Token limits warned of or reached.", {"kind"}, 4);
  m.DeclareCounter("herald_feedback_total", "Reactions on answers, by verdict.", {"verdict"}, 4);
  m.DeclareCounter("herald_webhook_deliveries_total",
                   "Webhooks out: deliveries made, attempts failed, deliveries given up.",
                   {"outcome"}, 3);
  m.DeclareGauge("herald_pending_actions", "Runs waiting for a person now.");
  m.DeclareGauge("herald_conversations_loaded", "Conversations with a live actor.");
  m.DeclareGauge("herald_conversations_busy", "Conversations running a turn now.");
  m.DeclareGauge("herald_conversation_messages_queued",
                 "Messages waiting in conversations' mailboxes, all together.");
  m.DeclareCounter("herald_xmpp_connections_total",
                   "XMPP streams established since start (more than one: reconnects).");
  m.DeclareCounter("herald_xmpp_outbound_dropped_total",
                   "Stanzas the full outbound queue dropped (oldest first).");
  m.DeclareCounter("herald_control_calls_total",
                   "Control-plane calls answered, by method and code.", {"method", "code"}, 400);
  m.DeclareGauge("herald_xmpp_connected", "1 while the XMPP session is online, else 0.");
  m.DeclareGauge("herald_event_subscribers", "Listeners of the event bus.");
  m.DeclareGauge("herald_uptime_seconds", "Seconds since Herald started.");
  m.DeclareGauge("herald_build_info", "Always 1; the version is the label.", {"version"}, 1);
  m.DeclareCounter("process_cpu_seconds_total", "User and system CPU time spent, in seconds.");
  m.DeclareGauge("process_resident_memory_bytes", "Resident memory size in bytes.");
  m.DeclareGauge("process_virtual_memory_bytes", "Virtual memory size in bytes.");
  m.DeclareGauge("process_open_fds", "Open file descriptors.");
  m.DeclareGauge("process_max_fds", "The most file descriptors the process may open.");
  m.DeclareGauge("process_start_time_seconds", "Start time since the epoch, in seconds.");
  subscription_ = services_.events.Subscribe(
      [this](const events::EventPtr& event) { OnEvent(*event); }, CountedEvents());
  services_.runtime.router.set_call_observer(
      [this](const providers::CallReport& report) { OnModelCall(report); });
}

MetricsCollector::~MetricsCollector() {
  services_.runtime.router.set_call_observer(nullptr);
  services_.events.Unsubscribe(subscription_);
}

void MetricsCollector::OnModelCall(const providers::CallReport& report) {
  if (!report.circuit_open) {
    metrics_.Observe("herald_llm_call_duration_seconds", absl::ToDoubleSeconds(report.latency),
                     {report.provider, report.model});
  }
  if (report.code == absl::StatusCode::kOk) return;
  metrics_.Add(
      "herald_llm_errors_total", 1,
      {report.provider, report.model,
       report.circuit_open ? std::string("circuit_open")
                           : absl::AsciiStrToLower(absl::StatusCodeToString(report.code))});
}

// The types OnEvent counts: the bus builds no other event for the metrics (message_received
// on every stanza, above all).
events::EventTypeSet MetricsCollector::CountedEvents() {
  using events::EventType;
  return {EventType::kRunCompleted,  EventType::kRunFailed,    EventType::kToolStarted,
          EventType::kToolCompleted, EventType::kToolFailed,   EventType::kActionRequired,
          EventType::kPlanProposed,  EventType::kLimitWarning, EventType::kLimitBlocked};
}

void MetricsCollector::OnEvent(const events::Event& event) {
  base::Metrics& m = metrics_;
  switch (event.type) {
    case events::EventType::kRunCompleted: {
      m.Add("herald_runs_total", 1, {"completed"});
      const std::string model(Attribute(event, "model"));
      if (!model.empty()) {
        m.Add("herald_llm_tokens_total", Number(Attribute(event, "input_tokens")), {model, "in"});
        m.Add("herald_llm_tokens_total", Number(Attribute(event, "output_tokens")), {model, "out"});
      }
      return;
    }
    case events::EventType::kRunFailed:
      m.Add("herald_runs_total", 1, {"failed"});
      return;
    case events::EventType::kToolStarted: {
      absl::MutexLock lock(&mu_);
      if (started_.size() < 10000) {
        started_[absl::StrCat(event.run_id, "/", AbslView(Attribute(event, "call_id")))] =
            event.time;
      }
      return;
    }
    case events::EventType::kToolCompleted:
    case events::EventType::kToolFailed: {
      const std::string skill(Attribute(event, "tool"));
      const bool failed = event.type == events::EventType::kToolFailed;
      m.Add("herald_tool_runs_total", 1, {skill, failed ? "failed" : "completed"});
      std::optional<absl::Time> started;
      {
        absl::MutexLock lock(&mu_);
        auto found =
            started_.find(absl::StrCat(event.run_id, "/", AbslView(Attribute(event, "call_id"))));
        if (found != started_.end()) {
          started = found->second;
          started_.erase(found);
        }
      }
      if (started.has_value()) {
        m.Observe("herald_tool_run_duration_seconds", absl::ToDoubleSeconds(event.time - *started),
                  {skill});
      }
      return;
    }
    case events::EventType::kActionRequired:
      m.Add("herald_actions_required_total", 1, {std::string(Attribute(event, "kind"))});
      return;
    case events::EventType::kPlanProposed:
      m.Add("herald_actions_required_total", 1, {"plan_choice"});
      return;
    case events::EventType::kLimitWarning:
      m.Add("herald_limit_events_total", 1, {"warning"});
      return;
    case events::EventType::kLimitBlocked:
      m.Add("herald_limit_events_total", 1, {"blocked"});
      return;
    default:
      return;
  }
}

void MetricsCollector::Refresh() {
  base::Metrics& m = metrics_;
  const agent::RuntimeServices::Counters& counters = services_.runtime.counters;
  m.Set("herald_messages_received_total", static_cast<double>(counters.messages_received));
  m.Set("herald_llm_calls_total", static_cast<double>(counters.llm_calls));
  m.Set("herald_feedback_total", static_cast<double>(counters.feedback_positive), {"positive"});
  m.Set("herald_feedback_total", static_cast<double>(counters.feedback_negative), {"negative"});
  if (const http::WebhooksOut* out = services_.webhooks_out) {
    m.Set("herald_webhook_deliveries_total", static_cast<double>(out->delivered()), {"delivered"});
    m.Set("herald_webhook_deliveries_total", static_cast<double>(out->failed_attempts()),
          {"failed_attempt"});
    m.Set("herald_webhook_deliveries_total", static_cast<double>(out->dead_lettered()),
          {"dead_letter"});
  }
  m.Set("herald_pending_actions", services_.pending_actions == nullptr
                                      ? 0
                                      : static_cast<double>(services_.pending_actions->size()));
  const bool online =
      services_.connection_state && services_.connection_state() == xmpp::ConnectionState::kOnline;
  m.Set("herald_xmpp_connected", online ? 1 : 0);
  if (services_.stream_counters) {
    const ControlServices::StreamCounters stream = services_.stream_counters();
    m.Set("herald_xmpp_connections_total", static_cast<double>(stream.connections));
    m.Set("herald_xmpp_outbound_dropped_total", static_cast<double>(stream.dropped_stanzas));
  }
  if (services_.control_calls) {
    for (const ControlServices::CallCount& call : services_.control_calls()) {
      m.Set("herald_control_calls_total", static_cast<double>(call.count),
            {call.method, call.code});
    }
  }
  double busy = 0;
  double queued = 0;
  const std::vector<agent::Agent::LoadedConversation> loaded =
      services_.agent.LoadedConversations();
  for (const agent::Agent::LoadedConversation& conversation : loaded) {
    busy += conversation.busy ? 1 : 0;
    queued += static_cast<double>(conversation.queued);
  }
  m.Set("herald_conversations_loaded", static_cast<double>(loaded.size()));
  m.Set("herald_conversations_busy", busy);
  m.Set("herald_conversation_messages_queued", queued);
  for (const auto& [provider, state] : services_.runtime.router.CircuitStates()) {
    for (const char* each : {"closed", "open", "half_open"}) {
      m.Set("herald_llm_circuit_state", state == each ? 1 : 0, {provider, each});
    }
  }
  m.Set("herald_event_subscribers", static_cast<double>(services_.events.subscriber_count()));
  m.Set("herald_uptime_seconds",
        absl::ToDoubleSeconds(services_.runtime.clock() - services_.runtime.started));
  m.Set("herald_build_info", 1, {services_.version});
  const ProcessStats process = ReadProcessStats();
  m.Set("process_cpu_seconds_total", process.cpu_seconds);
  m.Set("process_resident_memory_bytes", process.resident_bytes);
  m.Set("process_virtual_memory_bytes", process.virtual_bytes);
  m.Set("process_open_fds", process.open_fds);
  m.Set("process_max_fds", process.max_fds);
  m.Set("process_start_time_seconds", process.start_time);
}

}  // namespace herald::control
