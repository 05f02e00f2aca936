// The XEP-0313 query for a room's last messages and the reading of its results: the IQ is the
// one XEP-0313 §4 and XEP-0059 describe, and only results of that query, from that room, about
// messages said in it, are kept.
#include "component/xmpp/archive_query.h"

#include <string>
#include <vector>

#include "absl/time/time.h"
#include "component/xmpp/namespaces.h"
#include "gtest/gtest.h"
#include "tests/component/xmpp/one_stanza.h"

namespace herald::xmpp {
namespace {

using testing::OneStanza;

Jid J(std::string_view text) { return Jid::Parse(text).value(); }

const Jid kRoom = J("lobby@conference.localhost");

QueryArchive Query(int max = 20) {
  absl::Time since;
  EXPECT_TRUE(absl::ParseTime(absl::RFC3339_full, "2026-11-26T07:00:00Z", &since, nullptr));
  return QueryArchive{
      .room = kRoom, .nick = "herald", .max = max, .since = since, .from = J("agent.localhost")};
}

// One result of query `queryid` from `from`, forwarding what `said_by` said at `stamp`.
std::string Result(const std::string& queryid, const std::string& archive_id,
                   const std::string& said,
                   const std::string& said_by = "lobby@conference.localhost/alice",
                   const std::string& stamp = "2026-11-26T07:30:00.123Z",
                   const std::string& from = "lobby@conference.localhost",
                   const std::string& extra = "") {
  return absl::StrCat(
      "<message from='", from, "' to='agent.localhost'>",
      "<result xmlns='urn:xmpp:mam:2' queryid='", queryid, "' id='", archive_id,
      "'><forwarded xmlns='urn:xmpp:forward:0'>", "<delay xmlns='urn:xmpp:delay' stamp='", stamp,
      "'/>", "<message xmlns='jabber:client' type='groupchat' id='", archive_id, "-origin' from='",
      said_by, "'>", said, extra, "</message></forwarded></result></message>");
}

TEST(ArchiveRequestTest, AsksForTheLastMessagesSinceAPointInTime) {
  const XmlElement iq = ArchiveRequest(Query(), "q1");
  EXPECT_EQ(iq.Attr("type"), "set");
  EXPECT_EQ(iq.Attr("id"), "q1");
  EXPECT_EQ(iq.Attr("to"), "lobby@conference.localhost");
  EXPECT_EQ(iq.Attr("from"), "agent.localhost");
  const XmlElement* query = iq.FindChild("query", ns::kMam);
  ASSERT_NE(query, nullptr);
  EXPECT_EQ(query->Attr("queryid"), "q1");
  const XmlElement* form = query->FindChild("x", ns::kDataForms);
  ASSERT_NE(form, nullptr);
  EXPECT_EQ(form->Attr("type"), "submit");
  std::vector<std::pair<std::string, std::string>> fields;
  for (const XmlNode& node : form->children()) {
    if (node.element == nullptr) continue;
    fields.emplace_back(node.element->Attr("var"), node.element->ChildText("value"));
  }
  EXPECT_EQ(fields, (std::vector<std::pair<std::string, std::string>>{
                        {"FORM_TYPE", "urn:xmpp:mam:2"}, {"start", "2026-11-26T07:00:00Z"}}));
  const XmlElement* set = query->FindChild("set", ns::kRsm);
  ASSERT_NE(set, nullptr);
  EXPECT_EQ(set->ChildText("max"), "20");
  const XmlElement* before = set->FindChild("before", ns::kRsm);
  ASSERT_NE(before, nullptr);  // empty: the last page
  EXPECT_EQ(before->Text(), "");

  // However many are asked for, never more than kMaxArchivedMessages, never fewer than one.
  EXPECT_EQ(ArchiveRequest(Query(100000), "q2")
                .FindChild("query", ns::kMam)
                ->FindChild("set", ns::kRsm)
                ->ChildText("max"),
            std::to_string(kMaxArchivedMessages));
}

TEST(ArchiveReaderTest, KeepsWhatWasSaidInTheRoomInOrder) {
  ArchiveReader reader(Query(), J("agent.localhost"));
  const std::vector<std::string> stanzas = {
      Result("q1", "a1", "<body>the code word is marmalade</body>"),
      // Said without words: a reaction, a chat state.
      Result("q1", "a2", "<reactions xmlns='urn:xmpp:reactions:0' id='a1'/>"),
      Result("q1", "a3", "<body></body>"),
      // Without a time it cannot be placed; the room speaking for itself is no one.
      Result("q1", "a4", "<body>when?</body>", "lobby@conference.localhost/bob", "yesterday"),
      Result("q1", "a5", "<body>subject</body>", "lobby@conference.localhost"),
      // A message of another room forwarded by this one.
      Result("q1", "a6", "<body>elsewhere</body>", "other@conference.localhost/eve"),
      Result("q1", "a7", "<body>see you Thursday</body>", "lobby@conference.localhost/bob",
             "2026-11-26T07:31:00Z"),
  };
  for (const std::string& xml : stanzas) {
    OneStanza message(xml);
    EXPECT_TRUE(reader.Read(message.get(), "q1")) << xml;
  }
  const ArchiveResult archive =
      std::move(reader).Finish(OneStanza("<iq type='result' id='q1' from='lobby@conference."
                                         "localhost'><fin xmlns='urn:xmpp:mam:2'/></iq>")
                                   .get());
  EXPECT_TRUE(archive.answered);
  EXPECT_EQ(archive.room, kRoom);
  EXPECT_EQ(archive.nick, "herald");
  ASSERT_EQ(archive.messages.size(), 2u);
  EXPECT_EQ(archive.messages[0].nick, "alice");
  EXPECT_EQ(archive.messages[0].body, "the code word is marmalade");
  EXPECT_EQ(archive.messages[0].id, "a1");
  EXPECT_EQ(absl::FormatTime(absl::RFC3339_full, archive.messages[0].time, absl::UTCTimeZone()),
            "2026-11-26T07:30:00.123+00:00");
  EXPECT_EQ(archive.messages[1].nick, "bob");
  EXPECT_EQ(archive.messages[1].body, "see you Thursday");
}

TEST(ArchiveReaderTest, ResultsOfAnotherQueryOrFromAnyoneButTheRoomAreNotRead) {
  ArchiveReader reader(Query(), J("agent.localhost"));
  for (const std::string& xml : {
           Result("q2", "a1", "<body>another query's</body>"),
           Result("q1", "a2", "<body>forged</body>", "lobby@conference.localhost/alice",
                  "2026-11-26T07:30:00Z", "mallory@localhost/x"),
           Result("q1", "a3", "<body>from an occupant</body>", "lobby@conference.localhost/alice",
                  "2026-11-26T07:30:00Z", "lobby@conference.localhost/alice"),
           std::string("<message from='lobby@conference.localhost'><body>hi</body></message>"),
       }) {
    OneStanza message(xml);
    EXPECT_FALSE(reader.Read(message.get(), "q1")) << xml;
  }
  EXPECT_TRUE(
      std::move(reader).Finish(OneStanza("<iq type='result' id='q1'/>").get()).messages.empty());
}

TEST(ArchiveReaderTest, ACorrectionReplacesTheTextItCorrectsWhenItsAuthorMadeIt) {
  ArchiveReader reader(Query(), J("agent.localhost"));
  const std::string correct_a1 = "<replace xmlns='urn:xmpp:message-correct:0' id='a1-origin'/>";
  for (const std::string& xml : {
           Result("q1", "a1", "<body>teh plan</body>"),
           Result("q1", "a2", "<body>hijacked</body>", "lobby@conference.localhost/eve",
                  "2026-11-26T07:30:01Z", "lobby@conference.localhost", correct_a1),
           Result("q1", "a3", "<body>the plan</body>", "lobby@conference.localhost/alice",
                  "2026-11-26T07:30:02Z", "lobby@conference.localhost", correct_a1),
       }) {
    OneStanza message(xml);
    EXPECT_TRUE(reader.Read(message.get(), "q1")) << xml;
  }
  const ArchiveResult archive =
      std::move(reader).Finish(OneStanza("<iq type='result' id='q1'/>").get());
  ASSERT_EQ(archive.messages.size(), 2u);
  EXPECT_EQ(archive.messages[0].body, "the plan");
  EXPECT_EQ(archive.messages[1].nick, "eve");  // eve's "correction" is a message of her own
  EXPECT_EQ(archive.messages[1].body, "hijacked");
}

TEST(ArchiveReaderTest, KeepsNoMoreThanItAskedFor) {
  ArchiveReader reader(Query(/*max=*/2), J("agent.localhost"));
  for (int i = 0; i < 5; ++i) {
    OneStanza message(Result("q1", absl::StrCat("a", i), absl::StrCat("<body>", i, "</body>")));
    EXPECT_TRUE(reader.Read(message.get(), "q1"));
  }
  EXPECT_EQ(
      std::move(reader).Finish(OneStanza("<iq type='result' id='q1'/>").get()).messages.size(), 2u);
}

TEST(ArchiveReaderTest, TheAccountsArchiveGivesTheChatsOthersSent) {
  const Jid account = J("herald@localhost/herald");
  QueryArchive own = Query();
  own.room = Jid();
  const XmlElement iq = ArchiveRequest(own, "q9");
  EXPECT_FALSE(iq.HasAttr("to"));  // the account's own archive
  ArchiveReader reader(own, account);
  auto chat = [](const std::string& from, const std::string& to, const std::string& type,
                 const std::string& result_from, const std::string& id) {
    return absl::StrCat(
        "<message", result_from.empty() ? "" : " from='" + result_from + "'",
        " to='herald@localhost/herald'><result xmlns='urn:xmpp:mam:2' queryid='q9' id='", id,
        "'><forwarded xmlns='urn:xmpp:forward:0'><delay xmlns='urn:xmpp:delay' "
        "stamp='2026-11-26T07:30:00Z'/><message xmlns='jabber:client' type='",
        type, "' id='", id, "-sent' from='", from, "' to='", to, "'><body>", id,
        "</body></message></forwarded></result></message>");
  };
  const std::vector<std::pair<std::string, bool>> stanzas = {
      {chat("alice@localhost/phone", "herald@localhost", "chat", "herald@localhost", "a1"), true},
      {chat("bob@localhost/pc", "herald@localhost", "", "", "a2"), true},  // no from: the server
      // Herald's own answer, a room's message, and results someone else made up.
      {chat("herald@localhost/herald", "alice@localhost", "chat", "herald@localhost", "a3"), true},
      {chat("room@conference.localhost/x", "herald@localhost", "groupchat", "herald@localhost",
            "a4"),
       true},
      {chat("alice@localhost/phone", "herald@localhost", "chat", "mallory@localhost", "a5"), false},
  };
  for (const auto& [xml, read] : stanzas) {
    OneStanza message(xml);
    EXPECT_EQ(reader.Read(message.get(), "q9"), read) << xml;
  }
  EXPECT_FALSE(reader.FromArchive("mallory@localhost"));
  EXPECT_TRUE(reader.FromArchive(""));
  const ArchiveResult archive =
      std::move(reader).Finish(OneStanza("<iq type='result' id='q9'/>").get());
  ASSERT_EQ(archive.messages.size(), 2u);
  EXPECT_EQ(archive.messages[0].from, J("alice@localhost/phone"));
  EXPECT_EQ(archive.messages[0].nick, "");
  EXPECT_EQ(archive.messages[0].sent_id, "a1-sent");
  EXPECT_EQ(archive.messages[1].from, J("bob@localhost/pc"));
}

TEST(ArchiveReaderTest, ARoomWithoutAnArchiveAnswersWithAnError) {
  ArchiveReader reader(Query(), J("agent.localhost"));
  OneStanza message(Result("q1", "a1", "<body>hi</body>"));
  ASSERT_TRUE(reader.Read(message.get(), "q1"));
  const ArchiveResult archive = std::move(reader).Finish(
      OneStanza("<iq type='error' id='q1'><error type='cancel'><service-unavailable "
                "xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></error></iq>")
          .get());
  EXPECT_FALSE(archive.answered);
  EXPECT_EQ(archive.condition, "service-unavailable");
  EXPECT_TRUE(archive.messages.empty());
}

}  // namespace
}  // namespace herald::xmpp
