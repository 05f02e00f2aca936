#include "control/http/webhook_signature.h"

#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace herald::control::http {
namespace {

using ::testing::HasSubstr;

constexpr char kSecret[] = "whsec-0123456789abcdef";
const absl::Time kNow = absl::FromUnixSeconds(1'700'000'000);

TEST(WebhookSignatureTest, ASignatureIsTheHmacOfTimeAndBody) {
  // HMAC-SHA256("whsec-0123456789abcdef", "1700000000.{}"), computed independently:
  //   printf '1700000000.{}' | openssl dgst -sha256 -hmac whsec-0123456789abcdef
  EXPECT_EQ(SignWebhook(kSecret, kNow, "{}"),
            "t=1700000000,v1=2d586df5f91a6ea5c4bc37bd80e94fb1103f9da69ee9cbd3f6a22a939e1fe1f8");
  const std::string header = SignWebhook(kSecret, kNow, R"({"a":1})");
  EXPECT_TRUE(absl::StartsWith(header, "t=1700000000,v1="));
  EXPECT_EQ(header.size(), std::string("t=1700000000,v1=").size() + 64);
  EXPECT_TRUE(VerifyWebhookSignature(header, kSecret, R"({"a":1})", kNow).ok());
}

TEST(WebhookSignatureTest, AChangedBodyOrSecretDoesNotVerify) {
  const std::string header = SignWebhook(kSecret, kNow, R"({"a":1})");
  EXPECT_THAT(VerifyWebhookSignature(header, kSecret, R"({"a":2})", kNow).status().message(),
              HasSubstr("does not match the body"));
  EXPECT_FALSE(VerifyWebhookSignature(header, "another-secret-of-16", R"({"a":1})", kNow).ok());
}

TEST(WebhookSignatureTest, OnlyDeliveriesWithinTheWindowAreTaken) {
  const std::string header = SignWebhook(kSecret, kNow, "x");
  EXPECT_TRUE(VerifyWebhookSignature(header, kSecret, "x", kNow + absl::Seconds(300)).ok());
  EXPECT_TRUE(VerifyWebhookSignature(header, kSecret, "x", kNow - absl::Seconds(300)).ok());
  const absl::Status late =
      VerifyWebhookSignature(header, kSecret, "x", kNow + absl::Seconds(301)).status();
  EXPECT_EQ(late.code(), absl::StatusCode::kUnauthenticated);
  EXPECT_THAT(late.message(), HasSubstr("more than 300 s from now"));
  EXPECT_FALSE(VerifyWebhookSignature(header, kSecret, "x", kNow - absl::Seconds(301)).ok());
}

TEST(WebhookSignatureTest, SeveralSignaturesMayBeGivenAndHexCaseDoesNotMatter) {
  const std::string good = SignWebhook(kSecret, kNow, "x");
  const std::string mac = good.substr(good.find("v1=") + 3);
  std::string upper = mac;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  EXPECT_TRUE(VerifyWebhookSignature(
                  absl::StrCat("t=1700000000, v1=", std::string(64, '0'), ", v1=", upper), kSecret,
                  "x", kNow)
                  .ok());
}

TEST(WebhookSignatureTest, AMissingOrMalformedHeaderIsRefused) {
  EXPECT_THAT(VerifyWebhookSignature("", kSecret, "x", kNow).status().message(),
              HasSubstr("missing X-Herald-Signature"));
  for (const char* bad : {"v1=abc", "t=1700000000", "t=soon,v1=abc", "sha256=abc"}) {
    EXPECT_EQ(VerifyWebhookSignature(bad, kSecret, "x", kNow).status().code(),
              absl::StatusCode::kUnauthenticated)
        << bad;
  }
}

TEST(WebhookSignatureTest, TheMatchIsReturnedInOneSpellingWhateverTheHeaderLookedLike) {
  const std::string header = SignWebhook(kSecret, kNow, "x");  // t=...,v1=<lower hex>
  const std::string mac = header.substr(header.find("v1=") + 3);
  std::string upper = mac;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  for (const std::string& variant :
       {header, absl::StrCat("v1=", mac, ", t=1700000000"),
        absl::StrCat(" t=1700000000 ,v1=", upper), absl::StrCat("t=1700000000,v1=00,v1=", mac)}) {
    absl::StatusOr<std::string> matched = VerifyWebhookSignature(variant, kSecret, "x", kNow);
    ASSERT_TRUE(matched.ok()) << variant << ": " << matched.status();
    EXPECT_EQ(*matched, header) << variant;
  }
}

}  // namespace
}  // namespace herald::control::http
