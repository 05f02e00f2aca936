// The words for the API's enums, both ways.
#include "tools/heraldctl/enum_names.h"

#include "gtest/gtest.h"

namespace herald::heraldctl {
namespace {

TEST(EnumNamesTest, ReadsTheWordsPeopleType) {
  EXPECT_EQ(ParseConversationKind("room"), v1::CONVERSATION_KIND_ROOM);
  EXPECT_EQ(ParseUsageWindow("week"), v1::USAGE_WINDOW_WEEK);
  EXPECT_EQ(ParseLimitMode("warn"), v1::LIMIT_MODE_WARN);
  EXPECT_EQ(ParseEventType("connection_changed"), v1::EVENT_TYPE_CONNECTION_CHANGED);
}

TEST(EnumNamesTest, RefusesUnspecifiedUppercaseAndUnknownWords) {
  EXPECT_EQ(ParseUsageWindow("unspecified"), std::nullopt);
  EXPECT_EQ(ParseUsageWindow("WEEK"), std::nullopt);
  EXPECT_EQ(ParseUsageWindow("USAGE_WINDOW_WEEK"), std::nullopt);
  EXPECT_EQ(ParseUsageWindow(""), std::nullopt);
  EXPECT_EQ(ParseLimitMode("bloc"), std::nullopt);
  EXPECT_EQ(ParseEventType("subscriber_dropped"), std::nullopt)
      << "a subscriber cannot ask for it; it always comes";
}

TEST(EnumNamesTest, EveryEventTypeASubscriberMayAskForReadsBack) {
  for (int value = v1::EVENT_TYPE_MESSAGE_RECEIVED; value <= v1::EVENT_TYPE_CONFIG_RELOADED;
       ++value) {
    auto type = static_cast<v1::EventType>(value);
    EXPECT_EQ(ParseEventType(EventTypeWord(type)), type) << EventTypeWord(type);
  }
}

TEST(EnumNamesTest, ShowsWords) {
  EXPECT_EQ(EventTypeWord(v1::EVENT_TYPE_SUBSCRIBER_DROPPED), "subscriber_dropped");
  EXPECT_EQ(ConnectionStateWord(v1::CONNECTION_STATE_ONLINE), "online");
  EXPECT_EQ(UsageWindowWord(v1::USAGE_WINDOW_UNSPECIFIED), "day") << "the server's reading";
  EXPECT_EQ(RunFailureKindWord(v1::RUN_FAILURE_KIND_LIMIT), "limit");
  EXPECT_EQ(LimitModeWord(static_cast<v1::LimitMode>(99)), "unknown(99)");
}

}  // namespace
}  // namespace herald::heraldctl
