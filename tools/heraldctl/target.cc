#include "tools/heraldctl/target.h"

#include <charconv>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_split.h"
#include "component/base/absl_string_view.h"
#include "tools/heraldctl/argument_checks.h"

namespace herald::heraldctl {
namespace {

constexpr char kTargetForms[] = "--target is unix:PATH or HOST:PORT";

bool IsDecimal(std::string_view text) {
  if (text.empty()) return false;
  for (char c : text) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

}  // namespace

bool Target::IsLoopback() const {
  if (is_unix) return true;
  std::string lowered = absl::AsciiStrToLower(host);
  if (lowered == "localhost" || lowered == "[::1]") return true;
  std::vector<std::string> octets = absl::StrSplit(host, '.');
  if (octets.size() != 4 || octets[0] != "127") return false;
  for (const std::string& octet : octets) {
    if (!IsDecimal(octet) || octet.size() > 3 || std::stoi(octet) > 255) return false;
  }
  return true;
}

absl::StatusOr<Target> ParseTarget(std::string_view text) {
  Target target;
  if (HasSpaceOrControl(text)) {
    return absl::InvalidArgumentError("--target contains whitespace or a control character");
  }
  if (text.substr(0, 5) == "unix:") {
    target.is_unix = true;
    target.path = std::string(text.substr(5));
    if (target.path.empty()) return absl::InvalidArgumentError("--target unix: needs a PATH");
    return target;
  }
  size_t colon = text.rfind(':');
  if (colon == std::string_view::npos) return absl::InvalidArgumentError(kTargetForms);
  std::string_view host = text.substr(0, colon);
  std::string_view port = text.substr(colon + 1);
  bool bracketed = !host.empty() && host.front() == '[';
  if (host.empty() || (bracketed && host.back() != ']') ||
      (!bracketed && host.find(':') != std::string_view::npos)) {
    return absl::InvalidArgumentError(
        "--target is unix:PATH or HOST:PORT (an IPv6 host in brackets: [::1]:50051)");
  }
  int port_number = 0;
  if (!IsDecimal(port) || port.size() > 5 ||
      std::from_chars(port.data(), port.data() + port.size(), port_number).ec != std::errc() ||
      port_number < 1 || port_number > 65535) {
    return absl::InvalidArgumentError("--target HOST:PORT needs a port from 1 to 65535");
  }
  target.host = std::string(host);
  target.port = port_number;
  return target;
}

}  // namespace herald::heraldctl
