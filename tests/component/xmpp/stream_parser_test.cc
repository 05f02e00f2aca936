#include "component/xmpp/stream_parser.h"

#include <cstddef>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "component/xmpp/xml_element.h"
#include "component/xmpp/xml_writer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace herald::xmpp {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

constexpr std::string_view kStreams = "http://etherx.jabber.org/streams";

constexpr std::string_view kClientHeader =
    "<?xml version='1.0'?><stream:stream xmlns='jabber:client' "
    "xmlns:stream='http://etherx.jabber.org/streams' id='s1' from='localhost' version='1.0' "
    "xml:lang='en'>";
constexpr std::string_view kComponentHeader =
    "<stream:stream xmlns:stream='http://etherx.jabber.org/streams' "
    "xmlns='jabber:component:accept' from='agent.localhost' id='c1'>";

// Records every callback as one line, stanzas serialized, so that two runs can be compared.
class Recorder : public StreamParser::Handler {
 public:
  void OnStreamOpen(const XmlElement& header, std::string_view content_xmlns) override {
    events.push_back("open " + std::string(content_xmlns) + " " + ToXml(header));
    headers.push_back(header.Clone());
  }
  void OnStanza(std::unique_ptr<XmlElement> stanza) override {
    events.push_back(ToXml(*stanza));
    const bool reset = !reset_on.empty() && stanza->name() == reset_on;
    stanzas.push_back(std::move(stanza));
    if (reset) parser->Reset();
  }
  void OnStreamClose() override { events.push_back("close"); }
  void OnOversizedStanza(const XmlElement& head, size_t bytes) override {
    events.push_back("oversized " + ToXml(head) + " " + std::to_string(bytes));
  }

  StreamParser* parser = nullptr;
  std::string reset_on;  // Reset() from inside OnStanza after a stanza with this name
  std::vector<std::string> events;
  std::vector<XmlElement> headers;
  std::vector<std::unique_ptr<XmlElement>> stanzas;
};

struct Outcome {
  std::vector<std::string> events;
  absl::Status status;
  std::string condition;
};

// Feeds `stream` in chunks of the sizes `next_chunk` returns, stopping at the first error.
Outcome Parse(std::string_view stream, const std::function<size_t()>& next_chunk,
              StreamLimits limits = {}, std::string reset_on = "") {
  Recorder recorder;
  StreamParser parser(limits, &recorder);
  recorder.parser = &parser;
  recorder.reset_on = std::move(reset_on);
  Outcome outcome;
  size_t offset = 0;
  while (offset < stream.size() && outcome.status.ok()) {
    const size_t n = std::min(std::max<size_t>(next_chunk(), 1), stream.size() - offset);
    outcome.status = parser.Feed(stream.substr(offset, n));
    offset += n;
  }
  outcome.events = std::move(recorder.events);
  outcome.condition = std::string(parser.error_condition());
  return outcome;
}

Outcome ParseWhole(std::string_view stream, StreamLimits limits = {}, std::string reset_on = "") {
  return Parse(
      stream, [&] { return stream.size(); }, limits, std::move(reset_on));
}

Outcome ParseByteByByte(std::string_view stream, StreamLimits limits = {},
                        std::string reset_on = "") {
  return Parse(
      stream, [] { return size_t{1}; }, limits, std::move(reset_on));
}

std::string ClientStream(std::string_view body) {
  return std::string(kClientHeader) + std::string(body);
}

// A stream with the things a real server sends: features, messages with entities, CDATA and
// non-ASCII text, an IQ with prefixed namespaces, presence, keepalives, and the close.
const std::string& SampleStream() {
  static const std::string* stream = new std::string(
      std::string(kClientHeader) +
      "<stream:features><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'/></stream:features>\n"
      "<message from='alice@localhost/phone' to='herald@localhost' type='chat' id='m1'>"
      "<body>/ping &amp; &lt;more&gt; &quot;quoted&quot; &apos;single&apos; &#x1F99C;</body>"
      "<active xmlns='http://jabber.org/protocol/chatstates'/></message> \n\t "
      "<message to='herald@localhost' xml:lang='de'><body>Gr\xC3\xBC\xC3\x9F"
      "e <![CDATA[<not markup> & ]]]]><![CDATA[>]]> \xF0\x9F\x91\x8D</body></message>"
      "<iq type='get' id='q1'><r:query xmlns:r='jabber:iq:roster' r:ver='7'>"
      "<r:item jid='bob@localhost'/></r:query></iq>"
      "<presence/>   "
      "<message><body>line1\r\nline2\rline3</body></message>"
      "</stream:stream>");
  return *stream;
}

