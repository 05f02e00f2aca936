// CallWithinLimits: a call near a block limit holds its estimated tokens while it runs, so a
// second call of the same payer meanwhile gets only what is left; a failed call gives them back.
#include "component/agent/quota_gate.h"

#include <asio.hpp>
#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "tests/component/agent/agent_fixture.h"

namespace herald::agent {
namespace {

class QuotaGateTest : public testing::AgentFixture {
 protected:
  // Starts one call paid by Alice; `result` is set when it is back.
  void StartCall(std::optional<absl::StatusOr<providers::LlmResponse>>& result) {
    providers::LlmRequest request;
    request.messages.push_back({.text = "hello"});
    request.max_tokens = 1000;
    asio::co_spawn(
        io_,
        [this, request, &result]() -> asio::awaitable<void> {
          result = co_await CallWithinLimits(*services_, "alice@localhost",
                                             "direct:alice@localhost", request, nullptr);
        },
        asio::detached);
  }
};

TEST_F(QuotaGateTest, EstimatesTextImagesAndTheWholeAnswer) {
  providers::LlmRequest request;
  request.system = std::string(400, 's');
  request.messages.push_back({.text = std::string(400, 'u')});
  request.max_tokens = 500;
  EXPECT_EQ(EstimatedTokens(request), 200 + 500);
  request.messages[0].images.resize(2);
  EXPECT_EQ(EstimatedTokens(request), 200 + 500 + 2 * 1600);
}

TEST_F(QuotaGateTest, ASecondCallWhileTheFirstRunsGetsOnlyWhatIsLeft) {
  UseLedger(/*default_daily_tokens=*/1000);
  model_->script.push_back({.text = "first", .delay = absl::Milliseconds(300)});
  model_->script.push_back({.text = "third"});
  std::optional<absl::StatusOr<providers::LlmResponse>> first, second, third;
  StartCall(first);
  // The first is admitted (nothing used) and holds its estimate (1,000 out, and more in):
  // the second, while it runs, finds the limit taken and makes no call.
  StartCall(second);
  ASSERT_TRUE(RunUntil([&] { return second.has_value(); }));
  EXPECT_FALSE(first.has_value());
  ASSERT_FALSE(second->ok());
  EXPECT_TRUE(IsLimitStatus(second->status()));
  EXPECT_TRUE(absl::StrContains(second->status().message(), "held for answers in progress"))
      << second->status().message();
  ASSERT_TRUE(RunUntil([&] { return first.has_value(); }));
  ASSERT_TRUE(first->ok());
  // The first used 15 tokens: once that is recorded, the rest of the 1,000 is free again.
  ASSERT_TRUE(WaitForRecordedCalls("alice@localhost", 1));
  StartCall(third);
  ASSERT_TRUE(RunUntil([&] { return third.has_value(); }));
  EXPECT_TRUE(third->ok()) << third->status();
  EXPECT_EQ(model_->requests.size(), 2u);
}

TEST_F(QuotaGateTest, AFailedCallGivesItsTokensBack) {
  UseLedger(/*default_daily_tokens=*/1000);
  model_->script.push_back({.error = absl::UnavailableError("provider down")});
  model_->script.push_back({.text = "fine"});
  std::optional<absl::StatusOr<providers::LlmResponse>> failed, next;
  StartCall(failed);
  ASSERT_TRUE(RunUntil([&] { return failed.has_value(); }));
  EXPECT_FALSE(failed->ok());
  EXPECT_FALSE(IsLimitStatus(failed->status()));
  StartCall(next);
  ASSERT_TRUE(RunUntil([&] { return next.has_value(); }));
  EXPECT_TRUE(next->ok()) << next->status();
  std::vector<ledger::LimitState> states =
      ledger_->LimitStates("alice@localhost", services_->clock());
  ASSERT_EQ(states.size(), 1u);
  EXPECT_EQ(states[0].reserved, 0);
}

// The ledger's writes after a call go one at a time on a strand of their own. While one is held
// up (a commit that checkpoints the WAL; here a task that waits), later calls' writes wait in
// line behind it rather than on a second worker, which stays free for the conversations: their
// turns run to the end, and their usage is recorded once the held write is done.
TEST_F(QuotaGateTest, LedgerWritesWaitInLineWithoutTakingTheOtherWorker) {
  UseLedger(/*default_daily_tokens=*/1000000);
  struct Hold {
    std::atomic<bool> held{false};
    std::atomic<bool> release{false};
  };
  auto hold = std::make_shared<Hold>();
  asio::post(services_->ledger_writes, [hold] {
    hold->held = true;
    while (!hold->release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
  // Whatever fails below, the worker is given back before the fixture joins the pool.
  absl::Cleanup give_back = [hold] { hold->release = true; };
  ASSERT_TRUE(RunUntil([&] { return hold->held.load(); }));
  const std::vector<std::string> people = {"alice@localhost", "bob@localhost"};
  for (const std::string& jid : people) {
    model_->script.push_back({.text = "hi " + jid});
    Send(jid, "hello");
  }
  // Each turn read and wrote its memory on the one worker left, and answered.
  ASSERT_TRUE(WaitForMessages(people.size()));
  ASSERT_TRUE(WaitForIdle());
  for (const std::string& jid : people) ASSERT_TRUE(WaitForFileWork(jid));
  // No usage recorded yet. A write sent to the pool would have run on the free worker within
  // milliseconds of its call; 200 ms is far more than that.
  WatchFor(absl::Milliseconds(200));
  for (const std::string& jid : people) EXPECT_EQ(RecordedCalls(jid), 0) << jid;
  hold->release = true;
  for (const std::string& jid : people) EXPECT_TRUE(WaitForRecordedCalls(jid, 1)) << jid;
}

}  // namespace
}  // namespace herald::agent
