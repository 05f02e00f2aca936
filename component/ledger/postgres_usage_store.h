// component/ledger/postgres_usage_store.h
//
// The usage ledger's store in the PostgreSQL database that several Herald instances share
// ([storage] backend = "postgresql"; docs/scale-out.md, docs/ledger.md has the schema). Every
// instance adds its calls to the same per-window totals (one atomic upsert of the four windows),
// reads the same limits and agrees on one page-token key, so a page token from one instance is
// good at any other. Names compare bytewise (COLLATE "C"), as in SQLite, whatever the
// database's locale.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "component/base/postgres_database.h"
#include "component/ledger/usage_store.h"

namespace herald::ledger {

class PostgresUsageStore : public UsageStore {
 public:
  // Brings the ledger's tables to this Herald's schema (base::ApplySchema) and keeps `db`.
  // `instance` (storage::InstanceRegistry's id) is recorded with each reservation, so that the
  // others release this instance's reservations if it dies; "" for none.
  static absl::StatusOr<std::unique_ptr<PostgresUsageStore>> Open(
      std::shared_ptr<base::PostgresDatabase> db, std::string instance = "");

  absl::StatusOr<std::string> PageTokenKey() override;
  absl::StatusOr<std::vector<Limit>> ReadLimits() override;
  absl::StatusOr<std::vector<WindowTokens>> ReadLatestWindows() override;
  absl::StatusOr<std::vector<WindowTokens>> ReadWindowsAt(absl::Time at) override;
  absl::Status Add(const UsageRecord& record, const PriceTable::Estimate& cost) override;
  absl::StatusOr<std::vector<UsageRow>> ReadPage(const PageRequest& request) override;
  absl::Status PutLimit(const Limit& limit) override;
  absl::StatusOr<bool> DeleteLimit(const std::string& jid, const std::string& model,
                                   Window window) override;
  bool shared() const override { return true; }
  absl::StatusOr<ReserveResult> Reserve(const ReserveRequest& request) override;
  absl::Status Settle(int64_t id, const UsageRecord& record,
                      const PriceTable::Estimate& cost) override;
  absl::Status Unreserve(int64_t id) override;

 private:
  PostgresUsageStore(std::shared_ptr<base::PostgresDatabase> db, std::string instance)
      : db_(std::move(db)), instance_(std::move(instance)) {}

  // Shared with the other stores of this instance; thread-safe.
  const std::shared_ptr<base::PostgresDatabase> db_;
  const std::string instance_;
  // When Reserve last deleted lapsed reservations (Unix milliseconds).
  std::atomic<int64_t> last_prune_ms_{0};
};

}  // namespace herald::ledger
