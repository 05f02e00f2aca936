// The herald binary: reads the configuration, connects to the XMPP server as a component or a
// client, and serves until SIGINT/SIGTERM or a permanent error. Exit statuses are documented
// in docs/operators.md (0 ok, 2 bad configuration, 3 credentials refused, ...).
#include <sys/resource.h>

#include <asio.hpp>
#include <csignal>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "component/agent/access_policy.h"
#include "component/agent/agent.h"
#include "component/agent/agent_calls.h"
#include "component/agent/agent_protocol.h"
#include "component/agent/delegate_skill.h"
#include "component/agent/media_services.h"
#include "component/agent/rooms.h"
#include "component/agent/runtime.h"
#include "component/agent/schedule_skill.h"
#include "component/base/event_loop.h"
#include "component/base/memory_release.h"
#include "component/base/version.h"
#include "component/config/config.h"
#include "component/config/module_options.h"
#include "component/events/event_bus.h"
#include "component/ledger/audit_log.h"
#include "component/ledger/usage_ledger.h"
#include "component/memory/embedding_cache.h"
#include "component/memory/folder_watcher.h"
#include "component/memory/memory_store.h"
#include "component/schedule/scheduler.h"
#include "component/storage/shared_conversations.h"
#include "component/storage/shared_pending_actions.h"
#include "component/storage/shared_rooms.h"
#include "component/storage/shared_state_refresh.h"
#include "component/storage/stores.h"
#include "component/trace/tracer.h"
#include "component/xmpp/session.h"
#include "component/xmpp/session_error.h"
#include "control/control_server.h"
#include "control/delegate_client.h"
#include "control/http/api_gateway.h"
#include "control/http/console_page.h"
#include "control/http/http_server.h"
#include "control/http/metrics_page.h"
#include "control/http/otlp_exporter.h"
#include "control/http/webhooks_in.h"
#include "control/http/webhooks_out.h"
#include "control/metrics_collector.h"
#include "control/runtime_editor.h"
#include "control/runtime_state.h"
#include "control/shared_runtime_state.h"
#include "glog/logging.h"
#include "providers/embeddings/embeddings_client.h"
#include "providers/factory.h"
#include "providers/http/http_client.h"
#include "skills/approvals/pending_actions.h"
#include "skills/builtin/builtins.h"
#include "skills/builtin/memory_search.h"
#include "skills/credentials/credential_store.h"
#include "skills/external/external_skills.h"
#include "skills/mcp/mcp_servers.h"
#include "skills/registry.h"
#include "skills/sandbox/sandbox_runner.h"
#include "skills/tool_search/http_tool.h"
#include "skills/tool_search/tool_search.h"
#include "skills/tool_search/tool_search_skill.h"

ABSL_FLAG(std::string, config, "", "Path of the TOML configuration file to run with.");
ABSL_FLAG(std::string, check_config, "",
          "Validate this configuration file, print what is wrong, and exit.");
ABSL_FLAG(bool, version, false, "Print Herald's version and exit.");

