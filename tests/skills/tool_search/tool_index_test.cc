#include "skills/tool_search/tool_index.h"

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "skills/tool_search/terms.h"

namespace herald::skills {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using Json = nlohmann::json;

std::string Line(const std::string& id, const std::string& name, const std::string& description,
                 Json tags = Json::array()) {
  return Json({{"id", id},
               {"name", name},
               {"description", description},
               {"input_schema", {{"type", "object"}}},
               {"tags", tags},
               {"executor", {{"type", "mcp"}, {"server", "tools"}, {"tool", name}}}})
             .dump() +
         "\n";
}

class ToolIndexTest : public testing::Test {
 protected:
  void SetUp() override {
    folder_ = std::string(std::getenv("TEST_TMPDIR")) + "/" +
              testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::remove_all(folder_);
    std::filesystem::create_directories(folder_ + "/wordnet");
    // "download" is an alternative of "fetch" (one synset, first sense of both).
    std::ofstream(folder_ + "/wordnet/data.verb") << "00000001 40 v 02 fetch 0 download 0 000 |\n";
    std::ofstream(folder_ + "/wordnet/index.verb") << "fetch v 1 0 1 0 00000001\n"
                                                   << "download v 1 0 1 0 00000001\n";
  }

  std::unique_ptr<ToolIndex> Open(ToolIndexOptions options = {}) {
    if (options.thesaurus_path == ToolIndexOptions{}.thesaurus_path) {
      options.thesaurus_path = folder_ + "/wordnet";
    }
    auto index = ToolIndex::Open(folder_ + "/tools.db", options);
    EXPECT_TRUE(index.ok()) << index.status();
    return index.ok() ? *std::move(index) : nullptr;
  }

  static ToolImportReport Import(ToolIndex& index, const std::string& text) {
    std::istringstream in(text);
    auto report = index.Import(in);
    EXPECT_TRUE(report.ok()) << report.status();
    return report.ok() ? *report : ToolImportReport{};
  }

  static std::vector<std::string> Ids(ToolIndex& index, std::string_view query, int k = 10) {
    auto matches = index.Search(query, k);
    EXPECT_TRUE(matches.ok()) << matches.status();
    std::vector<std::string> ids;
    if (matches.ok()) {
      for (const ToolMatch& match : *matches) ids.push_back(match.id);
    }
    return ids;
  }

