// Hooks at the two points of a turn: the chain itself (TurnHooks: order, rewrites, context,
// refusals, deadlines, programs that go away) and a turn through the agent with hooks
// attached (the model reads what the hooks left; a refused message never reaches it; an
// answer is passed through the reply hooks before the person reads it).
#include "component/agent/turn_hooks.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_replace.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/component/agent/agent_fixture.h"

namespace herald::agent {
namespace {

using testing::AgentFixture;
using ::testing::HasSubstr;

class TurnHooksTest : public AgentFixture {
 protected:
  // A program that answers every call with `answer(call)` (nullopt: never answers).
  uint64_t AttachAnswering(HookOptions options,
                           std::function<std::optional<HookAnswer>(const HookCall&)> answer) {
    auto handle = std::make_shared<uint64_t>(0);
    const uint64_t attached =
        hooks_.Attach(std::move(options), [this, handle, answer](const HookCall& call) {
          calls_.push_back(call);
          std::optional<HookAnswer> given = answer(call);
          if (given.has_value()) {
            asio::post(io_, [this, handle, id = call.id, given = *given] {
              hooks_.Answer(*handle, id, given);
            });
          }
          return true;
        });
    *handle = attached;
    return attached;
  }

  HookOutcome RunChain(HookPoint point, std::string text) {
    std::optional<HookOutcome> outcome;
    asio::co_spawn(
        io_,
        [&]() -> asio::awaitable<void> {
          HookCall call{.conversation = "direct:alice@localhost",
                        .jid = "alice@localhost",
                        .author = "alice@localhost",
                        .text = std::move(text)};
          outcome = co_await hooks_.Run(point, std::move(call));
        },
        asio::detached);
    EXPECT_TRUE(RunUntil([&] { return outcome.has_value(); }));
    return outcome.value_or(HookOutcome{});
  }

  TurnHooks hooks_{io_, 4096};
  std::vector<HookCall> calls_;
};

HookAnswer Rewrite(std::string text, std::string context = "") {
  return {.verdict = HookAnswer::Verdict::kRewrite,
          .text = std::move(text),
          .context = std::move(context)};
}

TEST_F(TurnHooksTest, EachHookSeesWhatThePreviousOneLeft) {
  AttachAnswering({.name = "mask", .points = {HookPoint::kPreTurn}}, [](const HookCall& call) {
    return Rewrite(absl::StrReplaceAll(call.text, {{"darn", "****"}}));
  });
  AttachAnswering({.name = "notes", .points = {HookPoint::kPreTurn, HookPoint::kReply}},
                  [](const HookCall& call) {
                    return HookAnswer{.context = absl::StrCat("seen: ", call.text)};
                  });
  AttachAnswering({.name = "replies only", .points = {HookPoint::kReply}},
                  [](const HookCall&) { return Rewrite("never at pre_turn"); });
  const HookOutcome outcome = RunChain(HookPoint::kPreTurn, "a darn fine day");
  EXPECT_FALSE(outcome.refused);
  EXPECT_EQ(outcome.text, "a **** fine day");
  EXPECT_EQ(outcome.context, "seen: a **** fine day");
  ASSERT_EQ(calls_.size(), 2u);
  EXPECT_EQ(calls_[0].conversation, "direct:alice@localhost");
  EXPECT_NE(calls_[0].id, calls_[1].id);
  EXPECT_TRUE(hooks_.Any(HookPoint::kReply));
}

TEST_F(TurnHooksTest, ARefusalStopsTheChain) {
  AttachAnswering({.name = "gate", .points = {HookPoint::kPreTurn}}, [](const HookCall&) {
    return HookAnswer{.verdict = HookAnswer::Verdict::kRefuse, .reason = "Not today."};
  });
  AttachAnswering({.name = "after", .points = {HookPoint::kPreTurn}},
                  [](const HookCall&) { return Rewrite("unreached"); });
  const HookOutcome outcome = RunChain(HookPoint::kPreTurn, "hello");
  EXPECT_TRUE(outcome.refused);
  EXPECT_EQ(outcome.reason, "Not today.");
  EXPECT_EQ(outcome.refused_by, "gate");
  EXPECT_EQ(calls_.size(), 1u);
}

TEST_F(TurnHooksTest, ASilentHookFailsOpenOrClosedAsItRegistered) {
  AttachAnswering(
      {.name = "slow", .points = {HookPoint::kPreTurn}, .timeout = absl::Milliseconds(50)},
      [](const HookCall&) { return std::nullopt; });
  const absl::Time start = absl::Now();
  HookOutcome open = RunChain(HookPoint::kPreTurn, "hello");
  EXPECT_FALSE(open.refused);
  EXPECT_EQ(open.text, "hello");
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(50));

