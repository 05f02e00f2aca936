// tests/component/agent/agent_fixture.h
//
// AgentFixture: the agent runtime end to end below the XMPP layer, for tests — a real
// MemoryStore in a temporary folder, a real SkillRegistry with ShoutSkill enabled, an
// EventBus whose events the test keeps, and a ModelRouter over ScriptedModel. Outbound
// XMPP actions are recorded; helpers run the I/O loop until something happened (a message
// went out, every conversation is idle, a conversation's file work is done, the ledger has
// the calls), never for a fixed time — except WatchFor, for tests that prove something did
// not happen.
//
//   class AgentTest : public AgentFixture {};
//   TEST_F(AgentTest, Answers) { Send("alice@localhost/phone", "hi");
//   ASSERT_TRUE(WaitForMessages(1)); }
#pragma once

#include <stdlib.h>

#include <asio.hpp>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "component/agent/agent.h"
#include "component/base/event_loop.h"
#include "component/events/event_bus.h"
#include "component/ledger/usage_ledger.h"
#include "component/memory/memory_store.h"
#include "gtest/gtest.h"
#include "providers/routing/model_router.h"
#include "skills/registry.h"
#include "tests/component/agent/scripted_model.h"

namespace herald::agent::testing {

inline xmpp::Jid J(std::string_view text) { return xmpp::Jid::Parse(text).value(); }

class AgentFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/herald-agent-test-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
    store_ = memory::MemoryStore::Open(dir_).value();

    options_.name = "Herald";
    options_.allowed_jids = {"alice@localhost", "bob@localhost", "dev@localhost"};
    options_.allowed_domains = {"localhost"};
    options_.dev_command_jids = {"dev@localhost"};
    options_.max_tool_rounds = 3;
    options_.mailbox_limit = 2;
    options_.rate_limit_per_minute = 100;
    options_.injection_policy = "flag";
    llm_.default_model = "fake:model";
    turn_.stream = false;