  std::string folder_;
};

TEST_F(ToolIndexTest, AnImportedToolIsFoundByTheWordsOfItsDescriptionAndName) {
  auto index = Open();
  const ToolImportReport report =
      Import(*index, Line("img", "image-resize", "Scale pictures to a given width") +
                         Line("pdf", "pdf-text", "Extract the text of a PDF document") +
                         Line("mail", "send-mail", "Send an email message", {"smtp"}));
  EXPECT_EQ(report.added, 3);
  EXPECT_EQ(report.tools, 3);
  EXPECT_EQ(index->size(), 3);
  EXPECT_THAT(Ids(*index, "scale my pictures"), ElementsAre("img"));
  EXPECT_THAT(Ids(*index, "resize an image", 1), ElementsAre("img"));  // the name's words
  EXPECT_THAT(Ids(*index, "SMTP"), ElementsAre("mail"));               // a tag
  EXPECT_THAT(Ids(*index, "teleport"), testing::IsEmpty());
  EXPECT_THAT(Ids(*index, ""), testing::IsEmpty());
  auto matches = index->Search("pdf text", 1);
  ASSERT_TRUE(matches.ok());
  ASSERT_EQ(matches->size(), 1u);
  EXPECT_EQ((*matches)[0].name, "pdf-text");
  EXPECT_EQ((*matches)[0].description, "Extract the text of a PDF document");
  EXPECT_GT((*matches)[0].score, 0);
}

TEST_F(ToolIndexTest, AQueryWordFindsAToolThatUsedItsAlternative) {
  auto index = Open();
  Import(*index, Line("get", "getter", "Download a web page") +
                     Line("other", "other", "Compress a web page"));
  EXPECT_THAT(Ids(*index, "fetch page", 1), ElementsAre("get"));
  ToolIndexOptions without;
  without.alternative_weight = 0;
  index.reset();
  auto plain = Open(without);
  auto matches = plain->Search("fetch page", 2);
  ASSERT_TRUE(matches.ok());
  ASSERT_EQ(matches->size(), 2u);
  EXPECT_EQ((*matches)[0].score, (*matches)[1].score);  // only "page" counts: a tie
}

TEST_F(ToolIndexTest, BadLinesAreReportedByNumberAndTheRestImported) {
  auto index = Open();
  const std::string text =
      Line("a", "alpha", "first tool") + "not json\n" + "\n" + R"({"id": "b", "name": "beta"})" +
      "\n" + std::string(kMaxToolLineBytes + 10, ' ') + "x\n" + Line("c", "gamma", "third tool");
  const ToolImportReport report = Import(*index, text);
  EXPECT_EQ(report.added, 2);
  EXPECT_EQ(report.rejected_count, 3);
  ASSERT_EQ(report.rejected.size(), 3u);
  EXPECT_EQ(report.rejected[0].line, 2);
  EXPECT_THAT(report.rejected[0].error, HasSubstr("not valid JSON"));
  EXPECT_EQ(report.rejected[1].line, 4);  // the blank line 3 is no tool and no error
  EXPECT_THAT(report.rejected[1].error, HasSubstr("description: missing"));
  EXPECT_EQ(report.rejected[2].line, 5);
  EXPECT_THAT(report.rejected[2].error, HasSubstr("longer than"));
  EXPECT_THAT(Ids(*index, "tool"), testing::UnorderedElementsAre("a", "c"));
}

TEST_F(ToolIndexTest, ImportingAgainIsIdempotentAndAChangedToolReplacesItsOldSelf) {
  auto index = Open();
  const std::string first =
      Line("a", "alpha", "converts currencies") + Line("b", "beta", "tells time");
  Import(*index, first);
  ToolImportReport again = Import(*index, first);
  EXPECT_EQ(again.unchanged, 2);
  EXPECT_EQ(again.added + again.updated, 0);
  ToolImportReport changed = Import(*index, Line("a", "alpha", "translates languages"));
  EXPECT_EQ(changed.updated, 1);
  EXPECT_EQ(changed.tools, 2);
  EXPECT_THAT(Ids(*index, "currencies"), testing::IsEmpty());
  EXPECT_THAT(Ids(*index, "translates"), ElementsAre("a"));
  auto found = index->Find("a");
  ASSERT_TRUE(found.ok());
  ASSERT_TRUE(found->has_value());
  EXPECT_EQ((*found)->description, "translates languages");
  EXPECT_EQ((*found)->executor.tool, "alpha");
  auto missing = index->Find("zzz");
  ASSERT_TRUE(missing.ok());
  EXPECT_FALSE(missing->has_value());
}

TEST_F(ToolIndexTest, TheRegistryOutlivesTheProcess) {
  Import(*Open(), Line("a", "alpha", "converts currencies"));
  auto reopened = Open();
  EXPECT_EQ(reopened->size(), 1);
  EXPECT_THAT(Ids(*reopened, "currencies"), ElementsAre("a"));
}

// A stream that fails part way, as a disk read error would.
class FailingBuffer : public std::streambuf {
 public:
  explicit FailingBuffer(std::string text) : text_(std::move(text)) {
    setg(text_.data(), text_.data(), text_.data() + text_.size());
  }
  int_type underflow() override { throw std::ios_base::failure("read error"); }

