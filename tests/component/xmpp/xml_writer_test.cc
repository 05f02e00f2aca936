#include "component/xmpp/xml_writer.h"

#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "component/xmpp/stream_parser.h"
#include "component/xmpp/xml_element.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace herald::xmpp {
namespace {

std::string Text(std::string_view text) {
  std::string out;
  AppendEscapedText(text, out);
  return out;
}

std::string Attribute(std::string_view value) {
  std::string out;
  AppendEscapedAttribute(value, out);
  return out;
}

TEST(XmlWriterTest, EscapesTheMarkupCharactersAndCarriageReturnInText) {
  EXPECT_EQ(Text("a&b<c>d\"e'f\tg\nh\ri"), "a&amp;b&lt;c&gt;d\"e'f\tg\nh&#13;i");
  EXPECT_EQ(Text("]]>"), "]]&gt;");
  EXPECT_EQ(Text("&amp;"), "&amp;amp;");
  EXPECT_EQ(Text("plain"), "plain");
  EXPECT_EQ(Text(""), "");
}

TEST(XmlWriterTest, EscapesEverySpecialCharacterInAttributes) {
  EXPECT_EQ(Attribute("a&b<c>d\"e'f\tg\nh\ri"), "a&amp;b&lt;c&gt;d&quot;e&apos;f&#9;g&#10;h&#13;i");
}

TEST(XmlWriterTest, DropsCharactersThatXmlForbids) {
  std::string controls;
  for (char c = 0; c < 0x20; ++c) controls.push_back(c);
  EXPECT_EQ(Text("a" + controls + "b"), "a\t\n&#13;b");
  EXPECT_EQ(Attribute("a" + controls + "b"), "a&#9;&#10;&#13;b");
  EXPECT_EQ(Text("x\xEF\xBF\xBEy\xEF\xBF\xBFz"), "xyz");  // U+FFFE, U+FFFF
  EXPECT_EQ(Text("\x7F"), "\x7F");                        // allowed, if discouraged
}

TEST(XmlWriterTest, ReplacesBytesThatAreNotUtf8WithTheReplacementCharacter) {
  const std::string r = "\xEF\xBF\xBD";
  EXPECT_EQ(Text("a\xC0\xAF"
                 "b"),
            "a" + r + r + "b");                             // overlong
  EXPECT_EQ(Text("\xED\xA0\x80"), r + r + r);               // surrogate
  EXPECT_EQ(Text("end\xE2\x82"), "end" + r + r);            // truncated
  EXPECT_EQ(Attribute("\xF4\x90\x80\x80"), r + r + r + r);  // above U+10FFFF
  EXPECT_EQ(Attribute("\xFF\x80"), r + r);
}

TEST(XmlWriterTest, KeepsNonAsciiTextAndEmojiUnchanged) {
  const std::string text =
      "Gr\xC3\xBC\xC3\x9F"
      "e \xE6\x97\xA5\xE6\x9C\xAC \xF0\x9F\xA6\x9C\xF0\x9F\x91\x8D\xF0\x9F\x8F\xBD \xEF\xBF\xBD";
  EXPECT_EQ(Text(text), text);
  EXPECT_EQ(Attribute(text), text);
}

TEST(XmlWriterTest, WritesAnXmlnsAttributeOnlyWhereTheNamespaceChanges) {
  XmlElement message("message", "jabber:client");
  message.SetAttr("to", "alice@localhost");
  message.AddChild("body").AddText("hi");
  message.AddChild("thread", "jabber:client").AddText("t1");
  XmlElement& x = message.AddChild("x", "jabber:x:data");
  x.AddChild("field", "jabber:x:data");
  x.AddChild("value");

  EXPECT_EQ(ToXml(message),
            "<message xmlns='jabber:client' to='alice@localhost'><body>hi</body>"
            "<thread>t1</thread><x xmlns='jabber:x:data'><field/><value/></x></message>");
  std::string out = "prefix";
  AppendXml(message, "jabber:client", out);
  EXPECT_EQ(out,
            "prefix<message to='alice@localhost'><body>hi</body><thread>t1</thread>"
            "<x xmlns='jabber:x:data'><field/><value/></x></message>");
}

TEST(XmlWriterTest, WritesAStanzaWithoutANamespaceInTheStreamsContentNamespace) {
  XmlElement presence("presence");
  std::string out;
  AppendXml(presence, "jabber:component:accept", out);
  EXPECT_EQ(out, "<presence/>");
  EXPECT_EQ(ToXml(presence), "<presence/>");
}

TEST(XmlWriterTest, EscapesAttributeValuesAndNamespaces) {
  XmlElement e("e", "urn:a&b'c");
  e.SetAttr("v", "it's <\"quoted\"> & more");
  EXPECT_EQ(ToXml(e),
            "<e xmlns='urn:a&amp;b&apos;c' v='it&apos;s &lt;&quot;quoted&quot;&gt; &amp; more'/>");
}

TEST(XmlWriterTest, DeclaresAPrefixForAnAttributeInAnotherNamespace) {
  XmlElement item("item", "jabber:iq:roster");
  item.SetAttr("jid", "bob@localhost")
      .SetAttr("xml:lang", "en")
      .SetAttr("{urn:example:a}one", "1")
      .SetAttr("{urn:example:b}two", "2")
      .SetAttr("{urn:example:a}three", "3")
      .SetAttr("{http://www.w3.org/XML/1998/namespace}space", "preserve");
  EXPECT_EQ(ToXml(item),
            "<item xmlns='jabber:iq:roster' jid='bob@localhost' xml:lang='en' "
            "xmlns:h0='urn:example:a' h0:one='1' xmlns:h1='urn:example:b' h1:two='2' "
            "h0:three='3' xml:space='preserve'/>");
}

// Parses `element` back, alone on a jabber:client stream.
class Collector : public StreamParser::Handler {
 public:
  void OnStreamOpen(const XmlElement&, std::string_view) override {}
  void OnStanza(std::unique_ptr<XmlElement> stanza) override {
    stanzas.push_back(std::move(stanza));
  }
  void OnStreamClose() override {}
  std::vector<std::unique_ptr<XmlElement>> stanzas;
};

std::unique_ptr<XmlElement> Reparse(const std::string& xml) {
  Collector collector;
  StreamParser parser(StreamLimits{}, &collector);
  absl::Status status = parser.Feed(
      "<stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams'>" +
      xml);
  EXPECT_TRUE(status.ok()) << status << " for " << xml;
  if (collector.stanzas.size() != 1) return nullptr;
  return std::move(collector.stanzas[0]);
}

// An unambiguous description of a tree, with namespaces resolved (an empty namespace is the
// parent's), so that trees built by hand compare equal to the parser's.
void Describe(const XmlElement& e, std::string_view scope, std::string& out) {
  auto field = [&](std::string_view s) { out += std::to_string(s.size()) + ":" + std::string(s); };
  const std::string_view xmlns = e.xmlns().empty() ? scope : std::string_view(e.xmlns());
  out += "<";
  field(e.name());
  field(xmlns);
  for (const XmlAttribute& a : e.attributes()) {
    out += "@";
    field(a.name);
    field(a.value);
  }
  for (const XmlNode& node : e.children()) {
    if (node.element != nullptr) {
      Describe(*node.element, xmlns, out);
    } else {
      out += "#";
      field(node.text);
    }
  }
  out += ">";
}

std::string Describe(const XmlElement& e) {
  std::string out;
  Describe(e, "", out);
  return out;
}

const std::vector<std::string>& TrickyStrings() {
  static const auto* strings = new std::vector<std::string>{
      "it's \"quoted\"",
      "a & b && c &amp; &#38; &lt;",
      "]]>",
      "<![CDATA[x]]>",
      "<!-- not a comment --> <?not a pi?>",
      "</message></stream:stream>",
      "Gr\xC3\xBC\xC3\x9F"
      "e, \xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E, \xD0\xBF\xD1\x80\xD0\xB8",
      "\xF0\x9F\xA6\x9C\xF0\x9F\x91\x8D\xF0\x9F\x8F\xBD\xE2\x80\x8D",
      "tab\there\nnewline\r\ncrlf\rcr",
      "  leading and trailing  ",
      "\xEF\xBF\xBD \xF4\x8F\xBF\xBF \xED\x9F\xBF \xEE\x80\x80",
      "x",
      "",
  };
  return *strings;
}

TEST(XmlWriterTest, TrickyStringsSurviveAWriteAndAParse) {
  for (const std::string& s : TrickyStrings()) {
    XmlElement message("message", "jabber:client");
    message.SetAttr("to", s).SetAttr("{urn:x}y", s).SetAttr("xml:lang", s);
    message.AddChild("body").AddText(s);
    message.AddChild("data", s.empty() ? "" : "urn:ns").AddText(s).AddChild("b", "urn:" + s);
    std::unique_ptr<XmlElement> parsed = Reparse(ToXml(message));
    ASSERT_NE(parsed, nullptr) << s;
    EXPECT_EQ(Describe(*parsed), Describe(message)) << s;
    EXPECT_EQ(parsed->ChildText("body"), s);
    EXPECT_EQ(parsed->Attr("to"), s);
  }
}

// Random trees of valid strings: parse(ToXml(tree)) == tree.
class TreeGenerator {
 public:
  explicit TreeGenerator(uint32_t seed) : random_(seed) {}

