#include "skills/tool_search/terms.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace herald::skills {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

std::vector<std::string> Terms(std::string_view text) {
  std::vector<std::string> terms;
  AppendTerms(text, &terms);
  return terms;
}

TEST(TermsTest, WordsAreFoldedToLowerCaseAndPunctuationSeparates) {
  EXPECT_THAT(Terms("Resize PNG images, fast!"), ElementsAre("resize", "png", "images", "fast"));
}

TEST(TermsTest, ANameSplitsIntoItsWordsWhateverItsSeparator) {
  EXPECT_THAT(Terms("image-resize"), ElementsAre("image", "resize"));
  EXPECT_THAT(Terms("image_resize"), ElementsAre("image", "resize"));
  EXPECT_THAT(Terms("imageResize"), ElementsAre("image", "resize"));
  EXPECT_THAT(Terms("@scope/pdf.parse"), ElementsAre("scope", "pdf", "parse"));
}

TEST(TermsTest, DigitsStayWithTheirWordAndCapitalsInARowAreOneWord) {
  EXPECT_THAT(Terms("utf8 s3 HTTP2Client"), ElementsAre("utf8", "s3", "http2client"));
}

TEST(TermsTest, RepeatsAreKeptInOrder) { EXPECT_THAT(Terms("a b a"), ElementsAre("a", "b", "a")); }

TEST(TermsTest, AWordInAnotherScriptIsOneTerm) {
  EXPECT_THAT(Terms("Übersetzung für 日本語"), ElementsAre("Übersetzung", "für", "日本語"));
}

TEST(TermsTest, OverlongRunsAreDropped) {
  EXPECT_THAT(Terms(std::string(kMaxTermBytes + 1, 'a')), IsEmpty());
  EXPECT_THAT(Terms(std::string(kMaxTermBytes, 'a')), ElementsAre(std::string(kMaxTermBytes, 'a')));
}

TEST(TermsTest, NothingToIndexIsNoTerms) {
  EXPECT_THAT(Terms(""), IsEmpty());
  EXPECT_THAT(Terms(" -_.,!? "), IsEmpty());
}

}  // namespace
}  // namespace herald::skills
