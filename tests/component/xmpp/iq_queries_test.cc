// IqQueries on an I/O loop without a socket: every self-ping, feature and archive query sent is
// settled exactly once, by the answer of the one asked, by its deadline, or by the connection
// going down.
#include "component/xmpp/iq_queries.h"

#include <asio.hpp>
#include <chrono>
#include <functional>
#include <string>
#include <variant>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "component/xmpp/stanza_translation.h"
#include "gtest/gtest.h"
#include "tests/component/xmpp/one_stanza.h"

namespace herald::xmpp {
namespace {

Jid J(std::string_view text) { return Jid::Parse(text).value(); }

using testing::OneStanza;

using Kind = IqQueries::Kind;

class IqQueriesTest : public ::testing::Test {
 protected:
  explicit IqQueriesTest(absl::Duration timeout = absl::Seconds(30))
      : pings_(io_, timeout, [this](InboundEvent event) {
          if (auto* result = std::get_if<SelfPingResult>(&event)) results_.push_back(*result);
          if (auto* result = std::get_if<ClientFeatures>(&event)) features_.push_back(*result);
          if (auto* result = std::get_if<ArchiveResult>(&event)) archives_.push_back(*result);
        }) {}

  // Runs `work` on the loop, as the session would, and whatever it made ready.
  void OnLoop(std::function<void()> work) {
    asio::post(io_, std::move(work));
    io_.restart();
    io_.poll();
  }

