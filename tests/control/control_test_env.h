// tests/control/control_test_env.h
//
// A real Herald runtime below the XMPP layer, with its control plane, for the control-plane
// tests and the benchmark: a MemoryStore, UsageLedger and AuditLog in a temporary folder, an
// EventBus, a SkillRegistry with test skills, an Agent on the `scripted` provider (rules
// written by the test), a RoomManager, and a ControlServer on 127.0.0.1 with a port picked at
// run time (or a unix socket). The I/O loop runs on a thread of its own, as in the binary.
//
// Tokens: one per scope ("reader", "operator", "executor", "administrator") and "root" with
// every scope; their bearer values are TokenFor(name).
//
//   ControlTestEnv env;
//   ASSERT_TRUE(env.Start().ok());
//   auto stub = herald::v1::AdminService::NewStub(env.Channel());
//   grpc::ClientContext context;
//   env.Authorize(context, "reader");
//   stub->GetStatus(&context, request, &response);
#pragma once

#include <grpcpp/grpcpp.h>

#include <asio.hpp>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "component/agent/agent.h"
#include "component/agent/rooms.h"
#include "component/config/config.h"
#include "component/events/event_bus.h"
#include "component/ledger/audit_log.h"
#include "component/ledger/usage_ledger.h"
#include "component/memory/memory_store.h"
#include "component/schedule/scheduler.h"
#include "component/trace/tracer.h"
#include "control/control_server.h"
#include "providers/routing/model_router.h"
#include "skills/approvals/pending_actions.h"
#include "skills/credentials/credential_store.h"
#include "skills/registry.h"
#include "skills/sandbox/sandbox_runner.h"
#include "skills/tool_search/tool_search.h"
#include "tests/skills/sandbox/sandbox_test_support.h"

namespace herald::control::testing {

// The scripted provider's rules the tests talk to.
inline constexpr char kTestRules[] = R"(
[[rule]]
name = "after any tool"
after_tool = "*"
reply = "The {tool} tool says: {tool_result}"

[[rule]]
name = "shout"
starts_with = "shout"
tool = "shout"
arguments = { text = "{rest}" }

[[rule]]
name = "slow"
starts_with = "wait"
tool = "slow"
arguments = {}

[[rule]]
name = "greeting"
contains = "hello"
reply = "Hello from the scripted provider, with several words to stream."

[[rule]]
name = "a plan's answer"
contains = "Results of the plan's steps"
reply = "all done"

[[rule]]
name = "a plan's step"
starts_with = "The task:"
reply = "step done"

[[rule]]
name = "plans"
starts_with = "plan-me"
reply = '{{"plans": [{{"title": "Tidy up", "confidence": 0.7, "steps": [{{"step": 1, "description": "Tidy the shelf"}}, {{"step": 2, "description": "Tidy the floor"}}]}}]}}'

[[rule]]
name = "fallback"
reply = "I only know hello, shout and wait."
)";

// The bearer value of a test token.
std::string TokenFor(const std::string& name);

// Polls `condition` every 5 ms until it holds (true) or `limit` has passed (false). For a wait,
// `limit` is generous and only keeps a broken test from hanging; for a watch over something
// that must not happen, it is the length of the watch, and the caller says why it is enough.
bool PollUntil(const std::function<bool()>& condition, absl::Duration limit);

struct EnvOptions {
  // "tcp" (127.0.0.1, port 0) or "unix" (a socket in the temporary folder).
  std::string transport = "tcp";
  // TLS: PEM file paths (the test makes the certificates); empty = plaintext.
  std::string tls_cert, tls_key, tls_client_ca;
  int subscriber_queue_limit = 1024;
  int shutdown_grace_seconds = 5;
  // Extra configuration, applied before anything is built.
  std::function<void(config::Config&)> configure;
  // When set, a sandbox runner is made and the manifest (TOML text, its executable
  // "echo_skill.py": tests/skills/external/testdata) registered and enabled as an external
  // skill.
  std::string external_skill_manifest;
  // When set, a Scheduler over a file in the temporary folder, with these operator's
  // schedules, is what ControlServices.scheduler points at (else it is null: schedules are
  // off). It is not started: nothing fires unless a test calls RunDue on the I/O loop.
  // `schedule_clock` is its clock; absl::Now when unset.
  bool schedules = false;
  std::vector<schedule::ConfiguredSchedule> configured_schedules;
  std::function<absl::Time()> schedule_clock;
};

