#include "component/memory/memory_search.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace herald::memory {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST(MemorySearchTest, TokenizesCaseInsensitivelyAndKeepsNonAsciiWords) {
  EXPECT_THAT(Tokenize("Hello, WORLD! caf\xC3\xA9 x2"),
              ElementsAre("hello", "world", "caf\xC3\xA9", "x2"));
  EXPECT_THAT(Tokenize(" ... "), IsEmpty());
}

TEST(MemorySearchTest, SplitsParagraphsOnBlankLines) {
  EXPECT_THAT(SplitParagraphs("one\ntwo\n\n\n  \nthree  \n"), ElementsAre("one\ntwo", "three"));
}

TEST(MemorySearchTest, RanksTheDocumentAboutTheQueryFirst) {
  const std::vector<SearchDocument> docs = {
      {"a.md", "The weather in Paris is rainy today, and tomorrow."},
      {"b.md", "Alice's cat is called Biscuit. Biscuit likes fish."},
      {"c.md", "Nothing relevant here at all."},
      {"d.md", "A cat was seen in the garden."},
  };
  const std::vector<MemoryHit> hits = RankBm25(docs, "what is the name of the CAT biscuit", 10);
  ASSERT_GE(hits.size(), 2u);
  EXPECT_EQ(hits[0].file, "b.md");
  EXPECT_GT(hits[0].score, hits[1].score);
  for (const MemoryHit& hit : hits) EXPECT_GT(hit.score, 0);
}

TEST(MemorySearchTest, ReturnsOnlyDocumentsWithAQueryWordUpToTheLimit) {
  std::vector<SearchDocument> docs;
  for (int i = 0; i < 20; ++i) docs.push_back({"f.md", "apple " + std::to_string(i)});
  docs.push_back({"g.md", "banana"});
  EXPECT_EQ(RankBm25(docs, "apple", 5).size(), 5u);
  EXPECT_THAT(RankBm25(docs, "cherry", 5), IsEmpty());
  EXPECT_THAT(RankBm25(docs, "", 5), IsEmpty());
  EXPECT_THAT(RankBm25(docs, "apple", 0), IsEmpty());
}

TEST(MemorySearchTest, CutsLongExcerptsOnACodePointBoundary) {
  std::string text = "needle ";
  while (text.size() < 3 * kMaxExcerptBytes) text += "\xE6\x97\xA5";
  const std::vector<MemoryHit> hits = RankBm25({{"f.md", text}}, "needle", 1);
  ASSERT_EQ(hits.size(), 1u);
  EXPECT_LE(hits[0].excerpt.size(), kMaxExcerptBytes + 3);
  const std::string ellipsis = "\xE2\x80\xA6";
  ASSERT_TRUE(hits[0].excerpt.ends_with(ellipsis));
  const std::string body = hits[0].excerpt.substr(0, hits[0].excerpt.size() - ellipsis.size());
  EXPECT_EQ((body.size() - 7) % 3, 0u);  // whole three-byte characters after "needle "
}

}  // namespace
}  // namespace herald::memory
