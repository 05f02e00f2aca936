// UploadServiceDiscovery: which entity of the server is its XEP-0363 upload service, and how
// large a file it takes, from the disco answers handed in. No socket.
#include "component/xmpp/upload_service.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "component/xmpp/namespaces.h"
#include "component/xmpp/xml_writer.h"
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

// A disco#info answer with these features and, when `max` is not empty, the XEP-0128 form of
// an upload service stating it.
XmlElement Info(std::string from, std::string id, const std::vector<std::string>& features,
                std::string max = "", std::string form_type = ns::kHttpUpload) {
  XmlElement iq = Answer(std::move(from), std::move(id));
  XmlElement& query = iq.AddChild("query", ns::kDiscoInfo);
  query.AddChild("identity", ns::kDiscoInfo).SetAttr("category", "store").SetAttr("type", "file");
  for (const std::string& feature : features) {
    query.AddChild("feature", ns::kDiscoInfo).SetAttr("var", feature);
  }
  if (!max.empty()) {
    XmlElement& form = query.AddChild("x", ns::kDataForms);
    form.SetAttr("type", "result");
    XmlElement& type = form.AddChild("field", ns::kDataForms);
    type.SetAttr("var", "FORM_TYPE").SetAttr("type", "hidden");
    type.AddChild("value", ns::kDataForms).AddText(form_type);
    form.AddChild("field", ns::kDataForms)
        .SetAttr("var", "max-file-size")
        .AddChild("value", ns::kDataForms)
        .AddText(max);
  }
  return iq;
}

class UploadServiceDiscoveryTest : public ::testing::Test {
 protected:
  std::function<std::string()> next_id() {
    return [this] { return "u" + std::to_string(++ids_); };
  }
  // Starts on "localhost" and checks its queries: the domain's disco#info (id info_id_),
  // then its disco#items (id items_id_).
  void StartOnLocalhost() {
    std::vector<XmlElement> queries = upload_.Start("localhost", next_id());
    ASSERT_EQ(queries.size(), 2u);
    EXPECT_EQ(queries[0].Attr("to"), "localhost");
    EXPECT_NE(queries[0].FindChild("query", ns::kDiscoInfo), nullptr);
    EXPECT_EQ(queries[1].Attr("to"), "localhost");
    EXPECT_NE(queries[1].FindChild("query", ns::kDiscoItems), nullptr);
    info_id_ = std::string(queries[0].Attr("id"));
    items_id_ = std::string(queries[1].Attr("id"));
    EXPECT_NE(info_id_, items_id_);
    EXPECT_FALSE(upload_.settled());
  }
  std::vector<XmlElement> Hand(const XmlElement& answer) {
    EXPECT_TRUE(upload_.Answers(answer));
    return upload_.OnAnswer(answer, next_id());
  }

  UploadServiceDiscovery upload_;
  int ids_ = 0;
  std::string info_id_;
  std::string items_id_;
};

TEST_F(UploadServiceDiscoveryTest, FindsTheItemThatOffersHttpUploadWithItsMaximumFileSize) {
  StartOnLocalhost();
  EXPECT_TRUE(Hand(Info("localhost", info_id_, {ns::kDiscoInfo, ns::kDiscoItems})).empty());
  std::vector<XmlElement> infos =
      Hand(Items(items_id_, {"conference.localhost", "upload.localhost", "localhost"}));
  ASSERT_EQ(infos.size(), 2u);  // the domain itself was asked already
  EXPECT_EQ(infos[0].Attr("to"), "conference.localhost");
  EXPECT_EQ(infos[1].Attr("to"), "upload.localhost");
  EXPECT_NE(infos[1].FindChild("query", ns::kDiscoInfo), nullptr);
  Hand(Info("conference.localhost", std::string(infos[0].Attr("id")),
            {"http://jabber.org/protocol/muc"}));
  EXPECT_FALSE(upload_.settled());
  Hand(Info("upload.localhost", std::string(infos[1].Attr("id")), {ns::kHttpUpload}, "10485760"));
  ASSERT_TRUE(upload_.settled());
  ASSERT_TRUE(upload_.found().has_value());
  EXPECT_EQ(upload_.found()->jid.ToString(), "upload.localhost");
  EXPECT_EQ(upload_.found()->max_file_size, 10485760u);
  EXPECT_EQ(DescribeUploadService(*upload_.found()), "upload.localhost (max 10 MiB)");
}