class ControlTestEnv {
 public:
  ControlTestEnv();
  ~ControlTestEnv();

  absl::Status Start(EnvOptions options = {});
  // Shuts the control server down (blocking), as Herald does at exit.
  void ShutdownServer();

  std::shared_ptr<grpc::Channel> Channel() const;
  void Authorize(grpc::ClientContext& context, const std::string& token_name) const;

  // The audit log's text, once everything appended so far is written.
  std::string AuditText();

  // Runs `work` on the I/O loop and waits for it.
  void OnLoop(std::function<void()> work);

  // Outbound XMPP the runtime performed (SendMessage, room presence), in order.
  std::vector<xmpp::OutboundAction> actions() const;

  const std::string& dir() const { return dir_; }
  const std::string& config_path() const { return config_path_; }
  config::Config& config() { return config_; }
  memory::MemoryStore& memory() { return *memory_; }
  ledger::UsageLedger& ledger() { return *ledger_; }
  ledger::AuditLog& audit() { return *audit_; }
  events::EventBus& events() { return events_; }
  agent::Agent& agent() { return *agent_; }
  ControlServer& server() { return *server_; }
  ControlServices& services() { return *services_; }
  skills::PendingActions& pending_actions() { return *pending_actions_; }
  skills::CredentialStore& credentials() { return *credentials_; }
  // The hooks HookService attached; I/O loop only.
  agent::TurnHooks& hooks() { return *hooks_; }
  // Null unless EnvOptions.schedules; I/O loop only.
  schedule::Scheduler* scheduler() { return scheduler_.get(); }
  trace::Tracer& tracer() { return *tracer_; }
  // Released by the "slow" skill's waiters (see control_test_env.cc).
  void ReleaseSlowSkill();
  int slow_skill_runs() const;

 private:
  std::string dir_;
  std::string config_path_;
  config::Config config_;
  agent::TurnOptions turn_;  // what turns read; a reload replaces it
  // Before the loop, so that handlers still queued on the loop (a turn's coroutine frames,
  // which hold strands of the pool) are destroyed while the pool exists.
  std::unique_ptr<asio::thread_pool> workers_;
  asio::io_context io_;
  std::unique_ptr<asio::executor_work_guard<asio::io_context::executor_type>> guard_;
  std::thread loop_;
  std::unique_ptr<memory::MemoryStore> memory_;
  std::unique_ptr<ledger::UsageLedger> ledger_;
  std::unique_ptr<ledger::AuditLog> audit_;
  events::EventBus events_;
  std::unique_ptr<providers::ModelRouter> router_;
  skills::SkillRegistry registry_;
  std::unique_ptr<skills::sandbox::SandboxRunner> sandbox_;
  std::unique_ptr<skills::sandbox::testing::PublicFolder> skill_folder_;
  std::unique_ptr<skills::PendingActions> pending_actions_;
  std::unique_ptr<skills::CredentialStore> credentials_;
  std::unique_ptr<skills::ToolSearch> tool_search_;
  std::unique_ptr<schedule::Scheduler> scheduler_;
  std::unique_ptr<agent::TurnHooks> hooks_;  // HookService attaches here
  // Every run traced, as in the binary.
  std::shared_ptr<trace::Tracer> tracer_ =
      std::make_shared<trace::Tracer>(trace::TracerOptions{.keep = 100});
  std::unique_ptr<agent::RuntimeServices> runtime_;
  std::unique_ptr<agent::Agent> agent_;
  std::unique_ptr<agent::RoomManager> rooms_;
  std::unique_ptr<ControlServices> services_;
  std::unique_ptr<ControlServer> server_;

  mutable std::mutex actions_mu_;
  std::vector<xmpp::OutboundAction> actions_;

  struct SlowSkillState;
  std::shared_ptr<SlowSkillState> slow_;
};

}  // namespace herald::control::testing