  AttachAnswering({.name = "strict",
                   .points = {HookPoint::kPreTurn},
                   .timeout = absl::Milliseconds(50),
                   .fail_closed = true},
                  [](const HookCall&) { return std::nullopt; });
  HookOutcome closed = RunChain(HookPoint::kPreTurn, "hello");
  EXPECT_TRUE(closed.refused);
  EXPECT_EQ(closed.refused_by, "strict");
  EXPECT_THAT(closed.reason, HasSubstr("could not be checked"));
}

TEST_F(TurnHooksTest, AnEmptyOrHugeRewriteCountsAsNoAnswer) {
  AttachAnswering({.name = "blank", .points = {HookPoint::kReply}},
                  [](const HookCall&) { return Rewrite(""); });
  AttachAnswering({.name = "huge", .points = {HookPoint::kReply}},
                  [](const HookCall&) { return Rewrite(std::string(5000, 'x')); });
  EXPECT_EQ(RunChain(HookPoint::kReply, "the answer").text, "the answer");
}

TEST_F(TurnHooksTest, AProgramThatGoesAwayEndsItsCallsAndOthersCannotAnswerThem) {
  std::vector<HookCall> sent;
  const uint64_t handle = hooks_.Attach({.name = "gone",
                                         .points = {HookPoint::kPreTurn},
                                         .timeout = absl::Seconds(30),
                                         .fail_closed = true},
                                        [&](const HookCall& call) {
                                          sent.push_back(call);
                                          return true;
                                        });
  const uint64_t other = AttachAnswering({.name = "other", .points = {HookPoint::kReply}},
                                         [](const HookCall&) { return std::nullopt; });
  std::optional<HookOutcome> outcome;
  asio::co_spawn(
      io_,
      [&]() -> asio::awaitable<void> {
        HookCall call{.text = "hi"};
        outcome = co_await hooks_.Run(HookPoint::kPreTurn, std::move(call));
      },
      asio::detached);
  ASSERT_TRUE(RunUntil([&] { return !sent.empty(); }));
  hooks_.Answer(other, sent[0].id, Rewrite("forged"));  // not its call
  WatchFor(absl::Milliseconds(50));
  EXPECT_FALSE(outcome.has_value());
  hooks_.Detach(handle);
  ASSERT_TRUE(RunUntil([&] { return outcome.has_value(); }));
  EXPECT_TRUE(outcome->refused);  // fail closed: gone is no answer
  EXPECT_FALSE(hooks_.Any(HookPoint::kPreTurn));
  // A late answer to a settled call is ignored.
  hooks_.Answer(handle, sent[0].id, Rewrite("late"));
}

TEST_F(TurnHooksTest, ATurnReadsWhatTheHooksLeftAndTheAnswerIsPassedToo) {
  services_->hooks = &hooks_;
  AttachAnswering({.name = "mask", .points = {HookPoint::kPreTurn, HookPoint::kReply}},
                  [](const HookCall& call) {
                    HookAnswer answer = Rewrite(
                        absl::StrReplaceAll(call.text, {{"darn", "****"}, {"heck", "****"}}));
                    if (call.point == HookPoint::kPreTurn) answer.context = "Office closes at 5.";
                    return answer;
                  });
  model_->script.push_back({.text = "heck, sure"});
  Send("alice@localhost/phone", "a darn question");
  ASSERT_TRUE(WaitForMessages(1, "alice@localhost"));
  EXPECT_EQ(Messages("alice@localhost")[0].body, "****, sure");
  ASSERT_EQ(model_->requests.size(), 1u);
  EXPECT_EQ(model_->requests[0].messages.back().text, "a **** question");
  EXPECT_THAT(model_->requests[0].system, HasSubstr("Office closes at 5."));
  ASSERT_TRUE(WaitForIdle());
  const std::vector<memory::MemoryEntry> history = History("alice@localhost");
  ASSERT_EQ(history.size(), 2u);
  EXPECT_EQ(history[0].text, "a **** question");
  EXPECT_EQ(history[1].text, "****, sure");
}

TEST_F(TurnHooksTest, ARefusedMessageNeverReachesTheModel) {
  services_->hooks = &hooks_;
  AttachAnswering({.name = "gate", .points = {HookPoint::kPreTurn}}, [](const HookCall&) {
    return HookAnswer{.verdict = HookAnswer::Verdict::kRefuse,
                      .reason = "Please say that without the language."};
  });
  Send("alice@localhost/phone", "darn darn");
  ASSERT_TRUE(WaitForMessages(1, "alice@localhost"));
  EXPECT_EQ(Messages("alice@localhost")[0].body, "Please say that without the language.");
  WatchFor(absl::Milliseconds(100));
  EXPECT_TRUE(model_->requests.empty());
}

}  // namespace
}  // namespace herald::agent