TEST_F(UploadServiceDiscoveryTest, TheDomainItselfComesFirstAndSettlesWithoutWaitingForItems) {
  StartOnLocalhost();
  Hand(Info("localhost", info_id_, {ns::kHttpUpload}));
  ASSERT_TRUE(upload_.settled());
  ASSERT_TRUE(upload_.found().has_value());
  EXPECT_EQ(upload_.found()->jid.ToString(), "localhost");
  EXPECT_FALSE(upload_.found()->max_file_size.has_value());
  EXPECT_EQ(DescribeUploadService(*upload_.found()), "localhost (no maximum file size stated)");
  // The items' answer that comes after is no longer awaited.
  EXPECT_FALSE(upload_.Answers(Items(items_id_, {"upload.localhost"})));
}

TEST_F(UploadServiceDiscoveryTest, TheFirstServiceInTheServersOrderWinsWhicheverAnswersFirst) {
  StartOnLocalhost();
  std::vector<XmlElement> infos = Hand(Items(items_id_, {"files.localhost", "upload.localhost"}));
  ASSERT_EQ(infos.size(), 2u);
  Hand(Info("upload.localhost", std::string(infos[1].Attr("id")), {ns::kHttpUpload}, "1000"));
  EXPECT_FALSE(upload_.settled()) << "the domain and files.localhost come first";
  Hand(Info("localhost", info_id_, {}));
  EXPECT_FALSE(upload_.settled());
  Hand(Info("files.localhost", std::string(infos[0].Attr("id")), {ns::kHttpUpload}, "2000"));
  ASSERT_TRUE(upload_.found().has_value());
  EXPECT_EQ(upload_.found()->jid.ToString(), "files.localhost");
  EXPECT_EQ(upload_.found()->max_file_size, 2000u);
}

TEST_F(UploadServiceDiscoveryTest, NoServiceWhenNoneOffersTheFeatureOrTheServerRefuses) {
  StartOnLocalhost();
  std::vector<XmlElement> infos = Hand(Items(items_id_, {"pubsub.localhost", "legacy.localhost"}));
  ASSERT_EQ(infos.size(), 2u);
  Hand(Answer("localhost", info_id_, "error"));
  Hand(Answer("pubsub.localhost", std::string(infos[0].Attr("id")), "error"));
  EXPECT_FALSE(upload_.settled());
  // XEP-0363 v0.2's namespace is not the one Herald speaks.
  Hand(Info("legacy.localhost", std::string(infos[1].Attr("id")), {"urn:xmpp:http:upload"}));
  EXPECT_TRUE(upload_.settled());
  EXPECT_FALSE(upload_.found().has_value());
}

TEST_F(UploadServiceDiscoveryTest, AnItemsErrorLeavesTheDomainsOwnAnswer) {
  StartOnLocalhost();
  EXPECT_TRUE(Hand(Answer("localhost", items_id_, "error")).empty());
  EXPECT_FALSE(upload_.settled());
  Hand(Info("localhost", info_id_, {}));
  EXPECT_TRUE(upload_.settled());
  EXPECT_FALSE(upload_.found().has_value());
}

TEST_F(UploadServiceDiscoveryTest, OnlyTheEntityAskedMayAnswer) {
  StartOnLocalhost();
  std::vector<XmlElement> infos = Hand(Items(items_id_, {"upload.localhost"}));
  ASSERT_EQ(infos.size(), 1u);
  const std::string id(infos[0].Attr("id"));
  EXPECT_FALSE(upload_.Answers(Info("evil.example", id, {ns::kHttpUpload})));
  EXPECT_FALSE(upload_.Answers(Info("evil.example", info_id_, {ns::kHttpUpload})));
  EXPECT_FALSE(upload_.Answers(Items(items_id_, {"upload.localhost"})));  // answered already
  EXPECT_FALSE(upload_.Answers(Answer("upload.localhost", "u99")));
  XmlElement get = Info("upload.localhost", id, {ns::kHttpUpload});
  get.SetAttr("type", "get");
  EXPECT_FALSE(upload_.Answers(get));
  EXPECT_TRUE(upload_.Answers(Info("upload.localhost", id, {ns::kHttpUpload})));
}

