// component/ledger/audit_store.h
//
// Where an AuditLog keeps its hash chain (audit_format.h): one file on this host with its head
// file (FileAuditStore, the default), or the PostgreSQL database that several instances of
// one component domain share, where every instance continues the same chain
// (PostgresAuditStore; docs/scale-out.md). AuditLog queues entries and batches them; a store
// only chains, keeps, checks and reads.
//
// Threads: Write is called by one thread at a time (AuditLog's writer); Verify and ReadNewest
// may run at the same time as a Write. Every call blocks on I/O: worker threads only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "component/ledger/audit_format.h"
#include "component/ledger/audit_reader.h"

namespace herald::ledger {

struct AuditVerifyReport {
  // Entries checked and found good: all of them when ok, those before the problem otherwise.
  uint64_t entries = 0;
  bool ok = true;
  // 1-based position of the first entry the problem concerns (the first missing one when the
  // end was cut off); 0 when the problem is the head alone.
  uint64_t first_bad_entry = 0;
  std::string problem;  // what is wrong, for a person; "" when ok
  // Valid, chained entries after those the head records (then ok is false): a batch written
  // just before a crash, before its head was replaced — Open records them in the head, and in
  // the log as "audit.recovered" — or a head moved back.
  uint64_t entries_after_head = 0;
};

class AuditStore {
 public:
  virtual ~AuditStore() = default;

  // Chains `batch` after the last entry (entries made canonical with `now`) and makes it
  // durable, all or none.
  virtual absl::Status Write(const std::vector<AuditEntry>& batch, absl::Time now) = 0;

  // Checks every entry and the chain up to the end its head records when the call starts.
  // The status is an error only when the store cannot be read.
  virtual absl::StatusOr<AuditVerifyReport> Verify() = 0;

  // Up to `limit` (at least 1) entries before the cursor `before` (nullopt: from the newest),
  // newest first; AuditPage::older is the cursor of the next page (0: nothing older). A
  // cursor is the store's own (a byte offset in the file, a sequence number in the
  // database): one that does not point into this store is InvalidArgument.
  virtual absl::StatusOr<AuditPage> ReadNewest(std::optional<uint64_t> before, size_t limit) = 0;

  // Where the chain is, for people and for audit entries' targets: the file's path, or
  // "postgresql".
  virtual const std::string& location() const = 0;
};

}  // namespace herald::ledger