    auto model = std::make_unique<ScriptedModel>(io_);
    model_ = model.get();
    std::vector<std::unique_ptr<providers::LlmProvider>> providers;
    providers.push_back(std::move(model));
    router_ = providers::ModelRouter::Create(llm_, std::move(providers)).value();
    ASSERT_TRUE(registry_.Register(std::make_unique<ShoutSkill>()).ok());
    ASSERT_TRUE(registry_.SetEnabled({"shout"}).ok());
    MakeAgent();
  }

  void MakeAgent() {
    services_ = std::make_unique<RuntimeServices>(
        RuntimeServices{.io = io_,
                        .workers = workers_,
                        .memory = *store_,
                        .router = *router_,
                        .skills = registry_,
                        .options = options_,
                        .turn = turn_,
                        .act =
                            [this](xmpp::OutboundAction action) {
                              if (on_action_) on_action_(action);
                              actions_.push_back(std::move(action));
                            },
                        .clock = [this] { return now_; },
                        .started = now_,
                        .connection = "component agent.localhost",
                        .events = &bus_});
    bus_.Subscribe([this](const events::EventPtr& event) { events_.push_back(event); });
    agent_ = std::make_unique<Agent>(AccessPolicy::Create(options_).value(), *services_);
  }

  void TearDown() override {
    agent_.reset();
    workers_.join();
    ledger_.reset();
    std::filesystem::remove_all(dir_);
  }

  void Send(std::string from, std::string body, std::string thread = "") {
    agent_->Handle(xmpp::ChatMessage{.from = J(from),
                                     .to = J("agent.localhost"),
                                     .id = "m",
                                     .type = "chat",
                                     .body = std::move(body),
                                     .thread = std::move(thread)});
  }

  // The actions of type T performed so far, in order.
  template <typename T>
  std::vector<T> ActionsOf() const {
    std::vector<T> out;
    for (const auto& action : actions_) {
      if (const T* one = std::get_if<T>(&action)) out.push_back(*one);
    }
    return out;
  }

  std::vector<xmpp::SendMessage> Messages(std::string_view to_bare = "") const {
    std::vector<xmpp::SendMessage> out;
    for (const auto& action : actions_) {
      if (auto* m = std::get_if<xmpp::SendMessage>(&action)) {
        if (to_bare.empty() || m->to.BareString() == to_bare) out.push_back(*m);
      }
    }
    return out;
  }

  std::vector<std::string> ChatStates() const {
    std::vector<std::string> out;
    for (const auto& action : actions_) {
      if (auto* s = std::get_if<xmpp::SendChatState>(&action)) out.push_back(s->state);
    }
    return out;
  }

  // Runs the loop until `done()` holds (or `timeout` passed); whether it held.
  bool RunUntil(const std::function<bool()>& done, absl::Duration timeout = kWait) {
    const absl::Time deadline = absl::Now() + timeout;
    io_.restart();  // a released work guard may have stopped the loop
    auto guard = asio::make_work_guard(io_);
    while (!done() && absl::Now() < deadline) io_.run_for(std::chrono::milliseconds(5));
    return done();
  }

  // Runs the loop until `count` messages went out (to `to_bare`, if given).
  bool WaitForMessages(size_t count, std::string_view to_bare = "") {
    return RunUntil([&] { return Messages(to_bare).size() >= count; });
  }

  // Runs the loop until no conversation has a turn running or a message queued. A turn has
  // written both sides to memory (and its usage is on its way to the ledger) before it ends,
  // and a cancelled turn ends once the model call it waited for came back.
  bool WaitForIdle() {
    return RunUntil([&] {
      for (const Agent::LoadedConversation& conversation : agent_->LoadedConversations()) {
        if (conversation.busy || conversation.queued > 0) return false;
      }
      return true;
    });
  }

  // Runs the loop until the file work queued so far for the conversation of `jid` (its
  // strand of the worker pool: memory appends, archives) is done — a marker posted behind it
  // has run.
  bool WaitForFileWork(const std::string& jid) {
    Conversation* conversation =
        agent_->FindConversation({.kind = base::ConversationRef::Kind::kDirect, .address = jid});
    if (conversation == nullptr) return true;
    auto done = std::make_shared<std::atomic<bool>>(false);
    asio::post(conversation->files(), [done] { *done = true; });
    return RunUntil([&] { return done->load(); });
  }

  // Runs the loop until the ledger recorded `calls` LLM calls paid by `jid` (usage is
  // recorded on the worker pool after each call).
  bool WaitForRecordedCalls(const std::string& jid, int64_t calls) {
    return RunUntil([&] { return RecordedCalls(jid) >= calls; });
  }

  // Runs the loop for `watch` whatever happens. Only for a test that proves something did
  // NOT happen; it says there why `watch` is long enough.
  void WatchFor(absl::Duration watch) {
    io_.restart();
    auto guard = asio::make_work_guard(io_);
    io_.run_for(absl::ToChronoNanoseconds(watch));
  }

  std::vector<memory::MemoryEntry> History(std::string jid) {
    return store_->History({.kind = base::ConversationRef::Kind::kDirect, .address = jid}, 100)
        .value();
  }

  // A ledger in the test folder with this default daily limit, used from now on.
  void UseLedger(int64_t default_daily_tokens) {
    ledger_ =
        ledger::UsageLedger::Open(dir_ + "/ledger.db", ledger::PriceTable(), default_daily_tokens)
            .value();
    services_->ledger = ledger_.get();
  }

  std::vector<events::EventType> EventTypes() const {
    std::vector<events::EventType> types;
    for (const events::EventPtr& event : events_) types.push_back(event->type);
    return types;
  }

  // Runs the loop until the sink saw a last event (completed or failed).
  bool WaitForRunEnd(const std::vector<RunEvent>& seen) {
    return RunUntil([&] {
      return !seen.empty() && (seen.back().kind == RunEvent::Kind::kCompleted ||
                               seen.back().kind == RunEvent::Kind::kFailed);
    });
  }

  // The LLM calls the ledger holds for `jid`, all time.
  int64_t RecordedCalls(const std::string& jid) const {
    absl::StatusOr<ledger::UsagePage> page = ledger_->Usage(
        {.jid = jid, .window = ledger::Window::kLifetime, .at = now_, .page_size = 1000});
    int64_t calls = 0;
    if (page.ok()) {
      for (const ledger::UsageRow& row : page->rows) calls += row.calls;
    }
    return calls;
  }

  // How long a wait for something that should happen may take: generous, for a loaded CI
  // machine; a passing test never waits it out.
  static constexpr absl::Duration kWait = absl::Seconds(10);

  // First, so it ends last: everything below runs on it (component/base/event_loop.h).
  base::EventLoop loop_{2};
  asio::io_context& io_ = loop_.io();
  asio::thread_pool& workers_ = loop_.workers();
  events::EventBus bus_;
  std::vector<events::EventPtr> events_;
  std::unique_ptr<ledger::UsageLedger> ledger_;
  std::string dir_;
  std::unique_ptr<memory::MemoryStore> store_;
  ScriptedModel* model_ = nullptr;
  std::unique_ptr<providers::ModelRouter> router_;
  skills::SkillRegistry registry_;
  AgentOptions options_;
  TurnOptions turn_;
  providers::LlmOptions llm_;
  std::unique_ptr<RuntimeServices> services_;
  std::unique_ptr<Agent> agent_;
  std::vector<xmpp::OutboundAction> actions_;
  // Called with each action as it is performed, before it is recorded (on the I/O loop).
  std::function<void(const xmpp::OutboundAction&)> on_action_;
  absl::Time now_ = absl::FromUnixSeconds(1763800000);
};

}  // namespace herald::agent::testing
