#include "component/base/json_depth.h"

#include <string>

#include "gtest/gtest.h"

namespace herald::base {
namespace {

TEST(JsonNestingDepthTest, CountsArraysAndObjectsButNotBracketsInStrings) {
  EXPECT_EQ(JsonNestingDepth("1", 10), 0);
  EXPECT_EQ(JsonNestingDepth(R"({"a": [1, {"b": []}]})", 10), 4);
  EXPECT_EQ(JsonNestingDepth(R"({"a": "[[[[{{{"})", 10), 1);
  EXPECT_EQ(JsonNestingDepth(R"({"a": "\"[[[", "b": [[]]})", 10), 3);
}

TEST(JsonNestingDepthTest, StopsCountingPastTheLimit) {
  const std::string deep(1'000'000, '[');
  EXPECT_EQ(JsonNestingDepth(deep, 64), 65);
}

}  // namespace
}  // namespace herald::base
