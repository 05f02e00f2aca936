// CONVERSATION arguments: bare JIDs, direct:, room:, api:, and what is refused.
#include "tools/heraldctl/conversation_argument.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace herald::heraldctl {
namespace {

using ::testing::HasSubstr;

v1::ConversationKey Key(v1::ConversationKind kind, const std::string& address) {
  v1::ConversationKey key;
  key.set_kind(kind);
  key.set_address(address);
  return key;
}

void ExpectKey(std::string_view text, v1::ConversationKind kind, const std::string& address) {
  absl::StatusOr<v1::ConversationKey> key = ParseConversationArgument(text);
  ASSERT_TRUE(key.ok()) << text << ": " << key.status();
  EXPECT_EQ(key->kind(), kind) << text;
  EXPECT_EQ(key->address(), address) << text;
  EXPECT_EQ(key->thread(), "") << text;
}

TEST(ConversationArgumentTest, ABareJidIsADirectConversation) {
  ExpectKey("alice@example.org", v1::CONVERSATION_KIND_DIRECT, "alice@example.org");
  ExpectKey("example.org", v1::CONVERSATION_KIND_DIRECT, "example.org");
  ExpectKey("alice@[::1]", v1::CONVERSATION_KIND_DIRECT, "alice@[::1]");
}

TEST(ConversationArgumentTest, AKindPrefixSaysWhichConversation) {
  ExpectKey("direct:alice@example.org", v1::CONVERSATION_KIND_DIRECT, "alice@example.org");
  ExpectKey("room:lobby@conference.example.org", v1::CONVERSATION_KIND_ROOM,
            "lobby@conference.example.org");
  ExpectKey("api:build-bot_2.0", v1::CONVERSATION_KIND_API, "build-bot_2.0");
}

TEST(ConversationArgumentTest, RefusesAnUnknownKind) {
  absl::StatusOr<v1::ConversationKey> key = ParseConversationArgument("dm:alice@example.org");
  ASSERT_FALSE(key.ok());
  EXPECT_THAT(key.status().message(), HasSubstr("direct:JID, room:JID or api:NAME"));
}

TEST(ConversationArgumentTest, RefusesEmptyFullAndSpacedJids) {
  EXPECT_FALSE(ParseConversationArgument("").ok());
  EXPECT_FALSE(ParseConversationArgument("direct:").ok());
  EXPECT_FALSE(ParseConversationArgument("room:").ok());
  EXPECT_THAT(ParseConversationArgument("alice@example.org/phone").status().message(),
              HasSubstr("bare JID"));
  EXPECT_THAT(ParseConversationArgument("alice @example.org").status().message(),
              HasSubstr("whitespace"));
}

TEST(ConversationArgumentTest, RefusesApiNamesOutsideTheirAlphabet) {
  EXPECT_FALSE(ParseConversationArgument("api:").ok());
  EXPECT_FALSE(ParseConversationArgument("api:has space").ok());
  EXPECT_FALSE(ParseConversationArgument("api:slash/name").ok());
  EXPECT_FALSE(ParseConversationArgument("api:" + std::string(65, 'a')).ok());
  EXPECT_TRUE(ParseConversationArgument("api:" + std::string(64, 'a')).ok());
}

TEST(ConversationArgumentTest, ApiConversationNamesMayCarryTheirPrefix) {
  EXPECT_EQ(*ParseApiConversationName("ops"), "ops");
  EXPECT_EQ(*ParseApiConversationName("api:ops"), "ops");
  EXPECT_FALSE(ParseApiConversationName("o p s").ok());
}

TEST(ConversationArgumentTest, LabelsReadBackAsTheSameKey) {
  for (const v1::ConversationKey& key : {Key(v1::CONVERSATION_KIND_DIRECT, "alice@example.org"),
                                         Key(v1::CONVERSATION_KIND_ROOM, "lobby@muc.example.org"),
                                         Key(v1::CONVERSATION_KIND_API, "ops")}) {
    std::string label = ConversationLabel(key);
    absl::StatusOr<v1::ConversationKey> parsed = ParseConversationArgument(label);
    ASSERT_TRUE(parsed.ok()) << label;
    EXPECT_EQ(parsed->kind(), key.kind());
    EXPECT_EQ(parsed->address(), key.address());
  }
  EXPECT_EQ(ConversationLabel(Key(v1::CONVERSATION_KIND_ROOM, "r@muc")), "room:r@muc");
}

TEST(ConversationArgumentTest, LabelsShowAThread) {
  v1::ConversationKey key = Key(v1::CONVERSATION_KIND_DIRECT, "a@b");
  key.set_thread("t1");
  EXPECT_EQ(ConversationLabel(key), "direct:a@b (thread t1)");
}

}  // namespace
}  // namespace herald::heraldctl
