// XEP-0066 attachments read from a message: what is kept, what is cut, what is left out, and
// when the body is only the attachment's URL. No socket.
#include "component/xmpp/oob_translation.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "component/base/absl_string_view.h"
#include "gtest/gtest.h"
#include "tests/component/xmpp/one_stanza.h"

namespace herald::xmpp {
namespace {

using testing::OneStanza;

const Jid kAlice = Jid::Parse("alice@localhost/phone").value();

std::string Oob(std::string_view url, std::string_view desc = "") {
  return absl::StrCat("<x xmlns='jabber:x:oob'><url>", AbslView(url), "</url>",
                      desc.empty() ? "" : absl::StrCat("<desc>", AbslView(desc), "</desc>"),
                      "</x>");
}

std::vector<OobAttachment> AttachmentsOf(std::string_view children) {
  OneStanza message(
      absl::StrCat("<message from='alice@localhost/phone' to='herald.localhost' type='chat'>",
                   AbslView(children), "</message>"));
  return TranslateOobAttachments(message.get(), kAlice);
}

TEST(TranslateOobAttachmentsTest, KeepsEachHttpUrlWithItsDescriptionInOrder) {
  std::vector<OobAttachment> attachments = AttachmentsOf(absl::StrCat(
      "<body>two files</body>", Oob("https://upload.localhost/a/photo.jpg", "The view"),
      Oob("http://example.org/notes.txt")));
  ASSERT_EQ(attachments.size(), 2u);
  EXPECT_EQ(attachments[0].url, "https://upload.localhost/a/photo.jpg");
  EXPECT_EQ(attachments[0].description, "The view");
  EXPECT_EQ(attachments[1].url, "http://example.org/notes.txt");
  EXPECT_EQ(attachments[1].description, "");
}

TEST(TranslateOobAttachmentsTest, AMessageWithoutOobDataHasNone) {
  EXPECT_TRUE(AttachmentsOf("<body>hi</body>").empty());
  // Other <x/> payloads (MUC, conference, data forms) are not attachments.
  EXPECT_TRUE(AttachmentsOf("<body>hi</body><x xmlns='http://jabber.org/protocol/muc#user'/>"
                            "<x xmlns='jabber:x:data'><url>https://a.example/f</url></x>")
                  .empty());
  // Nor is a <url/> of the right namespace outside an <x/>.
  EXPECT_TRUE(AttachmentsOf("<url xmlns='jabber:x:oob'>https://a.example/f</url>").empty());
}

TEST(TranslateOobAttachmentsTest, OnlyHttpAndHttpsUrlsWithAHostAreKept) {
  std::vector<OobAttachment> attachments = AttachmentsOf(
      absl::StrCat(Oob("file:///etc/passwd"), Oob("ftp://example.org/f"),
                   Oob("javascript:alert(1)"), Oob("https://"), Oob("http:///no-host"), Oob(""),
                   "<x xmlns='jabber:x:oob'/>", Oob("https://example.org/a b"),
                   Oob("https://example.org/a&#10;b"), Oob("HTTPS://Example.org/Upper")));
  ASSERT_EQ(attachments.size(), 1u);
  EXPECT_EQ(attachments[0].url, "HTTPS://Example.org/Upper");
}

TEST(TranslateOobAttachmentsTest, WhiteSpaceAroundTheUrlIsTrimmed) {
  std::vector<OobAttachment> attachments =
      AttachmentsOf(Oob("\n    https://example.org/f.png\n  "));
  ASSERT_EQ(attachments.size(), 1u);
  EXPECT_EQ(attachments[0].url, "https://example.org/f.png");
}

TEST(TranslateOobAttachmentsTest, AUrlLongerThanTheLimitIsLeftOutNotCut) {
  const std::string prefix = "https://example.org/";
  const std::string longest(prefix + std::string(OobAttachment::kMaxUrlBytes - prefix.size(), 'a'));
  std::vector<OobAttachment> attachments =
      AttachmentsOf(absl::StrCat(Oob(longest + "b"), Oob(longest)));
  ASSERT_EQ(attachments.size(), 1u);
  EXPECT_EQ(attachments[0].url, longest);
}

TEST(TranslateOobAttachmentsTest, AtMostFourAttachmentsAreKeptAndTheSameUrlOnce) {
  std::string children = Oob("https://example.org/0");
  for (int i = 0; i < 10; ++i) children += Oob(absl::StrCat("https://example.org/", i));
  std::vector<OobAttachment> attachments = AttachmentsOf(children);
  ASSERT_EQ(attachments.size(), OobAttachment::kMaxPerMessage);
  EXPECT_EQ(attachments[0].url, "https://example.org/0");
  EXPECT_EQ(attachments[3].url, "https://example.org/3");
  // An invalid one does not take a place.
  attachments = AttachmentsOf(absl::StrCat(Oob("ftp://x.example/0"), children));
  ASSERT_EQ(attachments.size(), 4u);
  EXPECT_EQ(attachments[0].url, "https://example.org/0");
}

TEST(TranslateOobAttachmentsTest, ADescriptionIsCutToOneKibibyteOnACharacterBoundary) {
  // 'é' is two bytes: 1023 bytes of 'a' then 'é' would end past the limit, so 'é' goes.
  const std::string description = std::string(OobAttachment::kMaxDescriptionBytes - 1, 'a') +
                                  "\xC3\xA9" + std::string(5000, 'b');
  std::vector<OobAttachment> attachments = AttachmentsOf(Oob("https://example.org/f", description));
  ASSERT_EQ(attachments.size(), 1u);
  EXPECT_EQ(attachments[0].description, std::string(OobAttachment::kMaxDescriptionBytes - 1, 'a'));
}

TEST(BodyIsAttachmentUrlTest, TrueWhenTheBodyIsExactlyOneOfTheUrls) {
  const std::vector<OobAttachment> attachments = {{.url = "https://example.org/a.jpg"},
                                                  {.url = "https://example.org/b.jpg"}};
  EXPECT_TRUE(BodyIsAttachmentUrl("https://example.org/b.jpg", attachments));
  EXPECT_TRUE(BodyIsAttachmentUrl("https://example.org/a.jpg\n", attachments));
  EXPECT_FALSE(BodyIsAttachmentUrl("look: https://example.org/a.jpg", attachments));
  EXPECT_FALSE(BodyIsAttachmentUrl("https://example.org/a.jpg?x", attachments));
  EXPECT_FALSE(BodyIsAttachmentUrl("", attachments));
  EXPECT_FALSE(BodyIsAttachmentUrl("https://example.org/a.jpg", {}));
}

}  // namespace
}  // namespace herald::xmpp
