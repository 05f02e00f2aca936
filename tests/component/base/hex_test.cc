#include "component/base/hex.h"

#include <string>

#include "gtest/gtest.h"

namespace herald::base {
namespace {

TEST(HexTest, EncodesInTheCaseAskedForAndDecodesEither) {
  const std::string bytes("\x00\x0f\xa5\xff", 4);
  EXPECT_EQ(HexEncode(bytes), "000fa5ff");
  EXPECT_EQ(HexEncode(bytes, HexCase::kUpper), "000FA5FF");
  EXPECT_EQ(HexDecode("000fa5ff"), bytes);
  EXPECT_EQ(HexDecode("000FA5FF"), bytes);
  EXPECT_EQ(HexDecode(""), std::string());
}

TEST(HexTest, RefusesAnOddLengthOrAForeignCharacter) {
  EXPECT_EQ(HexDecode("abc"), std::nullopt);
  EXPECT_EQ(HexDecode("zz"), std::nullopt);
  EXPECT_EQ(HexDigitValue('g'), -1);
}

TEST(HexTest, KnowsLowerCaseDigitsOfAGivenLength) {
  EXPECT_TRUE(IsLowerHex("00ff", 4));
  EXPECT_FALSE(IsLowerHex("00FF", 4));
  EXPECT_FALSE(IsLowerHex("00f", 4));
}

TEST(HexTest, DigestsWithSha256) {
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

}  // namespace
}  // namespace herald::base
