#include "component/base/conversation_ref.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace herald::base {

const char* ConversationKindName(ConversationRef::Kind kind) {
  switch (kind) {
    case ConversationRef::Kind::kDirect:
      return "direct";
    case ConversationRef::Kind::kRoom:
      return "room";
    case ConversationRef::Kind::kApi:
      return "api";
  }
  return "direct";
}

bool IsApiConversationName(std::string_view name) {
  if (name.empty() || name.size() > 64 || name[0] == '.') return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
  });
}

absl::Status CheckConversationRef(const ConversationRef& ref) {
  if (ref.address.empty()) return absl::InvalidArgumentError("a conversation needs an address");
  if (ref.kind == ConversationRef::Kind::kApi && !IsApiConversationName(ref.address)) {
    return absl::InvalidArgumentError(
        "an API conversation name has 1 to 64 letters, digits, '.', '_' or '-' (not '.' first)");
  }
  return absl::OkStatus();
}

std::string ConversationName(const ConversationRef& ref) {
  return absl::StrCat(ConversationKindName(ref.kind), ":", ref.address);
}

std::optional<ConversationRef> ParseConversationName(std::string_view name) {
  const size_t colon = name.find(':');
  if (colon == std::string_view::npos || colon + 1 == name.size()) return std::nullopt;
  for (ConversationRef::Kind kind : kConversationKinds) {
    if (name.substr(0, colon) == ConversationKindName(kind)) {
      ConversationRef ref{.kind = kind, .address = std::string(name.substr(colon + 1))};
      if (!CheckConversationRef(ref).ok()) return std::nullopt;
      return ref;
    }
  }
  return std::nullopt;
}

}  // namespace herald::base