TEST(StreamParserTest, DeliversTheHeaderEveryStanzaAndTheCloseOfAStreamFedInOneChunk) {
  Outcome outcome = ParseWhole(SampleStream());
  ASSERT_TRUE(outcome.status.ok()) << outcome.status;
  EXPECT_THAT(
      outcome.events,
      ElementsAre(
          "open jabber:client <stream xmlns='http://etherx.jabber.org/streams' id='s1' "
          "from='localhost' version='1.0' xml:lang='en'/>",
          "<features xmlns='http://etherx.jabber.org/streams'><bind "
          "xmlns='urn:ietf:params:xml:ns:xmpp-bind'/></features>",
          "<message xmlns='jabber:client' from='alice@localhost/phone' to='herald@localhost' "
          "type='chat' id='m1'><body>/ping &amp; &lt;more&gt; \"quoted\" 'single' "
          "\xF0\x9F\xA6\x9C</body><active "
          "xmlns='http://jabber.org/protocol/chatstates'/></message>",
          "<message xmlns='jabber:client' to='herald@localhost' xml:lang='de'><body>Gr\xC3\xBC\xC3"
          "\x9F"
          "e &lt;not markup&gt; &amp; ]]&gt; \xF0\x9F\x91\x8D</body></message>",
          "<iq xmlns='jabber:client' type='get' id='q1'><query xmlns='jabber:iq:roster' "
          "xmlns:h0='jabber:iq:roster' h0:ver='7'><item jid='bob@localhost'/></query></iq>",
          "<presence xmlns='jabber:client'/>",
          "<message xmlns='jabber:client'><body>line1\nline2\nline3</body></message>", "close"));
}

TEST(StreamParserTest, DeliversTheSameEventsFedOneByteAtATime) {
  Outcome whole = ParseWhole(SampleStream());
  Outcome bytes = ParseByteByByte(SampleStream());
  ASSERT_TRUE(bytes.status.ok()) << bytes.status;
  EXPECT_EQ(bytes.events, whole.events);
}

TEST(StreamParserTest, DeliversTheSameEventsForAnyRandomChunking) {
  Outcome whole = ParseWhole(SampleStream());
  std::mt19937 random(20240601);
  for (int iteration = 0; iteration < 500; ++iteration) {
    const size_t max_chunk = 1 + random() % 64;
    Outcome chunked = Parse(SampleStream(), [&] { return 1 + random() % max_chunk; });
    ASSERT_TRUE(chunked.status.ok()) << chunked.status;
    ASSERT_EQ(chunked.events, whole.events) << "iteration " << iteration;
  }
}

TEST(StreamParserTest, DeliversAStanzaAsSoonAsItsLastByteArrives) {
  Recorder recorder;
  StreamParser parser(StreamLimits{}, &recorder);
  std::string stream = ClientStream("<message><body>hi</body></message>");
  ASSERT_TRUE(parser.Feed(std::string_view(stream).substr(0, stream.size() - 1)).ok());
  EXPECT_THAT(recorder.stanzas, IsEmpty());
  ASSERT_TRUE(parser.Feed(">").ok());
  ASSERT_EQ(recorder.stanzas.size(), 1u);
  EXPECT_EQ(recorder.stanzas[0]->ChildText("body"), "hi");
}

TEST(StreamParserTest, GivesTheClientContentNamespaceToTheHeaderAndItsStanzas) {
  Recorder recorder;
  StreamParser parser(StreamLimits{}, &recorder);
  ASSERT_TRUE(parser.Feed(ClientStream("<message/>")).ok());
  ASSERT_EQ(recorder.headers.size(), 1u);
  EXPECT_EQ(recorder.headers[0].name(), "stream");
  EXPECT_EQ(recorder.headers[0].xmlns(), kStreams);
  EXPECT_EQ(recorder.headers[0].Attr("xml:lang"), "en");
  EXPECT_EQ(recorder.headers[0].Attr("version"), "1.0");
  EXPECT_EQ(recorder.headers[0].Attr("id"), "s1");
  EXPECT_THAT(recorder.events[0], ::testing::StartsWith("open jabber:client "));
  ASSERT_EQ(recorder.stanzas.size(), 1u);
  EXPECT_EQ(recorder.stanzas[0]->xmlns(), "jabber:client");
}

TEST(StreamParserTest, GivesTheComponentContentNamespaceToTheHeaderAndItsStanzas) {
  Recorder recorder;
  StreamParser parser(StreamLimits{}, &recorder);
  ASSERT_TRUE(parser.Feed(std::string(kComponentHeader) + "<handshake/>").ok());
  EXPECT_THAT(recorder.events[0], ::testing::StartsWith("open jabber:component:accept "));
  ASSERT_EQ(recorder.stanzas.size(), 1u);
  EXPECT_EQ(recorder.stanzas[0]->name(), "handshake");
  EXPECT_EQ(recorder.stanzas[0]->xmlns(), "jabber:component:accept");
  EXPECT_EQ(recorder.headers[0].Attr("from"), "agent.localhost");
}

