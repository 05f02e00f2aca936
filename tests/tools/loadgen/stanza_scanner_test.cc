#include "tools/loadgen/stanza_scanner.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace herald::loadgen {
namespace {

struct Seen {
  ScannedElement::Kind kind;
  std::string name, to, from, type, id, text, xml;
};

// Feeds `chunks` one after another and returns every element reported.
std::vector<Seen> Scan(StanzaScanner& scanner, const std::vector<std::string>& chunks) {
  std::vector<Seen> seen;
  for (const std::string& chunk : chunks) {
    absl::Status status = scanner.Feed(chunk, [&](const ScannedElement& e) {
      seen.push_back({e.kind, std::string(e.name), std::string(e.to), std::string(e.from),
                      std::string(e.type), std::string(e.id), std::string(e.text),
                      std::string(e.xml)});
    });
    EXPECT_TRUE(status.ok()) << status;
  }
  return seen;
}

constexpr char kHeader[] =
    "<?xml version='1.0'?><stream:stream xmlns='jabber:component:accept' "
    "xmlns:stream='http://etherx.jabber.org/streams' to='agent.localhost'>";

TEST(StanzaScannerTest, ReportsTheHeaderThenEachStanzaWithItsAddresses) {
  StanzaScanner scanner;
  const std::string message =
      "<message from='agent.localhost' to='u7@localhost/load' type='chat' id='h1'>"
      "<body>pong</body></message>";
  std::vector<Seen> seen = Scan(scanner, {std::string(kHeader) + message + " \n"});
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].kind, ScannedElement::kStreamHeader);
  EXPECT_EQ(seen[0].name, "stream:stream");
  EXPECT_EQ(seen[0].to, "agent.localhost");
  EXPECT_EQ(seen[1].kind, ScannedElement::kStanza);
  EXPECT_EQ(seen[1].name, "message");
  EXPECT_EQ(seen[1].to, "u7@localhost/load");
  EXPECT_EQ(seen[1].from, "agent.localhost");
  EXPECT_EQ(seen[1].type, "chat");
  EXPECT_EQ(seen[1].id, "h1");
  EXPECT_EQ(seen[1].xml, message);
  EXPECT_EQ(scanner.pending_bytes(), 0u);
}

TEST(StanzaScannerTest, FindsTheSameStanzasWhenFedOneByteAtATime) {
  const std::string stream = std::string(kHeader) +
                             "<handshake>ab12</handshake><iq type='get' id='p1' "
                             "to='localhost'><ping xmlns='urn:xmpp:ping'/></iq>"
                             "<message to=\"u1@localhost\"><body>a &gt; b</body></message>"
                             "</stream:stream>";
  StanzaScanner scanner;
  std::vector<std::string> bytes;
  for (char c : stream) bytes.emplace_back(1, c);
  std::vector<Seen> seen = Scan(scanner, bytes);
  ASSERT_EQ(seen.size(), 5u);
  EXPECT_EQ(seen[1].name, "handshake");
  EXPECT_EQ(seen[1].text, "ab12");
  EXPECT_EQ(seen[2].name, "iq");
  EXPECT_EQ(seen[2].id, "p1");
  EXPECT_EQ(seen[3].to, "u1@localhost");
  EXPECT_EQ(seen[4].kind, ScannedElement::kStreamClose);
}

TEST(StanzaScannerTest, AGreaterThanSignInsideAnAttributeValueDoesNotEndTheTag) {
  StanzaScanner scanner;
  std::vector<Seen> seen =
      Scan(scanner, {kHeader, "<message to='a>b@localhost' type='chat'><body/></message>"});
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[1].to, "a>b@localhost");
  EXPECT_EQ(seen[1].type, "chat");
}

TEST(StanzaScannerTest, NestedElementsOfTheSameNameEndAtTheOuterCloseTag) {
  StanzaScanner scanner;
  const std::string forwarded =
      "<message to='u2@localhost'><forwarded><message><body>inner</body></message>"
      "</forwarded><body>outer</body></message>";
  std::vector<Seen> seen = Scan(scanner, {kHeader, forwarded.substr(0, 40), forwarded.substr(40)});
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[1].xml, forwarded);
}

TEST(StanzaScannerTest, KeepsAnIncompleteStanzaUntilItsEndArrives) {
  StanzaScanner scanner;
  std::vector<Seen> seen = Scan(scanner, {kHeader, "<message to='u3@localhost'><bo"});
  EXPECT_EQ(seen.size(), 1u);
  EXPECT_GT(scanner.pending_bytes(), 0u);
  seen = Scan(scanner, {"dy>hi</body></message>"});
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].to, "u3@localhost");
  EXPECT_EQ(scanner.pending_bytes(), 0u);
}

TEST(StanzaScannerTest, RefusesTextBetweenStanzas) {
  StanzaScanner scanner;
  absl::Status status =
      scanner.Feed(std::string(kHeader) + "hello<message/>", [](const ScannedElement&) {});
  EXPECT_FALSE(status.ok());
}

}  // namespace
}  // namespace herald::loadgen
