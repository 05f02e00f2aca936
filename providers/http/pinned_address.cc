#include "providers/http/pinned_address.h"

#include <arpa/inet.h>

#include <cstring>

namespace herald::providers::http_internal {

std::optional<PinnedAddress> PinnedAddress::Parse(const std::string& text) {
  PinnedAddress pinned;
  if (inet_pton(AF_INET, text.c_str(), &pinned.v4) == 1) {
    pinned.family = AF_INET;
    return pinned;
  }
  if (inet_pton(AF_INET6, text.c_str(), &pinned.v6) == 1) {
    pinned.family = AF_INET6;
    return pinned;
  }
  return std::nullopt;
}

bool PinnedAddress::Matches(const sockaddr* address, size_t length) const {
  if (address == nullptr || address->sa_family != family) return false;
  if (family == AF_INET && length >= sizeof(sockaddr_in)) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(address);
    return std::memcmp(&in->sin_addr, &v4, sizeof(v4)) == 0;
  }
  if (family == AF_INET6 && length >= sizeof(sockaddr_in6)) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(address);
    return std::memcmp(&in6->sin6_addr, &v6, sizeof(v6)) == 0;
  }
  return false;
}

}  // namespace herald::providers::http_internal