TEST_F(UploadServiceDiscoveryTest, ReadsTheSizeOnlyFromTheUploadForm) {
  StartOnLocalhost();
  Hand(Items(items_id_, {}));
  Hand(Info("localhost", info_id_, {ns::kHttpUpload}, "5000", "urn:example:other"));
  ASSERT_TRUE(upload_.found().has_value());
  EXPECT_FALSE(upload_.found()->max_file_size.has_value());

  const std::string old_info_id = info_id_;
  StartOnLocalhost();  // a new stream asks again
  EXPECT_FALSE(upload_.found().has_value());
  EXPECT_FALSE(upload_.Answers(Info("localhost", old_info_id, {ns::kHttpUpload})));
  Hand(Info("localhost", info_id_, {ns::kHttpUpload}, "lots"));
  ASSERT_TRUE(upload_.found().has_value());
  EXPECT_FALSE(upload_.found()->max_file_size.has_value()) << "not a number";
}

TEST_F(UploadServiceDiscoveryTest, ItemsThatAreNotServicesAreNotAskedAndTheirNumberIsBounded) {
  StartOnLocalhost();
  XmlElement items = Answer("localhost", items_id_);
  XmlElement& query = items.AddChild("query", ns::kDiscoItems);
  // A node is a part of an entity, not a service of its own; nor are users and resources.
  query.AddChild("item", ns::kDiscoItems)
      .SetAttr("jid", "announce.localhost")
      .SetAttr("node", "news");
  for (const char* jid : {"user@localhost", "localhost/res", "not a jid", "s0.localhost"}) {
    query.AddChild("item", ns::kDiscoItems).SetAttr("jid", jid);
  }
  for (int i = 0; i < 100; ++i) {
    query.AddChild("item", ns::kDiscoItems).SetAttr("jid", "s" + std::to_string(i) + ".localhost");
  }
  std::vector<XmlElement> infos = Hand(items);
  ASSERT_EQ(infos.size(), UploadServiceDiscovery::kMaxItems);
  EXPECT_EQ(infos.front().Attr("to"), "s0.localhost");
  EXPECT_EQ(infos.back().Attr("to"), "s63.localhost");  // s0 once
}

TEST_F(UploadServiceDiscoveryTest, GivingUpTakesTheFirstServiceAmongTheAnswers) {
  StartOnLocalhost();
  std::vector<XmlElement> infos = Hand(Items(items_id_, {"a.localhost", "b.localhost"}));
  ASSERT_EQ(infos.size(), 2u);
  Hand(Info("b.localhost", std::string(infos[1].Attr("id")), {ns::kHttpUpload}));
  EXPECT_FALSE(upload_.settled());
  upload_.GiveUp();
  ASSERT_TRUE(upload_.settled());
  ASSERT_TRUE(upload_.found().has_value());
  EXPECT_EQ(upload_.found()->jid.ToString(), "b.localhost");

  StartOnLocalhost();
  upload_.GiveUp();
  EXPECT_TRUE(upload_.settled());
  EXPECT_FALSE(upload_.found().has_value());
}

TEST(UploadServiceDiscoveryStartTest, ANameThatIsNotADomainAsksNothing) {
  UploadServiceDiscovery upload;
  EXPECT_TRUE(upload.Start("bot@localhost", [] { return std::string("x"); }).empty());
  EXPECT_TRUE(upload.settled());
  EXPECT_FALSE(upload.found().has_value());
}

