#include "skills/web/address_policy.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "component/base/absl_string_view.h"

namespace herald::skills::web {
namespace {

using Bytes = std::array<uint8_t, 16>;

constexpr std::string_view kUnspecified = "an unspecified address";
constexpr std::string_view kLoopback = "a loopback address";
constexpr std::string_view kPrivate = "a private address";
constexpr std::string_view kShared = "a shared (carrier-grade NAT) address";
constexpr std::string_view kLinkLocal = "a link-local address";
constexpr std::string_view kMulticast = "a multicast address";
constexpr std::string_view kReserved = "a reserved address";
constexpr std::string_view kMetadata = "a cloud metadata address";

// Names that reach a cloud's metadata service from inside it.
constexpr std::string_view kMetadataNames[] = {"metadata.google.internal", "metadata",
                                               "metadata.goog", "instance-data",
                                               "instance-data.ec2.internal"};

uint32_t V4(uint8_t a, uint8_t b, uint8_t c, uint8_t d) {
  return (uint32_t{a} << 24) | (uint32_t{b} << 16) | (uint32_t{c} << 8) | d;
}

bool InV4(uint32_t address, uint32_t network, int prefix) {
  const uint32_t mask = prefix == 0 ? 0 : ~uint32_t{0} << (32 - prefix);
  return (address & mask) == (network & mask);
}

bool InV6(const Bytes& address, const Bytes& network, int prefix) {
  for (int bit = 0; bit < prefix; bit += 8) {
    const int bits = std::min(8, prefix - bit);
    const uint8_t mask = static_cast<uint8_t>(0xFF << (8 - bits));
    if ((address[bit / 8] & mask) != (network[bit / 8] & mask)) return false;
  }
  return true;
}

Bytes V6Bytes(std::initializer_list<uint16_t> groups) {
  Bytes bytes{};
  size_t i = 0;
  for (uint16_t group : groups) {
    bytes[i++] = static_cast<uint8_t>(group >> 8);
    bytes[i++] = static_cast<uint8_t>(group & 0xFF);
  }
  return bytes;
}

uint32_t V4At(const Bytes& bytes, size_t offset) {
  return V4(bytes[offset], bytes[offset + 1], bytes[offset + 2], bytes[offset + 3]);
}

// The IPv4 address an IPv6 address carries, for the forms that route to it.
std::optional<uint32_t> EmbeddedV4(const Bytes& bytes) {
  const bool first_ten_zero =
      std::all_of(bytes.begin(), bytes.begin() + 10, [](uint8_t b) { return b == 0; });
  if (first_ten_zero && bytes[10] == 0xFF && bytes[11] == 0xFF) return V4At(bytes, 12);  // mapped
  if (first_ten_zero && bytes[10] == 0 && bytes[11] == 0) {
    // IPv4-compatible (deprecated); :: and ::1 are themselves, not 0.0.0.0 and 0.0.0.1.
    const uint32_t v4 = V4At(bytes, 12);
    if (v4 > 1) return v4;
    return std::nullopt;
  }
  if (InV6(bytes, V6Bytes({0x64, 0xff9b}), 96)) return V4At(bytes, 12);  // NAT64
  if (bytes[0] == 0x20 && bytes[1] == 0x02) return V4At(bytes, 2);       // 6to4
  return std::nullopt;
}

bool IsMetadataV4(uint32_t v4) {
  return v4 == V4(169, 254, 169, 254) ||  // AWS, GCP, Azure, OpenStack, ...
         v4 == V4(169, 254, 170, 2) ||    // AWS ECS task metadata
         v4 == V4(168, 63, 129, 16) ||    // Azure wire server
         v4 == V4(100, 100, 100, 200);    // Alibaba Cloud
}

std::optional<std::string_view> ClassifyV4(uint32_t v4) {
  if (IsMetadataV4(v4)) return kMetadata;
  if (InV4(v4, V4(0, 0, 0, 0), 8)) return kUnspecified;
  if (InV4(v4, V4(127, 0, 0, 0), 8)) return kLoopback;
  if (InV4(v4, V4(10, 0, 0, 0), 8) || InV4(v4, V4(172, 16, 0, 0), 12) ||
      InV4(v4, V4(192, 168, 0, 0), 16)) {
    return kPrivate;
  }
  if (InV4(v4, V4(100, 64, 0, 0), 10)) return kShared;
  if (InV4(v4, V4(169, 254, 0, 0), 16)) return kLinkLocal;
  if (InV4(v4, V4(224, 0, 0, 0), 4)) return kMulticast;
  if (InV4(v4, V4(240, 0, 0, 0), 4) ||      // future use and 255.255.255.255
      InV4(v4, V4(192, 0, 0, 0), 24) ||     // IETF protocol assignments
      InV4(v4, V4(192, 0, 2, 0), 24) ||     // documentation
      InV4(v4, V4(198, 51, 100, 0), 24) ||  // documentation
      InV4(v4, V4(203, 0, 113, 0), 24) ||   // documentation
      InV4(v4, V4(198, 18, 0, 0), 15) ||    // benchmarking
      InV4(v4, V4(192, 88, 99, 0), 24)) {   // former 6to4 relays
    return kReserved;
  }
  return std::nullopt;
}

std::optional<std::string_view> ClassifyV6(const Bytes& bytes) {
  if (InV6(bytes, V6Bytes({0xfd00, 0x0ec2, 0, 0, 0, 0, 0, 0x0254}), 128)) return kMetadata;
  if (InV6(bytes, Bytes{}, 128)) return kUnspecified;
  if (InV6(bytes, V6Bytes({0, 0, 0, 0, 0, 0, 0, 1}), 128)) return kLoopback;
  if (std::optional<uint32_t> v4 = EmbeddedV4(bytes)) return ClassifyV4(*v4);
  if (InV6(bytes, V6Bytes({0xfc00}), 7) || InV6(bytes, V6Bytes({0xfec0}), 10) ||
      InV6(bytes, V6Bytes({0x64, 0xff9b, 1}), 48)) {
    return kPrivate;
  }
  if (InV6(bytes, V6Bytes({0xfe80}), 10)) return kLinkLocal;
  if (InV6(bytes, V6Bytes({0xff00}), 8)) return kMulticast;
  if (InV6(bytes, V6Bytes({0x2001, 0x0db8}), 32) ||  // documentation
      InV6(bytes, V6Bytes({0x2001, 0}), 32) ||       // Teredo
      InV6(bytes, V6Bytes({0x0100}), 64)) {          // discard
    return kReserved;
  }
  // Only 2000::/3 is allocated for global unicast; anything else is not a web server.
  if ((bytes[0] & 0xE0) != 0x20) return kReserved;
  return std::nullopt;
}

// The address as 16 bytes: IPv4 as IPv4-mapped IPv6, so that one network table holds both.
Bytes Normalised(const asio::ip::address& address) {
  if (address.is_v6()) return address.to_v6().to_bytes();
  const asio::ip::address_v4::bytes_type v4 = address.to_v4().to_bytes();
  Bytes bytes{};
  bytes[10] = 0xFF;
  bytes[11] = 0xFF;
  std::copy(v4.begin(), v4.end(), bytes.begin() + 12);
  return bytes;
}

std::string CanonicalName(std::string_view host) {
  std::string name = absl::AsciiStrToLower(AbslView(host));
  while (!name.empty() && name.back() == '.') name.pop_back();
  return name;
}

bool IsHostName(std::string_view name) {
  if (name.empty() || name.size() > 253) return false;
  size_t label = 0;
  for (char c : name) {
    if (c == '.') {
      if (label == 0) return false;
      label = 0;
      continue;
    }
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') return false;
    if (++label > 63) return false;
  }
  return label > 0;
}

std::optional<asio::ip::address> AddressLiteral(std::string_view text) {
  std::string literal(text);
  if (literal.size() >= 2 && literal.front() == '[' && literal.back() == ']') {
    literal = literal.substr(1, literal.size() - 2);
  }
  asio::error_code ec;
  asio::ip::address address = asio::ip::make_address(literal, ec);
  if (ec) return std::nullopt;
  return address;
}

}  // namespace

std::optional<std::string_view> RestrictedAddressKind(const asio::ip::address& address) {
  if (address.is_v4()) return ClassifyV4(address.to_v4().to_uint());
  return ClassifyV6(address.to_v6().to_bytes());
}

bool IsCloudMetadataAddress(const asio::ip::address& address) {
  return RestrictedAddressKind(address) == kMetadata;
}

absl::StatusOr<AddressPolicy> AddressPolicy::Create(const std::vector<std::string>& allow_hosts) {
  AddressPolicy policy;
  for (const std::string& entry : allow_hosts) {
    const std::string text = CanonicalName(std::string(absl::StripAsciiWhitespace(entry)));
    const absl::Status bad = absl::InvalidArgumentError(absl::StrCat(
        "allow_hosts entry \"", entry.substr(0, 100),
        "\" is not a host name, \"*.domain\", an IP address or a network such as 10.0.0.0/8"));
    if (absl::StartsWith(text, "*.")) {
      if (!IsHostName(text.substr(2))) return bad;
      policy.suffixes_.push_back(text.substr(1));
      continue;
    }
    if (const size_t slash = text.find('/'); slash != std::string::npos) {
      std::optional<asio::ip::address> network = AddressLiteral(text.substr(0, slash));
      int prefix = 0;
      if (!network.has_value() || !absl::SimpleAtoi(text.substr(slash + 1), &prefix)) return bad;
      const int bits = network->is_v4() ? 32 : 128;
      if (prefix < 0 || prefix > bits) return bad;
      policy.networks_.push_back(
          Network{.bytes = Normalised(*network), .prefix_length = prefix + (128 - bits)});
      continue;
    }
    if (std::optional<asio::ip::address> address = AddressLiteral(text)) {
      policy.networks_.push_back(Network{.bytes = Normalised(*address), .prefix_length = 128});
      continue;
    }
    if (!IsHostName(text)) return bad;
    policy.names_.push_back(text);
  }
  return policy;
}

absl::Status AddressPolicy::CheckName(std::string_view host) const {
  const std::string name = CanonicalName(host);
  for (std::string_view metadata : kMetadataNames) {
    if (name == metadata) {
      return absl::PermissionDeniedError(
          absl::StrCat("refused: ", name, " is a cloud metadata service"));
    }
  }
  return absl::OkStatus();
}

bool AddressPolicy::IsExempt(std::string_view host, const asio::ip::address& address) const {
  const std::string name = CanonicalName(host);
  for (const std::string& allowed : names_) {
    if (name == allowed) return true;
  }
  for (const std::string& suffix : suffixes_) {
    if (name.size() > suffix.size() && absl::EndsWith(name, suffix)) return true;
  }
  const Bytes bytes = Normalised(address);
  for (const Network& network : networks_) {
    if (InV6(bytes, network.bytes, network.prefix_length)) return true;
  }
  return false;
}

absl::Status AddressPolicy::Check(std::string_view host, const asio::ip::address& address) const {
  const std::optional<std::string_view> kind = RestrictedAddressKind(address);
  if (!kind.has_value()) return absl::OkStatus();
  if (*kind != kMetadata && IsExempt(host, address)) return absl::OkStatus();
  const bool literal = AddressLiteral(host).has_value();
  const std::string subject = literal ? absl::StrCat(address.to_string(), " is ")
                                      : absl::StrCat(CanonicalName(host), " resolves to ");
  return absl::PermissionDeniedError(
      absl::StrCat("refused: ", subject, AbslView(*kind),
                   *kind == kMetadata ? ""
                                      : "; Herald reaches only public addresses unless the "
                                        "operator allows the host"));
}

}  // namespace herald::skills::web
