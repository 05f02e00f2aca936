// component/base/conversation_ref.h
//
// ConversationRef names one conversation of Herald's: a 1:1 chat (a bare JID), a room (its
// bare JID) or a conversation a program holds over the control plane (a name it chose), and
// optionally an XEP-0201 thread of it. Every module speaks of conversations this way — the
// agent, the memory store, skills, the ledger, the control plane — so it lives here rather
// than in any one of them.
//
//   ConversationRef alice{.kind = ConversationRef::Kind::kDirect, .address = "alice@localhost"};
//   ConversationName(alice);                          // "direct:alice@localhost"
//   ParseConversationName("room:lobby@conference.localhost")->kind;   // Kind::kRoom
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace herald::base {

struct ConversationRef {
  // kApi: a conversation a program holds over the control plane (SessionService.Converse);
  // its address is the name the program chose.
  enum class Kind { kDirect, kRoom, kApi };
  Kind kind = Kind::kDirect;
  std::string address;  // the user's or the room's bare JID, normalised; or the API name
  std::string thread;   // XEP-0201 thread id; "" is the main session

  friend bool operator==(const ConversationRef&, const ConversationRef&) = default;
};

// Every kind, in the order listings use.
inline constexpr ConversationRef::Kind kConversationKinds[] = {
    ConversationRef::Kind::kDirect, ConversationRef::Kind::kRoom, ConversationRef::Kind::kApi};

// "direct:alice@localhost", "room:lobby@conference.localhost", "api:nightly-report": how a
// conversation is named in events, the audit log and heraldctl (the thread is not part of it).
std::string ConversationName(const ConversationRef& ref);
// The inverse of ConversationName; nullopt for anything else.
std::optional<ConversationRef> ParseConversationName(std::string_view name);
// Whether `name` may name an API conversation: 1-64 of [A-Za-z0-9._-], not starting with '.'.
bool IsApiConversationName(std::string_view name);
// "direct", "room" or "api".
const char* ConversationKindName(ConversationRef::Kind kind);

// InvalidArgument when `ref` has no address, or an API name IsApiConversationName refuses.
absl::Status CheckConversationRef(const ConversationRef& ref);

}  // namespace herald::base
