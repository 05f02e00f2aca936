// skills/web/address_policy.h
//
// AddressPolicy decides which addresses url_fetch may connect to: the SSRF guard's rule.
// A model steered by a web page or a user must not make Herald read its own host, the
// intranet behind it or the cloud's metadata service, so every address that is not an
// ordinary public one is refused:
//
//   unspecified   0.0.0.0/8, ::
//   loopback      127.0.0.0/8, ::1
//   private       10/8, 172.16/12, 192.168/16, fc00::/7 (ULA), fec0::/10 (site-local),
//                 64:ff9b:1::/48 (local NAT64)
//   shared        100.64.0.0/10 (carrier-grade NAT)
//   link-local    169.254.0.0/16, fe80::/10
//   multicast     224.0.0.0/4, ff00::/8
//   reserved      192.0.0.0/24, documentation and benchmarking ranges, 240.0.0.0/4,
//                 255.255.255.255, 100::/64, 2001:db8::/32, 2001::/32 (Teredo)
//   metadata      169.254.169.254, 169.254.170.2, 168.63.129.16, 100.100.100.200,
//                 fd00:ec2::254, and the names metadata.google.internal and metadata
//
// IPv6 forms that carry an IPv4 address (IPv4-mapped ::ffff:a.b.c.d, IPv4-compatible
// ::a.b.c.d, NAT64 64:ff9b::/96, 6to4 2002::/16) are judged by that IPv4 address.
//
// The operator may exempt targets (allow_hosts, e.g. an intranet wiki): a host name
// ("wiki.corp.example"), every name under a domain ("*.corp.example"), an address
// ("10.1.2.3") or a network ("10.1.0.0/16", "fd12::/16"). An exemption lifts every refusal
// except the cloud-metadata one, which nothing lifts.
//
//   absl::StatusOr<AddressPolicy> policy = AddressPolicy::Create({"*.corp.example"});
//   policy->CheckName("metadata.google.internal");   // PermissionDenied
//   policy->Check("example.org", asio::ip::make_address("10.0.0.5"));
//   // PermissionDenied: "refused: example.org resolves to a private address ..."
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "asio.hpp"

namespace herald::skills::web {

// What makes `address` unfit to fetch from ("a private address", "a loopback address", ...),
// or nullopt for an ordinary public address.
std::optional<std::string_view> RestrictedAddressKind(const asio::ip::address& address);

// True for the metadata services of the big clouds (by address, IPv4-embedded forms too).
bool IsCloudMetadataAddress(const asio::ip::address& address);

class AddressPolicy {
 public:
  // Fails naming the first entry of `allow_hosts` that is none of the forms above.
  static absl::StatusOr<AddressPolicy> Create(const std::vector<std::string>& allow_hosts);

  // Refuses a host by name before it is resolved: the metadata names.
  absl::Status CheckName(std::string_view host) const;

  // OK when `host` (as written in the URL, lower case) may be fetched at `address`;
  // PermissionDenied with a message for the model otherwise. When `host` is itself an
  // address literal the message names it; for a name it says what kind of address the name
  // resolves to without revealing it.
  absl::Status Check(std::string_view host, const asio::ip::address& address) const;

 private:
  struct Network {
    std::array<uint8_t, 16> bytes;  // IPv4 as IPv4-mapped IPv6
    int prefix_length;              // of the 128 bits
  };

  bool IsExempt(std::string_view host, const asio::ip::address& address) const;

  std::vector<std::string> names_;     // exact host names
  std::vector<std::string> suffixes_;  // ".corp.example" for "*.corp.example"
  std::vector<Network> networks_;
};

}  // namespace herald::skills::web
