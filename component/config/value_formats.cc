#include "component/config/value_formats.h"

#include <sys/un.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "component/base/hex.h"

namespace herald::config {
namespace {

constexpr size_t kMaxPartBytes = 1023;  // RFC 7622 §3.1

bool IsControlOrSpace(unsigned char c) { return c <= 0x20 || c == 0x7f; }

bool IsValidLabel(std::string_view label) {
  if (label.empty() || label.size() > 63) return false;
  if (label.front() == '-' || label.back() == '-') return false;
  for (char c : label) {
    unsigned char byte = static_cast<unsigned char>(c);
    if (byte >= 0x80) continue;
    if (!absl::ascii_isalnum(byte) && c != '-' && c != '_') return false;
  }
  return true;
}

bool IsValidLocalpart(std::string_view local) {
  if (local.empty() || local.size() > kMaxPartBytes) return false;
  for (char c : local) {
    unsigned char byte = static_cast<unsigned char>(c);
    if (IsControlOrSpace(byte)) return false;
    // RFC 7622 §3.3.1 forbids these in a localpart.
    if (std::string_view("\"&'/:<>@").find(c) != std::string_view::npos) return false;
  }
  return true;
}

// Splits on every `separator`, keeping empty pieces ("a..b" has three).
std::vector<std::string_view> Split(std::string_view text, char separator) {
  std::vector<std::string_view> pieces;
  size_t begin = 0;
  while (true) {
    size_t end = text.find(separator, begin);
    pieces.push_back(text.substr(begin, end == std::string_view::npos ? end : end - begin));
    if (end == std::string_view::npos) return pieces;
    begin = end + 1;
  }
}

// A decimal number of 1..`max_digits` digits, nothing else.
bool ParseDecimal(std::string_view text, size_t max_digits, uint32_t* value) {
  if (text.empty() || text.size() > max_digits) return false;
  uint32_t result = 0;
  for (char c : text) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return false;
    result = result * 10 + static_cast<uint32_t>(c - '0');
  }
  *value = result;
  return true;
}

bool IsLoopbackHost(std::string_view host) {
  if (host == "localhost" || host == "[::1]") return true;
  std::vector<std::string_view> octets = Split(host, '.');
  if (octets.size() != 4) return false;
  for (std::string_view octet : octets) {
    uint32_t value;
    if (!ParseDecimal(octet, 3, &value) || value > 255) return false;
  }
  return octets[0] == "127";
}

}  // namespace

bool IsValidDomain(std::string_view text) {
  if (text.empty() || text.size() > kMaxPartBytes) return false;
  for (std::string_view label : Split(text, '.')) {
    if (!IsValidLabel(label)) return false;
  }
  return true;
}

bool IsValidBareJid(std::string_view text, bool require_localpart) {
  if (text.find('/') != std::string_view::npos) return false;
  size_t at = text.find('@');
  if (at == std::string_view::npos) return !require_localpart && IsValidDomain(text);
  return IsValidLocalpart(text.substr(0, at)) && IsValidDomain(text.substr(at + 1));
}

bool IsValidModelReference(std::string_view text) {
  size_t colon = text.find(':');
  if (colon == std::string_view::npos) return false;
  std::string_view provider = text.substr(0, colon);
  std::string_view model = text.substr(colon + 1);
  if (std::find(std::begin(kKnownProviders), std::end(kKnownProviders), provider) ==
      std::end(kKnownProviders)) {
    return false;
  }
  if (model.empty()) return false;
  return std::none_of(model.begin(), model.end(),
                      [](char c) { return IsControlOrSpace(static_cast<unsigned char>(c)); });
}

bool IsValidHttpUrl(std::string_view text) {
  std::string_view rest;
  if (text.substr(0, 8) == "https://") {
    rest = text.substr(8);
  } else if (text.substr(0, 7) == "http://") {
    rest = text.substr(7);
  } else {
    return false;
  }
  if (rest.empty() || rest.front() == '/' || rest.front() == ':') return false;
  return std::none_of(text.begin(), text.end(),
                      [](char c) { return IsControlOrSpace(static_cast<unsigned char>(c)); });
}

bool IsLowercaseSha256Hex(std::string_view text) { return base::IsLowerHex(text, 64); }

bool IsShortName(std::string_view text) {
  return !text.empty() && text.size() <= 64 && std::all_of(text.begin(), text.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  });
}

namespace {

// "HOST:PORT" with a port of 1-65535; off loopback only with TLS (`needs_tls` says so).
absl::Status CheckTcpListen(std::string_view text, bool tls_configured, const char* example,
                            const char* needs_tls) {
  size_t colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0) {
    return absl::InvalidArgumentError(example);
  }
  std::string_view host = text.substr(0, colon);
  std::string_view port_text = text.substr(colon + 1);
  uint32_t port;
  if (!ParseDecimal(port_text, 5, &port) || port < 1 || port > 65535) {
    return absl::InvalidArgumentError("the port must be a number between 1 and 65535");
  }
  if (!IsLoopbackHost(host) && !tls_configured) return absl::InvalidArgumentError(needs_tls);
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckControlListenAddress(std::string_view text, bool tls_configured) {
  if (text.substr(0, 5) == "unix:") {
    std::string_view path = text.substr(5);
    if (path.empty()) return absl::InvalidArgumentError("the unix: socket path is empty");
    if (path.find('\0') != std::string_view::npos) {
      return absl::InvalidArgumentError("the unix: socket path contains a NUL byte");
    }
    // sun_path holds the path and its terminating NUL.
    constexpr size_t kMaxPath = sizeof(sockaddr_un::sun_path) - 1;
    if (path.size() > kMaxPath) {
      return absl::InvalidArgumentError(
          absl::StrCat("the unix: socket path is longer than ", kMaxPath, " bytes"));
    }
    return absl::OkStatus();
  }
  return CheckTcpListen(
      text, tls_configured, "expected \"unix:PATH\" or \"HOST:PORT\" (e.g. \"127.0.0.1:50051\")",
      "off loopback the control plane requires TLS: set control.tls_cert and "
      "control.tls_key (and control.tls_client_ca for mTLS), or listen on a unix: socket "
      "or a loopback address (127.0.0.1, [::1], localhost)");
}

absl::Status CheckHttpListenAddress(std::string_view text, bool tls_configured) {
  return CheckTcpListen(text, tls_configured, "expected \"HOST:PORT\" (e.g. \"127.0.0.1:8080\")",
                        "off loopback the HTTP listener requires TLS: set http.tls_cert and "
                        "http.tls_key, or listen on a loopback address (127.0.0.1, [::1], "
                        "localhost)");
}

}  // namespace herald::config
