#include "tests/control/control_test_env.h"

#include <stdlib.h>
#include <sys/stat.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <future>
#include <sstream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/time/clock.h"
#include "component/base/version.h"
#include "component/config/module_options.h"
#include "control/auth.h"
#include "control/runtime_editor.h"
#include "providers/scripted/scripted_provider.h"
#include "skills/external/external_skill.h"
#include "skills/manifest/manifest.h"
#include "tests/skills/shout_skill.h"

namespace herald::control::testing {
namespace {

// Registered but never enabled.
class HiddenSkill : public skills::Skill {
 public:
  HiddenSkill()
      : spec_{.name = "hidden",
              .description = "Not offered to anyone.",
              .parameters = {{"type", "object"}}} {}
  const providers::ToolSpec& spec() const override { return spec_; }
  void Execute(const nlohmann::json&, const skills::SkillContext&, Done done) override {
    done(std::string("should not run"));
  }

 private:
  providers::ToolSpec spec_;
};

}  // namespace

// The "slow" skill's runs wait here until the test releases them.
struct ControlTestEnv::SlowSkillState {
  std::atomic<int> runs{0};
  std::vector<skills::Skill::Done> waiting;  // I/O loop only
};

namespace {

class SlowSkill : public skills::Skill {
 public:
  SlowSkill(std::function<void(Done)> park)
      : park_(std::move(park)),
        spec_{.name = "slow",
              .description = "Waits until the test releases it.",
              .parameters = {{"type", "object"}}} {}
  const providers::ToolSpec& spec() const override { return spec_; }
  void Execute(const nlohmann::json&, const skills::SkillContext&, Done done) override {
    park_(std::move(done));
  }

 private:
  std::function<void(Done)> park_;
  providers::ToolSpec spec_;
};

}  // namespace

std::string TokenFor(const std::string& name) { return absl::StrCat("token-of-", name); }

bool PollUntil(const std::function<bool()>& condition, absl::Duration limit) {
  const absl::Time deadline = absl::Now() + limit;
  while (!condition()) {
    if (absl::Now() >= deadline) return false;
    absl::SleepFor(absl::Milliseconds(5));
  }
  return true;
}

ControlTestEnv::ControlTestEnv() : slow_(std::make_shared<SlowSkillState>()) {
  char pattern[] = "/tmp/herald-control-test-XXXXXX";
  if (mkdtemp(pattern) != nullptr) dir_ = pattern;
}

ControlTestEnv::~ControlTestEnv() {
  ShutdownServer();
  if (runtime_ != nullptr && loop_.joinable()) OnLoop([this] { runtime_->edits = {}; });
  server_.reset();
  if (loop_.joinable()) {
    // Parked skill runs are dropped; turns still writing their memory may finish.
    OnLoop([this] {
      slow_->waiting.clear();
      for (const skills::PendingAction& action : pending_actions_->List()) {
        pending_actions_->CancelConversation(action.conversation, "test over");
      }
    });
    const absl::Time deadline = absl::Now() + absl::Seconds(5);
    bool busy = true;
    while (busy && absl::Now() < deadline) {
      OnLoop([&] {
        busy = false;
        for (const auto& loaded : agent_->LoadedConversations()) busy = busy || loaded.busy;
      });
      if (busy) absl::SleepFor(absl::Milliseconds(5));
    }
    guard_.reset();
    io_.stop();
    loop_.join();
  }
  rooms_.reset();
  agent_.reset();
  hooks_.reset();
  scheduler_.reset();
  sandbox_.reset();
  if (workers_ != nullptr) workers_->join();
  audit_.reset();
  ledger_.reset();
  std::error_code ignored;
  if (!dir_.empty()) std::filesystem::remove_all(dir_, ignored);
}

absl::Status ControlTestEnv::Start(EnvOptions options) {
  if (dir_.empty()) return absl::InternalError("no temporary folder");
  {
    std::ofstream rules(dir_ + "/rules.toml");
    rules << kTestRules;
  }
  std::string tokens;
  for (const auto& [name, scopes] : std::vector<std::pair<std::string, std::string>>{
           {"reader", "\"read\""},
           {"operator", "\"operate\""},
           {"executor", "\"execute\""},
           {"administrator", "\"admin\""},
           {"root", "\"read\", \"operate\", \"execute\", \"admin\""}}) {
    absl::StrAppend(&tokens, "[[control.tokens]]\nname = \"", name, "\"\ntoken_sha256 = \"",
                    TokenSha256Hex(TokenFor(name)), "\"\nscopes = [", scopes, "]\n\n");
  }
  const std::string text = absl::StrReplaceAll(
      R"([server]
mode = "component"
host = "127.0.0.1"
port = 5347
component_domain = "agent.localhost"
component_secret = "secret"

[agent]
allowed_jids = ["alice@localhost", "bob@localhost"]
allowed_domains = ["localhost"]
mailbox_limit = 4

[llm]
default = "scripted:demo"

[llm.scripted]
rules_file = "DIR/rules.toml"

[memory]
path = "DIR/memory"

[quota]
daily_tokens = 0
path = "DIR/ledger.db"

[skills]
enabled = ["shout", "slow"]

[control]
listen = "127.0.0.1:50051"
audit_path = "DIR/audit.log"
state_path = "DIR/state/runtime-state.json"

)",
      {{"DIR", dir_}});
  config_path_ = dir_ + "/herald.toml";
  {
    std::ofstream file(config_path_);
    file << text << tokens;
  }
  absl::StatusOr<config::Config> loaded = config::LoadConfigFile(config_path_);
  if (!loaded.ok()) return loaded.status();
  config_ = *std::move(loaded);
  config_.control.subscriber_queue_limit = options.subscriber_queue_limit;
  config_.control.shutdown_grace_seconds = options.shutdown_grace_seconds;
  if (options.configure) options.configure(config_);

