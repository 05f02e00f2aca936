// Tests for RedactSecrets: every occurrence of a credential value, as is or in an encoding a
// skill may echo (base64, percent-encoding, JSON), becomes "[redacted NAME]"; overlapping and
// nested values leave nothing behind; short values and an empty map change nothing.
#include "skills/credentials/secret_redactor.h"

#include <string>

#include "absl/strings/escaping.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace herald::skills {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(SecretRedactorTest, RedactsEveryPlainOccurrence) {
  EXPECT_EQ(RedactSecrets("token=ghp_abc123 and again ghp_abc123.", {{"GH", "ghp_abc123"}}),
            "token=[redacted GH] and again [redacted GH].");
}

TEST(SecretRedactorTest, RedactsTheBase64FormsOfAValue) {
  const std::string value = "s3cr3t-value!?";
  const std::string standard = absl::Base64Escape(value);
  const std::string web_safe = absl::WebSafeBase64Escape(value);
  EXPECT_EQ(RedactSecrets("b64: " + standard + " url: " + web_safe, {{"KEY", value}}),
            "b64: [redacted KEY] url: [redacted KEY]");
}

TEST(SecretRedactorTest, RedactsAValueInsideALongerBase64TextAtAnyAlignment) {
  const std::string token = "tok_0123456789abcdef";
  for (const std::string user : {"ann", "anna", "annie"}) {  // the three alignments
    const std::string header = "Authorization: Basic " + absl::Base64Escape(user + ":" + token);
    const std::string redacted = RedactSecrets(header, {{"TOKEN", token}});
    EXPECT_THAT(redacted, HasSubstr("[redacted TOKEN]")) << user;
    // At most the two characters that straddle the edges of the value are left on each side.
    EXPECT_LE(redacted.size(), std::string("Authorization: Basic [redacted TOKEN]").size() +
                                   absl::Base64Escape(user + ":").size() + 4)
        << redacted;
  }
}

TEST(SecretRedactorTest, RedactsPercentAndFormEncodedForms) {
  const std::string value = "a/b=c&d e";
  EXPECT_EQ(RedactSecrets("?q=a%2Fb%3Dc%26d%20e&x=1", {{"Q", value}}), "?q=[redacted Q]&x=1");
  EXPECT_EQ(RedactSecrets("?q=a%2fb%3dc%26d+e", {{"Q", value}}), "?q=[redacted Q]");
  EXPECT_EQ(RedactSecrets("?q=a/b%3Dc&d%20e", {{"Q", value}}), "?q=[redacted Q]");
}

TEST(SecretRedactorTest, RedactsTheJsonEscapedForm) {
  EXPECT_EQ(RedactSecrets(R"({"v":"pa\"ss\\word"})", {{"PW", R"(pa"ss\word)"}}),
            R"({"v":"[redacted PW]"})");
}

TEST(SecretRedactorTest, RedactsTheWholeSpanOfOverlappingValues) {
  EXPECT_EQ(RedactSecrets("xxabcdefghixx", {{"A", "abcdef"}, {"B", "defghi"}}),
            "xx[redacted A][redacted B]xx");
}

TEST(SecretRedactorTest, PrefersTheLongerValueThatContainsAShorterOne) {
  EXPECT_EQ(RedactSecrets("abcdefgh and cdef", {{"LONG", "abcdefgh"}, {"SHORT", "cdef"}}),
            "[redacted LONG] and [redacted SHORT]");
  EXPECT_EQ(RedactSecrets("abcdefgh", {{"A_SHORT", "cdef"}, {"Z_LONG", "abcdefgh"}}),
            "[redacted Z_LONG]");
}

TEST(SecretRedactorTest, NeverRedactsInsideItsOwnMarkers) {
  EXPECT_EQ(RedactSecrets("token1234", {{"X", "dact"}, {"Y", "token1234"}}), "[redacted Y]");
}

TEST(SecretRedactorTest, LeavesValuesShorterThanFourBytesAlone) {
  EXPECT_EQ(RedactSecrets("pin 123, code ab", {{"PIN", "123"}, {"CODE", "ab"}, {"E", ""}}),
            "pin 123, code ab");
  EXPECT_EQ(RedactSecrets("pin 1234", {{"PIN", "1234"}}), "pin [redacted PIN]");
}

TEST(SecretRedactorTest, ChangesNothingWithNoSecretsOrNoText) {
  EXPECT_EQ(RedactSecrets("nothing to hide", {}), "nothing to hide");
  EXPECT_EQ(RedactSecrets("", {{"A", "abcdef"}}), "");
}

TEST(SecretRedactorTest, NamesTheFirstNameOfAValueStoredTwice) {
  EXPECT_EQ(RedactSecrets("samevalue", {{"A", "samevalue"}, {"B", "samevalue"}}), "[redacted A]");
}

TEST(SecretRedactorTest, HandlesBinaryValues) {
  std::string value = "\x01\xff\x80zz";
  EXPECT_EQ(RedactSecrets("<" + value + ">", {{"BIN", value}}), "<[redacted BIN]>");
  EXPECT_THAT(RedactSecrets("%01%FF%80zz", {{"BIN", value}}), Not(HasSubstr("%FF")));
}

}  // namespace
}  // namespace herald::skills
