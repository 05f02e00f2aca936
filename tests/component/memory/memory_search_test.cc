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

TEST(MemorySearchTest, HybridRankingWeighsKeywordsAndMeaning) {
  const std::vector<SearchDocument> documents = {
      {"a.md", "invoice number 4471"},  // the query's words
      {"b.md", "something else"},       // the query's meaning
      {"c.md", "unrelated"},
  };
  const std::vector<float> query = {1, 0};
  const std::vector<float> near = {0.9f, 0.1f};
  const std::vector<float> far = {0, 1};
  const std::vector<const std::vector<float>*> vectors = {&far, &near, &far};
  std::vector<MemoryHit> hits =
      RankHybrid(documents, "invoice 4471", query, vectors, {.keyword = 0.3, .vector = 0.7}, 5);
  ASSERT_EQ(hits.size(), 2u);  // c.md has neither, and is left out
  EXPECT_EQ(hits[0].file, "b.md");
  EXPECT_NEAR(hits[0].score, 0.7 * CosineSimilarity(query, near), 1e-9);
  EXPECT_EQ(hits[1].file, "a.md");
  EXPECT_NEAR(hits[1].score, 0.3, 1e-9);  // the best keyword score counts as 1
  hits = RankHybrid(documents, "invoice 4471", query, vectors, {.keyword = 0.8, .vector = 0.2}, 5);
  ASSERT_EQ(hits.size(), 2u);
  EXPECT_EQ(hits[0].file, "a.md");
  // Keywords only: meaning does not count.
  hits = RankHybrid(documents, "invoice 4471", query, vectors, {.keyword = 1, .vector = 0}, 5);
  ASSERT_EQ(hits.size(), 1u);
  EXPECT_EQ(hits[0].file, "a.md");
}

TEST(MemorySearchTest, HybridRankingIgnoresMissingAndMismatchedVectors) {
  const std::vector<SearchDocument> documents = {{"a.md", "alpha"}, {"b.md", "beta"}};
  const std::vector<float> query = {1, 0};
  const std::vector<float> wrong_length = {1, 0, 0};
  std::vector<MemoryHit> hits = RankHybrid(documents, "gamma", query, {nullptr, &wrong_length},
                                           {.keyword = 0.5, .vector = 0.5}, 5);
  EXPECT_TRUE(hits.empty());
  // Opposite meaning counts as none, not as less than none.
  const std::vector<float> opposite = {-1, 0};
  hits = RankHybrid(documents, "alpha", query, {&opposite, nullptr},
                    {.keyword = 0.5, .vector = 0.5}, 5);
  ASSERT_EQ(hits.size(), 1u);
  EXPECT_NEAR(hits[0].score, 0.5, 1e-9);
  EXPECT_EQ(CosineSimilarity({0, 0}, {1, 0}), 0);
  EXPECT_NEAR(CosineSimilarity({1, 1}, {2, 2}), 1.0, 1e-9);
}

}  // namespace
}  // namespace herald::memory