  workers_ = std::make_unique<asio::thread_pool>(2);
  absl::StatusOr<std::unique_ptr<memory::MemoryStore>> memory =
      memory::MemoryStore::Open(config_.memory.path);
  if (!memory.ok()) return memory.status();
  memory_ = *std::move(memory);
  absl::StatusOr<std::unique_ptr<ledger::UsageLedger>> ledger =
      ledger::UsageLedger::Open(config_.quota.path, ledger::PriceTable(), 0);
  if (!ledger.ok()) return ledger.status();
  ledger_ = *std::move(ledger);
  absl::StatusOr<std::unique_ptr<ledger::AuditLog>> audit =
      ledger::AuditLog::Open(config_.control.audit_path);
  if (!audit.ok()) return audit.status();
  audit_ = *std::move(audit);

  absl::StatusOr<std::unique_ptr<providers::ScriptedProvider>> scripted =
      providers::ScriptedProvider::Create(config_.llm.scripted, io_.get_executor());
  if (!scripted.ok()) return scripted.status();
  std::vector<std::unique_ptr<providers::LlmProvider>> providers;
  providers.push_back(*std::move(scripted));
  absl::StatusOr<std::unique_ptr<providers::ModelRouter>> router =
      providers::ModelRouter::Create(config_.llm, std::move(providers));
  if (!router.ok()) return router.status();
  router_ = *std::move(router);

  if (absl::Status s = registry_.Register(std::make_unique<skills::testing::ShoutSkill>()); !s.ok())
    return s;
  std::shared_ptr<SlowSkillState> slow = slow_;
  if (absl::Status s =
          registry_.Register(std::make_unique<SlowSkill>([slow](skills::Skill::Done done) {
            ++slow->runs;
            slow->waiting.push_back(std::move(done));
          }));
      !s.ok()) {
    return s;
  }
  if (absl::Status s = registry_.Register(std::make_unique<HiddenSkill>()); !s.ok()) return s;
  std::vector<std::string> enabled = config_.skills.enabled;
  if (!options.external_skill_manifest.empty()) {
    absl::StatusOr<std::unique_ptr<skills::sandbox::SandboxRunner>> runner =
        skills::sandbox::SandboxRunner::Create(io_, *workers_,
                                               skills::sandbox::testing::TestRunnerOptions());
    if (!runner.ok()) return runner.status();
    sandbox_ = *std::move(runner);
    skill_folder_ = std::make_unique<skills::sandbox::testing::PublicFolder>();
    const char* runfiles = ::getenv("TEST_SRCDIR");
    skill_folder_->CopyExecutable(
        absl::StrCat(runfiles != nullptr ? runfiles : ".",
                     "/herald/tests/skills/external/testdata/echo_skill.py"),
        "echo_skill.py");
    skills::ManifestParse parse =
        skills::ReadManifest(skill_folder_->Write("skill.toml", options.external_skill_manifest));
    if (!parse.manifest.has_value()) {
      return absl::InvalidArgumentError(absl::StrJoin(parse.problems, "; "));
    }
    enabled.push_back(parse.manifest->name);
    if (absl::Status s = registry_.Register(
            std::make_unique<skills::ExternalSkill>(*std::move(parse.manifest), *sandbox_));
        !s.ok()) {
      return s;
    }
  }
  if (absl::Status s = registry_.SetEnabled(enabled); !s.ok()) return s;

  pending_actions_ = std::make_unique<skills::PendingActions>(io_);
  const std::string key_file = absl::StrCat(dir_, "/credentials.key");
  {
    std::ofstream key(key_file);
    key << std::string(64, 'c') << "\n";
  }
  ::chmod(key_file.c_str(), 0600);
  absl::StatusOr<std::unique_ptr<skills::CredentialStore>> credentials =
      skills::CredentialStore::Open(
          {.path = absl::StrCat(dir_, "/credentials.db"), .key_file = key_file});
  if (!credentials.ok()) return credentials.status();
  credentials_ = *std::move(credentials);
  absl::StatusOr<std::unique_ptr<skills::ToolSearch>> tool_search =
      skills::ToolSearch::Open(*workers_, absl::StrCat(dir_, "/tools.db"), {.thesaurus_path = ""});
  if (!tool_search.ok()) return tool_search.status();
  tool_search_ = *std::move(tool_search);
  if (options.schedules) {
    // Opened before the loop runs, as Herald does: Open blocks on the file.
    absl::StatusOr<std::unique_ptr<schedule::Scheduler>> scheduler = schedule::Scheduler::Open(
        io_, *workers_, {.path = absl::StrCat(dir_, "/schedules.db")}, options.configured_schedules,
        options.schedule_clock ? options.schedule_clock : schedule::Scheduler::Clock(absl::Now));
    if (!scheduler.ok()) return scheduler.status();
    scheduler_ = *std::move(scheduler);
  }