TEST(StreamParserTest, ResolvesDefaultAndPrefixedNamespacesInsideStanzas) {
  Recorder recorder;
  StreamParser parser(StreamLimits{}, &recorder);
  ASSERT_TRUE(parser
                  .Feed(ClientStream("<iq xmlns:d='http://jabber.org/protocol/disco#info'>"
                                     "<d:query><d:feature var='urn:xmpp:ping'/></d:query>"
                                     "<ping xmlns='urn:xmpp:ping'><inner/></ping>"
                                     "<stream:error/></iq>"))
                  .ok());
  ASSERT_EQ(recorder.stanzas.size(), 1u);
  const XmlElement& iq = *recorder.stanzas[0];
  const XmlElement* query = iq.FindChild("query", "http://jabber.org/protocol/disco#info");
  ASSERT_NE(query, nullptr);
  const XmlElement* feature = query->FindChild("feature");
  ASSERT_NE(feature, nullptr);
  EXPECT_EQ(feature->xmlns(), "http://jabber.org/protocol/disco#info");
  EXPECT_EQ(feature->Attr("var"), "urn:xmpp:ping");
  const XmlElement* ping = iq.FindChildByNamespace("urn:xmpp:ping");
  ASSERT_NE(ping, nullptr);
  EXPECT_EQ(ping->FirstChildElement()->xmlns(), "urn:xmpp:ping");
  EXPECT_NE(iq.FindChild("error", kStreams), nullptr);
}

TEST(StreamParserTest, NamesXmlLangAndAttributesInOtherNamespaces) {
  Recorder recorder;
  StreamParser parser(StreamLimits{}, &recorder);
  ASSERT_TRUE(
      parser.Feed(ClientStream("<message xml:lang='fr' xmlns:e='urn:example' e:flag='1' to='x'/>"))
          .ok());
  ASSERT_EQ(recorder.stanzas.size(), 1u);
  EXPECT_EQ(recorder.stanzas[0]->Attr("xml:lang"), "fr");
  EXPECT_EQ(recorder.stanzas[0]->Attr("{urn:example}flag"), "1");
  EXPECT_EQ(recorder.stanzas[0]->Attr("to"), "x");
  EXPECT_EQ(recorder.stanzas[0]->attributes().size(), 3u);
}

TEST(StreamParserTest, RefusesARootThatIsNotAStreamHeader) {
  Outcome outcome = ParseWhole("<message xmlns='jabber:client'/>");
  EXPECT_FALSE(outcome.status.ok());
  EXPECT_EQ(outcome.condition, "invalid-namespace");
  EXPECT_THAT(outcome.events, IsEmpty());
  outcome = ParseWhole("<stream:stream xmlns:stream='urn:wrong'>");
  EXPECT_EQ(outcome.condition, "invalid-namespace");
}

TEST(StreamParserTest, RefusesMalformedXmlAsNotWellFormed) {
  const std::vector<std::string> bodies = {
      "<message></iq>",
      "<message><body></message>",
      "<unbound:message/>",
      "<message to=x/>",
      "<message a='1' a='2'/>",
      "<message xmlns:p='urn:p' p:a='1' xmlns:q='urn:p' q:a='2'/>",
      "<message><body>&nbsp;</body></message>",
      "<message><body>a & b</body></message>",
      "<message><body>a < b</body></message>",
      "<1message/>",
      "<message><body>]]></body></message>",
      "<message/></stream:stream><presence/>",
      "<message/></stream:wrong>",
      "<message xmlns:p=''/>",
      "<?xml version='1.0'?>",
      "<![CDATA[between stanzas]]>",
  };
  for (const std::string& body : bodies) {
    Outcome whole = ParseWhole(ClientStream(body));
    EXPECT_FALSE(whole.status.ok()) << body;
    EXPECT_EQ(whole.condition, "not-well-formed") << body;
    Outcome bytes = ParseByteByByte(ClientStream(body));
    EXPECT_EQ(bytes.condition, "not-well-formed") << body;
    EXPECT_EQ(bytes.events, whole.events) << body;
  }
}

TEST(StreamParserTest, RefusesADoctypeBeforeTheStreamHeader) {
  Outcome outcome =
      ParseWhole("<?xml version='1.0'?><!DOCTYPE stream:stream>" + std::string(kClientHeader));
  EXPECT_FALSE(outcome.status.ok());
  EXPECT_EQ(outcome.condition, "restricted-xml");
  EXPECT_THAT(outcome.events, IsEmpty());
}

TEST(StreamParserTest, RefusesABillionLaughsDocumentWithoutExpandingIt) {
  std::string doctype = "<?xml version='1.0'?><!DOCTYPE stream:stream [<!ENTITY l0 'ha'>";
  for (int i = 1; i <= 30; ++i) {
    doctype += "<!ENTITY l" + std::to_string(i) + " '";
    for (int k = 0; k < 10; ++k) doctype += "&l" + std::to_string(i - 1) + ";";
    doctype += "'>";
  }
  doctype += "]>";
  std::string stream = doctype +
                       "<stream:stream xmlns='jabber:client' "
                       "xmlns:stream='http://etherx.jabber.org/streams'><message><body>&l30;"
                       "</body></message>";
  for (const Outcome& outcome : {ParseWhole(stream), ParseByteByByte(stream)}) {
    EXPECT_FALSE(outcome.status.ok());
    EXPECT_EQ(outcome.condition, "restricted-xml");
    EXPECT_THAT(outcome.events, IsEmpty());
  }
}

