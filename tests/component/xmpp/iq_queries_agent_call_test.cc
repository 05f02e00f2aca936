// IqQueries with calls of another agent (urn:herald:agent:0): each call sent is settled exactly
// once, as an AgentAnswer with the caller's call id — by the answer of the agent asked, by the
// call's own timeout, or by the connection going down.
#include <algorithm>
#include <asio.hpp>
#include <chrono>
#include <functional>
#include <string>
#include <variant>
#include <vector>

#include "absl/time/time.h"
#include "component/xmpp/iq_queries.h"
#include "gtest/gtest.h"
#include "tests/component/xmpp/one_stanza.h"

namespace herald::xmpp {
namespace {

using testing::OneStanza;

Jid J(std::string_view text) { return Jid::Parse(text).value(); }

class IqQueriesAgentCallTest : public ::testing::Test {
 protected:
  // A default timeout far away: only a call's own timeout may end it here.
  IqQueriesAgentCallTest()
      : queries_(io_, absl::Hours(1), [this](InboundEvent event) {
          if (auto* answer = std::get_if<AgentAnswer>(&event)) answers_.push_back(*answer);
        }) {}

  // Runs `work` on the loop, as the session would, and whatever it made ready.
  void OnLoop(std::function<void()> work) {
    asio::post(io_, std::move(work));
    io_.restart();
    io_.poll();
  }

  static CallAgent Call(std::string call_id, absl::Duration timeout = absl::Seconds(60)) {
    return CallAgent{.call_id = std::move(call_id),
                     .to = J("research.example.org"),
                     .from = J("herald@localhost/herald"),
                     .kind = AgentRequest::Kind::kExecute,
                     .skill = "current_time",
                     .timeout = timeout};
  }