  asio::io_context io_;
  std::vector<SelfPingResult> results_;
  std::vector<ClientFeatures> features_;
  std::vector<ArchiveResult> archives_;
  IqQueries pings_;
};

const Jid kOccupant = J("room@conference.localhost/herald");

TEST_F(IqQueriesTest, TheOccupantsAnswerIsReportedOnceAndForgotten) {
  OnLoop([&] { pings_.Track("h1", Kind::kSelfPing, kOccupant); });
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

TEST_F(IqQueriesTest, AnAnswerWithAGuessedIdFromSomeoneElseSettlesNothing) {
  OnLoop([&] { pings_.Track("h1", Kind::kSelfPing, kOccupant); });
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

TEST_F(IqQueriesTest, TheConnectionGoingDownFailsEveryPendingPing) {
  OnLoop([&] {
    pings_.Track("h1", Kind::kSelfPing, kOccupant);
    pings_.Track("h2", Kind::kSelfPing, J("other@conference.localhost/herald"));
    pings_.FailAll("disconnected");
  });
  ASSERT_EQ(results_.size(), 2u);
  for (const SelfPingResult& result : results_) {
    EXPECT_FALSE(result.joined);
    EXPECT_EQ(result.condition, "disconnected");
  }
  EXPECT_TRUE(pings_.empty());
}

TEST_F(IqQueriesTest, APingThatCannotBeSentIsReportedLaterNotWhileTheCallerRuns) {
  size_t during_call = 99;
  OnLoop([&] {
    pings_.ReportUnsent(Kind::kSelfPing, kOccupant);
    during_call = results_.size();
  });
  EXPECT_EQ(during_call, 0u);
  ASSERT_EQ(results_.size(), 1u);
  EXPECT_FALSE(results_[0].joined);
  EXPECT_EQ(results_[0].condition, "disconnected");
}

const Jid kClient = J("alice@localhost/phone");

TEST_F(IqQueriesTest, TheClientsFeaturesAreReportedFromItsAnswerOnly) {
  OnLoop([&] { pings_.Track("h3", Kind::kFeatures, kClient); });
  OneStanza forged(
      "<iq from='alice@localhost/laptop' type='result' id='h3'>"
      "<query xmlns='http://jabber.org/protocol/disco#info'/></iq>");
  OneStanza answer(
      "<iq from='alice@localhost/phone' type='result' id='h3'>"
      "<query xmlns='http://jabber.org/protocol/disco#info'>"
      "<identity category='client' type='phone' name='Conversations'/>"
      "<feature var='urn:xmpp:message-correct:0'/><feature var='urn:xmpp:receipts'/>"
      "<feature/></query></iq>");
  bool forged_taken = true;
  bool taken = false;
  OnLoop([&] {
    forged_taken = pings_.OnAnswer(forged.get());
    taken = pings_.OnAnswer(answer.get());
  });
  EXPECT_FALSE(forged_taken);
  EXPECT_TRUE(taken);
  EXPECT_TRUE(results_.empty());
  ASSERT_EQ(features_.size(), 1u);
  EXPECT_EQ(features_[0].of, kClient);
  EXPECT_TRUE(features_[0].answered);
  EXPECT_EQ(features_[0].features,
            (std::vector<std::string>{"urn:xmpp:message-correct:0", "urn:xmpp:receipts"}));
}

TEST_F(IqQueriesTest, AClientThatRefusesOrIsGoneIsReportedUnanswered) {
  OnLoop([&] {
    pings_.Track("h4", Kind::kFeatures, kClient);
    pings_.ReportUnsent(Kind::kFeatures, J("bob@localhost/x"));
  });
  OneStanza refused(
      "<iq from='alice@localhost/phone' type='error' id='h4'><error type='cancel'>"
      "<service-unavailable xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></error></iq>");
  OnLoop([&] { pings_.OnAnswer(refused.get()); });
  ASSERT_EQ(features_.size(), 2u);
  EXPECT_EQ(features_[0].of, J("bob@localhost/x"));
  EXPECT_FALSE(features_[0].answered);
  EXPECT_EQ(features_[0].condition, "disconnected");
  EXPECT_EQ(features_[1].of, kClient);
  EXPECT_FALSE(features_[1].answered);
  EXPECT_EQ(features_[1].condition, "service-unavailable");
  EXPECT_TRUE(features_[1].features.empty());
}

TEST_F(IqQueriesTest, AHostileAnswerKeepsAtMostTheCappedNumberOfFeatures) {
  std::string flood =
      "<iq from='alice@localhost/phone' type='result' id='h5'>"
      "<query xmlns='http://jabber.org/protocol/disco#info'>";
  for (int i = 0; i < 2000; ++i) absl::StrAppend(&flood, "<feature var='f", i, "'/>");
  flood += "</query></iq>";
  OneStanza answer(flood);
  OnLoop([&] {
    pings_.Track("h5", Kind::kFeatures, kClient);
    pings_.OnAnswer(answer.get());
  });
  ASSERT_EQ(features_.size(), 1u);
  EXPECT_EQ(features_[0].features.size(), kMaxClientFeatures);
}

const QueryArchive kArchiveQuery{
    .room = J("lobby@conference.localhost"), .nick = "herald", .max = 20};

TEST_F(IqQueriesTest, ARoomsArchiveIsReportedWithTheMessagesThatCameBeforeItsEnd) {
  OneStanza result(
      "<message from='lobby@conference.localhost'><result xmlns='urn:xmpp:mam:2' queryid='h6' "
      "id='a1'><forwarded xmlns='urn:xmpp:forward:0'><delay xmlns='urn:xmpp:delay' "
      "stamp='2026-11-26T07:30:00Z'/><message xmlns='jabber:client' type='groupchat' "
      "from='lobby@conference.localhost/alice'><body>hi</body></message></forwarded></result>"
      "</message>");
  OneStanza chat("<message from='lobby@conference.localhost/alice'><body>hi</body></message>");
  OneStanza forged_end("<iq from='mallory@localhost/x' type='result' id='h6'/>");
  OneStanza end("<iq from='lobby@conference.localhost' type='result' id='h6'/>");
  bool read = false;
  bool chat_read = true;
  bool forged_taken = true;
  OnLoop([&] {
    pings_.TrackArchive("h6", kArchiveQuery, J("agent.localhost"));
    read = pings_.OnMessage(result.get());
    chat_read = pings_.OnMessage(chat.get());
    forged_taken = pings_.OnAnswer(forged_end.get());
    pings_.OnAnswer(end.get());
  });
  EXPECT_TRUE(read);
  EXPECT_FALSE(chat_read);
  EXPECT_FALSE(forged_taken);
  ASSERT_EQ(archives_.size(), 1u);
  EXPECT_TRUE(archives_[0].answered);
  EXPECT_EQ(archives_[0].room, J("lobby@conference.localhost"));
  EXPECT_EQ(archives_[0].nick, "herald");
  ASSERT_EQ(archives_[0].messages.size(), 1u);
  EXPECT_EQ(archives_[0].messages[0].body, "hi");
  EXPECT_TRUE(pings_.empty());
}

TEST_F(IqQueriesTest, AnArchiveQueryLostWithTheConnectionIsReportedUnanswered) {
  OnLoop([&] {
    pings_.TrackArchive("h7", kArchiveQuery, J("agent.localhost"));
    pings_.ReportUnsent(kArchiveQuery);
  });
  OnLoop([&] { pings_.FailAll("disconnected"); });
  ASSERT_EQ(archives_.size(), 2u);
  for (const ArchiveResult& archive : archives_) {
    EXPECT_FALSE(archive.answered);
    EXPECT_EQ(archive.condition, "disconnected");
    EXPECT_EQ(archive.nick, "herald");
    EXPECT_EQ(archive.room, J("lobby@conference.localhost"));
  }
}

class ShortIqQueriesTest : public IqQueriesTest {
 protected:
  ShortIqQueriesTest() : IqQueriesTest(absl::Milliseconds(20)) {}
};

TEST_F(ShortIqQueriesTest, AQueryLeftUnansweredIsReportedAsATimeout) {
  OnLoop([&] {
    pings_.Track("h1", Kind::kSelfPing, kOccupant);
    pings_.Track("h2", Kind::kFeatures, kClient);
  });
  // The loop runs until it has nothing left to do: the deadline fires, and nothing re-arms it.
  io_.restart();
  io_.run_for(std::chrono::seconds(10));
  ASSERT_EQ(results_.size(), 1u);
  EXPECT_EQ(results_[0].occupant, kOccupant);
  EXPECT_FALSE(results_[0].joined);
  EXPECT_EQ(results_[0].condition, "timeout");
  ASSERT_EQ(features_.size(), 1u);
  EXPECT_FALSE(features_[0].answered);
  EXPECT_EQ(features_[0].condition, "timeout");
  EXPECT_TRUE(pings_.empty());
}

}  // namespace
}  // namespace herald::xmpp
