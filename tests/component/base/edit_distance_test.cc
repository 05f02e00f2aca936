#include "component/base/edit_distance.h"

#include <string>
#include <string_view>
#include <vector>

#include "gtest/gtest.h"

namespace herald::base {
namespace {

TEST(EditDistanceTest, CountsInsertionsDeletionsAndSubstitutions) {
  EXPECT_EQ(EditDistance("alowed_jids", "allowed_jids"), 1u);
  EXPECT_EQ(EditDistance("sessons", "sessions"), 1u);
  EXPECT_EQ(EditDistance("usage", "limits"), 6u);
  EXPECT_EQ(EditDistance("", "abc"), 3u);
}

TEST(EditDistanceTest, CountsASwapOfNeighboursAsOneEditAndIgnoresCase) {
  EXPECT_EQ(EditDistance("prot", "port"), 1u);
  EXPECT_EQ(EditDistance("Port", "port"), 0u);
}

const std::vector<std::string_view> kNames = {
    "allowed_jids", "allowed_domains", "admin_jids", "port", "host", "name"};

TEST(NearestNameTest, SuggestsTheKeyOneTypoAway) {
  EXPECT_EQ(NearestName("alowed_jids", kNames), "allowed_jids");
  EXPECT_EQ(NearestName("allowed_domain", kNames), "allowed_domains");
  EXPECT_EQ(NearestName("prot", kNames), "port");
  EXPECT_EQ(NearestName("Port", kNames), "port");
}

TEST(NearestNameTest, SuggestsNothingForAnUnrelatedName) {
  EXPECT_EQ(NearestName("colour", kNames), "");
  EXPECT_EQ(NearestName("xyz", kNames), "");
  EXPECT_EQ(NearestName("", kNames), "");
  EXPECT_EQ(NearestName(std::string(10000, 'a'), kNames), "");
}

}  // namespace
}  // namespace herald::base