namespace herald {
namespace {

// How long a polite shutdown may take before Herald stops waiting for the server.
constexpr auto kShutdownGrace = std::chrono::seconds(5);
// Threads for blocking work (memory files, skills); conversations never get a thread each.
constexpr int kWorkerThreads = 2;

// Every conversation waiting on the model holds a connection of its own (HTTP/1.1), so the
// common default soft limit of 1024 descriptors would turn the ~1,000th concurrent
// conversation into an apology (measured with tools/bench/conversation_load
// --herald_open_files=1024). Herald never uses select(), so the soft limit may go up to the
// hard one.
void RaiseOpenFileLimit() {
  struct rlimit limit;
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return;
  // An unlimited hard limit is still capped by fs.nr_open; a million is within its default.
  const rlim_t wanted = limit.rlim_max == RLIM_INFINITY ? rlim_t{1} << 20 : limit.rlim_max;
  if (limit.rlim_cur == RLIM_INFINITY || limit.rlim_cur >= wanted) return;
  const rlim_t before = limit.rlim_cur;
  limit.rlim_cur = wanted;
  if (setrlimit(RLIMIT_NOFILE, &limit) != 0) {
    LOG(WARNING) << "herald: could not raise the open files limit from " << before
                 << "; concurrent conversations are bounded by it";
    return;
  }
  LOG(INFO) << "herald: open files limit raised from " << before << " to " << wanted;
}

int CheckConfig(const std::string& path) {
  absl::StatusOr<config::Config> config = config::LoadConfigFile(path);
  if (!config.ok()) {
    std::cerr << "herald: " << config.status().message() << "\n";
    return base::kExitConfig;
  }
  absl::StatusOr<agent::AccessPolicy> policy = agent::AccessPolicy::Create(config->agent);
  if (!policy.ok()) {
    std::cerr << "herald: " << path << ": " << policy.status().message() << "\n";
    return base::kExitConfig;
  }
  std::cout << path << ": configuration is valid\n";
  return base::kExitOk;
}

int Serve(const std::string& path) {
  absl::StatusOr<config::Config> config = config::LoadConfigFile(path);
  if (!config.ok()) {
    std::cerr << "herald: " << config.status().message() << "\n";
    return base::kExitConfig;
  }
  const config::LogLevelOptions log_level = config::LogLevelOptionsFrom(config->log);
  FLAGS_minloglevel = log_level.min_severity;
  if (log_level.verbosity > 0) FLAGS_v = log_level.verbosity;
  RaiseOpenFileLimit();

  // [storage]: this host's files, or the PostgreSQL database several instances share.
  absl::StatusOr<storage::Stores> stores = storage::OpenStores(*config);
  if (!stores.ok()) {
    std::cerr << "herald: " << stores.status().message() << "\n";
    // A database that is down or refuses Herald is not a mistake in the file.
    return stores.status().code() == absl::StatusCode::kUnavailable ? base::kExitFailure
                                                                    : base::kExitConfig;
  }
  // Allowlist entries and rooms changed over the control plane outlive restarts.
  if (absl::Status state =
          control::ApplyRuntimeState(config->control.state_path, stores->documents.get(), *config);
      !state.ok()) {
    std::cerr << "herald: [control] state_path: " << state.message() << "\n";
    return base::kExitConfig;
  }
  absl::StatusOr<agent::AccessPolicy> policy = agent::AccessPolicy::Create(config->agent);
  absl::StatusOr<xmpp::SessionOptions> options =
      config::SessionOptionsFrom(config->server, config->agent.name, kVersion);
  if (!policy.ok() || !options.ok()) {
    std::cerr << "herald: " << path << ": "
              << (policy.ok() ? options.status() : policy.status()).message() << "\n";
    return base::kExitConfig;
  }
  const std::string connection = config->server.mode == config::ConnectionMode::kComponent
                                     ? absl::StrCat("component ", config->server.component_domain)
                                     : absl::StrCat("client ", config->server.jid);

  // The I/O loop, and the pool for blocking work (the loop never waits on it). Declared before
  // everything that runs on them, so it ends after all of it (component/base/event_loop.h).
  base::EventLoop loop(kWorkerThreads);
  asio::io_context& io = loop.io();
  asio::thread_pool& workers = loop.workers();

  absl::StatusOr<std::unique_ptr<memory::MemoryStore>> store =
      memory::MemoryStore::Open(config->memory.path, config->memory.shared_path,
                                {.postgres = stores->postgres});  // shared when it is set
  if (!store.ok()) {
    std::cerr << "herald: [memory]: " << store.status().message() << "\n";
    return base::kExitConfig;
  }
  absl::StatusOr<std::unique_ptr<providers::HttpClient>> http = providers::HttpClient::Create(io);
  if (!http.ok()) {
    std::cerr << "herald: " << http.status().message() << "\n";
    return base::kExitFailure;
  }
  absl::StatusOr<std::unique_ptr<providers::ModelRouter>> router =
      providers::CreateModelRouter(config->llm, http->get(), io.get_executor());
  if (!router.ok()) {
    std::cerr << "herald: " << path << ": " << router.status().message() << "\n";
    return base::kExitConfig;
  }
  ledger::UsageLedger* const usage = stores->usage.get();
  auto refresh = storage::SharedStateRefresh::For(io, workers, *stores);  // others' changes
  ledger::AuditLog* const audit = stores->audit.get();
  events::EventBus events;
  // What an operator should know about this host (GetStatus shows it too).
  std::vector<std::string> notices;

  // Credentials skills need (S8); a key that is set but wrong stops Herald here.
  absl::StatusOr<std::unique_ptr<skills::CredentialStore>> opened_credentials =
      storage::OpenCredentials(*config, *stores, notices);
  if (!opened_credentials.ok()) {
    std::cerr << "herald: " << opened_credentials.status().message() << "\n";
    return base::kExitConfig;
  }
  std::unique_ptr<skills::CredentialStore> credentials = *std::move(opened_credentials);
  skills::PendingActions pending_actions(io);
  auto shared_pending = storage::SharePendingActions(io, workers, *stores, pending_actions,
                                                     credentials.get());  // every instance's
  if (!shared_pending.ok()) {
    std::cerr << "herald: [storage] postgresql: " << shared_pending.status().message() << "\n";
    return base::kExitFailure;
  }
  // The external tool registry (S6): imported and searched through the control plane.
  absl::StatusOr<std::unique_ptr<skills::ToolSearch>> tool_search =
      skills::ToolSearch::Open(workers, config->skills.tool_registry_path,
                               {.thesaurus_path = config->skills.tool_thesaurus_path});
  if (!tool_search.ok()) {
    std::cerr << "herald: [skills] tool_registry_path: " << tool_search.status().message() << "\n";
    return base::kExitConfig;
  }
  // Webhooks out: events POSTed, signed, to the URLs that subscribed to them.
  std::unique_ptr<control::http::WebhooksOut> webhooks_out;
  if (!config->webhooks.out.empty()) {
    std::vector<control::http::WebhookTarget> targets;
    for (const config::WebhookOutConfig& hook : config->webhooks.out) {
      control::http::WebhookTarget target{.name = hook.name,
                                          .url = hook.url,
                                          .secret = hook.secret,
                                          .max_queue = static_cast<size_t>(hook.max_queue),
                                          .max_attempts = hook.max_attempts,
                                          .timeout = absl::Seconds(hook.timeout_seconds)};
      for (const std::string& name : hook.events) {
        if (std::optional<events::EventType> type = events::EventTypeNamed(name)) {
          target.events.push_back(*type);
        }
      }
      targets.push_back(std::move(target));
    }
    absl::StatusOr<std::unique_ptr<control::http::WebhooksOut>> started =
        control::http::WebhooksOut::Start(io, workers, **http, events, std::move(targets),
                                          config->webhooks.dead_letters_path);
    if (!started.ok()) {
      std::cerr << "herald: [webhooks] dead_letters_path: " << started.status().message() << "\n";
      return base::kExitConfig;
    }
    webhooks_out = *std::move(started);
  }
  // Its tools whose executor is HTTP: requests through the SSRF guard.
  absl::StatusOr<std::unique_ptr<skills::HttpTools>> http_tools =
      skills::HttpTools::Create(io, **http, config::HttpToolOptionsFrom(config->skills.http_tools));
  if (!http_tools.ok()) {
    std::cerr << "herald: [skills.http_tools] " << http_tools.status().message() << "\n";
    return base::kExitConfig;
  }

  // External skills (manifests in [skills] path) run in the sandbox; a broken manifest
  // disables only its own skill.
  skills::sandbox::SandboxRunner::Options sandbox_options;
  sandbox_options.uid_base = static_cast<uid_t>(config->skills.sandbox_uid_base);
  // [skills.sandbox] require (names checked by the config loader): without one of these
  // layers the runner refuses every run and says so in its notices; builtins go on.
  for (const std::string& name : config->skills.sandbox_require) {
    if (std::optional<skills::sandbox::SandboxLayer> layer =
            skills::sandbox::ParseSandboxLayer(name)) {
      sandbox_options.required_layers.push_back(*layer);
    }
  }
  absl::StatusOr<std::unique_ptr<skills::sandbox::SandboxRunner>> sandbox =
      skills::sandbox::SandboxRunner::Create(io, workers, std::move(sandbox_options));
  if (!sandbox.ok()) {
    std::cerr << "herald: the skill sandbox cannot run here: " << sandbox.status().message()
              << "\n";
    return base::kExitFailure;
  }
  for (const std::string& notice : (*sandbox)->notices()) {
    LOG(WARNING) << "skill sandbox: " << notice;
    notices.push_back(absl::StrCat("skill sandbox: ", notice));
  }
  skills::SkillRegistry registry;  // after the sandbox: its skills use the runner
  // Memory search (M3, M4): keywords, and meaning when an embeddings provider is set; a
  // watcher re-indexes what people edit by hand.
  skills::MemorySearch memory_search(io, workers, **store);
  std::unique_ptr<providers::EmbeddingsClient> embeddings;
  std::unique_ptr<memory::EmbeddingCache> embedding_cache;
  if (std::optional<providers::EmbeddingsOptions> embedder =
          config::EmbeddingsOptionsFrom(*config)) {
    absl::StatusOr<std::unique_ptr<memory::EmbeddingCache>> cache =
        memory::EmbeddingCache::Open(config->memory.embeddings_cache_path);
    if (!cache.ok()) {
      std::cerr << "herald: [memory] embeddings_cache_path: " << cache.status().message() << "\n";
      return base::kExitConfig;
    }
    embedding_cache = *std::move(cache);
    embeddings = std::make_unique<providers::EmbeddingsClient>(**http, *std::move(embedder));
    memory_search.UseEmbeddings(embeddings.get(), embedding_cache.get(),
                                config::SearchWeightsFrom(config->memory));
  }
  // With vectors, files changed (by Herald or by hand) are embedded ahead of the next search;
  // without, the next search re-reads them anyway.
  std::unique_ptr<memory::FolderWatcher> memory_watcher;
  if (memory_search.hybrid()) {
    absl::StatusOr<std::unique_ptr<memory::FolderWatcher>> watcher =
        memory::FolderWatcher::Start(io, {(*store)->root(), (*store)->shared_folder()},
                                     [&memory_search](std::vector<std::string> paths) {
                                       memory_search.Reindex(std::move(paths));
                                     });
    if (watcher.ok()) {
      memory_watcher = *std::move(watcher);
    } else {
      LOG(WARNING) << "memory: edits are embedded when a search reads them: " << watcher.status();
    }
  }
  // Schedules ([schedules]): loaded before the loop runs; the skill joins the registry.
  std::unique_ptr<schedule::Scheduler> scheduler;
  if (config->schedules.enabled) {
    absl::StatusOr<std::unique_ptr<schedule::Scheduler>> opened = schedule::Scheduler::Open(
        io, workers, config::SchedulerOptionsFrom(*config, stores->postgres),
        config::ConfiguredSchedulesFrom(*config), absl::Now);
    if (!opened.ok()) {
      std::cerr << "herald: [schedules]: " << opened.status().message() << "\n";
      return base::kExitConfig;
    }
    scheduler = *std::move(opened);
  }
  // The session is made once the skills are known; what acts through it may be made before.
  std::unique_ptr<xmpp::XmppSession> session;
  auto act = [&session](const xmpp::OutboundAction& action) { session->Perform(action); };
  // Delegation (F1): other agents over XMPP (the agent protocol) or over their control plane.
  agent::AgentCalls agent_calls(act, [&session] { return session->own_jid(); });
  absl::StatusOr<std::unique_ptr<control::DelegateClient>> delegate_client =
      control::DelegateClient::Create(io, config->delegate);
  if (!delegate_client.ok()) {
    std::cerr << "herald: " << path << ": " << delegate_client.status().message() << "\n";
    return base::kExitConfig;
  }
  // Files both ways and voice ([attachments], [voice], [skills.image_generate]).
  absl::StatusOr<agent::MediaServices> media = agent::MediaServices::Create(
      io, **http, act,
      {.attachments = config::AttachmentOptionsFrom(*config),
       .voice = config::VoiceOptionsFrom(config->voice),
       .images = config::ImageGenerationOptionsFrom(config->skills.image_generate),
       .llm = config->llm});
  if (!media.ok()) {
    std::cerr << "herald: " << path << ": " << media.status().message() << "\n";
    return base::kExitConfig;
  }
  absl::Status registered = skills::RegisterBuiltins(registry, io, workers, memory_search, **http,
                                                     config::BuiltinOptionsFrom(config->skills));
  if (std::unique_ptr<skills::Skill> images = media->ImageGenerateSkill(io);
      registered.ok() && images) {
    registered = registry.Register(std::move(images));
  }
  if (registered.ok() && scheduler != nullptr) {
    registered = registry.Register(std::make_unique<agent::ScheduleSkill>(io, *scheduler));
  }
  if (registered.ok()) {
    registered = registry.Register(std::make_unique<agent::DelegateSkill>(
        config->delegate, config->agent_protocol.max_hops, &agent_calls, delegate_client->get(),
        audit, absl::Now));
  }
  if (registered.ok()) {
    // The model's way into the external tool registry, offered when enabled like any skill.
    registered = registry.Register(std::make_unique<skills::ToolSearchSkill>(io, **tool_search));
  }
  skills::ExternalSkillsLoad external;
  std::unique_ptr<skills::mcp::McpServers> mcp_servers;  // stopped before the registry goes
  if (registered.ok()) {
    external = skills::LoadExternalSkills(config->skills.path, registry, **sandbox);
    for (const std::string& problem : external.problems) {
      LOG(ERROR) << "skills: " << problem;
      notices.push_back(absl::StrCat("skill disabled: ", problem));
    }
    // MCP servers ([[skills.mcp]]) connect in the background and their tools join the registry
    // as they are listed; one that cannot start is a notice, and Herald runs on without it.
    std::vector<std::string> mcp_notices;
    mcp_servers = skills::mcp::McpServers::Start(io, registry, **sandbox, **http,
                                                 config->skills.mcp, &mcp_notices);
    for (const std::string& notice : mcp_notices) {
      LOG(WARNING) << notice;
      notices.push_back(notice);
    }
    registered = registry.SetEnabled(skills::WithoutDisabled(config->skills.enabled, external));
  }
  if (!registered.ok()) {
    std::cerr << "herald: " << path << ": [skills] " << registered.message() << "\n";
    return base::kExitConfig;
  }

  int exit_code = base::kExitOk;
  // What turns read from [llm], [skills] and [server]; a reload replaces it.
  agent::TurnOptions turn_options = config::TurnOptionsFrom(*config);
  // Every run as a trace of spans ([traces]); sent to a collector when one is configured.
  auto tracer = std::make_shared<trace::Tracer>(
      trace::TracerOptions{.keep = static_cast<size_t>(config->traces.keep),
                           .max_spans = static_cast<size_t>(config->traces.max_spans)});
  std::unique_ptr<control::http::OtlpExporter> otlp;
  if (tracer->enabled() && !config->traces.otlp_endpoint.empty()) {
    otlp = std::make_unique<control::http::OtlpExporter>(
        io, **http,
        control::http::OtlpExporterOptions{
            .endpoint = config->traces.otlp_endpoint,
            .interval = absl::Seconds(config->traces.export_interval_seconds),
            .service_version = kVersion,
            .instance_id = config->server.mode == config::ConnectionMode::kComponent
                               ? config->server.component_domain
                               : config->server.jid});
    tracer->SetExporter([exporter = otlp.get()](std::shared_ptr<const trace::TraceData> done) {
      exporter->Offer(std::move(done));
    });
  }
  agent::RuntimeServices services{.io = io,
                                  .workers = workers,
                                  .memory = **store,
                                  .router = **router,
                                  .skills = registry,
                                  .options = config->agent,
                                  .turn = turn_options,
                                  .act = act,
                                  .connection = connection,
                                  .events = &events,
                                  .tracer = tracer.get(),
                                  .ledger = usage,
                                  .audit = audit,
                                  .pending_actions = &pending_actions,
                                  .credentials = credentials.get(),
                                  .tool_search = tool_search->get(),
                                  .http_tools = http_tools->get()};
  services.scheduler = scheduler.get();
  if (stores->postgres != nullptr) services.ledger_writes = workers.get_executor();
  media->AttachTo(services);
  // Hooks programs attach over the control plane (HookService); a rewrite is bounded like a
  // message.
  agent::TurnHooks turn_hooks(io, static_cast<size_t>(turn_options.max_message_bytes));
  services.hooks = &turn_hooks;
  agent::Agent agent(*policy, services);
  agent::RoomOptions room_options;
  room_options.leased = stores->rooms != nullptr;  // one instance in each room (scale-out.md)
  agent::RoomManager rooms(
      io, config->rooms, &agent.policy(), act,
      [&](const xmpp::GroupMessage& message) {
        agent.OnRoomTurn(message, session->own_jid().Bare());
        rooms.RecordReply(message.room, message.nick);
      },
      room_options);
  rooms.set_on_joined([&](const xmpp::Jid& room, const std::string& nick) {
    agent.OnRoomJoined(room, nick, session->own_jid().Bare());
  });
  agent::Runtime runtime(agent, rooms, &events);
  // [storage] "postgresql": 1:1 messages go through the inbox the instances share.
  auto shared = storage::ShareConversations(io, workers, *stores, agent, runtime);
  auto shared_rooms = storage::ShareRooms(io, workers, *stores, rooms);
  // Other agents' requests (X13): answered for the peers of [[agent_protocol.peer]].
  agent::AgentProtocol agent_protocol(services, agent, config->agent_protocol);
  runtime.ServeAgents(&agent_protocol, &agent_calls);
  options->agent_protocol = config->agent_protocol.enabled;
  absl::StatusOr<std::unique_ptr<xmpp::XmppSession>> created = xmpp::XmppSession::Create(
      io, *std::move(options),
      [&](xmpp::InboundEvent&& event) { runtime.OnEvent(std::move(event)); },
      [&](const absl::Status& why) {
        exit_code = base::ExitCodeFor(why);
        io.stop();
      });
  if (!created.ok()) {
    std::cerr << "herald: " << created.status().message() << "\n";
    return base::kExitConfig;
  }
  session = *std::move(created);
  if (shared_rooms != nullptr) {
    session->set_divert([&](const xmpp::XmlElement& stanza, std::string_view stream_namespace) {
      return shared_rooms->Divert(stanza, stream_namespace);
    });
    shared_rooms->set_handle([&](std::string_view xml) { return session->HandleHandedOver(xml); });
  }

  control::ControlServices control_services{
      .io = io,
      .workers = workers,
      .agent = agent,
      .rooms = rooms,
      .memory = **store,
      .ledger = *usage,
      .audit = *audit,
      .skills = registry,
      .events = events,
      .config = *config,
      .config_path = path,
      .runtime = services,
      .turn = &turn_options,
      .connection_state = [&session] { return session->state(); },
      .own_jid = [&session] { return session->own_jid(); },
      .version = kVersion,
      .pending_actions = &pending_actions,
      .credentials = credentials.get(),
      .tool_search = tool_search->get(),
      .webhooks_out = webhooks_out.get(),
      .hooks = &turn_hooks,
      .scheduler = scheduler.get(),
      .notices = notices};
  control_services.tracer = tracer.get();
  control_services.shared_documents = stores->documents.get();
  control_services.shared_pending_actions = shared_pending->get();
  if (stores->instances != nullptr) {
    control_services.instances = [registry = stores->instances.get()] { return registry->Known(); };
    control_services.leases = [inbox = stores->inbox.get()] { return inbox->Leases(); };
  }
  absl::StatusOr<std::unique_ptr<control::ControlServer>> control =
      control::ControlServer::Start(config->control, control_services);
  if (!control.ok()) {
    std::cerr << "herald: [control] listen: " << control.status().message() << "\n";
    return base::kExitConfig;
  }
  bool control_stopped = false;
  LOG(INFO) << "herald: control plane on " << (*control)->address();
  // The metrics: one collector, listening to the bus from the start, that GET /metrics and
  // AdminService.GetMetrics share (each gathers and renders it on the I/O loop).
  control_services.stream_counters = [&session] {
    return control::ControlServices::StreamCounters{
        .connections = session->connections_established(),
        .dropped_stanzas = session->dropped_stanzas()};
  };
  control_services.control_calls = [server = control->get()] { return server->CallCounts(); };
  auto metrics = std::make_unique<control::MetricsCollector>(control_services);
  control_services.metrics_text = [collector = metrics.get()] {
    collector->Refresh();
    return collector->metrics().Render();
  };
  // The HTTP listener ([http]): /metrics, the HTTP/JSON API, webhooks in.
  std::optional<control::Authenticator> http_authenticator;
  std::unique_ptr<control::http::HttpServer> http_server;
  std::unique_ptr<control::http::WebhooksIn> webhooks_in;
  if (!config->http.listen.empty()) {
    absl::StatusOr<control::Authenticator> authenticator =
        control::Authenticator::Create(config->control.tokens);
    absl::StatusOr<std::unique_ptr<control::http::HttpServer>> started =
        authenticator.ok()
            ? control::http::HttpServer::Start(io, {.listen = config->http.listen,
                                                    .tls_cert = config->http.tls_cert,
                                                    .tls_key = config->http.tls_key})
            : authenticator.status();
    if (!started.ok()) {
      std::cerr << "herald: [http] listen: " << started.status().message() << "\n";
      return base::kExitConfig;
    }
    http_authenticator.emplace(*std::move(authenticator));
    http_server = *std::move(started);
    control::http::ServeMetrics(*http_server, *metrics, *http_authenticator);
    control::http::ServeApi(*http_server, {.io = io,
                                           .workers = workers,
                                           .channel = (*control)->InProcessChannel(),
                                           .authenticator = &*http_authenticator});
    control::http::ServeConsole(*http_server);
    // Webhooks in: a delivery is said as Herald, in a chat or in a room it is in.
    std::vector<control::http::WebhookEndpoint> endpoints;
    for (const config::WebhookInConfig& hook : config->webhooks.in) {
      endpoints.push_back({.name = hook.name,
                           .secret = hook.secret,
                           .to = hook.to,
                           .template_text = hook.template_text,
                           .max_body_bytes = static_cast<size_t>(hook.max_body_bytes),
                           .rate_per_minute = hook.rate_per_minute});
    }
    auto deliver = [&](const std::string& to, std::string text) -> absl::Status {
      absl::StatusOr<xmpp::Jid> target = xmpp::Jid::Parse(to);
      if (!target.ok()) return absl::InvalidArgumentError("the endpoint's target is not a JID");
      const xmpp::Jid own = session->own_jid();
      if (own.empty()) {
        return absl::UnavailableError("Herald is not connected to its XMPP server yet");
      }
      const std::vector<xmpp::Jid> known_rooms = rooms.Rooms();
      const bool room =
          std::find(known_rooms.begin(), known_rooms.end(), target->Bare()) != known_rooms.end();
      if (room && !rooms.IsJoined(*target)) {
        return absl::UnavailableError("Herald is not in the room right now; retry later");
      }
      agent.SendAsAgent(*target, room ? own.Bare() : own, std::move(text), room);
      return absl::OkStatus();
    };
    absl::StatusOr<std::unique_ptr<control::http::WebhooksIn>> served =
        control::http::WebhooksIn::Serve(*http_server, std::move(endpoints), deliver, audit,
                                         absl::Now);
    if (!served.ok()) {
      std::cerr << "herald: [[webhooks.in]]: " << served.status().message() << "\n";
      return base::kExitConfig;
    }
    webhooks_in = *std::move(served);
    LOG(INFO) << "herald: HTTP on " << config->http.listen << " (/metrics"
              << (config->webhooks.in.empty() ? "" : ", /webhooks/") << ", /api/)";
  }
  // An admin's /allowlist and /rooms take the control plane's recorded path.
  control::RuntimeEditor& editor = (*control)->editor();
  services.edits = agent::RuntimeEdits{
      .rooms = [&editor] { return editor.Rooms(); },
      .apply =
          [&editor](agent::RuntimeEdit edit, std::function<void(absl::Status)> done) {
            editor.Apply(std::move(edit), std::move(done));
          }};
  asio::signal_set signals(io, SIGINT, SIGTERM);
  asio::steady_timer grace(io);
  signals.async_wait([&](const asio::error_code& error, int signal) {
    if (error) return;
    LOG(INFO) << "herald: received signal " << signal
              << ", stopping the control plane and closing the XMPP stream";
    control_stopped = true;
    // No new connections while the rest stops; a stream in progress still gets its last
    // event (UNAVAILABLE) from the control plane's shutdown.
    if (http_server != nullptr) http_server->StopAccepting();
    (*control)->ShutdownInBackground([&] {
      session->Stop();
      grace.expires_after(kShutdownGrace);
      grace.async_wait([&io](const asio::error_code& e) {
        if (!e) io.stop();
      });
    });
  });
  // SIGHUP reloads the configuration, as AdminService.ReloadConfig does.
  asio::signal_set hangups(io, SIGHUP);
  std::function<void()> await_hangup = [&] {
    hangups.async_wait([&](const asio::error_code& error, int) {
      if (error) return;
      editor.Reload([](absl::StatusOr<control::ReloadReport> report) {
        if (!report.ok()) {
          LOG(ERROR) << "herald: SIGHUP: " << report.status().message();
          return;
        }
        LOG(INFO) << "herald: SIGHUP: reloaded; applied: "
                  << (report->applied.empty() ? "nothing" : absl::StrJoin(report->applied, ", "))
                  << (report->requires_restart.empty()
                          ? ""
                          : absl::StrCat("; needs a restart: ",
                                         absl::StrJoin(report->requires_restart, ", ")));
      });
      await_hangup();
    });
  };
  await_hangup();

  // Memory a burst freed goes back to the system once the burst is over (memory_release.h).
  auto memory_release = base::MemoryRelease::Start(io, workers);
  // A due schedule becomes a turn of its chat or room; a room's runs where Herald is in it.
  if (scheduler != nullptr) {
    scheduler->Start(
        [&](const schedule::Schedule& due) { runtime.RunScheduled(due, session->own_jid()); },
        [&runtime](const std::string& room) { return runtime.InRoom(room); });
  }
  LOG(INFO) << "herald " << kVersion << " starting (" << connection << ", server "
            << config->server.host << ":" << config->server.port << ", model "
            << (*router)->ModelFor(providers::Tier::kDefault).ToString() << ")";
  session->Start();
  io.run();
  if (!control_stopped) {
    // Stopped by a permanent error: calls still in flight finish on the loop, so it runs
    // until the control plane is down.
    io.restart();
    auto keep_running = asio::make_work_guard(io);
    (*control)->ShutdownInBackground([&io] { io.stop(); });
    io.run();
  }
  loop.JoinWorkers();
  absl::Status flushed = audit->Flush();
  if (!flushed.ok()) LOG(ERROR) << "herald: the audit log could not be flushed: " << flushed;
  LOG(INFO) << "herald: stopped";
  return exit_code;
}

}  // namespace
}  // namespace herald

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Herald, an AI agent on XMPP.\n"
      "  herald --config FILE          run\n"
      "  herald --check-config FILE    validate a configuration and exit\n"
      "  herald --version              print the version");
  // The documented spelling is --check-config; Abseil flags are spelt with underscores.
  std::vector<std::string> spelled(argv, argv + argc);
  for (std::string& arg : spelled) {
    if (absl::StartsWith(arg, "--check-config")) arg.replace(0, 14, "--check_config");
  }
  std::vector<char*> args;
  for (std::string& arg : spelled) args.push_back(arg.data());
  absl::ParseCommandLine(static_cast<int>(args.size()), args.data());
  if (absl::GetFlag(FLAGS_version)) {
    std::cout << "herald " << herald::kVersion << "\n";
    return 0;
  }
  FLAGS_logtostderr = true;
  google::InitGoogleLogging(argv[0]);
  // Debian builds Abseil with its debug checks: without this every absl::Mutex lock in gRPC
  // also walks a lock graph looking for deadlocks (a few percent of a control-plane call).
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  if (!absl::GetFlag(FLAGS_check_config).empty()) {
    return herald::CheckConfig(absl::GetFlag(FLAGS_check_config));
  }
  if (absl::GetFlag(FLAGS_config).empty()) {
    std::cerr << "herald: no configuration; run herald --config FILE (see --help)\n";
    return herald::base::kExitConfig;
  }
  return herald::Serve(absl::GetFlag(FLAGS_config));
}
