#include "skills/web/address_policy.h"

#include <optional>
#include <string>
#include <string_view>

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace herald::skills::web {
namespace {

asio::ip::address Address(const std::string& text) { return asio::ip::make_address(text); }

struct Case {
  const char* address;
  const char* kind;  // nullptr: public
};

// Every range the guard refuses, its edges, IPv4-embedding IPv6 forms of them, and public
// neighbours that must stay reachable.
constexpr Case kCases[] = {
    {"0.0.0.0", "an unspecified address"},
    {"0.255.255.255", "an unspecified address"},
    {"127.0.0.1", "a loopback address"},
    {"127.255.255.254", "a loopback address"},
    {"10.0.0.5", "a private address"},
    {"10.255.255.255", "a private address"},
    {"172.16.0.1", "a private address"},
    {"172.31.255.255", "a private address"},
    {"172.32.0.1", nullptr},
    {"172.15.255.255", nullptr},
    {"192.168.1.1", "a private address"},
    {"192.169.0.1", nullptr},
    {"100.64.0.1", "a shared (carrier-grade NAT) address"},
    {"100.127.255.255", "a shared (carrier-grade NAT) address"},
    {"100.128.0.1", nullptr},
    {"100.63.255.255", nullptr},
    {"169.254.0.1", "a link-local address"},
    {"169.254.169.254", "a cloud metadata address"},
    {"169.254.170.2", "a cloud metadata address"},
    {"168.63.129.16", "a cloud metadata address"},
    {"100.100.100.200", "a cloud metadata address"},
    {"224.0.0.1", "a multicast address"},
    {"239.255.255.250", "a multicast address"},
    {"240.0.0.1", "a reserved address"},
    {"255.255.255.255", "a reserved address"},
    {"192.0.2.1", "a reserved address"},
    {"198.51.100.7", "a reserved address"},
    {"203.0.113.9", "a reserved address"},
    {"198.18.0.1", "a reserved address"},
    {"8.8.8.8", nullptr},
    {"93.184.215.14", nullptr},
    {"1.1.1.1", nullptr},
    {"::", "an unspecified address"},
    {"::1", "a loopback address"},
    {"fc00::1", "a private address"},
    {"fd12:3456::1", "a private address"},
    {"fd00:ec2::254", "a cloud metadata address"},
    {"fec0::1", "a private address"},
    {"fe80::1", "a link-local address"},
    {"febf::1", "a link-local address"},
    {"ff02::1", "a multicast address"},
    {"2001:db8::1", "a reserved address"},
    {"2001:0:4136:e378:8000:63bf:3fff:fdd2", "a reserved address"},  // Teredo
    {"100::1", "a reserved address"},
    {"64:ff9b:1::1", "a private address"},
    {"4000::1", "a reserved address"},
    {"2606:4700:4700::1111", nullptr},
    {"2a00:1450:4001:81c::200e", nullptr},
    // IPv4 inside IPv6: judged by the IPv4 address.
    {"::ffff:127.0.0.1", "a loopback address"},
    {"::ffff:10.0.0.5", "a private address"},
    {"::ffff:169.254.169.254", "a cloud metadata address"},
    {"::ffff:100.64.0.1", "a shared (carrier-grade NAT) address"},
    {"::ffff:0.0.0.0", "an unspecified address"},
    {"::ffff:224.0.0.1", "a multicast address"},
    {"::ffff:8.8.8.8", nullptr},
    {"::127.0.0.1", "a loopback address"},
    {"::10.0.0.5", "a private address"},
    {"64:ff9b::a00:5", "a private address"},            // NAT64 of 10.0.0.5
    {"64:ff9b::808:808", nullptr},                      // NAT64 of 8.8.8.8
    {"2002:7f00:1::1", "a loopback address"},           // 6to4 of 127.0.0.1
    {"2002:a9fe:a9fe::1", "a cloud metadata address"},  // 6to4 of 169.254.169.254
    {"2002:808:808::1", nullptr},                       // 6to4 of 8.8.8.8
};

TEST(AddressPolicyTest, ClassifiesEveryRangeTheGuardRefuses) {
  for (const Case& c : kCases) {
    const std::optional<std::string_view> kind = RestrictedAddressKind(Address(c.address));
    if (c.kind == nullptr) {
      EXPECT_FALSE(kind.has_value()) << c.address << " is " << *kind;
    } else {
      ASSERT_TRUE(kind.has_value()) << c.address << " passed";
      EXPECT_EQ(*kind, c.kind) << c.address;
    }
  }
}

TEST(AddressPolicyTest, NamesALiteralAddressInItsRefusal) {
  absl::StatusOr<AddressPolicy> policy = AddressPolicy::Create({});
  ASSERT_TRUE(policy.ok());
  absl::Status status = policy->Check("10.0.0.5", Address("10.0.0.5"));
  EXPECT_EQ(status.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_TRUE(absl::StartsWith(status.message(), "refused: 10.0.0.5 is a private address"))
      << status.message();
}

TEST(AddressPolicyTest, DoesNotRevealWhatANameResolvesTo) {
  absl::StatusOr<AddressPolicy> policy = AddressPolicy::Create({});
  ASSERT_TRUE(policy.ok());
  absl::Status status = policy->Check("intranet.example", Address("10.1.2.3"));
  EXPECT_EQ(status.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_TRUE(
      absl::StartsWith(status.message(), "refused: intranet.example resolves to a private address"))
      << status.message();
  EXPECT_FALSE(absl::StrContains(status.message(), "10.1.2.3"));
}

TEST(AddressPolicyTest, LetsPublicAddressesThrough) {
  absl::StatusOr<AddressPolicy> policy = AddressPolicy::Create({});
  ASSERT_TRUE(policy.ok());
  EXPECT_TRUE(policy->Check("example.org", Address("93.184.215.14")).ok());
  EXPECT_TRUE(policy->Check("example.org", Address("2606:2800:21f:cb07:6820:80da:af6b:8b2c")).ok());
}

TEST(AddressPolicyTest, ExemptsAllowedNamesDomainsAddressesAndNetworks) {
  absl::StatusOr<AddressPolicy> policy =
      AddressPolicy::Create({"wiki.corp.example", "*.lan.example", "127.0.0.1", "10.1.0.0/16",
                             "fd12::/16", "Printer.Example."});
  ASSERT_TRUE(policy.ok()) << policy.status();
  EXPECT_TRUE(policy->Check("wiki.corp.example", Address("10.9.9.9")).ok());
  EXPECT_TRUE(policy->Check("nas.lan.example", Address("192.168.1.2")).ok());
  EXPECT_FALSE(policy->Check("lan.example", Address("192.168.1.2")).ok());  // "*." is below
  EXPECT_TRUE(policy->Check("127.0.0.1", Address("127.0.0.1")).ok());
  EXPECT_TRUE(policy->Check("anything.example", Address("::ffff:127.0.0.1")).ok());
  EXPECT_FALSE(policy->Check("127.0.0.2", Address("127.0.0.2")).ok());
  EXPECT_TRUE(policy->Check("10.1.200.3", Address("10.1.200.3")).ok());
  EXPECT_FALSE(policy->Check("10.2.0.1", Address("10.2.0.1")).ok());
  EXPECT_TRUE(policy->Check("fd12:abcd::1", Address("fd12:abcd::1")).ok());
  EXPECT_TRUE(policy->Check("printer.example", Address("192.168.7.7")).ok());
  EXPECT_FALSE(policy->Check("other.corp.example", Address("10.9.9.9")).ok());
}

TEST(AddressPolicyTest, NeverExemptsCloudMetadata) {
  absl::StatusOr<AddressPolicy> policy =
      AddressPolicy::Create({"169.254.0.0/16", "metadata.google.internal", "0.0.0.0/0"});
  ASSERT_TRUE(policy.ok());
  absl::Status status = policy->Check("169.254.169.254", Address("169.254.169.254"));
  EXPECT_EQ(status.message(), "refused: 169.254.169.254 is a cloud metadata address");
  EXPECT_FALSE(policy->Check("metadata.google.internal", Address("169.254.169.254")).ok());
  EXPECT_EQ(policy->CheckName("metadata.google.internal").code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_TRUE(policy->Check("link.local", Address("169.254.1.1")).ok());
}

TEST(AddressPolicyTest, RefusesMetadataNamesBeforeResolvingThem) {
  absl::StatusOr<AddressPolicy> policy = AddressPolicy::Create({});
  ASSERT_TRUE(policy.ok());
  for (const char* name : {"metadata.google.internal", "METADATA.google.internal.", "metadata",
                           "instance-data.ec2.internal"}) {
    EXPECT_EQ(policy->CheckName(name).code(), absl::StatusCode::kPermissionDenied) << name;
  }
  EXPECT_TRUE(policy->CheckName("metadata.example.org").ok());
}

TEST(AddressPolicyTest, RefusesMalformedAllowEntries) {
  for (const char* entry : {"", "not a host", "10.0.0.0/33", "fd00::/129", "10.0.0.0/x", "*.",
                            "http://wiki.lan/", "a..b"}) {
    absl::StatusOr<AddressPolicy> policy = AddressPolicy::Create({entry});
    EXPECT_EQ(policy.status().code(), absl::StatusCode::kInvalidArgument) << entry;
  }
}

}  // namespace
}  // namespace herald::skills::web
