#include "component/base/conversation_ref.h"

#include <optional>

#include "gtest/gtest.h"

namespace herald::base {
namespace {

const ConversationRef kAlice{.kind = ConversationRef::Kind::kDirect, .address = "alice@localhost"};
const ConversationRef kLobby{.kind = ConversationRef::Kind::kRoom,
                             .address = "lobby@conference.localhost"};

TEST(ConversationRefTest, NamesConversationsAndParsesTheNamesBack) {
  EXPECT_EQ(ConversationName(kAlice), "direct:alice@localhost");
  EXPECT_EQ(ConversationName(kLobby), "room:lobby@conference.localhost");
  const ConversationRef api{.kind = ConversationRef::Kind::kApi, .address = "job.1"};
  EXPECT_EQ(ConversationName(api), "api:job.1");
  for (const ConversationRef& ref : {kAlice, kLobby, api}) {
    EXPECT_EQ(ParseConversationName(ConversationName(ref)), ref);
  }
  EXPECT_EQ(ParseConversationName("alice@localhost"), std::nullopt);
  EXPECT_EQ(ParseConversationName("direct:"), std::nullopt);
  EXPECT_EQ(ParseConversationName("api:../x"), std::nullopt);
  EXPECT_EQ(ParseConversationName("api:.hidden"), std::nullopt);
  EXPECT_EQ(ParseConversationName("chat:alice@localhost"), std::nullopt);
}

TEST(ConversationRefTest, RefusesAConversationWithoutAnAddressOrWithABadApiName) {
  EXPECT_TRUE(absl::IsInvalidArgument(CheckConversationRef(ConversationRef{})));
  EXPECT_TRUE(absl::IsInvalidArgument(
      CheckConversationRef({.kind = ConversationRef::Kind::kApi, .address = "a/b"})));
  EXPECT_TRUE(CheckConversationRef(kAlice).ok());
}

}  // namespace
}  // namespace herald::base