  turn_ = config::TurnOptionsFrom(config_);
  hooks_ = std::make_unique<agent::TurnHooks>(io_, static_cast<size_t>(turn_.max_message_bytes));
  auto act = [this](xmpp::OutboundAction action) {
    std::lock_guard<std::mutex> lock(actions_mu_);
    actions_.push_back(std::move(action));
  };
  runtime_ = std::make_unique<agent::RuntimeServices>(
      agent::RuntimeServices{.io = io_,
                             .workers = *workers_,
                             .memory = *memory_,
                             .router = *router_,
                             .skills = registry_,
                             .options = config_.agent,
                             .turn = turn_,
                             .act = act,
                             .connection = "component agent.localhost",
                             .events = &events_,
                             .tracer = tracer_.get(),
                             .ledger = ledger_.get(),
                             .audit = audit_.get(),
                             .pending_actions = pending_actions_.get(),
                             .credentials = credentials_.get()});
  runtime_->hooks = hooks_.get();
  absl::StatusOr<agent::AccessPolicy> policy = agent::AccessPolicy::Create(config_.agent);
  if (!policy.ok()) return policy.status();
  agent_ = std::make_unique<agent::Agent>(*std::move(policy), *runtime_);
  rooms_ = std::make_unique<agent::RoomManager>(
      io_, config_.rooms, &agent_->policy(), act, [this](const xmpp::GroupMessage& message) {
        agent_->OnRoomTurn(message, xmpp::Jid::Parse("agent.localhost").value());
      });
  services_ = std::make_unique<ControlServices>(
      ControlServices{.io = io_,
                      .workers = *workers_,
                      .agent = *agent_,
                      .rooms = *rooms_,
                      .memory = *memory_,
                      .ledger = *ledger_,
                      .audit = *audit_,
                      .skills = registry_,
                      .events = events_,
                      .config = config_,
                      .config_path = config_path_,
                      .runtime = *runtime_,
                      .turn = &turn_,
                      .connection_state = [] { return xmpp::ConnectionState::kOnline; },
                      .own_jid = [] { return xmpp::Jid::Parse("agent.localhost").value(); },
                      .version = kVersion,
                      .pending_actions = pending_actions_.get(),
                      .credentials = credentials_.get(),
                      .tool_search = tool_search_.get(),
                      .hooks = hooks_.get(),
                      .scheduler = scheduler_.get(),
                      .tracer = tracer_.get()});

  guard_ = std::make_unique<asio::executor_work_guard<asio::io_context::executor_type>>(
      io_.get_executor());
  loop_ = std::thread([this] { io_.run(); });

  config::ControlConfig control = config_.control;
  control.listen = options.transport == "unix" ? absl::StrCat("unix:", dir_, "/run/control.sock")
                                               : "127.0.0.1:0";
  control.tls_cert = options.tls_cert;
  control.tls_key = options.tls_key;
  control.tls_client_ca = options.tls_client_ca;
  absl::StatusOr<std::unique_ptr<ControlServer>> server = ControlServer::Start(control, *services_);
  if (!server.ok()) return server.status();
  server_ = *std::move(server);
  runtime_->edits = server_->editor().ChatEdits();  // as component/main.cc wires it
  return absl::OkStatus();
}

void ControlTestEnv::ShutdownServer() {
  if (server_ != nullptr) server_->Shutdown();
}

std::shared_ptr<grpc::Channel> ControlTestEnv::Channel() const {
  return grpc::CreateChannel(server_->address(), grpc::InsecureChannelCredentials());
}

void ControlTestEnv::Authorize(grpc::ClientContext& context, const std::string& token_name) const {
  context.AddMetadata("authorization", absl::StrCat("Bearer ", TokenFor(token_name)));
}

std::string ControlTestEnv::AuditText() {
  if (!audit_->Flush().ok()) return "";
  std::string path;
  OnLoop([&] { path = config_.control.audit_path; });
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void ControlTestEnv::OnLoop(std::function<void()> work) {
  std::promise<void> done;
  asio::post(io_, [&] {
    work();
    done.set_value();
  });
  done.get_future().wait();
}

std::vector<xmpp::OutboundAction> ControlTestEnv::actions() const {
  std::lock_guard<std::mutex> lock(actions_mu_);
  return actions_;
}

void ControlTestEnv::ReleaseSlowSkill() {
  OnLoop([this] {
    std::vector<skills::Skill::Done> waiting = std::move(slow_->waiting);
    slow_->waiting.clear();
    for (skills::Skill::Done& done : waiting) done(std::string("released"));
  });
}

int ControlTestEnv::slow_skill_runs() const { return slow_->runs; }

}  // namespace herald::control::testing
