#include "component/xmpp/iq_responder.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "component/xmpp/namespaces.h"
#include "gtest/gtest.h"
#include "tests/component/xmpp/one_stanza.h"

namespace herald::xmpp {
namespace {

using testing::OneStanza;

IqResponder Responder() {
  return IqResponder({.category = "component", .type = "generic", .name = "Herald"}, "1.2.3");
}

std::string_view ErrorOf(const XmlElement& reply) {
  const XmlElement* error = reply.FindChild("error");
  if (error == nullptr) return "";
  for (const XmlNode& node : error->children()) {
    if (node.element && node.element->xmlns() == ns::kStanzaErrors) return node.element->name();
  }
  return "";
}

TEST(IqResponderTest, AnswersPingWithAnEmptyResultAddressedBack) {
  OneStanza iq(
      "<iq type='get' id='1' from='a@b/c' to='agent.b'><ping xmlns='urn:xmpp:ping'/></iq>");
  std::optional<XmlElement> reply = Responder().Answer(iq.get());
  ASSERT_TRUE(reply.has_value());
  EXPECT_EQ(reply->Attr("type"), "result");
  EXPECT_EQ(reply->Attr("id"), "1");
  EXPECT_EQ(reply->Attr("to"), "a@b/c");
  EXPECT_EQ(reply->Attr("from"), "agent.b");
  EXPECT_EQ(reply->FirstChildElement(), nullptr);
}

TEST(IqResponderTest, ReportsNameAndVersionButNotTheOperatingSystem) {
  OneStanza iq("<iq type='get' id='v' from='a@b/c'><query xmlns='jabber:iq:version'/></iq>");
  std::optional<XmlElement> reply = Responder().Answer(iq.get());
  ASSERT_TRUE(reply.has_value());
  const XmlElement* query = reply->FindChild("query", ns::kVersion);
  ASSERT_NE(query, nullptr);
  EXPECT_EQ(query->ChildText("name"), "Herald");
  EXPECT_EQ(query->ChildText("version"), "1.2.3");
  EXPECT_EQ(query->FindChild("os"), nullptr);
}

TEST(IqResponderTest, AnswersADiscoNodeItDoesNotHaveWithItemNotFound) {
  OneStanza iq(
      "<iq type='get' id='n' from='a@b/c'>"
      "<query xmlns='http://jabber.org/protocol/disco#info' node='x'/></iq>");
  std::optional<XmlElement> reply = Responder().Answer(iq.get());
  ASSERT_TRUE(reply.has_value());
  EXPECT_EQ(ErrorOf(*reply), "item-not-found");
}

TEST(IqResponderTest, AdvertisesAddedFeaturesOnceAndSorted) {
  IqResponder responder = Responder();
  responder.AddFeature("urn:xmpp:ping");
  responder.AddFeature("http://jabber.org/protocol/chatstates");
  OneStanza iq(
      "<iq type='get' id='d' from='a@b/c'>"
      "<query xmlns='http://jabber.org/protocol/disco#info'/></iq>");
  std::optional<XmlElement> reply = responder.Answer(iq.get());
  ASSERT_TRUE(reply.has_value());
  std::vector<std::string> features;
  for (const XmlNode& node : reply->FindChild("query", ns::kDiscoInfo)->children()) {
    if (node.element && node.element->name() == "feature") {
      features.emplace_back(node.element->Attr("var"));
    }
  }
  EXPECT_EQ(features,
            (std::vector<std::string>{
                "http://jabber.org/protocol/chatstates", "http://jabber.org/protocol/disco#info",
                "http://jabber.org/protocol/disco#items", "jabber:iq:version", "urn:xmpp:ping"}));
}

TEST(CapsVerificationTest, MatchesTheSimpleExampleOfXep0115) {
  // XEP-0115 §5.2: "client/pc//Exodus 0.9.1<http://jabber.org/protocol/caps<
  // http://jabber.org/protocol/disco#info<http://jabber.org/protocol/disco#items<
  // http://jabber.org/protocol/muc<", in any order of the features.
  EXPECT_EQ(CapsVerification(
                {.category = "client", .type = "pc", .name = "Exodus 0.9.1"},
                {"http://jabber.org/protocol/muc", "http://jabber.org/protocol/disco#info",
                 "http://jabber.org/protocol/caps", "http://jabber.org/protocol/disco#items"}),
            "QgayPKawpkPSDYmwT/WM94uAlu0=");
}

TEST(IqResponderTest, AnswersDiscoInfoAtItsCapsNodeAndNoOtherNode) {
  IqResponder responder = Responder();
  responder.AddFeature("urn:xmpp:receipts");
  const std::string ver = responder.CapsVerification();
  // What disco#info says is what the ver hashes (features sorted, duplicates once).
  EXPECT_EQ(ver, CapsVerification({.category = "component", .type = "generic", .name = "Herald"},
                                  {"urn:xmpp:receipts", "http://jabber.org/protocol/disco#info",
                                   "http://jabber.org/protocol/disco#items", "urn:xmpp:ping",
                                   "jabber:iq:version", "urn:xmpp:ping"}));
  const std::string node = absl::StrCat(kCapsNode, "#", ver);
  OneStanza at_caps(
      absl::StrCat("<iq type='get' id='c' from='a@b/c'><query "
                   "xmlns='http://jabber.org/protocol/disco#info' node='",
                   node, "'/></iq>"));
  std::optional<XmlElement> reply = responder.Answer(at_caps.get());
  ASSERT_TRUE(reply.has_value());
  EXPECT_EQ(reply->Attr("type"), "result");
  const XmlElement* query = reply->FindChild("query", ns::kDiscoInfo);
  ASSERT_NE(query, nullptr);
  EXPECT_EQ(query->Attr("node"), node);
  EXPECT_NE(query->FindChild("identity"), nullptr);

  OneStanza stale(
      "<iq type='get' id='s' from='a@b/c'><query xmlns='http://jabber.org/protocol/disco#info' "
      "node='urn:herald:caps#c3RhbGU='/></iq>");
  EXPECT_EQ(ErrorOf(*responder.Answer(stale.get())), "item-not-found");
}

TEST(IqResponderTest, AnswersUnknownRequestsWithServiceUnavailable) {
  OneStanza iq("<iq type='set' id='s' from='a@b/c'><x xmlns='urn:example:unknown'/></iq>");
  std::optional<XmlElement> reply = Responder().Answer(iq.get());
  ASSERT_TRUE(reply.has_value());
  EXPECT_EQ(reply->Attr("type"), "error");
  EXPECT_EQ(ErrorOf(*reply), "service-unavailable");
}

TEST(IqResponderTest, AnswersARequestWithoutExactlyOnePayloadWithBadRequest) {
  OneStanza none("<iq type='get' id='0' from='a@b/c'/>");
  OneStanza two(
      "<iq type='get' id='2' from='a@b/c'><ping xmlns='urn:xmpp:ping'/>"
      "<ping xmlns='urn:xmpp:ping'/></iq>");
  EXPECT_EQ(ErrorOf(*Responder().Answer(none.get())), "bad-request");
  EXPECT_EQ(ErrorOf(*Responder().Answer(two.get())), "bad-request");
}

TEST(IqResponderTest, NeverAnswersResultsErrorsOrRequestsWithoutAnId) {
  OneStanza result("<iq type='result' id='r' from='a@b/c'/>");
  OneStanza error(
      "<iq type='error' id='e' from='a@b/c'><error type='cancel'>"
      "<service-unavailable xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></error></iq>");
  OneStanza no_id("<iq type='get' from='a@b/c'><ping xmlns='urn:xmpp:ping'/></iq>");
  OneStanza bogus_type("<iq type='bogus' id='b' from='a@b/c'><ping xmlns='urn:xmpp:ping'/></iq>");
  EXPECT_FALSE(Responder().Answer(result.get()).has_value());
  EXPECT_FALSE(Responder().Answer(error.get()).has_value());
  EXPECT_FALSE(Responder().Answer(no_id.get()).has_value());
  EXPECT_FALSE(Responder().Answer(bogus_type.get()).has_value());
}

}  // namespace
}  // namespace herald::xmpp
