// providers/http/pinned_address.h
//
// PinnedAddress is the IP address a request is pinned to (HttpRequest::connect_to_address),
// in binary form, so that the socket curl is about to open can be checked against it: a
// connection to any other address is refused. Internal to providers/http.
//
//   std::optional<PinnedAddress> pinned = PinnedAddress::Parse("2606:2800::1");
//   if (!pinned->Matches(&address->addr, address->addrlen)) return CURL_SOCKET_BAD;
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstddef>
#include <optional>
#include <string>

namespace herald::providers::http_internal {

struct PinnedAddress {
  int family = AF_UNSPEC;  // AF_INET or AF_INET6 once parsed
  in_addr v4{};
  in6_addr v6{};

  // An IPv4 or IPv6 address in text form; nullopt for anything else (a host name).
  static std::optional<PinnedAddress> Parse(const std::string& text);

  // Whether `address` (of `length` bytes) is this address, whatever its port.
  bool Matches(const sockaddr* address, size_t length) const;
};

}  // namespace herald::providers::http_internal