TEST(StreamParserTest, RefusesAnInternalEntityDeclaration) {
  Outcome outcome = ParseWhole("<!DOCTYPE s [<!ENTITY secret 'x'>]>" + std::string(kClientHeader) +
                               "<message><body>&secret;</body></message>");
  EXPECT_EQ(outcome.condition, "restricted-xml");
  EXPECT_THAT(outcome.events, IsEmpty());
}

TEST(StreamParserTest, RefusesAnExternalEntityReferenceWithoutADeclaration) {
  Outcome outcome = ParseWhole(ClientStream("<message><body>&xxe;</body></message>"));
  EXPECT_EQ(outcome.condition, "not-well-formed");
  EXPECT_EQ(outcome.events.size(), 1u);  // only the header
}

TEST(StreamParserTest, RefusesCommentsAnywhere) {
  for (const std::string& stream :
       {"<!-- before -->" + std::string(kClientHeader), ClientStream("<!-- between --><message/>"),
        ClientStream("<message><!-- inside --><body>x</body></message>")}) {
    Outcome outcome = ParseByteByByte(stream);
    EXPECT_EQ(outcome.condition, "restricted-xml") << stream;
    EXPECT_FALSE(outcome.status.ok());
    EXPECT_EQ(ParseWhole(stream).condition, "restricted-xml") << stream;
  }
}

TEST(StreamParserTest, RefusesProcessingInstructionsAnywhere) {
  for (const std::string& stream : {"<?xml version='1.0'?><?style x?>" + std::string(kClientHeader),
                                    ClientStream("<?pi between?><message/>"),
                                    ClientStream("<message><?pi inside?></message>")}) {
    Outcome outcome = ParseWhole(stream);
    EXPECT_EQ(outcome.condition, "restricted-xml") << stream;
    EXPECT_FALSE(outcome.status.ok());
  }
}

TEST(StreamParserTest, IgnoresADeclaredNonUtf8EncodingAndReadsUtf8) {
  Recorder recorder;
  StreamParser parser(StreamLimits{}, &recorder);
  ASSERT_TRUE(parser
                  .Feed("<?xml version='1.0' encoding='ISO-8859-1'?>"
                        "<stream:stream xmlns='jabber:client' "
                        "xmlns:stream='http://etherx.jabber.org/streams'>"
                        "<message><body>\xC3\xA9</body></message>")
                  .ok());
  ASSERT_EQ(recorder.stanzas.size(), 1u);
  EXPECT_EQ(recorder.stanzas[0]->ChildText("body"), "\xC3\xA9");
}

TEST(StreamParserTest, RefusesAStreamInUtf16InAnyChunking) {
  std::string utf16le;
  for (char c : kClientHeader) utf16le += std::string(1, c) + '\0';
  for (const std::string& stream : {utf16le, "\xFF\xFE" + utf16le,
                                    "\xFE\xFF" + ('\0' + utf16le.substr(0, utf16le.size() - 1))}) {
    for (const Outcome& outcome : {ParseWhole(stream), ParseByteByByte(stream)}) {
      EXPECT_EQ(outcome.condition, "unsupported-encoding");
      EXPECT_THAT(outcome.events, IsEmpty());
    }
  }
}

TEST(StreamParserTest, AcceptsAUtf8ByteOrderMarkAtTheStart) {
  const std::string stream = "\xEF\xBB\xBF" + ClientStream("<presence/>");
  EXPECT_EQ(ParseByteByByte(stream).events.size(), 2u);
  EXPECT_EQ(ParseWhole(stream).events.size(), 2u);
}

TEST(StreamParserTest, RefusesInvalidUtf8InTextAttributesAndNames) {
  const std::vector<std::string> sequences = {
      "\xC0\xAF",          // overlong '/'
      "\xE0\x80\xAF",      // overlong, three bytes
      "\xF0\x80\x80\xAF",  // overlong, four bytes
      "\xED\xA0\x80",      // UTF-16 surrogate
      "\xED\xBF\xBF",      // UTF-16 surrogate
      "\xE2\x82",          // truncated
      "\xF0\x9F\x91",      // truncated emoji
      "\x80",              // lone continuation byte
      "\xF4\x90\x80\x80",  // above U+10FFFF
      "\xF8\x88\x80\x80\x80",
      "\xFF",
      "\xEF\xBF\xBE",  // U+FFFE, not an XML character
      "\xEF\xBF\xBF",  // U+FFFF
  };
  for (const std::string& bad : sequences) {
    for (const std::string& body : {"<message><body>a" + bad + "b</body></message>",
                                    "<message to='a" + bad + "'/>", "<message" + bad + "/>"}) {
      Outcome whole = ParseWhole(ClientStream(body));
      EXPECT_EQ(whole.condition, "not-well-formed") << body;
      EXPECT_EQ(whole.events.size(), 1u) << body;
      EXPECT_EQ(ParseByteByByte(ClientStream(body)).condition, "not-well-formed") << body;
    }
  }
}

