// Tests of the check a developer's /raw stanza passes before Herald writes it to the stream, and
// of reading back a stanza another instance handed over.
#include "component/xmpp/raw_stanza.h"

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "component/xmpp/xml_element.h"
#include "component/xmpp/xml_writer.h"
#include "gtest/gtest.h"

namespace herald::xmpp {
namespace {

// The error message as a std::string, whatever string_view Abseil uses.
std::string MessageOf(const absl::Status& status) { return std::string(status.message()); }

TEST(RawStanzaTest, AcceptsAMessagePresenceOrIq) {
  EXPECT_TRUE(ValidateRawStanza("<message to='alice@localhost' type='chat'><body>hi &amp; bye"
                                "</body></message>")
                  .ok());
  EXPECT_TRUE(ValidateRawStanza("<presence to='room@conference.localhost/herald'>"
                                "<x xmlns='http://jabber.org/protocol/muc'/></presence>")
                  .ok());
  EXPECT_TRUE(ValidateRawStanza("<iq type='get' id='x1' to='localhost'>"
                                "<ping xmlns='urn:xmpp:ping'/></iq>")
                  .ok());
}

TEST(RawStanzaTest, AcceptsWhitespaceAroundTheElement) {
  EXPECT_TRUE(ValidateRawStanza("  \n<presence/>\n ").ok());
}

TEST(RawStanzaTest, RefusesAnEmptyText) {
  absl::Status status = ValidateRawStanza("   ");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(MessageOf(status).find("empty"), std::string::npos) << status;
}

TEST(RawStanzaTest, RefusesAnElementThatIsNotAStanza) {
  absl::Status status = ValidateRawStanza("<handshake>abc</handshake>");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(MessageOf(status).find("<handshake/> is not a message, presence or iq"),
            std::string::npos)
      << status;
  EXPECT_FALSE(ValidateRawStanza("<stream:features/>").ok());
}

TEST(RawStanzaTest, RefusesTwoStanzas) {
  absl::Status status = ValidateRawStanza("<presence/><presence type='unavailable'/>");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(MessageOf(status).find("2 top-level elements"), std::string::npos) << status;
}

TEST(RawStanzaTest, RefusesAnUnfinishedElement) {
  absl::Status status = ValidateRawStanza("<message to='alice@localhost'><body>hi</body>");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(MessageOf(status).find("not complete"), std::string::npos) << status;
}

TEST(RawStanzaTest, RefusesTextOrAPartialElementAfterTheStanza) {
  EXPECT_FALSE(ValidateRawStanza("<presence/>trailing text").ok());
  absl::Status status = ValidateRawStanza("<presence/><mess");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(MessageOf(status).find("after its element"), std::string::npos) << status;
}

TEST(RawStanzaTest, RefusesAStanzaThatClosesTheStream) {
  absl::Status status = ValidateRawStanza("<presence/></stream:stream>");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(MessageOf(status).find("closes the XMPP stream"), std::string::npos) << status;
}

TEST(RawStanzaTest, RefusesMalformedXmlNamingTheStreamErrorItWouldCause) {
  absl::Status status = ValidateRawStanza("<message><body>a</message></body>");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(MessageOf(status).find("not-well-formed"), std::string::npos) << status;
}

TEST(RawStanzaTest, RefusesWhatXmppForbids) {
  absl::Status comment = ValidateRawStanza("<message><!-- hi --></message>");
  EXPECT_NE(MessageOf(comment).find("restricted-xml"), std::string::npos) << comment;
  absl::Status doctype = ValidateRawStanza("<!DOCTYPE x [<!ENTITY a 'b'>]><message/>");
  EXPECT_FALSE(doctype.ok());
  absl::Status pi = ValidateRawStanza("<?evil?><message/>");
  EXPECT_FALSE(pi.ok());
  EXPECT_FALSE(ValidateRawStanza("<message><body>\xff\xfe</body></message>").ok());
}

TEST(RawStanzaTest, RefusesAStanzaThatDeclaresItsOwnNamespace) {
  absl::Status status = ValidateRawStanza("<message xmlns='jabber:server'/>");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(MessageOf(status).find("jabber:server"), std::string::npos) << status;
}

TEST(RawStanzaTest, RefusesAStanzaOverTheSizeCap) {
  std::string big = "<message><body>" + std::string(kMaxRawStanzaBytes, 'a') + "</body></message>";
  absl::Status status = ValidateRawStanza(big);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(MessageOf(status).find("allowed"), std::string::npos) << status;
}

constexpr std::string_view kComponent = "jabber:component:accept";

TEST(ParseStanzaTest, ReadsBackWhatAppendXmlWrote) {
  XmlElement message("message", std::string(kComponent));
  message.SetAttr("from", "lobby@conference.localhost/alice").SetAttr("type", "groupchat");
  message.AddChild("body").AddText("herald: 1 < 2 & \"ok\"");
  message.AddChild("stanza-id", "urn:xmpp:sid:0").SetAttr("id", "s1");
  std::string xml;
  AppendXml(message, kComponent, xml);

  absl::StatusOr<std::unique_ptr<XmlElement>> read =
      ParseStanza(xml, kComponent, kMaxRawStanzaBytes);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ((*read)->name(), "message");
  EXPECT_EQ((*read)->xmlns(), kComponent);
  EXPECT_EQ((*read)->Attr("from"), "lobby@conference.localhost/alice");
  ASSERT_NE((*read)->FindChild("body"), nullptr);
  EXPECT_EQ((*read)->FindChild("body")->Text(), "herald: 1 < 2 & \"ok\"");
  ASSERT_NE((*read)->FindChild("stanza-id", "urn:xmpp:sid:0"), nullptr);
  EXPECT_EQ((*read)->FindChild("stanza-id", "urn:xmpp:sid:0")->Attr("id"), "s1");
}

TEST(ParseStanzaTest, RefusesWhatIsNotOneStanzaOfTheStream) {
  EXPECT_FALSE(ParseStanza("", kComponent, kMaxRawStanzaBytes).ok());
  EXPECT_FALSE(ParseStanza("<message/><message/>", kComponent, kMaxRawStanzaBytes).ok());
  EXPECT_FALSE(ParseStanza("<message>", kComponent, kMaxRawStanzaBytes).ok());
  EXPECT_FALSE(ParseStanza("<stream:features/>", kComponent, kMaxRawStanzaBytes).ok());
  EXPECT_FALSE(ParseStanza("</stream:stream>", kComponent, kMaxRawStanzaBytes).ok());
  absl::StatusOr<std::unique_ptr<XmlElement>> other =
      ParseStanza("<message xmlns='jabber:client'/>", kComponent, kMaxRawStanzaBytes);
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(MessageOf(other.status()).find("jabber:client"), std::string::npos) << other.status();
  EXPECT_FALSE(ParseStanza("<message><!-- x --></message>", kComponent, kMaxRawStanzaBytes).ok());
}

TEST(ParseStanzaTest, TakesStanzasUpToTheStreamsLimit) {
  const std::string big =
      "<message><body>" + std::string(kMaxRawStanzaBytes, 'a') + "</body></message>";
  EXPECT_TRUE(ParseStanza(big, kComponent, 4 * kMaxRawStanzaBytes).ok());
  EXPECT_FALSE(ParseStanza(big, kComponent, kMaxRawStanzaBytes).ok());
}

}  // namespace
}  // namespace herald::xmpp