 private:
  std::string text_;
};

TEST_F(ToolIndexTest, AnImportThatFailsPartWayChangesNothing) {
  auto index = Open();
  Import(*index, Line("a", "alpha", "converts currencies"));
  FailingBuffer buffer(Line("b", "beta", "tells time") + Line("a", "alpha", "changed"));
  std::istream in(&buffer);
  auto report = index->Import(in);
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(index->size(), 1);
  EXPECT_THAT(Ids(*index, "currencies"), ElementsAre("a"));
  EXPECT_THAT(Ids(*index, "time"), testing::IsEmpty());
}

TEST_F(ToolIndexTest, ProgressIsReportedForLargeFiles) {
  auto index = Open();
  std::string text;
  for (int i = 0; i < 25000; ++i)
    text += Line(absl::StrCat("t", i), "tool", absl::StrCat("number ", i));
  std::istringstream in(text);
  std::vector<int64_t> seen;
  auto report = index->Import(in, [&](int64_t lines) { seen.push_back(lines); });
  ASSERT_TRUE(report.ok());
  EXPECT_THAT(seen, ElementsAre(10000, 20000, 25000));
  EXPECT_THAT(Ids(*index, "number 24999", 1), ElementsAre("t24999"));
}

TEST_F(ToolIndexTest, KOutsideItsRangeIsRefused) {
  auto index = Open();
  EXPECT_FALSE(index->Search("x", 0).ok());
  EXPECT_FALSE(index->Search("x", kMaxSearchResults + 1).ok());
}

// Plain BM25 over the quantised impacts, tool by tool: what Search must return when every
// word may bring in tools (common_fraction = 1).
std::vector<std::pair<double, std::string>> BruteForce(
    const std::vector<std::pair<std::string, std::string>>& tools, std::string_view query,
    size_t k) {
  std::vector<std::map<std::string, int>> counts(tools.size());
  std::vector<double> lengths(tools.size());
  std::map<std::string, int> df;
  double total = 0;
  for (size_t d = 0; d < tools.size(); ++d) {
    std::vector<std::string> words;
    AppendTerms(tools[d].second, &words);
    for (const std::string& w : words) ++counts[d][w];
    for (const auto& [w, n] : counts[d]) ++df[w];
    lengths[d] = words.size();
    total += words.size();
  }
  const double average = std::max(1.0, total / tools.size());
  std::vector<std::string> words;
  AppendTerms(query, &words);
  std::set<std::string> unique(words.begin(), words.end());
  std::vector<std::pair<double, std::string>> scored;
  for (size_t d = 0; d < tools.size(); ++d) {
    double score = 0;
    for (const std::string& w : unique) {
      auto it = counts[d].find(w);
      if (it == counts[d].end()) continue;
      const double n = static_cast<double>(tools.size());
      const double idf = std::log(1 + (n - df[w] + 0.5) / (df[w] + 0.5));
      const double norm = 1 - 0.75 + 0.75 * lengths[d] / average;
      const double part = it->second * 2.2 / (it->second + 1.2 * norm);
      const double impact = std::clamp<double>(std::lround(part / (2.2 / 255)), 1, 255);
      score += idf * impact * (2.2 / 255);
    }
    if (score > 0) scored.emplace_back(score, tools[d].first);
  }
  std::sort(scored.begin(), scored.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  if (scored.size() > k) scored.resize(k);
  return scored;
}

TEST_F(ToolIndexTest, TheTopKAreExactlyBm25sWhenEveryWordMayBringInTools) {
  // 3,000 tools over a Zipf-like vocabulary: common words in most, rare ones in few.
  std::mt19937 random(7);
  std::vector<std::string> vocabulary;
  for (int i = 0; i < 400; ++i) vocabulary.push_back(absl::StrCat("w", i));
  std::vector<double> weights;
  for (int i = 0; i < 400; ++i) weights.push_back(1.0 / (i + 1));
  std::discrete_distribution<int> pick(weights.begin(), weights.end());
  std::vector<std::pair<std::string, std::string>> tools;
  std::string text;
  for (int d = 0; d < 3000; ++d) {
    std::string description;
    const int length = 3 + static_cast<int>(random() % 12);
    for (int i = 0; i < length; ++i) absl::StrAppend(&description, vocabulary[pick(random)], " ");
    tools.emplace_back(absl::StrCat("tool", d), description);
    text += Line(tools.back().first, "x", description);
  }
  // The name "x" is a word of every tool: add it to the brute force's text too.
  for (auto& tool : tools) tool.second += " x";
  ToolIndexOptions exact;
  exact.common_fraction = 1;
  exact.alternative_weight = 0;
  auto index = Open(exact);
  Import(*index, text);
  for (int q = 0; q < 60; ++q) {
    std::string query;
    for (int i = 0; i < 2 + q % 6; ++i) absl::StrAppend(&query, vocabulary[pick(random)], " ");
    const auto expected = BruteForce(tools, query, 10);
    auto matches = index->Search(query, 10);
    ASSERT_TRUE(matches.ok());
    ASSERT_EQ(matches->size(), expected.size()) << query;
    for (size_t i = 0; i < expected.size(); ++i) {
      // Same scores in the same order; ids may swap only between equal scores.
      EXPECT_NEAR((*matches)[i].score, expected[i].first, 1e-3) << query << " at " << i;
    }
  }
}

}  // namespace
}  // namespace herald::skills