TEST(StreamParserTest, RefusesCharactersThatXmlForbidsRawOrAsReferences) {
  std::vector<std::string> forbidden = {"&#0;",       "&#x0;",         "&#x1;",    "&#8;",
                                        "&#x1F;",     "&#xFFFE;",      "&#xFFFF;", "&#xD800;",
                                        "&#x110000;", "&#99999999999;"};
  for (char c = 1; c < 0x20; ++c) {
    if (c != '\t' && c != '\n' && c != '\r') forbidden.push_back(std::string(1, c));
  }
  forbidden.push_back(std::string(1, '\0'));
  for (const std::string& bad : forbidden) {
    for (const std::string& body :
         {"<message><body>a" + bad + "b</body></message>", "<message to='a" + bad + "'/>"}) {
      Outcome outcome = ParseWhole(ClientStream(body));
      EXPECT_EQ(outcome.condition, "not-well-formed") << body;
      EXPECT_EQ(outcome.events.size(), 1u) << body;
    }
  }
}

TEST(StreamParserTest, AcceptsTheCharactersXmlAllows) {
  Recorder recorder;
  StreamParser parser(StreamLimits{}, &recorder);
  ASSERT_TRUE(parser
                  .Feed(ClientStream("<message><body>&#9;&#xA;&#xD;&#x7F;&#xD7FF;&#xE000;&#xFFFD;"
                                     "&#x10000;&#x10FFFF;\xF4\x8F\xBF\xBF\x7F</body></message>"))
                  .ok());
  ASSERT_EQ(recorder.stanzas.size(), 1u);
  EXPECT_EQ(recorder.stanzas[0]->ChildText("body"),
            "\t\n\r\x7F\xED\x9F\xBF\xEE\x80\x80\xEF\xBF\xBD\xF0\x90\x80\x80\xF4\x8F\xBF\xBF"
            "\xF4\x8F\xBF\xBF\x7F");
}

std::string StanzaOfSize(size_t size) {
  const std::string open = "<message><body>";
  const std::string close = "</body></message>";
  return open + std::string(size - open.size() - close.size(), 'a') + close;
}

TEST(StreamParserTest, AcceptsAStanzaExactlyAtTheSizeLimitInAnyChunking) {
  StreamLimits limits;
  limits.max_stanza_bytes = 1024;
  std::string stream = ClientStream(StanzaOfSize(1024) + "<presence/>");
  for (const Outcome& outcome : {ParseWhole(stream, limits), ParseByteByByte(stream, limits)}) {
    ASSERT_TRUE(outcome.status.ok()) << outcome.status;
    EXPECT_EQ(outcome.events.size(), 3u);
  }
}

TEST(StreamParserTest, SkipsAStanzaOneByteOverTheSizeLimitAndGoesOnInAnyChunking) {
  StreamLimits limits;
  limits.max_stanza_bytes = 1024;
  std::string stream = ClientStream("<message id='big' from='mallory@evil.example/x'><body>" +
                                    std::string(1000, 'a') + "<b>" + std::string(100, 'c') +
                                    "</b></body></message><presence/>");
  for (const Outcome& outcome : {ParseWhole(stream, limits), ParseByteByByte(stream, limits)}) {
    ASSERT_TRUE(outcome.status.ok()) << outcome.status;
    EXPECT_THAT(outcome.events, ElementsAre(::testing::StartsWith("open "),
                                            "oversized <message xmlns='jabber:client' id='big' "
                                            "from='mallory@evil.example/x'/> 1178",
                                            "<presence xmlns='jabber:client'/>"));
  }
  // Whatever the chunking, the same events.
  std::mt19937 random(7);
  for (int i = 0; i < 20; ++i) {
    Outcome outcome = Parse(
        stream, [&] { return size_t{1} + random() % 97; }, limits);
    ASSERT_TRUE(outcome.status.ok()) << outcome.status;
    EXPECT_EQ(outcome.events, ParseWhole(stream, limits).events);
  }
}

TEST(StreamParserTest, RefusesAStanzaOneByteOverTheSizeLimitWhenSkippingIsOff) {
  StreamLimits limits;
  limits.max_stanza_bytes = 1024;
  limits.max_skipped_stanza_bytes = 0;
  std::string stream = ClientStream(StanzaOfSize(1025) + "<presence/>");
  for (const Outcome& outcome : {ParseWhole(stream, limits), ParseByteByByte(stream, limits)}) {
    EXPECT_EQ(outcome.status.code(), absl::StatusCode::kResourceExhausted);
    EXPECT_EQ(outcome.condition, "policy-violation");
    EXPECT_EQ(outcome.events.size(), 1u);
  }
  // The same limit holds when the excess is in attributes rather than text.
  std::string attribute = "<message to='" + std::string(1024, 'x') + "'/>";
  EXPECT_EQ(ParseWhole(ClientStream(attribute), limits).condition, "policy-violation");
  EXPECT_EQ(ParseByteByByte(ClientStream(attribute), limits).condition, "policy-violation");
}

