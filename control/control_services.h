// control/control_services.h
//
// What the control plane drives: references to the runtime's parts, owned by the herald
// binary (component/main.cc), which must outlive the ControlServer. The threads each part
// may be used on are the runtime's rules: the Agent, RoomManager, SkillRegistry, the
// Config and the two session functions on the I/O loop only; MemoryStore and the blocking
// UsageLedger/AuditLog calls on the worker pool; EventBus and AuditLog::Append anywhere.
//
//   control::ControlServices services{.io = io, .workers = workers, .agent = agent, ...};
//   auto server = control::ControlServer::Start(config.control, services);
#pragma once

#include <asio.hpp>
#include <functional>
#include <string>
#include <vector>

#include "component/agent/agent.h"
#include "component/agent/conversation.h"
#include "component/agent/rooms.h"
#include "component/config/config.h"
#include "component/events/event_bus.h"
#include "component/ledger/audit_log.h"
#include "component/ledger/usage_ledger.h"
#include "component/memory/memory_store.h"
#include "component/schedule/scheduler.h"
#include "component/storage/conversation_inbox.h"
#include "component/storage/instance_registry.h"
#include "component/storage/shared_documents.h"
#include "component/storage/shared_pending_actions.h"
#include "component/trace/tracer.h"
#include "component/xmpp/jid.h"
#include "component/xmpp/session.h"
#include "control/http/webhooks_out.h"
#include "skills/approvals/pending_actions.h"
#include "skills/credentials/credential_store.h"
#include "skills/registry.h"
#include "skills/tool_search/tool_search.h"

namespace herald::control {

struct ControlServices {
  asio::io_context& io;        // the I/O loop
  asio::thread_pool& workers;  // blocking work (memory files, SQLite, the audit log)
  agent::Agent& agent;
  agent::RoomManager& rooms;
  memory::MemoryStore& memory;
  ledger::UsageLedger& ledger;
  ledger::AuditLog& audit;
  skills::SkillRegistry& skills;
  events::EventBus& events;
  // The configuration in force; the control plane changes it (allowlist, rooms, reload) on
  // the I/O loop, the only thread that reads it.
  config::Config& config;
  // The file ReloadConfig re-reads.
  std::string config_path;
  // Start time, the connection line and the counters GetStatus reports (I/O loop).
  agent::RuntimeServices& runtime;
  // What turns read ([llm] max_tokens, [skills.approvals] ...); a reload replaces it. May be
  // null (tests).
  agent::TurnOptions* turn = nullptr;
  // The XMPP session's state and own address (I/O loop): e.g.
  //   [&] { return session->state(); }   [&] { return session->own_jid(); }
  std::function<xmpp::ConnectionState()> connection_state;
  std::function<xmpp::Jid()> own_jid;
  // The instances sharing the database, as of the last beat (any thread); null: one instance
  // on this host's files.
  std::function<std::vector<storage::InstanceInfo>()> instances;
  // The XMPP streams established since start, and the stanzas the full outbound queue
  // dropped (I/O loop; for /metrics); null: not shown.
  struct StreamCounters {
    int64_t connections = 0;
    uint64_t dropped_stanzas = 0;
  };
  std::function<StreamCounters()> stream_counters;
  // The control-plane calls answered so far, by method and code (ControlServer::CallCounts,
  // for /metrics; any thread); null: not shown.
  struct CallCount {
    std::string method;
    std::string code;
    int64_t count = 0;
  };
  std::function<std::vector<CallCount>()> control_calls;
  // The Prometheus text of GET /metrics, gathered afresh (I/O loop), which AdminService.
  // GetMetrics answers with; null: GetMetrics says there is none. A function rather than the
  // MetricsCollector itself because the collector is built over these services (and its
  // library over this one); the binary makes one collector that /metrics and GetMetrics share:
  //   [&collector] { collector.Refresh(); return collector.metrics().Render(); }
  std::function<std::string()> metrics_text;
  std::string version;
  // Runs waiting for an approval or credentials (I/O loop), and the encrypted credential
  // store (worker pool); SkillService answers the first and fills the second. Either may be
  // null: then those RPCs say what is not configured.
  skills::PendingActions* pending_actions = nullptr;
  // With several instances: the actions the others hold, and answers relayed to them.
  storage::SharedPendingActions* shared_pending_actions = nullptr;
  skills::CredentialStore* credentials = nullptr;
  // The external tool registry (S6) that ImportTools and SearchTools use; null: not opened.
  skills::ToolSearch* tool_search = nullptr;
  // Webhooks out (docs/webhooks.md), whose dead letters AdminService lists and replays; null:
  // no [[webhooks.out]] is configured.
  http::WebhooksOut* webhooks_out = nullptr;
  // Where HookService attaches programs' hooks; null: HookService is not served.
  agent::TurnHooks* hooks = nullptr;
  // The schedules ([schedules]); null when they are off.
  schedule::Scheduler* scheduler = nullptr;
  // What an operator should know about this host, found at startup (isolation the sandbox
  // could not have, manifests that were refused, credentials not kept); GetStatus lists them.
  std::vector<std::string> notices;
  // The run traces (AdminService.ListTraces/GetTrace; any thread); null: tracing is off.
  const trace::Tracer* tracer = nullptr;
  // The 1:1 conversations every instance on one database answers, with the instance that
  // holds each (worker pool); null: one instance on this host's files.
  std::function<absl::StatusOr<std::vector<storage::ConversationInbox::Lease>>()> leases;
  // What several instances on one database share beside the stores (the allowlist and room
  // changes: shared_runtime_state.h; worker pool); null: one instance on this host's files.
  storage::SharedDocuments* shared_documents = nullptr;
};

}  // namespace herald::control
