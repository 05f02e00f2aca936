// SelfPings on an I/O loop without a socket: every self-ping sent is settled exactly once, by
// the occupant's answer, by its deadline, or by the connection going down.
#include "component/xmpp/self_pings.h"

#include <asio.hpp>
#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "tests/component/xmpp/one_stanza.h"

namespace herald::xmpp {
namespace {

Jid J(std::string_view text) { return Jid::Parse(text).value(); }

using testing::OneStanza;

class SelfPingsTest : public ::testing::Test {
 protected:
  explicit SelfPingsTest(absl::Duration timeout = absl::Seconds(30))
      : pings_(io_, timeout, [this](SelfPingResult result) { results_.push_back(result); }) {}

  // Runs `work` on the loop, as the session would, and whatever it made ready.
  void OnLoop(std::function<void()> work) {
    asio::post(io_, std::move(work));
    io_.restart();
    io_.poll();
  }

  asio::io_context io_;
  std::vector<SelfPingResult> results_;
  SelfPings pings_;
};

const Jid kOccupant = J("room@conference.localhost/herald");

TEST_F(SelfPingsTest, TheOccupantsAnswerIsReportedOnceAndForgotten) {
  OnLoop([&] { pings_.Track("h1", kOccupant); });
  OneStanza answer("<iq from='room@conference.localhost/herald' type='result' id='h1'/>");
  bool first = false;
  bool second = true;
  OnLoop([&] {
    first = pings_.OnAnswer(answer.get());
    second = pings_.OnAnswer(answer.get());
  });
  EXPECT_TRUE(first);
  EXPECT_FALSE(second);
  ASSERT_EQ(results_.size(), 1u);
  EXPECT_EQ(results_[0].occupant, kOccupant);
  EXPECT_TRUE(results_[0].joined);
  EXPECT_TRUE(pings_.empty());
}

TEST_F(SelfPingsTest, AnAnswerWithAGuessedIdFromSomeoneElseSettlesNothing) {
  OnLoop([&] { pings_.Track("h1", kOccupant); });
  OneStanza forged("<iq from='mallory@evil.example/x' type='result' id='h1'/>");
  OneStanza unknown("<iq from='room@conference.localhost/herald' type='result' id='h9'/>");
  bool forged_taken = true;
  bool unknown_taken = true;
  OnLoop([&] {
    forged_taken = pings_.OnAnswer(forged.get());
    unknown_taken = pings_.OnAnswer(unknown.get());
  });
  EXPECT_FALSE(forged_taken);
  EXPECT_FALSE(unknown_taken);
  EXPECT_TRUE(results_.empty());
  EXPECT_FALSE(pings_.empty());
}

TEST_F(SelfPingsTest, TheConnectionGoingDownFailsEveryPendingPing) {
  OnLoop([&] {
    pings_.Track("h1", kOccupant);
    pings_.Track("h2", J("other@conference.localhost/herald"));
    pings_.FailAll("disconnected");
  });
  ASSERT_EQ(results_.size(), 2u);
  for (const SelfPingResult& result : results_) {
    EXPECT_FALSE(result.joined);
    EXPECT_EQ(result.condition, "disconnected");
  }
  EXPECT_TRUE(pings_.empty());
}

TEST_F(SelfPingsTest, APingThatCannotBeSentIsReportedLaterNotWhileTheCallerRuns) {
  size_t during_call = 99;
  OnLoop([&] {
    pings_.ReportUnsent(kOccupant);
    during_call = results_.size();
  });
  EXPECT_EQ(during_call, 0u);
  ASSERT_EQ(results_.size(), 1u);
  EXPECT_FALSE(results_[0].joined);
  EXPECT_EQ(results_[0].condition, "disconnected");
}

class ShortSelfPingsTest : public SelfPingsTest {
 protected:
  ShortSelfPingsTest() : SelfPingsTest(absl::Milliseconds(20)) {}
};

TEST_F(ShortSelfPingsTest, APingLeftUnansweredIsReportedAsATimeout) {
  OnLoop([&] { pings_.Track("h1", kOccupant); });
  // The loop runs until it has nothing left to do: the deadline fires, and nothing re-arms it.
  io_.restart();
  io_.run_for(std::chrono::seconds(10));
  ASSERT_EQ(results_.size(), 1u);
  EXPECT_EQ(results_[0].occupant, kOccupant);
  EXPECT_FALSE(results_[0].joined);
  EXPECT_EQ(results_[0].condition, "timeout");
  EXPECT_TRUE(pings_.empty());
}

}  // namespace
}  // namespace herald::xmpp
