// ClientFeatureCache: who is asked, when again, and what an answer (or none) means.
#include "component/agent/client_features.h"

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "component/xmpp/namespaces.h"
#include "gtest/gtest.h"

namespace herald::agent {
namespace {

xmpp::Jid J(std::string_view text) { return xmpp::Jid::Parse(text).value(); }

const absl::Time kStart = absl::FromUnixSeconds(1763800000);

TEST(ClientFeatureCacheTest, AClientIsAskedOnceAndItsAnswerKeptForAnHour) {
  ClientFeatureCache cache;
  const xmpp::Jid phone = J("alice@localhost/phone");
  EXPECT_FALSE(cache.ShowsCorrections(phone).has_value());
  EXPECT_TRUE(cache.StartQuery(phone, kStart));
  EXPECT_FALSE(cache.StartQuery(phone, kStart + absl::Seconds(5)));  // the question is open
  EXPECT_FALSE(cache.ShowsCorrections(phone).has_value());
  cache.Record(xmpp::ClientFeatures{.of = phone,
                                    .answered = true,
                                    .features = {"urn:xmpp:receipts", xmpp::ns::kMessageCorrect}},
               kStart + absl::Seconds(1));
  EXPECT_EQ(cache.ShowsCorrections(phone), true);
  EXPECT_FALSE(cache.StartQuery(phone, kStart + absl::Minutes(59)));
  EXPECT_TRUE(cache.StartQuery(phone, kStart + absl::Minutes(61)));
}

TEST(ClientFeatureCacheTest, NoAnswerOrNoCorrectionsMeansNoStreaming) {
  ClientFeatureCache cache;
  const xmpp::Jid old_client = J("bob@localhost/old");
  const xmpp::Jid gone = J("bob@localhost/gone");
  ASSERT_TRUE(cache.StartQuery(old_client, kStart));
  ASSERT_TRUE(cache.StartQuery(gone, kStart));
  cache.Record(
      xmpp::ClientFeatures{.of = old_client, .answered = true, .features = {"jabber:iq:version"}},
      kStart);
  cache.Record(xmpp::ClientFeatures{.of = gone, .answered = false, .condition = "timeout"}, kStart);
  EXPECT_EQ(cache.ShowsCorrections(old_client), false);
  EXPECT_EQ(cache.ShowsCorrections(gone), false);
  // A question left open is asked again after a minute, not before.
  const xmpp::Jid silent = J("bob@localhost/silent");
  ASSERT_TRUE(cache.StartQuery(silent, kStart));
  EXPECT_FALSE(cache.StartQuery(silent, kStart + absl::Seconds(59)));
  EXPECT_TRUE(cache.StartQuery(silent, kStart + absl::Seconds(61)));
}

TEST(ClientFeatureCacheTest, ABareJidOrAnUnaskedAnswerChangesNothing) {
  ClientFeatureCache cache;
  EXPECT_FALSE(cache.StartQuery(J("alice@localhost"), kStart));
  cache.Record(xmpp::ClientFeatures{.of = J("mallory@localhost/x"),
                                    .answered = true,
                                    .features = {xmpp::ns::kMessageCorrect}},
               kStart);
  EXPECT_EQ(cache.size(), 0u);
  EXPECT_FALSE(cache.ShowsCorrections(J("mallory@localhost/x")).has_value());
}

TEST(ClientFeatureCacheTest, ItHoldsAtMostTheLimitDroppingTheOldest) {
  ClientFeatureCache cache;
  for (size_t i = 0; i <= ClientFeatureCache::kMaxClients; ++i) {
    ASSERT_TRUE(
        cache.StartQuery(J(absl::StrCat("user@localhost/r", i)), kStart + absl::Seconds(i)));
  }
  EXPECT_EQ(cache.size(), ClientFeatureCache::kMaxClients);
  EXPECT_TRUE(cache.StartQuery(J("user@localhost/r0"), kStart + absl::Hours(2)));  // it was dropped
}

// The oldest is the one asked or answered longest ago: an answer makes a client young again.
TEST(ClientFeatureCacheTest, AClientThatAnsweredLatelyOutlivesOnesAskedAfterIt) {
  ClientFeatureCache cache;
  const size_t n = ClientFeatureCache::kMaxClients;
  for (size_t i = 0; i < n; ++i) {
    ASSERT_TRUE(
        cache.StartQuery(J(absl::StrCat("user@localhost/r", i)), kStart + absl::Seconds(i)));
  }
  const xmpp::Jid first = J("user@localhost/r0");
  cache.Record(xmpp::ClientFeatures{.of = first, .answered = true, .features = {}},
               kStart + absl::Seconds(n));
  ASSERT_TRUE(cache.StartQuery(J("user@localhost/new"), kStart + absl::Seconds(n + 1)));
  EXPECT_EQ(cache.size(), n);
  EXPECT_EQ(cache.ShowsCorrections(first), false);  // kept: r1 went instead
  // r1 is forgotten, so an answer from it is not taken.
  const xmpp::Jid second = J("user@localhost/r1");
  cache.Record(xmpp::ClientFeatures{.of = second, .answered = true, .features = {}},
               kStart + absl::Seconds(n + 2));
  EXPECT_FALSE(cache.ShowsCorrections(second).has_value());
}

}  // namespace
}  // namespace herald::agent
