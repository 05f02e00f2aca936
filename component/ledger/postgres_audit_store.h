// component/ledger/postgres_audit_store.h
//
// The audit chain in the PostgreSQL database that several Herald instances share ([storage]
// backend = "postgresql"; docs/scale-out.md, docs/ledger.md has the schema): one chain for
// every instance, so that `heraldctl audit verify` against any of them checks everything any
// of them did. Each entry is stored as the exact line audit_format.h encodes, under its
// sequence number; a one-row head holds the count and the last hash. A batch is one
// transaction that locks the head row, chains the entries after the last one (whichever
// instance wrote it), inserts them and moves the head, with synchronous_commit on.
//
// As with the file, the chain finds a changed, removed, inserted or reordered entry, and the
// head finds entries cut off the end; someone who may write the database can rewrite the
// whole chain and its head together, as someone who may write the file can.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "component/base/postgres_database.h"
#include "component/ledger/audit_store.h"

namespace herald::ledger {

class PostgresAuditStore : public AuditStore {
 public:
  // Brings the audit tables to this Herald's schema (base::ApplySchema) and checks that the
  // head and the last entry agree (DataLoss otherwise: run `heraldctl audit verify`).
  static absl::StatusOr<std::unique_ptr<PostgresAuditStore>> Open(
      std::shared_ptr<base::PostgresDatabase> db);

  absl::Status Write(const std::vector<AuditEntry>& batch, absl::Time now) override;
  absl::StatusOr<AuditVerifyReport> Verify() override;
  absl::StatusOr<AuditPage> ReadNewest(std::optional<uint64_t> before, size_t limit) override;
  const std::string& location() const override { return location_; }

 private:
  explicit PostgresAuditStore(std::shared_ptr<base::PostgresDatabase> db) : db_(std::move(db)) {}

  // Shared with the other stores of this instance; thread-safe.
  const std::shared_ptr<base::PostgresDatabase> db_;
  const std::string location_ = "postgresql";
};

}  // namespace herald::ledger
