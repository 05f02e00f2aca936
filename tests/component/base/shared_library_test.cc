#include "component/base/shared_library.h"

#include <zlib.h>

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace herald::base {
namespace {

// zlib: on every machine Herald builds on, and not linked into this test.
constexpr char kZlib[] = "libz.so.1";

TEST(SharedLibraryTest, FindsWhatTheLibraryHasTypedAsItsHeaderSays) {
  absl::StatusOr<SharedLibrary> zlib = SharedLibrary::Open(kZlib);
  ASSERT_TRUE(zlib.ok()) << zlib.status();
  decltype(&::zlibVersion) version = nullptr;
  decltype(&::crc32) crc = nullptr;
  zlib->Find("zlibVersion", &version);
  zlib->Find("crc32", &crc);
  ASSERT_TRUE(zlib->AllFound().ok()) << zlib->AllFound();
  ASSERT_NE(version, nullptr);
  EXPECT_STREQ(version(), ZLIB_VERSION);
  const Bytef text[] = {'h', 'e', 'r', 'a', 'l', 'd'};
  EXPECT_EQ(crc(0, text, sizeof(text)), 251894851uL);  // zlib.crc32(b"herald") in Python
}

TEST(SharedLibraryTest, NamesTheFirstSymbolItDoesNotHave) {
  absl::StatusOr<SharedLibrary> zlib = SharedLibrary::Open(kZlib);
  ASSERT_TRUE(zlib.ok()) << zlib.status();
  decltype(&::zlibVersion) version = nullptr;
  void (*first)() = nullptr;
  void (*second)() = nullptr;
  zlib->Find("herald_no_such_function", &first);
  zlib->Find("zlibVersion", &version);
  zlib->Find("herald_nor_this_one", &second);
  EXPECT_EQ(first, nullptr);
  EXPECT_NE(version, nullptr);
  const absl::Status found = zlib->AllFound();
  EXPECT_EQ(found.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(found.message(), "libz.so.1 has no herald_no_such_function");
}

TEST(SharedLibraryTest, AMissingLibraryIsAFailedPreconditionNamingIt) {
  absl::StatusOr<SharedLibrary> missing = SharedLibrary::Open("libherald-not-installed.so.7");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(missing.status().message(), "libherald-not-installed.so.7"))
      << missing.status();
}

}  // namespace
}  // namespace herald::base
