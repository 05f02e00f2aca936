#include "component/memory/jid_folder.h"

#include <random>
#include <set>
#include <string>

#include "gtest/gtest.h"

namespace herald::memory {
namespace {

void ExpectSafeFileName(const std::string& name) {
  EXPECT_FALSE(name.empty());
  EXPECT_LE(name.size(), kMaxFolderNameLength);
  EXPECT_EQ(name.find('/'), std::string::npos) << name;
  EXPECT_EQ(name.find('\0'), std::string::npos) << name;
  EXPECT_NE(name[0], '.') << name;
}

TEST(JidFolderTest, KeepsAnOrdinaryJidReadable) {
  EXPECT_EQ(EncodeFolderName("alice@localhost"), "alice%40localhost");
  EXPECT_EQ(EncodeFolderName("lobby@conference.example.org"), "lobby%40conference.example.org");
}

TEST(JidFolderTest, NeverProducesATraversalOrHiddenName) {
  for (const std::string& hostile :
       {std::string(".."), std::string("."), std::string("../../etc/passwd"), std::string("a/b"),
        std::string("/"), std::string(".hidden@x"), std::string("nul\0byte@x", 10),
        std::string("..@..")}) {
    const std::string name = EncodeFolderName(hostile);
    ExpectSafeFileName(name);
    EXPECT_NE(name, ".");
    EXPECT_NE(name, "..");
    EXPECT_EQ(DecodeFolderName(name), hostile);
  }
  EXPECT_EQ(EncodeFolderName(".."), "%2E.");
}

TEST(JidFolderTest, GivesNamesThatDifferOnlyInCaseDistinctFolders) {
  const std::string lower = EncodeFolderName("alice@localhost");
  const std::string upper = EncodeFolderName("Alice@localhost");
  EXPECT_NE(lower, upper);
  // Distinct even on a case-insensitive file system.
  std::string folded = upper;
  for (char& c : folded) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  EXPECT_NE(folded, lower);
}

TEST(JidFolderTest, RoundTripsArbitraryBytesWithoutCollisions) {
  std::mt19937 random(42);
  std::set<std::string> inputs;
  std::set<std::string> names;
  for (int i = 0; i < 20000; ++i) {
    std::string input(random() % 12, '\0');
    // A small alphabet makes near-collisions (case, escapes, dots) likely.
    constexpr char kAlphabet[] = "aA.%/\0~-_@9\xC3\xA9";
    for (char& c : input) c = kAlphabet[random() % (sizeof(kAlphabet) - 1)];
    if (!inputs.insert(input).second) continue;
    const std::string name = EncodeFolderName(input);
    ExpectSafeFileName(name);
    EXPECT_TRUE(names.insert(name).second) << "collision for input of " << input.size();
    EXPECT_EQ(DecodeFolderName(name), input);
  }
}

TEST(JidFolderTest, BoundsTheLongestJidAndKeepsLongOnesApart) {
  const std::string longest(3071, 'a');
  std::string other = longest;
  other.back() = 'b';
  const std::string name = EncodeFolderName(longest);
  ExpectSafeFileName(name);
  EXPECT_NE(name, EncodeFolderName(other));
  EXPECT_NE(name.find('~'), std::string::npos);
  EXPECT_EQ(name.substr(0, 10), "aaaaaaaaaa");  // still recognisable
  EXPECT_EQ(DecodeFolderName(name), std::nullopt);

  // Escaped bytes triple the length: 100 of them are over the limit too.
  const std::string escaped(100, '@');
  ExpectSafeFileName(EncodeFolderName(escaped));
  EXPECT_NE(EncodeFolderName(escaped), EncodeFolderName(escaped + "@"));
}

TEST(JidFolderTest, HashesOnlyBeyondTheLimit) {
  const std::string fits(kMaxFolderNameLength, 'x');
  EXPECT_EQ(EncodeFolderName(fits), fits);
  EXPECT_EQ(DecodeFolderName(fits), fits);
  const std::string over(kMaxFolderNameLength + 1, 'x');
  const std::string name = EncodeFolderName(over);
  EXPECT_LE(name.size(), kMaxFolderNameLength);
  EXPECT_NE(name.find('~'), std::string::npos);
  EXPECT_NE(name, fits);
}

TEST(JidFolderTest, EncodesTheEmptyNameApart) {
  EXPECT_EQ(EncodeFolderName(""), "%");
  EXPECT_EQ(DecodeFolderName("%"), "");
}

TEST(JidFolderTest, DecodesOnlyWhatTheEncoderWrites) {
  for (const char* name : {"ALICE", "%61lice", "%4a", ".hidden", "a%2", "a%", "a~b", "a/b", ""}) {
    EXPECT_EQ(DecodeFolderName(name), std::nullopt) << name;
  }
}

}  // namespace
}  // namespace herald::memory
