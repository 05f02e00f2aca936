// tools/heraldctl/conversation_argument.h
//
// How a person names a conversation on heraldctl's command line, and how heraldctl shows one.
// A CONVERSATION argument is a bare JID (a 1:1 chat, the same as "direct:JID"),
// "direct:JID", "room:JID" (a MUC room's bare JID) or "api:NAME" (a conversation held over
// SessionService.Converse; NAME is [A-Za-z0-9._-]{1,64}). The checks are the shape only; the
// server decides whether such a conversation exists.
//
//   absl::StatusOr<v1::ConversationKey> key = ParseConversationArgument("room:lobby@muc.example");
//   std::string shown = ConversationLabel(*key);   // "room:lobby@muc.example"
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "proto/herald/v1/session.pb.h"

namespace herald::heraldctl {

// InvalidArgument (a usage error) says what is wrong without echoing more than the argument.
absl::StatusOr<v1::ConversationKey> ParseConversationArgument(std::string_view text);

// The name of an API conversation for `converse --conversation`: "NAME" or "api:NAME".
absl::StatusOr<std::string> ParseApiConversationName(std::string_view text);

// A JID argument (`send`, `usage --jid`, `rooms join`): not empty, no whitespace or control
// characters. `what` names the argument in the message ("JID", "ROOM_JID").
absl::Status CheckJidArgument(std::string_view text, std::string_view what);

// "direct:alice@example.org", "room:lobby@muc.example.org", "api:build-bot" — the form the
// server uses in Event.conversation, and that ParseConversationArgument reads back.
std::string ConversationLabel(const v1::ConversationKey& key);

}  // namespace herald::heraldctl
