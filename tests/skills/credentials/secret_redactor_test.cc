// Tests for RedactSecrets: every occurrence of a credential value, as is or in an encoding a
// skill may echo (base64, percent-encoding, JSON), becomes "[redacted NAME]"; overlapping and
// nested values leave nothing behind; short values and an empty map change nothing.
#include "skills/credentials/secret_redactor.h"

#include <map>
#include <random>
#include <regex>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
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

// Issue 16, finding 8: a program printing the hex of a token (a hex dump, a debug print of
// the raw bytes) leaked it.
TEST(SecretRedactorTest, RedactsTheHexFormsOfAValue) {
  const std::string value = "sk-secret-42";
  const std::string lower = "736b2d7365637265742d3432";
  EXPECT_EQ(
      RedactSecrets("lower " + lower + " upper " + absl::AsciiStrToUpper(lower), {{"KEY", value}}),
      "lower [redacted KEY] upper [redacted KEY]");
  // Inside a longer hex text too, as bytes of it.
  EXPECT_EQ(RedactSecrets("00ff" + lower + "00", {{"KEY", value}}), "00ff[redacted KEY]00");
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

TEST(SecretRedactorTest, RedactsBeforeItCuts) {
  const std::map<std::string, std::string> secrets = {{"KEY", "sk-secret-42"}};
  EXPECT_EQ(RedactThenCut("abc sk-secret-42 def", secrets, 9), "abc [reda");
  EXPECT_EQ(RedactThenCut("abc sk-secret-42", secrets, 100), "abc [redacted KEY]");
  // Cut between UTF-8 characters.
  EXPECT_EQ(RedactThenCut("ab\xc3\xa9", secrets, 3), "ab");
  // A text that was itself cut short drops an end that could begin a secret.
  EXPECT_EQ(RedactThenCut("abc sk-secret-42 def sk-sec", secrets, 100, /*text_was_cut=*/true),
            "abc [redacted KEY] def ");
  EXPECT_EQ(RedactThenCut("abc def", secrets, 100, /*text_was_cut=*/true), "abc def");
}

// --- SecretStreamRedactor -------------------------------------------------------------------

const std::map<std::string, std::string> kApiToken = {{"API_TOKEN", "sk-secret-value"}};

// Issue 16, finding 7: each streamed piece was redacted alone, so a value split between two
// pieces passed unredacted.
TEST(SecretStreamRedactorTest, RedactsAValueSplitBetweenTwoPieces) {
  SecretStreamRedactor stream(kApiToken);
  std::string out = stream.Write("token: sk-se");
  out += stream.Write("cret-value\n");
  out += stream.Finish();
  EXPECT_EQ(out, "token: [redacted API_TOKEN]\n");
}

TEST(SecretStreamRedactorTest, PassesOnTextThatCannotBeginASecretAtOnce) {
  SecretStreamRedactor stream(kApiToken);
  EXPECT_EQ(stream.Write("part 0\n"), "part 0\n");
  EXPECT_EQ(stream.Write("done"), "done");
  EXPECT_EQ(stream.held_bytes(), 0u);
  EXPECT_EQ(stream.Finish(), "");
}

TEST(SecretStreamRedactorTest, HoldsBackOnlyAnEndThatCouldBeginASecret) {
  SecretStreamRedactor stream(kApiToken);
  EXPECT_EQ(stream.Write("hello sk-s"), "hello ");
  EXPECT_EQ(stream.held_bytes(), 4u);
  EXPECT_EQ(stream.Write("ky"), "sk-sky");  // it was not the secret after all
  EXPECT_EQ(stream.Write("%73k-"), "");     // percent-encoded "s", then "k-"
  EXPECT_EQ(stream.Finish(), "%73k-");      // the stream ended before the secret did
}

TEST(SecretStreamRedactorTest, ATruncatedStreamDropsWhatCouldBeginASecret) {
  SecretStreamRedactor stream(kApiToken);
  // The last Write of a stream that was cut short, with no Finish.
  EXPECT_EQ(stream.Write("error: bad key sk-secret-va"), "error: bad key ");
}

TEST(SecretStreamRedactorTest, RedactsEncodedFormsSplitBetweenPieces) {
  const std::string value = "s3cr3t-value!?";
  const std::map<std::string, std::string> secrets = {{"KEY", value}};
  for (const std::string& form : {absl::Base64Escape(value), absl::WebSafeBase64Escape(value),
                                  std::string("s3cr3t%2Dvalue%21%3F")}) {
    for (size_t cut = 1; cut < form.size(); ++cut) {
      SecretStreamRedactor stream(secrets);
      std::string out = stream.Write("<" + form.substr(0, cut));
      out += stream.Write(form.substr(cut) + ">");
      out += stream.Finish();
      EXPECT_EQ(out, "<[redacted KEY]>") << form << " cut at " << cut;
    }
  }
}

TEST(SecretStreamRedactorTest, AStreamInAnyPiecesIsRedactedAsTheWholeText) {
  const std::map<std::string, std::string> secrets = {
      {"A", "abcabc"}, {"B", "token-123"}, {"C", "cabd"}, {"D", "a b&c"}};
  const std::string text =
      "x abcabcabc y token-123 dG9rZW4tMTIz a+b%26c abcabd cabcabd token-12 abcab " +
      absl::Base64Escape("user:token-123") + " end";
  const std::string whole = RedactSecrets(text, secrets);
  ASSERT_THAT(whole, Not(HasSubstr("token-123")));
  // Every way of cutting it in two, and in pieces of each size.
  for (size_t cut = 0; cut <= text.size(); ++cut) {
    SecretStreamRedactor stream(secrets);
    std::string out = stream.Write(text.substr(0, cut));
    out += stream.Write(text.substr(cut));
    out += stream.Finish();
    EXPECT_EQ(out, whole) << "cut at " << cut;
  }
  for (size_t size = 1; size <= 12; ++size) {
    SecretStreamRedactor stream(secrets);
    std::string out;
    for (size_t at = 0; at < text.size(); at += size) out += stream.Write(text.substr(at, size));
    out += stream.Finish();
    EXPECT_EQ(out, whole) << "pieces of " << size;
  }
}

// `text` with each run of markers made one "[redacted]": where values overlap, which names
// a run shows depends on which matches were seen first, but not what it hides.
std::string Shape(const std::string& text) {
  static const std::regex kMarkers(R"((\[redacted [A-Z_]+\])+)");
  return std::regex_replace(text, kMarkers, "[redacted]");
}

// Texts made of overlapping and partly encoded values, cut into random pieces (a fixed seed:
// the same cases every run): the same bytes are hidden as in the whole text.
TEST(SecretStreamRedactorTest, RandomTextsInRandomPiecesAreRedactedAsWholeTexts) {
  const std::map<std::string, std::string> secrets = {{"A", "abab"}, {"B", "ba b"}, {"C", "bbba"}};
  const std::vector<std::string> parts = {"a",  "b", " ",    "+",    "%61",  "%62",
                                          "%2", "%", "abab", "YWJh", "Ymli", "x"};
  std::mt19937 random(16);
  for (int round = 0; round < 2000; ++round) {
    std::string text;
    const int length = 1 + static_cast<int>(random() % 24);
    for (int i = 0; i < length; ++i) text += parts[random() % parts.size()];
    SecretStreamRedactor stream(secrets);
    std::string out;
    for (size_t at = 0; at < text.size();) {
      const size_t size = 1 + random() % 6;
      out += stream.Write(text.substr(at, size));
      at += size;
    }
    out += stream.Finish();
    ASSERT_EQ(Shape(out), Shape(RedactSecrets(text, secrets))) << "text: " << text;
  }
}

TEST(SecretStreamRedactorTest, PassesEverythingOnWithoutSecrets) {
  SecretStreamRedactor stream(std::map<std::string, std::string>{{"PIN", "123"}});  // too short
  EXPECT_EQ(stream.Write("pin 12"), "pin 12");
  EXPECT_EQ(stream.Finish(), "");
}

}  // namespace
}  // namespace herald::skills