  XmlElement Tree() {
    XmlElement root(Pick(kNames), Pick(kRootNamespaces));
    Fill(root, 0);
    return root;
  }

 private:
  static constexpr const char* kNames[] = {"message", "body", "x", "e-1", "n.2", "_u", "q\xC3\xA9"};
  static constexpr const char* kRootNamespaces[] = {"jabber:client", "urn:x", "urn:a&b'c\"<>"};
  static constexpr const char* kNamespaces[] = {"",      "",      "jabber:client",
                                                "urn:x", "urn:y", "http://example.org/?a=1&b=2"};
  static constexpr const char* kAttributes[] = {"to",       "from",           "type",    "id",
                                                "xml:lang", "{urn:attr}flag", "{urn:x}k"};
  static constexpr const char* kPieces[] = {"a",
                                            "Z",
                                            " ",
                                            "\t",
                                            "\n",
                                            "\r",
                                            "&",
                                            "<",
                                            ">",
                                            "\"",
                                            "'",
                                            "]]>",
                                            "\xC3\xA9",
                                            "\xE2\x82\xAC",
                                            "\xF0\x9F\x98\x80",
                                            "\xEF\xBF\xBD",
                                            "\x7F",
                                            ";",
                                            "&#13;",
                                            "="};

  template <size_t N>
  std::string Pick(const char* const (&pool)[N]) {
    return pool[random_() % N];
  }

  std::string String() {
    std::string s;
    const int n = random_() % 12;
    for (int i = 0; i < n; ++i) s += Pick(kPieces);
    return s;
  }

  void Fill(XmlElement& e, int depth) {
    const int attributes = random_() % 4;
    for (int i = 0; i < attributes; ++i) e.SetAttr(Pick(kAttributes), String());
    const int children = depth >= 4 ? 0 : random_() % 5;
    for (int i = 0; i < children; ++i) {
      if (random_() % 2 == 0) {
        e.AddText(String());
      } else {
        Fill(e.AddChild(Pick(kNames), Pick(kNamespaces)), depth + 1);
      }
    }
  }

  std::mt19937 random_;
};

TEST(XmlWriterTest, RandomTreesOfValidStringsParseBackToThemselves) {
  TreeGenerator generator(424242);
  for (int i = 0; i < 2000; ++i) {
    XmlElement tree = generator.Tree();
    const std::string xml = ToXml(tree);
    std::unique_ptr<XmlElement> parsed = Reparse(xml);
    ASSERT_NE(parsed, nullptr) << xml;
    ASSERT_EQ(Describe(*parsed), Describe(tree)) << xml;
  }
}

}  // namespace
}  // namespace herald::xmpp
