#include "skills/web/address_guard.h"

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace herald::skills::web {
namespace {

class AddressGuardTest : public ::testing::Test {
 protected:
  // A resolver answering from `names_` on the loop, counting its calls.
  HostResolver FakeResolver() {
    return [this](const std::string& host,
                  std::function<void(absl::StatusOr<ResolvedAddresses>)> done) {
      ++resolutions_;
      auto it = names_.find(host);
      absl::StatusOr<ResolvedAddresses> answer =
          it == names_.end() ? absl::StatusOr<ResolvedAddresses>(absl::NotFoundError(
                                   "the host " + host + " could not be resolved"))
                             : absl::StatusOr<ResolvedAddresses>(it->second);
      asio::post(io_, [done = std::move(done), answer = std::move(answer)]() { done(answer); });
    };
  }

  absl::StatusOr<asio::ip::address> Check(const AddressGuard& guard, const std::string& host) {
    std::optional<absl::StatusOr<asio::ip::address>> result;
    std::thread::id thread;
    guard.Check(host, [&](absl::StatusOr<asio::ip::address> address) {
      result = std::move(address);
      thread = std::this_thread::get_id();
    });
    EXPECT_FALSE(result.has_value()) << "answered inside Check";
    for (int i = 0; i < 500 && !result.has_value(); ++i) {
      io_.run_for(std::chrono::milliseconds(20));
      io_.restart();
    }
    EXPECT_EQ(thread, std::this_thread::get_id()) << "answered off the I/O loop";
    if (!result.has_value()) return absl::DeadlineExceededError("test: no answer");
    return *result;
  }

  AddressGuard Guard(std::vector<std::string> allow_hosts = {}) {
    absl::StatusOr<AddressPolicy> policy = AddressPolicy::Create(allow_hosts);
    EXPECT_TRUE(policy.ok()) << policy.status();
    return AddressGuard(io_, *std::move(policy), FakeResolver());
  }

  static asio::ip::address Ip(const char* text) { return asio::ip::make_address(text); }

  asio::io_context io_;
  std::map<std::string, ResolvedAddresses> names_;
  int resolutions_ = 0;
};

TEST_F(AddressGuardTest, PinsTheFirstIpv4AddressOfAPublicName) {
  names_["example.org"] = {Ip("2606:2800:21f:cb07:6820:80da:af6b:8b2c"), Ip("93.184.215.14"),
                           Ip("93.184.215.15")};
  absl::StatusOr<asio::ip::address> pinned = Check(Guard(), "example.org");
  ASSERT_TRUE(pinned.ok()) << pinned.status();
  EXPECT_EQ(*pinned, Ip("93.184.215.14"));
}

TEST_F(AddressGuardTest, PinsAnIpv6AddressWhenThereIsNoIpv4One) {
  names_["v6.example"] = {Ip("2606:4700:4700::1111")};
  absl::StatusOr<asio::ip::address> pinned = Check(Guard(), "v6.example");
  ASSERT_TRUE(pinned.ok()) << pinned.status();
  EXPECT_EQ(*pinned, Ip("2606:4700:4700::1111"));
}

TEST_F(AddressGuardTest, RefusesANameWhenAnyOfItsAddressesIsForbidden) {
  names_["mixed.example"] = {Ip("93.184.215.14"), Ip("10.0.0.5")};
  absl::StatusOr<asio::ip::address> pinned = Check(Guard(), "mixed.example");
  EXPECT_EQ(pinned.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(pinned.status().message(),
            "refused: mixed.example resolves to a private address; Herald reaches only "
            "public addresses unless the operator allows the host");
}

TEST_F(AddressGuardTest, RefusesAMetadataNameWithoutResolvingIt) {
  names_["metadata.google.internal"] = {Ip("93.184.215.14")};  // even if DNS lied
  absl::StatusOr<asio::ip::address> pinned = Check(Guard(), "metadata.google.internal");
  EXPECT_EQ(pinned.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(resolutions_, 0);
}

TEST_F(AddressGuardTest, ChecksAnAddressLiteralWithoutResolvingIt) {
  EXPECT_EQ(Check(Guard(), "10.0.0.5").status().message(),
            "refused: 10.0.0.5 is a private address; Herald reaches only public addresses "
            "unless the operator allows the host");
  EXPECT_EQ(Check(Guard(), "::ffff:169.254.169.254").status().message(),
            "refused: ::ffff:169.254.169.254 is a cloud metadata address");
  absl::StatusOr<asio::ip::address> pinned = Check(Guard(), "8.8.8.8");
  ASSERT_TRUE(pinned.ok());
  EXPECT_EQ(*pinned, Ip("8.8.8.8"));
  EXPECT_EQ(resolutions_, 0);
}

TEST_F(AddressGuardTest, LetsAnAllowedHostResolveToAPrivateAddress) {
  names_["wiki.corp.example"] = {Ip("10.20.30.40")};
  absl::StatusOr<asio::ip::address> pinned =
      Check(Guard({"wiki.corp.example"}), "wiki.corp.example");
  ASSERT_TRUE(pinned.ok()) << pinned.status();
  EXPECT_EQ(*pinned, Ip("10.20.30.40"));
}

TEST_F(AddressGuardTest, ReportsANameThatDoesNotResolve) {
  absl::StatusOr<asio::ip::address> pinned = Check(Guard(), "nowhere.example");
  EXPECT_EQ(pinned.status().code(), absl::StatusCode::kNotFound);
}

// The system resolver reads numbers the way inet_aton does; the guard judges the address
// they stand for, whatever way the URL wrote it.
TEST_F(AddressGuardTest, SeesThroughNumericDisguisesOfLoopbackWithTheSystemResolver) {
  absl::StatusOr<AddressPolicy> policy = AddressPolicy::Create({});
  ASSERT_TRUE(policy.ok());
  AddressGuard guard(io_, *policy, SystemResolver(io_));
  for (const char* host : {"2130706433", "127.1", "localhost"}) {
    absl::StatusOr<asio::ip::address> pinned = Check(guard, host);
    EXPECT_EQ(pinned.status().code(), absl::StatusCode::kPermissionDenied)
        << host << ": " << pinned.status();
    EXPECT_TRUE(absl::StrContains(pinned.status().message(), "loopback")) << pinned.status();
  }
  EXPECT_FALSE(Check(guard, "0x7f.0.0.1").ok());
}

}  // namespace
}  // namespace herald::skills::web
