#include "component/base/edit_distance.h"

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

}  // namespace
}  // namespace herald::base
