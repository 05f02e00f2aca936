#include "tools/heraldctl/enum_names.h"

#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "component/base/absl_string_view.h"
#include "google/protobuf/descriptor.h"

namespace herald::heraldctl {
namespace {

using google::protobuf::EnumDescriptor;
using google::protobuf::EnumValueDescriptor;

// "USAGE_WINDOW_WEEK" with prefix "USAGE_WINDOW_" is "week".
std::string WordOf(const EnumDescriptor* descriptor, int value, std::string_view prefix) {
  const EnumValueDescriptor* found = descriptor->FindValueByNumber(value);
  if (found == nullptr) return "unknown(" + std::to_string(value) + ")";
  std::string name = found->name();
  if (absl::StartsWith(name, AbslView(prefix))) name.erase(0, prefix.size());
  return absl::AsciiStrToLower(name);
}

// The value whose word is `word`; never the _UNSPECIFIED one.
std::optional<int> ValueOf(const EnumDescriptor* descriptor, std::string_view word,
                           std::string_view prefix) {
  if (word.empty()) return std::nullopt;
  for (char c : word) {
    if (!absl::ascii_islower(static_cast<unsigned char>(c)) && c != '_') return std::nullopt;
  }
  std::string name = std::string(prefix) + absl::AsciiStrToUpper(AbslView(word));
  const EnumValueDescriptor* found = descriptor->FindValueByName(name);
  if (found == nullptr || found->number() == 0) return std::nullopt;
  return found->number();
}

}  // namespace

std::optional<v1::ConversationKind> ParseConversationKind(std::string_view word) {
  std::optional<int> value = ValueOf(v1::ConversationKind_descriptor(), word, "CONVERSATION_KIND_");
  if (!value) return std::nullopt;
  return static_cast<v1::ConversationKind>(*value);
}

std::optional<v1::UsageWindow> ParseUsageWindow(std::string_view word) {
  std::optional<int> value = ValueOf(v1::UsageWindow_descriptor(), word, "USAGE_WINDOW_");
  if (!value) return std::nullopt;
  return static_cast<v1::UsageWindow>(*value);
}

std::optional<v1::LimitMode> ParseLimitMode(std::string_view word) {
  std::optional<int> value = ValueOf(v1::LimitMode_descriptor(), word, "LIMIT_MODE_");
  if (!value) return std::nullopt;
  return static_cast<v1::LimitMode>(*value);
}

std::optional<v1::EventType> ParseEventType(std::string_view word) {
  std::optional<int> value = ValueOf(v1::EventType_descriptor(), word, "EVENT_TYPE_");
  if (!value || *value == v1::EVENT_TYPE_SUBSCRIBER_DROPPED) return std::nullopt;
  return static_cast<v1::EventType>(*value);
}

std::string ConversationKindWord(v1::ConversationKind kind) {
  return WordOf(v1::ConversationKind_descriptor(), kind, "CONVERSATION_KIND_");
}

std::string UsageWindowWord(v1::UsageWindow window) {
  // The server treats UNSPECIFIED as DAY.
  if (window == v1::USAGE_WINDOW_UNSPECIFIED) window = v1::USAGE_WINDOW_DAY;
  return WordOf(v1::UsageWindow_descriptor(), window, "USAGE_WINDOW_");
}

std::string LimitModeWord(v1::LimitMode mode) {
  return WordOf(v1::LimitMode_descriptor(), mode, "LIMIT_MODE_");
}

std::string EventTypeWord(v1::EventType type) {
  return WordOf(v1::EventType_descriptor(), type, "EVENT_TYPE_");
}

std::string ConnectionStateWord(v1::ConnectionState state) {
  return WordOf(v1::ConnectionState_descriptor(), state, "CONNECTION_STATE_");
}

std::string RunFailureKindWord(v1::RunFailureKind kind) {
  return WordOf(v1::RunFailureKind_descriptor(), kind, "RUN_FAILURE_KIND_");
}

std::string RequiredActionKindWord(v1::RequiredActionKind kind) {
  return WordOf(v1::RequiredActionKind_descriptor(), kind, "REQUIRED_ACTION_KIND_");
}

}  // namespace herald::heraldctl
