#include "skills/web/html_text.h"

#include <optional>
#include <string>

#include "absl/strings/match.h"
#include "component/base/utf8.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "skills/web/text_encoding.h"

namespace herald::skills::web {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST(HtmlTextTest, KeepsTheTitleApartFromTheText) {
  HtmlText page = HtmlToText(
      "<!DOCTYPE html><html><head><title> Example\n  Domain </title></head>"
      "<body><p>Hello.</p></body></html>");
  EXPECT_EQ(page.title, "Example Domain");
  EXPECT_EQ(page.text, "Hello.");
}

TEST(HtmlTextTest, WritesHeadingsParagraphsAndLineBreaks) {
  HtmlText page =
      HtmlToText("<h1>Herald</h1><p>An agent\n   on   XMPP.</p><h2>Use</h2><p>One<br>Two</p>");
  EXPECT_EQ(page.text, "# Herald\n\nAn agent on XMPP.\n\n## Use\n\nOne\nTwo");
}

TEST(HtmlTextTest, WritesListsWithBulletsNumbersAndIndentation) {
  HtmlText page = HtmlToText(
      "<p>Steps:</p><ol><li>Install</li><li>Run<ul><li>fast</li><li>safe</li></ul></li>"
      "</ol><p>Done</p>");
  EXPECT_EQ(page.text, "Steps:\n\n1. Install\n2. Run\n  - fast\n  - safe\n\nDone");
}

TEST(HtmlTextTest, StartsAnOrderedListWhereItsStartAttributeSays) {
  EXPECT_EQ(HtmlToText("<ol start=4><li>d<li>e</ol>").text, "4. d\n5. e");
}

TEST(HtmlTextTest, NumbersLinksAndListsTheirUrls) {
  HtmlText page = HtmlToText(
      "<p>Read <a href=\"https://xmpp.org/\">the XMPP site</a> and "
      "<a href='https://example.org/a?x=1&amp;y=2'>this</a>, then "
      "<a href=\"https://xmpp.org/\">XMPP</a> again.</p>");
  EXPECT_EQ(page.text, "Read the XMPP site [1] and this [2], then XMPP [1] again.");
  EXPECT_THAT(page.links, ElementsAre("https://xmpp.org/", "https://example.org/a?x=1&y=2"));
}

TEST(HtmlTextTest, ResolvesLinksThroughTheCallerAndSkipsThoseItRefuses) {
  HtmlTextOptions options;
  options.resolve_link = [](std::string_view href) -> std::optional<std::string> {
    if (href.substr(0, 1) == "/") return "https://site.example" + std::string(href);
    return std::nullopt;
  };
  HtmlText page = HtmlToText(
      "<a href=\"/docs\">Docs</a> <a href=\"javascript:alert(1)\">Click</a> "
      "<a href=\"#top\">Top</a> <a>No href</a>",
      options);
  EXPECT_EQ(page.text, "Docs [1] Click Top No href");
  EXPECT_THAT(page.links, ElementsAre("https://site.example/docs"));
}

TEST(HtmlTextTest, GivesNoMarkerToALinkWithoutText) {
  HtmlText page = HtmlToText("<a href=\"https://a.example/\"><img src=x.png></a> text");
  EXPECT_EQ(page.text, "text");
  EXPECT_THAT(page.links, IsEmpty());
}

TEST(HtmlTextTest, StopsNumberingLinksAtTheLimit) {
  HtmlTextOptions options;
  options.max_links = 2;
  HtmlText page = HtmlToText(
      "<a href=https://a.example/>a</a> <a href=https://b.example/>b</a> "
      "<a href=https://c.example/>c</a>",
      options);
  EXPECT_EQ(page.text, "a [1] b [2] c");
  EXPECT_EQ(page.links.size(), 2u);
}

TEST(HtmlTextTest, DropsScriptsStylesCommentsAndHiddenContent) {
  HtmlText page = HtmlToText(
      "<style>p { color: red }</style><script>var s = '</p><p>not text';</script>"
      "<p>Visible<!-- a comment <p>hidden</p> --> text</p>"
      "<noscript>Enable JavaScript</noscript><template><p>later</p></template>"
      "<svg><title>icon</title><text>shape</text></svg><video>Your browser...</video>");
  EXPECT_EQ(page.text, "Visible text");
  EXPECT_EQ(page.title, "");
}

TEST(HtmlTextTest, FindsTheEndOfAScriptWhateverItsCase) {
  EXPECT_EQ(HtmlToText("a<SCRIPT type=x>if (a < b) x();</ScRiPt >b").text, "ab");
}

TEST(HtmlTextTest, DecodesCharacterReferences) {
  EXPECT_EQ(HtmlToText("<p>caf&eacute; &amp; cr&#232;me &#x1F600; &lt;tag&gt; &quot;q&quot; "
                       "&mdash; &hellip; &unknown; &#0; &#xD800; &#150;</p>")
                .text,
            "café & crème \U0001F600 <tag> \"q\" — … &unknown; \ufffd \ufffd –");
}

TEST(HtmlTextTest, DecodesLegacyReferencesWithoutSemicolonInTextButNotInUrls) {
  HtmlText page = HtmlToText("AT&T &amp co <a href=\"https://a.example/?x=1&copy=2\">l</a>");
  EXPECT_EQ(page.text, "AT&T & co l [1]");
  EXPECT_THAT(page.links, ElementsAre("https://a.example/?x=1&copy=2"));
}

TEST(HtmlTextTest, CollapsesWhitespaceIncludingNoBreakSpaces) {
  EXPECT_EQ(HtmlToText("  a \t\n b&nbsp;&nbsp;c\u00a0\u00a0d  ").text, "a b c d");
}

TEST(HtmlTextTest, KeepsPreformattedTextAsWritten) {
  EXPECT_EQ(HtmlToText("<p>Code:</p><pre>\nint  x;\n  y();</pre><p>after</p>").text,
            "Code:\n\nint  x;\n  y();\n\nafter");
}

TEST(HtmlTextTest, JoinsTableCellsWithBars) {
  EXPECT_EQ(HtmlToText("<table><tr><th>Name</th><th>Port</th></tr>"
                       "<tr><td>c2s</td><td>5222</td></tr></table>")
                .text,
            "Name | Port\nc2s | 5222");
}

TEST(HtmlTextTest, ShowsImageAltText) {
  EXPECT_EQ(HtmlToText("<p>Chart: <img alt=\"sales by month\" src=c.png></p>").text,
            "Chart: [image: sales by month]");
}

TEST(HtmlTextTest, SurvivesBrokenHtml) {
  EXPECT_EQ(HtmlToText("<p>one<p>two<div>three</span></b>four").text, "one\n\ntwo\nthreefour");
  EXPECT_EQ(HtmlToText("a < b and c<3 and <<>> x").text, "a < b and c<3 and <<>> x");
  EXPECT_EQ(HtmlToText("before<!-- never closed <p>after").text, "before");
  EXPECT_EQ(HtmlToText("x<a href=\"https://a.example/ unterminated>link").text, "x");
  EXPECT_EQ(HtmlToText("<p>text</p></>").text, "text");
  EXPECT_EQ(HtmlToText("<script>never closed <p>text").text, "");
  EXPECT_EQ(HtmlToText("<a href=https://a.example/>open <a href=https://b.example/>next</a>").text,
            "open [1] next [2]");
  EXPECT_EQ(HtmlToText("").text, "");
  EXPECT_EQ(HtmlToText("<").text, "<");
  EXPECT_EQ(HtmlToText("<p").text, "");
}

TEST(HtmlTextTest, AlwaysReturnsCleanUtf8) {
  HtmlText page = HtmlToText("<title>t\xff</title><p>a\x01\xc3</p>");
  EXPECT_TRUE(base::IsValidUtf8(page.title));
  EXPECT_TRUE(base::IsValidUtf8(page.text));
  EXPECT_EQ(page.text.find('\x01'), std::string::npos);
}

TEST(HtmlTextTest, BoundsListIndentationHoweverDeepTheNesting) {
  std::string html;
  for (int i = 0; i < 1000; ++i) html += "<ul>";
  html += "<li>deep";
  const std::string text = HtmlToText(html).text;
  EXPECT_EQ(text, std::string(14, ' ') + "- deep");
}

TEST(HtmlTextTest, SniffsTheCharsetAPageDeclares) {
  EXPECT_EQ(SniffHtmlCharset("<html><head><meta charset=\"ISO-8859-1\">"), "iso-8859-1");
  EXPECT_EQ(SniffHtmlCharset("<meta http-equiv=\"Content-Type\" "
                             "content=\"text/html; charset=windows-1252\">"),
            "windows-1252");
  EXPECT_EQ(SniffHtmlCharset("<html><body>charset=utf-8</body>"), "");
}

}  // namespace
}  // namespace herald::skills::web
