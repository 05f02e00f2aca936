#include "component/agent/pairing.h"

#include <string>

#include "absl/strings/ascii.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace herald::agent {
namespace {

using Verdict = PairingCodes::Verdict;

const absl::Time kNow = absl::FromUnixSeconds(1'800'000'000);

TEST(PairingCodesTest, ACodeIsShownInTwoGroupsAndRedeemedOnceWhateverItsSpelling) {
  PairingCodes codes;
  const std::string code = codes.Create(kNow);
  ASSERT_EQ(code.size(), 9u);
  EXPECT_EQ(code[4], '-');
  EXPECT_EQ(NormalizedPairingCode(code).size(), 8u);
  const std::string spelled = absl::AsciiStrToLower(code.substr(0, 4) + " " + code.substr(5));
  EXPECT_EQ(codes.Redeem("bob@localhost", spelled, kNow + absl::Minutes(1)), Verdict::kAccepted);
  EXPECT_EQ(codes.Redeem("carol@localhost", code, kNow + absl::Minutes(2)), Verdict::kRefused)
      << "a code is used once";
  EXPECT_EQ(codes.live(kNow), 0u);
}

TEST(PairingCodesTest, ACodeExpires) {
  PairingCodes codes;
  const std::string code = codes.Create(kNow, absl::Minutes(10));
  EXPECT_EQ(codes.Redeem("bob@localhost", code, kNow + absl::Minutes(10)), Verdict::kRefused);
}

TEST(PairingCodesTest, WhatIsNotShapedLikeACodeIsNoAttempt) {
  PairingCodes codes;
  codes.Create(kNow);
  for (const char* text :
       {"hello", "what can you do?", "ABCD-EFG", "ABCD-EFGH-J", "ABCD-EF0H", "", "ABCD-EFGI"}) {
    EXPECT_EQ(codes.Redeem("bob@localhost", text, kNow), Verdict::kNotACode) << text;
  }
  // None of those counted: five real attempts are still allowed.
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(codes.Redeem("bob@localhost", "ZZZZ-ZZZZ", kNow), Verdict::kRefused);
  }
}

TEST(PairingCodesTest, GuessingIsBoundedPerAddressAndOverall) {
  PairingCodes codes;
  const std::string code = codes.Create(kNow, absl::Hours(3));
  for (int i = 0; i < PairingCodes::kAttemptsPerJidPerHour; ++i) {
    EXPECT_EQ(codes.Redeem("mallory@evil", "ZZZZ-ZZZZ", kNow), Verdict::kRefused);
  }
  EXPECT_EQ(codes.Redeem("mallory@evil", code, kNow), Verdict::kTooManyAttempts)
      << "even the right code, once the address has used its attempts";
  EXPECT_EQ(codes.Redeem("mallory@evil", code, kNow + absl::Minutes(61)), Verdict::kAccepted);

  PairingCodes many;
  const std::string kept = many.Create(kNow, absl::Hours(3));
  for (int i = 0; i < PairingCodes::kFailuresPerHour; ++i) {
    EXPECT_EQ(many.Redeem("m" + std::to_string(i) + "@evil", "ZZZZ-ZZZZ", kNow), Verdict::kRefused);
  }
  EXPECT_EQ(many.Redeem("bob@localhost", kept, kNow), Verdict::kTooManyAttempts);
  EXPECT_EQ(many.Redeem("bob@localhost", kept, kNow + absl::Minutes(61)), Verdict::kAccepted);
}

TEST(PairingCodesTest, AtMostAHundredCodesLiveAndTheOldestGoesFirst) {
  PairingCodes codes;
  const std::string first = codes.Create(kNow);
  for (size_t i = 1; i < PairingCodes::kMaxLive; ++i) codes.Create(kNow + absl::Seconds(i));
  EXPECT_EQ(codes.live(kNow), PairingCodes::kMaxLive);
  codes.Create(kNow + absl::Seconds(200));
  EXPECT_EQ(codes.live(kNow), PairingCodes::kMaxLive);
  EXPECT_EQ(codes.Redeem("bob@localhost", first, kNow), Verdict::kRefused);
}

}  // namespace
}  // namespace herald::agent
