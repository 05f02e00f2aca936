#include "skills/tool_search/thesaurus.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace herald::skills {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

// A WordNet folder in the format of Debian's wordnet-base, with three synsets for "fetch"
// (commonest first) and an adjective marker.
std::string WriteWordNet() {
  const std::string folder = std::string(std::getenv("TEST_TMPDIR")) + "/wordnet";
  std::filesystem::create_directories(folder);
  std::ofstream(folder + "/data.verb")
      << "  1 This software and database is being provided to you, the LICENSEE, by\n"
      << "00000001 40 v 02 fetch 0 bring 0 000 | go or come after\n"
      << "00000002 40 v 02 fetch 0 get 0 000 | be sold for\n"
      << "00000003 40 v 03 fetch 0 convey 0 take_along 0 000 | rare\n"
      << "00000004 40 v 02 fetch 0 draw 0 000 | rarer\n"
      << "00000005 40 v 02 draw 0 pull 0 000 | pull\n";
  std::ofstream(folder + "/index.verb")
      << "  1 This software and database is being provided to you, the LICENSEE, by\n"
      << "fetch v 4 1 @ 4 2 00000001 00000002 00000003 00000004\n"
      << "draw v 2 1 @ 2 0 00000005 00000004\n"
      << "bring v 1 1 @ 1 1 00000001\n"
      << "get v 1 1 @ 1 1 00000002\n"
      << "convey v 1 1 @ 1 0 00000003\n";
  std::ofstream(folder + "/data.adj") << "00000010 00 s 02 quick(a) 0 fast 0 000 | rapid\n";
  std::ofstream(folder + "/index.adj") << "quick a 1 0 1 0 00000010\n";
  return folder;
}

TEST(ThesaurusTest, TheFirstSensesGiveAlternativesInBothDirections) {
  auto thesaurus = Thesaurus::LoadWordNet(WriteWordNet(), /*senses=*/2);
  ASSERT_TRUE(thesaurus.ok()) << thesaurus.status();
  EXPECT_THAT(thesaurus->Alternatives("bring"), ElementsAre("fetch"));
  EXPECT_THAT(thesaurus->Alternatives("get"), ElementsAre("fetch"));
  // Convey is in fetch's third, rarer sense, but that sense is convey's first: the pair
  // counts, in both directions.
  EXPECT_THAT(thesaurus->Alternatives("convey"), ElementsAre("fetch"));
  EXPECT_THAT(thesaurus->Alternatives("fetch"), ElementsAre("bring", "convey", "draw", "get"));
  EXPECT_THAT(thesaurus->Alternatives("quick"), ElementsAre("fast"));
  EXPECT_THAT(thesaurus->Alternatives("fast"), ElementsAre("quick"));
}

TEST(ThesaurusTest, ARareSenseOfBothWordsGivesNothing) {
  // Draw is in fetch's fourth sense and fetch in draw's second.
  auto thesaurus = Thesaurus::LoadWordNet(WriteWordNet(), /*senses=*/1);
  ASSERT_TRUE(thesaurus.ok());
  EXPECT_THAT(thesaurus->Alternatives("draw"), ElementsAre("pull"));
  EXPECT_THAT(thesaurus->Alternatives("fetch"), ElementsAre("bring", "convey", "get"));
}

TEST(ThesaurusTest, PhrasesAndUnknownWordsHaveNoAlternatives) {
  auto thesaurus = Thesaurus::LoadWordNet(WriteWordNet(), 3);
  ASSERT_TRUE(thesaurus.ok());
  EXPECT_THAT(thesaurus->Alternatives("take_along"), IsEmpty());
  EXPECT_THAT(thesaurus->Alternatives("teleport"), IsEmpty());
}

TEST(ThesaurusTest, AFolderWithoutWordNetIsAnErrorNamingIt) {
  auto thesaurus = Thesaurus::LoadWordNet("/nonexistent/wordnet");
  ASSERT_FALSE(thesaurus.ok());
  EXPECT_THAT(std::string(thesaurus.status().message()), testing::HasSubstr("/nonexistent"));
}

}  // namespace
}  // namespace herald::skills
