#include "component/config/value_formats.h"

#include <string>

#include "gtest/gtest.h"

namespace herald::config {
namespace {

TEST(ValueFormatsTest, AcceptsDomainsMadeOfLabels) {
  EXPECT_TRUE(IsValidDomain("localhost"));
  EXPECT_TRUE(IsValidDomain("agent.localhost"));
  EXPECT_TRUE(IsValidDomain("conference.example-1.org"));
  EXPECT_TRUE(IsValidDomain("m\xc3\xbcnchen.de"));
}

TEST(ValueFormatsTest, RefusesDomainsWithEmptyOrMalformedLabels) {
  EXPECT_FALSE(IsValidDomain(""));
  EXPECT_FALSE(IsValidDomain(".localhost"));
  EXPECT_FALSE(IsValidDomain("localhost."));
  EXPECT_FALSE(IsValidDomain("a..b"));
  EXPECT_FALSE(IsValidDomain("-a.b"));
  EXPECT_FALSE(IsValidDomain("a b"));
  EXPECT_FALSE(IsValidDomain("a@b"));
  EXPECT_FALSE(IsValidDomain("a/b"));
  EXPECT_FALSE(IsValidDomain(std::string(64, 'a') + ".org"));
  EXPECT_FALSE(IsValidDomain(std::string(1024, 'a')));
}

TEST(ValueFormatsTest, ChecksBareJids) {
  EXPECT_TRUE(IsValidBareJid("alice@localhost", true));
  EXPECT_TRUE(IsValidBareJid("localhost", false));
  EXPECT_FALSE(IsValidBareJid("localhost", true));
  EXPECT_FALSE(IsValidBareJid("alice@localhost/phone", true));
  EXPECT_FALSE(IsValidBareJid("a@b@c", false));
  EXPECT_FALSE(IsValidBareJid("@localhost", false));
  EXPECT_FALSE(IsValidBareJid("alice@", false));
  EXPECT_FALSE(IsValidBareJid("al ice@localhost", false));
  EXPECT_FALSE(IsValidBareJid("al'ice@localhost", false));
  EXPECT_FALSE(IsValidBareJid("alice@local\nhost", false));
}

TEST(ValueFormatsTest, ChecksModelReferences) {
  EXPECT_TRUE(IsValidModelReference("anthropic:claude-sonnet-4-5"));
  EXPECT_TRUE(IsValidModelReference("ollama:llama3.1:8b"));
  EXPECT_TRUE(IsValidModelReference("scripted:demo"));
  EXPECT_FALSE(IsValidModelReference("claude"));
  EXPECT_FALSE(IsValidModelReference("openai:"));
  EXPECT_FALSE(IsValidModelReference("mistral:large"));
  EXPECT_FALSE(IsValidModelReference("openai:gpt 4"));
}

TEST(ValueFormatsTest, ChecksHttpUrls) {
  EXPECT_TRUE(IsValidHttpUrl("https://api.anthropic.com"));
  EXPECT_TRUE(IsValidHttpUrl("http://127.0.0.1:8080/v1"));
  EXPECT_FALSE(IsValidHttpUrl("https://"));
  EXPECT_FALSE(IsValidHttpUrl("localhost:11434"));
  EXPECT_FALSE(IsValidHttpUrl("file:///etc/passwd"));
  EXPECT_FALSE(IsValidHttpUrl("https://a b"));
}

TEST(ValueFormatsTest, AcceptsOnlyLowercaseSha256Hex) {
  EXPECT_TRUE(IsLowercaseSha256Hex(std::string(64, 'f')));
  EXPECT_FALSE(IsLowercaseSha256Hex(std::string(64, 'F')));
  EXPECT_FALSE(IsLowercaseSha256Hex(std::string(63, 'f')));
  EXPECT_FALSE(IsLowercaseSha256Hex(std::string(64, 'g')));
}

TEST(ValueFormatsTest, AShortNameIsOneToSixtyFourOfLowerCaseDigitsUnderscoreAndDash) {
  EXPECT_TRUE(IsShortName("digest_2-a"));
  EXPECT_TRUE(IsShortName(std::string(64, 'a')));
  EXPECT_FALSE(IsShortName(""));
  EXPECT_FALSE(IsShortName(std::string(65, 'a')));
  EXPECT_FALSE(IsShortName("Digest"));
  EXPECT_FALSE(IsShortName("a.b"));
}

TEST(ValueFormatsTest, AcceptsOnlyLocalControlAddresses) {
  EXPECT_TRUE(CheckControlListenAddress("unix:./data/control.sock").ok());
  EXPECT_TRUE(CheckControlListenAddress("127.0.0.1:50051").ok());
  EXPECT_TRUE(CheckControlListenAddress("127.1.2.3:1").ok());
  EXPECT_TRUE(CheckControlListenAddress("[::1]:65535").ok());
  EXPECT_TRUE(CheckControlListenAddress("localhost:50051").ok());
  EXPECT_FALSE(CheckControlListenAddress("0.0.0.0:50051").ok());
  EXPECT_FALSE(CheckControlListenAddress("[::]:50051").ok());
  EXPECT_FALSE(CheckControlListenAddress("example.org:50051").ok());
  EXPECT_FALSE(CheckControlListenAddress("127.0.0.1").ok());
  EXPECT_FALSE(CheckControlListenAddress("127.0.0.1:0").ok());
  EXPECT_FALSE(CheckControlListenAddress("127.0.0.1:+80").ok());
  EXPECT_FALSE(CheckControlListenAddress("127.0.0.256:80").ok());
  EXPECT_FALSE(CheckControlListenAddress(std::string("unix:a\0b", 8)).ok());
}

}  // namespace
}  // namespace herald::config
