#include "skills/web/address_guard.h"

#include <algorithm>
#include <memory>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace herald::skills::web {

HostResolver SystemResolver(asio::io_context& io) {
  return [&io](const std::string& host,
               std::function<void(absl::StatusOr<ResolvedAddresses>)> done) {
    auto resolver = std::make_shared<asio::ip::tcp::resolver>(io);
    // No AI_ADDRCONFIG (Asio's default): every address the name has is checked, not only
    // those of the families this host happens to have configured.
    resolver->async_resolve(
        host, "80", asio::ip::resolver_base::numeric_service,
        [resolver, host, done = std::move(done)](const asio::error_code& ec,
                                                 asio::ip::tcp::resolver::results_type results) {
          ResolvedAddresses addresses;
          if (!ec) {
            for (const auto& entry : results) {
              const asio::ip::address address = entry.endpoint().address();
              if (std::find(addresses.begin(), addresses.end(), address) == addresses.end()) {
                addresses.push_back(address);
              }
            }
          }
          if (addresses.empty()) {
            done(absl::NotFoundError(absl::StrCat("the host ", host, " could not be resolved")));
            return;
          }
          done(std::move(addresses));
        });
  };
}

AddressGuard::AddressGuard(asio::io_context& io, AddressPolicy policy, HostResolver resolver)
    : io_(io), policy_(std::move(policy)), resolver_(std::move(resolver)) {}

namespace {

absl::StatusOr<asio::ip::address> Decide(const AddressPolicy& policy, const std::string& host,
                                         const ResolvedAddresses& addresses) {
  if (addresses.empty()) {
    return absl::NotFoundError(absl::StrCat("the host ", host, " could not be resolved"));
  }
  for (const asio::ip::address& address : addresses) {
    if (absl::Status status = policy.Check(host, address); !status.ok()) return status;
  }
  const auto v4 = std::find_if(addresses.begin(), addresses.end(),
                               [](const asio::ip::address& a) { return a.is_v4(); });
  return v4 != addresses.end() ? *v4 : addresses.front();
}

}  // namespace

void AddressGuard::Check(const std::string& host, Done done) const {
  if (absl::Status named = policy_.CheckName(host); !named.ok()) {
    asio::post(io_, [done = std::move(done), named]() { done(named); });
    return;
  }
  asio::error_code ec;
  const asio::ip::address literal = asio::ip::make_address(host, ec);
  if (!ec) {
    absl::StatusOr<asio::ip::address> decided = Decide(policy_, host, {literal});
    asio::post(io_, [done = std::move(done), decided = std::move(decided)]() { done(decided); });
    return;
  }
  resolver_(host,
            [this, host, done = std::move(done)](absl::StatusOr<ResolvedAddresses> addresses) {
              if (!addresses.ok()) {
                done(addresses.status());
                return;
              }
              done(Decide(policy_, host, *addresses));
            });
}

}  // namespace herald::skills::web
