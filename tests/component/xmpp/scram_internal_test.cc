#include "component/xmpp/scram_internal.h"

#include <string>

#include "absl/strings/escaping.h"
#include "gtest/gtest.h"

namespace herald::xmpp::scram_internal {
namespace {

std::string Hex(const std::string& bytes) { return absl::BytesToHexString(bytes); }

TEST(ScramInternalTest, ComputesPbkdf2AsRfc6070Specifies) {
  // RFC 6070's first PBKDF2-HMAC-SHA1 vector, with the output cut to the digest size.
  absl::StatusOr<std::string> derived = Hi(ScramHash::kSha1, "password", "salt", 1);
  ASSERT_TRUE(derived.ok()) << derived.status();
  EXPECT_EQ(Hex(*derived), "0c60c80f961f0e71f3a9b524af6012062fe037a6");
  absl::StatusOr<std::string> derived4096 = Hi(ScramHash::kSha1, "password", "salt", 4096);
  ASSERT_TRUE(derived4096.ok());
  EXPECT_EQ(Hex(*derived4096), "4b007901b765489abead49d926f721d065a429c1");
}

TEST(ScramInternalTest, RefusesANonPositiveIterationCountForPbkdf2) {
  EXPECT_FALSE(Hi(ScramHash::kSha256, "password", "salt", 0).ok());
}

TEST(ScramInternalTest, ProducesDigestsOfTheHashsSize) {
  EXPECT_EQ(DigestSize(ScramHash::kSha1), 20u);
  EXPECT_EQ(DigestSize(ScramHash::kSha256), 32u);
  EXPECT_EQ(Hex(Hash(ScramHash::kSha256, "abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  // RFC 4231 test case 2.
  EXPECT_EQ(Hex(Hmac(ScramHash::kSha256, "Jefe", "what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

TEST(ScramInternalTest, ComparesEqualOnlyForIdenticalBytes) {
  EXPECT_TRUE(ConstantTimeEquals("abc", "abc"));
  EXPECT_FALSE(ConstantTimeEquals("abc", "abd"));
  EXPECT_FALSE(ConstantTimeEquals("abc", "abcd"));
  EXPECT_TRUE(ConstantTimeEquals("", ""));
}

TEST(ScramInternalTest, XorsBytewise) {
  EXPECT_EQ(XorBytes(std::string("\x0f\xf0", 2), std::string("\xff\xff", 2)),
            std::string("\xf0\x0f", 2));
}

TEST(ScramInternalTest, SplitsAttributesKeepingEqualsSignsInValues) {
  absl::StatusOr<std::vector<Attribute>> attributes = ParseAttributes("r=abc,s=QQ==,i=4096");
  ASSERT_TRUE(attributes.ok());
  ASSERT_EQ(attributes->size(), 3u);
  EXPECT_EQ((*attributes)[0].name, 'r');
  EXPECT_EQ((*attributes)[0].value, "abc");
  EXPECT_EQ((*attributes)[1].value, "QQ==");
  EXPECT_EQ((*attributes)[2].value, "4096");
}

TEST(ScramInternalTest, RefusesMalformedAttributeLists) {
  for (const char* message : {"", ",", "r=a,", ",r=a", "ra", "1=a", "r", "r=a,,s=b", "==x"}) {
    EXPECT_FALSE(ParseAttributes(message).ok()) << message;
  }
}

TEST(ScramInternalTest, EscapesAndUnescapesSaslNames) {
  EXPECT_EQ(EscapeSaslName("a,b=c"), "a=2Cb=3Dc");
  absl::StatusOr<std::string> name = UnescapeSaslName("a=2Cb=3Dc");
  ASSERT_TRUE(name.ok());
  EXPECT_EQ(*name, "a,b=c");
  // ABNF literals are case-insensitive.
  EXPECT_EQ(*UnescapeSaslName("x=2cy=3d"), "x,y=");
}

TEST(ScramInternalTest, RefusesBadSaslNameEscapes) {
  for (const char* escaped : {"a,b", "a=", "a=2", "a=41", "=3"}) {
    EXPECT_FALSE(UnescapeSaslName(escaped).ok()) << escaped;
  }
}

TEST(ScramInternalTest, AcceptsOnlyPrintableNoncesWithoutCommas) {
  EXPECT_TRUE(IsValidNonce("fyko+d2lbbFgONRv9qkxdawL"));
  EXPECT_TRUE(IsValidNonce("%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0"));
  EXPECT_FALSE(IsValidNonce(""));
  EXPECT_FALSE(IsValidNonce("a,b"));
  EXPECT_FALSE(IsValidNonce("a b"));
  EXPECT_FALSE(IsValidNonce("a\x7f"));
  EXPECT_FALSE(IsValidNonce("caf\xc3\xa9"));
}

TEST(ScramInternalTest, AcceptsIterationCountsAtTheLimits) {
  EXPECT_EQ(*ParseIterationCount("4096"), kScramMinIterations);
  EXPECT_EQ(*ParseIterationCount("1000000"), kScramMaxIterations);
  EXPECT_EQ(*ParseIterationCount("0004096"), 4096);
  EXPECT_FALSE(ParseIterationCount("4095").ok());
  EXPECT_FALSE(ParseIterationCount("1000001").ok());
  EXPECT_FALSE(ParseIterationCount("9999999999").ok());
}

}  // namespace
}  // namespace herald::xmpp::scram_internal
