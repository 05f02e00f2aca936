#include "tools/heraldctl/conversation_argument.h"

#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "component/base/absl_string_view.h"
#include "tools/heraldctl/argument_checks.h"

namespace herald::heraldctl {
namespace {

constexpr size_t kMaxJidBytes = 3071;  // RFC 7622: three parts of at most 1023 bytes
constexpr size_t kMaxApiNameBytes = 64;

// A bare JID: a JID argument without a resource.
absl::Status CheckBareJid(std::string_view text, std::string_view what) {
  if (absl::Status status = CheckJidArgument(text, what); !status.ok()) return status;
  if (text.find('/') != std::string_view::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat(AbslView(what), " must be a bare JID (no /resource)"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckJidArgument(std::string_view text, std::string_view what) {
  if (text.size() > kMaxJidBytes) {
    return absl::InvalidArgumentError(absl::StrCat(AbslView(what), " is longer than 3071 bytes"));
  }
  return CheckWord(text, what);
}

absl::StatusOr<std::string> ParseApiConversationName(std::string_view text) {
  std::string_view name = text;
  if (name.substr(0, 4) == "api:") name.remove_prefix(4);
  if (name.empty() || name.size() > kMaxApiNameBytes) {
    return absl::InvalidArgumentError("an API conversation name has 1 to 64 characters");
  }
  for (char c : name) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') {
      return absl::InvalidArgumentError(
          "an API conversation name has only letters, digits, '.', '_' and '-'");
    }
  }
  return std::string(name);
}

absl::StatusOr<v1::ConversationKey> ParseConversationArgument(std::string_view text) {
  v1::ConversationKey key;
  size_t colon = text.find(':');
  size_t at = text.find('@');
  // A ':' before any '@' names a kind: RFC 7622 forbids ':' in a localpart, and a domain
  // part without a localpart has no ':' except inside an IPv6 literal, which starts with '['.
  bool has_kind = colon != std::string_view::npos && (at == std::string_view::npos || colon < at) &&
                  text.find('[') > colon;
  if (!has_kind) {
    if (absl::Status status = CheckBareJid(text, "CONVERSATION"); !status.ok()) return status;
    key.set_kind(v1::CONVERSATION_KIND_DIRECT);
    key.set_address(std::string(text));
    return key;
  }
  std::string_view kind = text.substr(0, colon);
  std::string_view address = text.substr(colon + 1);
  if (kind == "direct" || kind == "room") {
    if (absl::Status status = CheckBareJid(address, "the JID in CONVERSATION"); !status.ok()) {
      return status;
    }
    key.set_kind(kind == "direct" ? v1::CONVERSATION_KIND_DIRECT : v1::CONVERSATION_KIND_ROOM);
    key.set_address(std::string(address));
    return key;
  }
  if (kind == "api") {
    absl::StatusOr<std::string> name = ParseApiConversationName(address);
    if (!name.ok()) return name.status();
    key.set_kind(v1::CONVERSATION_KIND_API);
    key.set_address(*name);
    return key;
  }
  return absl::InvalidArgumentError(
      "CONVERSATION is a bare JID, direct:JID, room:JID or api:NAME (unknown kind before ':')");
}

std::string ConversationLabel(const v1::ConversationKey& key) {
  std::string label;
  switch (key.kind()) {
    case v1::CONVERSATION_KIND_DIRECT:
      label = "direct:";
      break;
    case v1::CONVERSATION_KIND_ROOM:
      label = "room:";
      break;
    case v1::CONVERSATION_KIND_API:
      label = "api:";
      break;
    default:
      label = "?:";
      break;
  }
  label += key.address();
  if (!key.thread().empty()) absl::StrAppend(&label, " (thread ", key.thread(), ")");
  return label;
}

}  // namespace herald::heraldctl
