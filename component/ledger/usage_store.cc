#include "component/ledger/usage_store.h"

namespace herald::ledger {

std::string_view LimitModeName(LimitMode mode) {
  return mode == LimitMode::kWarn ? "warn" : "block";
}

std::optional<LimitMode> ParseLimitMode(std::string_view name) {
  if (name == "block") return LimitMode::kBlock;
  if (name == "warn") return LimitMode::kWarn;
  return std::nullopt;
}

absl::StatusOr<UsageStore::ReserveResult> UsageStore::Reserve(const ReserveRequest&) {
  return absl::UnimplementedError("this usage store is not shared: it keeps no reservations");
}

absl::Status UsageStore::Settle(int64_t, const UsageRecord&, const PriceTable::Estimate&) {
  return absl::UnimplementedError("this usage store is not shared: it keeps no reservations");
}

absl::Status UsageStore::Unreserve(int64_t) {
  return absl::UnimplementedError("this usage store is not shared: it keeps no reservations");
}

}  // namespace herald::ledger