TEST(StreamParserTest, RefusesASingleTagOverTheSizeLimitEvenWhenSkipping) {
  StreamLimits limits;
  limits.max_stanza_bytes = 1024;
  // One tag is one token that expat holds whole: it cannot be read past without holding it.
  for (std::string body : {"<message to='" + std::string(1024, 'x') + "'/>",
                           "<message><x a='" + std::string(1024, 'x') + "'/></message>"}) {
    for (const Outcome& outcome :
         {ParseWhole(ClientStream(body), limits), ParseByteByByte(ClientStream(body), limits)}) {
      EXPECT_EQ(outcome.status.code(), absl::StatusCode::kResourceExhausted);
      EXPECT_EQ(outcome.condition, "policy-violation");
      EXPECT_EQ(outcome.events.size(), 1u);
    }
  }
}

TEST(StreamParserTest, RefusesASkippedStanzaThatGoesOnPastTheSkipLimit) {
  StreamLimits limits;
  limits.max_stanza_bytes = 1024;
  limits.max_skipped_stanza_bytes = 4096;
  std::string fits = ClientStream(StanzaOfSize(4096) + "<presence/>");
  std::string too_long = ClientStream(StanzaOfSize(4097) + "<presence/>");
  for (const Outcome& outcome : {ParseWhole(fits, limits), ParseByteByByte(fits, limits)}) {
    ASSERT_TRUE(outcome.status.ok()) << outcome.status;
    EXPECT_EQ(outcome.events.size(), 3u);
  }
  for (const Outcome& outcome : {ParseWhole(too_long, limits), ParseByteByByte(too_long, limits)}) {
    EXPECT_EQ(outcome.status.code(), absl::StatusCode::kResourceExhausted);
    EXPECT_EQ(outcome.condition, "policy-violation");
    EXPECT_EQ(outcome.events.size(), 1u);
  }
}

TEST(StreamParserTest, RefusesAnEndlessStanzaBeforeHoldingMuchMoreThanTheLimit) {
  StreamLimits limits;
  limits.max_stanza_bytes = 64 * 1024;
  limits.max_skipped_stanza_bytes = 0;
  const std::string chunk(1000, 'a');
  for (std::string_view start : {"<message to='", "<message><body>", "<message><x:"}) {
    Recorder recorder;
    StreamParser parser(limits, &recorder);
    ASSERT_TRUE(parser.Feed(ClientStream(start)).ok());
    size_t fed = 0;
    absl::Status status;
    while (status.ok() && fed < 100 * limits.max_stanza_bytes) {
      status = parser.Feed(chunk);
      fed += chunk.size();
    }
    EXPECT_EQ(parser.error_condition(), "policy-violation") << start;
    EXPECT_LE(fed, limits.max_stanza_bytes + chunk.size()) << start;
  }
}

TEST(StreamParserTest, SkipsAnEndlessStanzaOnlyUpToTheSkipLimit) {
  StreamLimits limits;
  limits.max_stanza_bytes = 64 * 1024;
  limits.max_skipped_stanza_bytes = 1024 * 1024;
  const std::string chunk(1000, 'a');
  for (std::string_view start : {"<message><body>", "<message><x:"}) {
    Recorder recorder;
    StreamParser parser(limits, &recorder);
    ASSERT_TRUE(parser.Feed(ClientStream(start)).ok());
    size_t fed = 0;
    absl::Status status;
    while (status.ok() && fed < 100 * limits.max_skipped_stanza_bytes) {
      status = parser.Feed(chunk);
      fed += chunk.size();
    }
    EXPECT_EQ(parser.error_condition(), "policy-violation") << start;
    // A name is a tag: it is refused at the stanza cap; text is skipped up to the skip cap.
    EXPECT_LE(fed, (start == "<message><body>" ? limits.max_skipped_stanza_bytes
                                               : limits.max_stanza_bytes) +
                       chunk.size())
        << start;
  }
}

TEST(StreamParserTest, RefusesAStreamHeaderLargerThanTheLimit) {
  StreamLimits limits;
  limits.max_stanza_bytes = 1024;
  std::string header =
      "<stream:stream xmlns='jabber:client' "
      "xmlns:stream='http://etherx.jabber.org/streams' id='" +
      std::string(2000, 'i') + "'>";
  EXPECT_EQ(ParseByteByByte(header, limits).condition, "policy-violation");
}

std::string NestedStanza(int depth) {
  std::string open, close;
  for (int i = 0; i < depth; ++i) {
    open += "<e" + std::to_string(i) + ">";
    close = "</e" + std::to_string(i) + ">" + close;
  }
  return open + "text" + close;
}

TEST(StreamParserTest, AcceptsAStanzaNestedExactlyToTheDepthLimit) {
  StreamLimits limits;
  limits.max_depth = 5;
  Outcome outcome = ParseWhole(ClientStream(NestedStanza(5)), limits);
  ASSERT_TRUE(outcome.status.ok()) << outcome.status;
  EXPECT_EQ(outcome.events.size(), 2u);
}

