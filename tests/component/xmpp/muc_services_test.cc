#include "component/xmpp/muc_services.h"

#include <string>
#include <vector>

#include "component/xmpp/namespaces.h"
#include "gtest/gtest.h"

namespace herald::xmpp {
namespace {

XmlElement Answer(std::string from, std::string id, std::string type = "result") {
  XmlElement iq("iq");
  iq.SetAttr("type", std::move(type)).SetAttr("id", std::move(id)).SetAttr("from", from);
  return iq;
}

XmlElement Items(std::string id, const std::vector<std::string>& jids) {
  XmlElement iq = Answer("localhost", std::move(id));
  XmlElement& query = iq.AddChild("query", ns::kDiscoItems);
  for (const std::string& jid : jids) query.AddChild("item", ns::kDiscoItems).SetAttr("jid", jid);
  return iq;
}

XmlElement Info(std::string from, std::string id, std::string category) {
  XmlElement iq = Answer(std::move(from), std::move(id));
  iq.AddChild("query", ns::kDiscoInfo)
      .AddChild("identity", ns::kDiscoInfo)
      .SetAttr("category", std::move(category))
      .SetAttr("type", "text");
  return iq;
}

class MucServicesTest : public ::testing::Test {
 protected:
  std::string NextId() { return "i" + std::to_string(++ids_); }
  std::function<std::string()> next_id() {
    return [this] { return NextId(); };
  }
  int ids_ = 0;
};

TEST_F(MucServicesTest, TrustsConfiguredServicesWithoutAsking) {
  MucServices services({"conference.example.org"});
  EXPECT_TRUE(services.settled());
  EXPECT_FALSE(services.discovering());
  services.Restart();
  EXPECT_TRUE(services.settled());
  EXPECT_TRUE(services.Trusts("conference.example.org"));
  EXPECT_FALSE(services.Trusts("muc.evil.example"));
}

TEST_F(MucServicesTest, TrustsOnlyTheItemsThatSayTheyAreConferenceServices) {
  MucServices services({});
  services.Restart();
  EXPECT_FALSE(services.settled());
  XmlElement query = services.ItemsQuery("localhost", "q0");
  EXPECT_EQ(query.Attr("to"), "localhost");
  ASSERT_TRUE(services.Answers(Items("q0", {})));
  std::vector<XmlElement> infos = services.OnAnswer(
      Items("q0", {"conference.localhost", "pubsub.localhost", "user@localhost"}), next_id());
  ASSERT_EQ(infos.size(), 2u);  // a user's JID is not a service
  EXPECT_EQ(infos[0].Attr("to"), "conference.localhost");
  EXPECT_EQ(infos[1].Attr("to"), "pubsub.localhost");
  // Only the entity asked may answer.
  EXPECT_FALSE(services.Answers(Info("evil.example", "i1", "conference")));
  services.OnAnswer(Info("conference.localhost", "i1", "conference"), next_id());
  EXPECT_FALSE(services.settled());
  services.OnAnswer(Info("pubsub.localhost", "i2", "pubsub"), next_id());
  EXPECT_TRUE(services.settled());
  EXPECT_TRUE(services.Trusts("conference.localhost"));
  EXPECT_FALSE(services.Trusts("pubsub.localhost"));
}

TEST_F(MucServicesTest, AnErrorOrGivingUpTrustsWhatAnsweredSoFar) {
  MucServices services({});
  services.Restart();
  services.ItemsQuery("localhost", "q0");
  services.OnAnswer(Items("q0", {"conference.localhost", "rooms.localhost"}), next_id());
  services.OnAnswer(Answer("rooms.localhost", "i2", "error"), next_id());
  services.OnAnswer(Info("conference.localhost", "i1", "conference"), next_id());
  EXPECT_TRUE(services.settled());
  EXPECT_EQ(services.List(), std::vector<std::string>{"conference.localhost"});

  services.Restart();
  services.ItemsQuery("localhost", "q9");
  services.GiveUp();
  EXPECT_TRUE(services.settled());
  EXPECT_TRUE(services.List().empty());
}

TEST_F(MucServicesTest, AsksAboutABoundedNumberOfItems) {
  MucServices services({});
  services.Restart();
  services.ItemsQuery("localhost", "q0");
  std::vector<std::string> many;
  for (int i = 0; i < 500; ++i) many.push_back("s" + std::to_string(i) + ".localhost");
  EXPECT_EQ(services.OnAnswer(Items("q0", many), next_id()).size(), MucServices::kMaxItems);
}

}  // namespace
}  // namespace herald::xmpp
