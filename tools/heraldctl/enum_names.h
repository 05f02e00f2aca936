// tools/heraldctl/enum_names.h
//
// The words heraldctl uses for the API's enums, in both directions: what a person types
// (`--window week`, `--type run_failed`) and what a table shows. The words are the enum
// value names without their prefix, in lower case (EVENT_TYPE_RUN_FAILED is "run_failed").
//
//   std::optional<v1::UsageWindow> window = ParseUsageWindow("week");
//   std::string shown = EventTypeWord(event.type());   // "run_failed"
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "proto/herald/v1/admin.pb.h"
#include "proto/herald/v1/events.pb.h"
#include "proto/herald/v1/quota.pb.h"
#include "proto/herald/v1/session.pb.h"

namespace herald::heraldctl {

std::optional<v1::ConversationKind> ParseConversationKind(std::string_view word);
std::optional<v1::UsageWindow> ParseUsageWindow(std::string_view word);
std::optional<v1::LimitMode> ParseLimitMode(std::string_view word);
// Every type a subscriber may ask for; "subscriber_dropped" is not one (it always comes).
std::optional<v1::EventType> ParseEventType(std::string_view word);

std::string ConversationKindWord(v1::ConversationKind kind);
std::string UsageWindowWord(v1::UsageWindow window);
std::string LimitModeWord(v1::LimitMode mode);
std::string EventTypeWord(v1::EventType type);
std::string ConnectionStateWord(v1::ConnectionState state);
std::string RunFailureKindWord(v1::RunFailureKind kind);
std::string RequiredActionKindWord(v1::RequiredActionKind kind);  // "approval", "credentials"

}  // namespace herald::heraldctl