TEST(DescribeUploadServiceTest, SaysTheSizeInTheLargestWholeUnit) {
  auto describe = [](uint64_t bytes) {
    return DescribeUploadService(
        UploadServiceFound{.jid = Jid::Parse("up.example").value(), .max_file_size = bytes});
  };
  EXPECT_EQ(describe(2ull << 30), "up.example (max 2 GiB)");
  EXPECT_EQ(describe(100ull << 20), "up.example (max 100 MiB)");
  EXPECT_EQ(describe(1572864), "up.example (max 1.5 MiB)");
  EXPECT_EQ(describe(512 * 1024), "up.example (max 512 KiB)");
  EXPECT_EQ(describe(1000), "up.example (max 1000 bytes)");
}

// XEP-0363 §4: a slot request and its answer.
TEST(UploadSlotTest, TheRequestNamesTheFileItsSizeAndType) {
  const XmlElement iq =
      UploadSlotRequest(RequestUploadSlot{.request_id = "r1",
                                          .service = *Jid::Parse("upload.localhost"),
                                          .from = *Jid::Parse("agent.localhost"),
                                          .filename = "report <1>.pdf",
                                          .size = 4711,
                                          .content_type = "application/pdf"},
                        "id7");
  EXPECT_EQ(ToXml(iq),
            "<iq type='get' id='id7' to='upload.localhost' from='agent.localhost'>"
            "<request xmlns='urn:xmpp:http:upload:0' filename='report &lt;1&gt;.pdf' "
            "size='4711' content-type='application/pdf'/></iq>");
}

XmlElement Slot(std::string from, std::string put, std::string get,
                std::vector<std::pair<std::string, std::string>> headers = {}) {
  XmlElement iq = Answer(std::move(from), "id7");
  XmlElement& slot = iq.AddChild("slot", ns::kHttpUpload);
  XmlElement& put_element = slot.AddChild("put", ns::kHttpUpload);
  put_element.SetAttr("url", put);
  for (const auto& [name, value] : headers) {
    put_element.AddChild("header", ns::kHttpUpload).SetAttr("name", name).AddText(value);
  }
  slot.AddChild("get", ns::kHttpUpload).SetAttr("url", get);
  return iq;
}

TEST(UploadSlotTest, AnAnswerGivesBothUrlsAndOnlyTheHeadersTheXepAllows) {
  const Jid service = *Jid::Parse("upload.localhost");
  std::optional<UploadSlot> slot = TranslateUploadSlot(
      Slot("upload.localhost", "https://up.example/put/abc/x.pdf",
           "https://up.example/get/abc/x.pdf",
           {{"Authorization", "Basic Zm9v"}, {"Host", "evil.example"}, {"Expires", "soon"}}),
      service, "r1");
  ASSERT_TRUE(slot.has_value());
  EXPECT_EQ(slot->request_id, "r1");
  EXPECT_EQ(slot->condition, "");
  EXPECT_EQ(slot->put_url, "https://up.example/put/abc/x.pdf");
  EXPECT_EQ(slot->get_url, "https://up.example/get/abc/x.pdf");
  EXPECT_EQ(slot->put_headers, (std::vector<std::pair<std::string, std::string>>{
                                   {"Authorization", "Basic Zm9v"}, {"Expires", "soon"}}));
}

TEST(UploadSlotTest, ErrorsBadUrlsAndStrangersAreToldApart) {
  const Jid service = *Jid::Parse("upload.localhost");
  // Only the service may answer.
  EXPECT_FALSE(TranslateUploadSlot(Slot("evil.example", "http://a/b", "http://a/c"), service, "r")
                   .has_value());
  // An answer without two http(s) URLs.
  std::optional<UploadSlot> bad = TranslateUploadSlot(
      Slot("upload.localhost", "file:///etc/passwd", "http://a/c"), service, "r");
  ASSERT_TRUE(bad.has_value());
  EXPECT_EQ(bad->condition, "bad-slot");
  // The service's refusal, by its condition.
  XmlElement error = Answer("upload.localhost", "id7", "error");
  error.AddChild("error")
      .SetAttr("type", "modify")
      .AddChild("not-acceptable", "urn:ietf:params:xml:ns:xmpp-stanzas");
  std::optional<UploadSlot> refused = TranslateUploadSlot(error, service, "r");
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(refused->condition, "not-acceptable");
}

}  // namespace
}  // namespace herald::xmpp
