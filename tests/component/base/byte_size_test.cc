#include "component/base/byte_size.h"

#include "gtest/gtest.h"

namespace herald::base {
namespace {

TEST(HumanBytesTest, WholeUnitsWithoutDecimalsOthersWithOne) {
  EXPECT_EQ(HumanBytes(0), "0 bytes");
  EXPECT_EQ(HumanBytes(1), "1 byte");
  EXPECT_EQ(HumanBytes(1023), "1023 bytes");
  EXPECT_EQ(HumanBytes(1024), "1 KiB");
  EXPECT_EQ(HumanBytes(1536), "1.5 KiB");
  EXPECT_EQ(HumanBytes(10 << 20), "10 MiB");
  EXPECT_EQ(HumanBytes((3 << 20) / 2), "1.5 MiB");
}

}  // namespace
}  // namespace herald::base