TEST(StreamParserTest, SkipsAStanzaNestedDeeperThanTheLimitAndGoesOn) {
  StreamLimits limits;
  limits.max_depth = 5;
  const std::string stream =
      ClientStream("<message id='deep'>" + NestedStanza(5) + "</message><presence/>");
  for (const Outcome& outcome : {ParseWhole(stream, limits), ParseByteByByte(stream, limits)}) {
    ASSERT_TRUE(outcome.status.ok()) << outcome.status;
    ASSERT_EQ(outcome.events.size(), 3u);
    EXPECT_THAT(outcome.events[1],
                ::testing::StartsWith("oversized <message xmlns='jabber:client' id='deep'/>"));
    EXPECT_EQ(outcome.events[2], "<presence xmlns='jabber:client'/>");
  }
}

TEST(StreamParserTest, RefusesAStanzaNestedDeeperThanTheLimitWhenSkippingIsOff) {
  StreamLimits limits;
  limits.max_depth = 5;
  limits.max_skipped_stanza_bytes = 0;
  Outcome outcome = ParseByteByByte(ClientStream(NestedStanza(6)), limits);
  EXPECT_EQ(outcome.status.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(outcome.condition, "policy-violation");
  EXPECT_EQ(outcome.events.size(), 1u);
  // The default limit stops a deeply nested stanza too.
  EXPECT_EQ(ParseWhole(ClientStream(NestedStanza(1000)), limits).condition, "policy-violation");
}

TEST(StreamParserTest, IgnoresWhitespaceKeepalivesBetweenStanzas) {
  Outcome outcome = ParseByteByByte(ClientStream(" \n<message/>\t \r\n <presence/> "));
  ASSERT_TRUE(outcome.status.ok()) << outcome.status;
  EXPECT_THAT(outcome.events,
              ElementsAre(::testing::StartsWith("open "), "<message xmlns='jabber:client'/>",
                          "<presence xmlns='jabber:client'/>"));
}

TEST(StreamParserTest, RefusesTextBetweenStanzas) {
  for (std::string_view body : {"<message/>hello<presence/>", " x ", "&amp;", "&#32;x"}) {
    Outcome outcome = ParseByteByByte(ClientStream(body));
    EXPECT_EQ(outcome.condition, "not-well-formed") << body;
    EXPECT_FALSE(outcome.status.ok());
  }
}

TEST(StreamParserTest, CallsOnStreamCloseForTheClosingTag) {
  Outcome outcome = ParseWhole(ClientStream("<message/></stream:stream>\n "));
  ASSERT_TRUE(outcome.status.ok()) << outcome.status;
  EXPECT_THAT(outcome.events, ElementsAre(::testing::StartsWith("open "),
                                          "<message xmlns='jabber:client'/>", "close"));
}

TEST(StreamParserTest, RefusesWhateverFollowsTheStreamCloseInAnyChunking) {
  // Found by the fuzzer: a header closed with '/>' and bytes after it. Whether expat noticed
  // the junk depended on where TCP cut it; now only whitespace may follow the close.
  for (std::string_view tail : {"ea\xed>", "<message/>", "junk", "\xff\xfe", " x", " "}) {
    for (bool self_closed : {true, false}) {
      std::string stream = self_closed ? "<stream:stream xmlns='jabber:client' "
                                         "xmlns:stream='http://etherx.jabber.org/streams' id='x'/>"
                                       : ClientStream("<message/></stream:stream>");
      stream += tail;
      Outcome whole = ParseWhole(stream);
      EXPECT_EQ(whole.events.back(), "close") << tail;
      EXPECT_EQ(whole.status.ok(), tail == " ") << tail;
      EXPECT_EQ(whole.condition, tail == " " ? "" : "not-well-formed") << tail;
      for (size_t chunk : {1, 2, 3, 7}) {
        Outcome cut = Parse(stream, [chunk] { return chunk; }, {});
        EXPECT_EQ(cut.events, whole.events) << tail << " in chunks of " << chunk;
        EXPECT_EQ(cut.condition, whole.condition) << tail << " in chunks of " << chunk;
      }
    }
  }
}

TEST(StreamParserTest, ParsesTheBytesAfterAResetInsideOnStanzaAsANewStream) {
  // After STARTTLS <proceed/> (or SASL <success/>) the peer's next bytes open a new stream; a
  // handler resets the parser from inside OnStanza and the rest of the same chunk is read anew.
  const std::string stream =
      std::string(kClientHeader) +
      "<proceed xmlns='urn:ietf:params:xml:ns:xmpp-tls'/><?xml version='1.0'?>"
      "<stream:stream xmlns='jabber:component:accept' "
      "xmlns:stream='http://etherx.jabber.org/streams' id='s2'>"
      "<message><body>second</body></message><proceed/><stream:stream "
      "xmlns:stream='http://etherx.jabber.org/streams' xmlns='jabber:client' id='s3'>"
      "<presence/>";
  Outcome whole = ParseWhole(stream, {}, "proceed");
  ASSERT_TRUE(whole.status.ok()) << whole.status;
  EXPECT_THAT(whole.events,
              ElementsAre(::testing::StartsWith("open jabber:client "),
                          "<proceed xmlns='urn:ietf:params:xml:ns:xmpp-tls'/>",
                          ::testing::StartsWith("open jabber:component:accept "),
                          "<message xmlns='jabber:component:accept'><body>second</body></message>",
                          "<proceed xmlns='jabber:component:accept'/>",
                          ::testing::StartsWith("open jabber:client "),
                          "<presence xmlns='jabber:client'/>"));
  EXPECT_EQ(ParseByteByByte(stream, {}, "proceed").events, whole.events);
  std::mt19937 random(7);
  for (int iteration = 0; iteration < 200; ++iteration) {
    Outcome chunked = Parse(
        stream, [&] { return 1 + random() % 40; }, {}, "proceed");
    ASSERT_EQ(chunked.events, whole.events) << "iteration " << iteration;
  }
  // Without the reset, a second XML declaration and header inside the stream are errors.
  EXPECT_EQ(ParseWhole(stream).condition, "not-well-formed");
}

TEST(StreamParserTest, KeepsReturningTheErrorUntilReset) {
  Recorder recorder;
  StreamParser parser(StreamLimits{}, &recorder);
  absl::Status first = parser.Feed(ClientStream("<message><!-- no --></message>"));
  ASSERT_FALSE(first.ok());
  EXPECT_EQ(parser.error_condition(), "restricted-xml");
  EXPECT_EQ(parser.Feed("<presence/>"), first);
  EXPECT_EQ(parser.Feed(ClientStream("<presence/>")), first);
  EXPECT_EQ(parser.error_condition(), "restricted-xml");
  EXPECT_THAT(recorder.stanzas, IsEmpty());

  parser.Reset();
  EXPECT_EQ(parser.error_condition(), "");
  ASSERT_TRUE(parser.Feed(ClientStream("<presence/>")).ok());
  ASSERT_EQ(recorder.stanzas.size(), 1u);
  EXPECT_EQ(recorder.stanzas[0]->name(), "presence");
  EXPECT_EQ(recorder.headers.size(), 2u);
}

TEST(StreamParserTest, StartsAFreshStreamAfterAResetBetweenFeeds) {
  Recorder recorder;
  StreamParser parser(StreamLimits{}, &recorder);
  ASSERT_TRUE(parser.Feed(ClientStream("<message><body>half")).ok());
  parser.Reset();
  ASSERT_TRUE(parser.Feed(std::string(kComponentHeader) + "<handshake/>").ok());
  ASSERT_EQ(recorder.stanzas.size(), 1u);
  EXPECT_EQ(recorder.stanzas[0]->name(), "handshake");
  EXPECT_EQ(recorder.stanzas[0]->xmlns(), "jabber:component:accept");
}

TEST(StreamParserTest, DeliversAStanzaWithAHugeAttributeTrickledInSmallPieces) {
  // Exercises the hold-back that keeps a trickled start tag from being rescanned per piece:
  // the value must arrive intact and the stanza on its last byte.
  Recorder recorder;
  StreamParser parser(StreamLimits{}, &recorder);
  std::string value;
  // '>' may stand unescaped in an attribute value; it makes the parser look at the tag again.
  for (int i = 0; i < 200000; ++i) value.push_back(i % 1000 == 999 ? '>' : 'a' + i % 26);
  std::string stanza = "<message to='" + value + "'><body>b</body></message>";
  ASSERT_TRUE(parser.Feed(kClientHeader).ok());
  std::string_view rest = stanza;
  while (rest.size() > 1) {
    const size_t n = std::min<size_t>(7, rest.size() - 1);
    ASSERT_TRUE(parser.Feed(rest.substr(0, n)).ok());
    rest.remove_prefix(n);
  }
  EXPECT_THAT(recorder.stanzas, IsEmpty());
  ASSERT_TRUE(parser.Feed(rest).ok());
  ASSERT_EQ(recorder.stanzas.size(), 1u);
  EXPECT_EQ(recorder.stanzas[0]->Attr("to"), value);
  EXPECT_EQ(recorder.stanzas[0]->ChildText("body"), "b");
}

TEST(StreamParserTest, RefusesFeedFromInsideItsOwnHandler) {
  class Reentrant : public StreamParser::Handler {
   public:
    void OnStreamOpen(const XmlElement&, std::string_view) override {}
    void OnStanza(std::unique_ptr<XmlElement>) override { status = parser->Feed("<message/>"); }
    void OnStreamClose() override {}
    StreamParser* parser = nullptr;
    absl::Status status;
  } handler;
  StreamParser parser(StreamLimits{}, &handler);
  handler.parser = &parser;
  ASSERT_TRUE(parser.Feed(ClientStream("<presence/>")).ok());
  EXPECT_EQ(handler.status.code(), absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace herald::xmpp
