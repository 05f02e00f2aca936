// skills/web/address_guard.h
//
// AddressGuard is url_fetch's SSRF guard: it resolves a URL's host, checks every address the
// name resolves to against the AddressPolicy, and hands back the one address the connection
// must then be pinned to (HttpRequest::connect_to_address). Checking all of them matters: a
// name that resolves to a public and a private address is refused, not gambled on. Pinning
// matters as much: if curl resolved the name again, a DNS server answering differently the
// second time (DNS rebinding) could swap a checked address for a forbidden one.
//
// Resolution never blocks the I/O loop: by default it is Asio's asynchronous resolver (whose
// getaddrinfo runs on a thread of its own); tests pass a resolver of their own.
//
//   AddressGuard guard(io, *AddressPolicy::Create({}), SystemResolver(io));
//   guard.Check("example.org", [](absl::StatusOr<asio::ip::address> pinned) { ... });
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "asio.hpp"
#include "skills/web/address_policy.h"

namespace herald::skills::web {

using ResolvedAddresses = std::vector<asio::ip::address>;
// Resolves a host name; calls back exactly once, on the I/O loop, with at least one address
// or an error.
using HostResolver = std::function<void(
    const std::string& host, std::function<void(absl::StatusOr<ResolvedAddresses>)> done)>;

// getaddrinfo through asio::ip::tcp::resolver::async_resolve on `io`.
HostResolver SystemResolver(asio::io_context& io);

class AddressGuard {
 public:
  using Done = std::function<void(absl::StatusOr<asio::ip::address>)>;

  // `io` must outlive the guard and every check.
  AddressGuard(asio::io_context& io, AddressPolicy policy, HostResolver resolver);

  // `host` as in WebUrl (lower case, an IPv6 literal without brackets). `done` runs once on
  // the I/O loop (posted, even for a literal) with the address to connect to — the first
  // IPv4 address when there is one, as IPv6 is often unroutable in containers — or
  // PermissionDenied (refused, with a message for the model) or NotFound (does not resolve).
  void Check(const std::string& host, Done done) const;

 private:
  asio::io_context& io_;
  AddressPolicy policy_;
  HostResolver resolver_;
};

}  // namespace herald::skills::web