  asio::io_context io_;
  std::vector<AgentAnswer> answers_;
  IqQueries queries_;
};

TEST_F(IqQueriesAgentCallTest, AnAnsweredCallIsReportedWithItsCallIdOnce) {
  OnLoop([&] { queries_.TrackAgentCall("q1", Call("d1")); });
  OneStanza forged(
      "<iq type='result' id='q1' from='mallory@evil.example/x'>"
      "<result xmlns='urn:herald:agent:0' ok='true' duration-ms='1'><output>no</output>"
      "</result></iq>");
  OneStanza answer(
      "<iq type='result' id='q1' from='research.example.org'>"
      "<result xmlns='urn:herald:agent:0' ok='true' duration-ms='12'>"
      "<output>22:00</output></result></iq>");
  bool forged_taken = true;
  bool first = false;
  bool second = true;
  OnLoop([&] {
    forged_taken = queries_.OnAnswer(forged.get());
    first = queries_.OnAnswer(answer.get());
    second = queries_.OnAnswer(answer.get());
  });
  EXPECT_FALSE(forged_taken);
  EXPECT_TRUE(first);
  EXPECT_FALSE(second);
  ASSERT_EQ(answers_.size(), 1u);
  EXPECT_EQ(answers_[0].call_id, "d1");
  EXPECT_EQ(answers_[0].from, J("research.example.org"));
  EXPECT_EQ(answers_[0].condition, "");
  EXPECT_TRUE(answers_[0].ok);
  EXPECT_EQ(answers_[0].output, "22:00");
  EXPECT_EQ(answers_[0].duration, absl::Milliseconds(12));
  EXPECT_TRUE(queries_.empty());
}

TEST_F(IqQueriesAgentCallTest, ARefusalIsReportedWithItsCondition) {
  OnLoop([&] { queries_.TrackAgentCall("q2", Call("d2")); });
  OneStanza refused(
      "<iq type='error' id='q2' from='research.example.org'><error type='cancel'>"
      "<policy-violation xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/>"
      "<text xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'>hop limit 3 reached</text>"
      "</error></iq>");
  OnLoop([&] { EXPECT_TRUE(queries_.OnAnswer(refused.get())); });
  ASSERT_EQ(answers_.size(), 1u);
  EXPECT_EQ(answers_[0].call_id, "d2");
  EXPECT_EQ(answers_[0].condition, "policy-violation");
  EXPECT_EQ(answers_[0].error_text, "hop limit 3 reached");
}

TEST_F(IqQueriesAgentCallTest, ACallUnansweredWithinItsOwnTimeoutIsReportedAsATimeout) {
  OnLoop([&] {
    queries_.TrackAgentCall("q3", Call("d3", absl::Milliseconds(20)));
    queries_.TrackAgentCall("q4", Call("d4", absl::Hours(2)));
  });
  // The short call's deadline fires; the long one's is hours away.
  io_.restart();
  const absl::Time give_up = absl::Now() + absl::Seconds(10);
  while (answers_.empty() && absl::Now() < give_up) io_.run_for(std::chrono::milliseconds(5));
  ASSERT_EQ(answers_.size(), 1u);
  EXPECT_EQ(answers_[0].call_id, "d3");
  EXPECT_EQ(answers_[0].from, J("research.example.org"));
  EXPECT_EQ(answers_[0].condition, "timeout");
  EXPECT_FALSE(answers_[0].ok);
  EXPECT_FALSE(queries_.empty()) << "the other call still waits";

  // A late answer to the call that timed out settles nothing.
  OneStanza late("<iq type='result' id='q3' from='research.example.org'/>");
  bool taken = true;
  OnLoop([&] { taken = queries_.OnAnswer(late.get()); });
  EXPECT_FALSE(taken);
  EXPECT_EQ(answers_.size(), 1u);
}

// The timer waits for the earliest deadline even when a later one was armed first.
TEST_F(IqQueriesAgentCallTest, AShorterCallTrackedAfterALongOneTimesOutOnItsOwnDeadline) {
  OnLoop([&] { queries_.TrackAgentCall("q5", Call("d5", absl::Hours(2))); });
  OnLoop([&] { queries_.TrackAgentCall("q6", Call("d6", absl::Milliseconds(20))); });
  io_.restart();
  const absl::Time give_up = absl::Now() + absl::Seconds(10);
  while (answers_.empty() && absl::Now() < give_up) io_.run_for(std::chrono::milliseconds(5));
  ASSERT_EQ(answers_.size(), 1u);
  EXPECT_EQ(answers_[0].call_id, "d6");
  EXPECT_EQ(answers_[0].condition, "timeout");
}

// Once nothing waits for an answer no timer is left behind, so a loop with nothing else to do
// ends at once (a session that stops is not held up by a deadline an hour away).
TEST_F(IqQueriesAgentCallTest, AnsweringTheLastCallLeavesNoTimerBehind) {
  OnLoop([&] {
    queries_.TrackAgentCall("q7", Call("d7", absl::Minutes(30)));
    queries_.TrackAgentCall("q8", Call("d8", absl::Minutes(20)));
  });
  OneStanza first("<iq type='result' id='q8' from='research.example.org'/>");
  OneStanza second("<iq type='result' id='q7' from='research.example.org'/>");
  OnLoop([&] { EXPECT_TRUE(queries_.OnAnswer(first.get())); });
  OnLoop([&] { EXPECT_TRUE(queries_.OnAnswer(second.get())); });
  ASSERT_EQ(answers_.size(), 2u);
  EXPECT_TRUE(queries_.empty());
  io_.restart();
  const absl::Time start = absl::Now();
  io_.run_for(std::chrono::seconds(20));  // returns as soon as the loop has no work
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));
}

TEST_F(IqQueriesAgentCallTest, TheConnectionGoingDownFailsEveryPendingCall) {
  OnLoop([&] {
    queries_.TrackAgentCall("q5", Call("d5"));
    queries_.TrackAgentCall("q6", Call("d6"));
    queries_.FailAll("disconnected");
  });
  ASSERT_EQ(answers_.size(), 2u);
  std::vector<std::string> ids;
  for (const AgentAnswer& answer : answers_) {
    ids.push_back(answer.call_id);
    EXPECT_EQ(answer.condition, "disconnected");
    EXPECT_EQ(answer.from, J("research.example.org"));
  }
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(ids, (std::vector<std::string>{"d5", "d6"}));
  EXPECT_TRUE(queries_.empty());
}

TEST_F(IqQueriesAgentCallTest, ACallThatCannotBeSentIsReportedLaterNotWhileTheCallerRuns) {
  size_t during_call = 99;
  OnLoop([&] {
    queries_.ReportUnsent(Call("d7"));
    during_call = answers_.size();
  });
  EXPECT_EQ(during_call, 0u);
  ASSERT_EQ(answers_.size(), 1u);
  EXPECT_EQ(answers_[0].call_id, "d7");
  EXPECT_EQ(answers_[0].from, J("research.example.org"));
  EXPECT_EQ(answers_[0].condition, "disconnected");
  EXPECT_TRUE(queries_.empty());
}

}  // namespace
}  // namespace herald::xmpp
