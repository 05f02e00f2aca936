#include "tools/heraldctl/argument_checks.h"

#include "absl/strings/str_cat.h"
#include "component/base/absl_string_view.h"

namespace herald::heraldctl {

absl::Status UsageError(std::string_view message) {
  return absl::InvalidArgumentError(std::string(message));
}

std::string Quoted(std::string_view text) {
  std::string quoted = "'";
  size_t shown = 0;
  for (char c : text) {
    if (++shown > 40) {
      quoted += "...";
      break;
    }
    unsigned char byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f) {
      absl::StrAppend(&quoted, "\\x", absl::Hex(byte, absl::kZeroPad2));
    } else {
      quoted += c;
    }
  }
  return quoted + "'";
}

bool HasSpaceOrControl(std::string_view text) {
  for (char c : text) {
    unsigned char byte = static_cast<unsigned char>(c);
    if (byte <= 0x20 || byte == 0x7f) return true;
  }
  return false;
}

bool IsVisibleAscii(std::string_view text) {
  for (char c : text) {
    unsigned char byte = static_cast<unsigned char>(c);
    if (byte <= 0x20 || byte >= 0x7f) return false;
  }
  return true;
}

absl::Status CheckWord(std::string_view value, std::string_view what) {
  if (value.empty()) return UsageError(absl::StrCat(AbslView(what), " is empty"));
  if (HasSpaceOrControl(value)) {
    return UsageError(absl::StrCat(AbslView(what), " contains whitespace or a control character"));
  }
  return absl::OkStatus();
}

}  // namespace herald::heraldctl
