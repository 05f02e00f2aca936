#include "component/xmpp/xml_element.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace herald::xmpp {
namespace {

TEST(XmlElementTest, SetAttrReplacesAnExistingValueAndAppendsANewOneInOrder) {
  XmlElement message("message", "jabber:client");
  message.SetAttr("to", "alice@localhost").SetAttr("type", "chat").SetAttr("to", "bob@localhost");
  ASSERT_EQ(message.attributes().size(), 2u);
  EXPECT_EQ(message.attributes()[0].name, "to");
  EXPECT_EQ(message.attributes()[0].value, "bob@localhost");
  EXPECT_EQ(message.attributes()[1].name, "type");
  EXPECT_EQ(message.Attr("type"), "chat");
}

TEST(XmlElementTest, AnAbsentAttributeReadsAsEmptyAndIsNotPresent) {
  XmlElement message("message");
  message.SetAttr("id", "");
  EXPECT_EQ(message.Attr("to"), "");
  EXPECT_FALSE(message.HasAttr("to"));
  EXPECT_TRUE(message.HasAttr("id"));
}

TEST(XmlElementTest, RemoveAttrRemovesOnlyThatAttribute) {
  XmlElement iq("iq");
  iq.SetAttr("a", "1").SetAttr("b", "2").SetAttr("c", "3");
  iq.RemoveAttr("b");
  iq.RemoveAttr("missing");
  ASSERT_EQ(iq.attributes().size(), 2u);
  EXPECT_EQ(iq.attributes()[0].name, "a");
  EXPECT_EQ(iq.attributes()[1].name, "c");
}

TEST(XmlElementTest, AddTextMergesWithTextThatEndsTheChildren) {
  XmlElement body("body");
  body.AddText("hello ").AddText("").AddText("world");
  ASSERT_EQ(body.children().size(), 1u);
  EXPECT_EQ(body.children()[0].text, "hello world");
  body.AddChild("b").AddText("bold");
  body.AddText("!");
  ASSERT_EQ(body.children().size(), 3u);
  EXPECT_EQ(body.Text(), "hello world!");
}

TEST(XmlElementTest, CloneCopiesTheWholeTreeIndependently) {
  XmlElement message("message", "jabber:client");
  message.SetAttr("to", "alice@localhost");
  XmlElement& body = message.AddChild("body");
  body.AddText("original");
  body.AddChild("inner", "urn:x").SetAttr("k", "v");

  XmlElement copy = message.Clone();
  XmlElement& copied_body = const_cast<XmlElement&>(*copy.FindChild("body"));
  copied_body.AddText(" changed");
  copied_body.SetAttr("new", "1");
  copy.SetAttr("to", "bob@localhost");

  EXPECT_EQ(message.Attr("to"), "alice@localhost");
  EXPECT_EQ(message.ChildText("body"), "original");
  EXPECT_FALSE(message.FindChild("body")->HasAttr("new"));
  EXPECT_EQ(copy.ChildText("body"), "original changed");
  EXPECT_NE(copy.FindChild("body"), message.FindChild("body"));
  const XmlElement* inner = copy.FindChild("body")->FindChild("inner", "urn:x");
  ASSERT_NE(inner, nullptr);
  EXPECT_EQ(inner->Attr("k"), "v");
  EXPECT_NE(inner, message.FindChild("body")->FindChild("inner", "urn:x"));
  EXPECT_EQ(copy.xmlns(), "jabber:client");
}

TEST(XmlElementTest, FindChildLooksInTheElementsOwnNamespace) {
  XmlElement message("message", "jabber:client");
  message.AddChild("body", "urn:other").AddText("foreign");
  message.AddChild("body", "jabber:client").AddText("own");
  EXPECT_EQ(message.ChildText("body"), "own");

  XmlElement built("message", "jabber:client");
  built.AddChild("body").AddText("inherited");  // empty namespace: the parent's
  EXPECT_EQ(built.ChildText("body"), "inherited");
  EXPECT_EQ(built.FindChild("body", "jabber:client"), built.FirstChildElement());
  EXPECT_EQ(built.FindChild("missing"), nullptr);
  EXPECT_EQ(built.ChildText("missing"), "");
}

TEST(XmlElementTest, FindChildWithANamespaceMatchesNameAndNamespace) {
  XmlElement iq("iq", "jabber:client");
  iq.AddChild("query", "jabber:iq:roster");
  const XmlElement& info = iq.AddChild("query", "http://jabber.org/protocol/disco#info");
  EXPECT_EQ(iq.FindChild("query", "http://jabber.org/protocol/disco#info"), &info);
  EXPECT_EQ(iq.FindChild("query", "urn:none"), nullptr);
  EXPECT_EQ(iq.FindChild("query"), nullptr);  // neither is in jabber:client
}

TEST(XmlElementTest, FindChildByNamespaceIgnoresTheName) {
  XmlElement iq("iq", "jabber:client");
  iq.AddText("  ");
  iq.AddChild("error");
  const XmlElement& ping = iq.AddChild("ping", "urn:xmpp:ping");
  EXPECT_EQ(iq.FindChildByNamespace("urn:xmpp:ping"), &ping);
  EXPECT_EQ(iq.FindChildByNamespace("jabber:client")->name(), "error");
  EXPECT_EQ(iq.FindChildByNamespace("urn:none"), nullptr);
}

TEST(XmlElementTest, FirstChildElementSkipsTextAndIsNullWithoutElements) {
  XmlElement iq("iq");
  EXPECT_EQ(iq.FirstChildElement(), nullptr);
  iq.AddText("text");
  EXPECT_EQ(iq.FirstChildElement(), nullptr);
  iq.AddChild("query", "urn:q");
  ASSERT_NE(iq.FirstChildElement(), nullptr);
  EXPECT_EQ(iq.FirstChildElement()->name(), "query");
}

TEST(XmlElementTest, TextConcatenatesOnlyDirectTextChildren) {
  XmlElement body("body");
  body.AddText("a");
  body.AddChild("span").AddText("nested");
  body.AddText("b");
  EXPECT_EQ(body.Text(), "ab");
}

TEST(XmlElementTest, AddChildTakesAPrebuiltElement) {
  XmlElement x("x", "jabber:x:data");
  x.SetAttr("type", "submit");
  XmlElement message("message", "jabber:client");
  XmlElement& added = message.AddChild(std::move(x));
  EXPECT_EQ(added.Attr("type"), "submit");
  EXPECT_EQ(message.FindChildByNamespace("jabber:x:data"), &added);
}

}  // namespace
}  // namespace herald::xmpp
