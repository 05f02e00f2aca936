// component/ledger/audit_log.h
//
// AuditLog is Herald's append-only, hash-chained record of who did what (SPEC Q3): every gRPC
// call, every admin chat command. Each entry carries the SHA-256 of the one before, so a
// changed, removed, inserted or reordered entry breaks the chain; a small head file, replaced
// atomically after every batch, records how many entries there were and the last hash, so
// that cutting entries off the end is found too. Verify reads everything back and says where
// the first problem is. The format is in audit_format.h and docs/ledger.md.
//
// Where the chain is kept is an AuditStore (audit_store.h): by default the files <path> (JSON
// lines, mode 0600) and <path>.head (FileAuditStore), where every byte of both belongs to a
// hashed entry or to the head, so changing any single byte is detected; or the PostgreSQL
// database several instances share, where they all continue one chain (PostgresAuditStore).
//
// Threads: Append is thread-safe and cheap — it queues the entry; a writer thread encodes and
// writes batches (group commit: what arrives within 5 ms of the first entry, one fdatasync
// per batch, then the head), so an entry is durable a few milliseconds after Append. Flush
// waits until everything appended so far is durable (at once when no batch is gathering). Open,
// Flush, Verify and ReadNewest block: call them from a worker thread.
//
//   auto audit = AuditLog::Open("./data/audit.log");
//   (*audit)->Append({.time = absl::Now(), .actor = "ops",
//                     .action = "/herald.v1.SessionService/ListSessions", .outcome = "OK"});
//   absl::StatusOr<AuditVerifyReport> report = (*audit)->Verify();   // report->ok
//   absl::StatusOr<AuditVerifyReport> offline = AuditLog::Verify("./data/audit.log");
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "component/base/mutex.h"
#include "component/ledger/audit_format.h"
#include "component/ledger/audit_store.h"

namespace herald::ledger {

class AuditLog {
 public:
  // Opens the log at `path` (creating it, its head and parent folders when missing) and
  // continues its chain. Open reads only the end of the log: it checks that the head and the
  // entry it names agree, and takes any chained entries after it. It never repairs
  // tampering: when the head is missing or does not match the log, or a complete line after
  // it is not a valid entry, Open fails with DataLoss (run Verify; move both files aside to
  // start a new log). What it mends is what a crash leaves after the entries the head
  // records: valid chained entries (it records them in the head) and a last line cut short,
  // with no newline (it removes it) — each time saying so in the log itself, in an entry by
  // "herald" with action "audit.recovered". A log another process has open is refused
  // (FailedPrecondition).
  static absl::StatusOr<std::unique_ptr<AuditLog>> Open(const std::string& path);
  // The same over any store (a PostgresAuditStore: one chain for several instances).
  static std::unique_ptr<AuditLog> Open(std::unique_ptr<AuditStore> store);
  // Writes what is still queued (one attempt), then stops the writer thread.
  ~AuditLog() ABSL_LOCKS_EXCLUDED(mu_);
  AuditLog(const AuditLog&) = delete;
  AuditLog& operator=(const AuditLog&) = delete;

  // Queues the entry; never blocks on I/O. See AuditEntry for the fields; the stored entry is
  // CanonicalAuditEntry(entry). While the log cannot be written (disk full), at most 65536
  // entries wait; further ones are dropped and counted, and the count is written as an entry
  // ("audit.dropped") as soon as writing works again.
  void Append(AuditEntry entry) ABSL_LOCKS_EXCLUDED(mu_);

  // Returns once everything appended before the call is durable (written, fdatasynced, and
  // the head replaced), or with the error that prevents it.
  absl::Status Flush() ABSL_LOCKS_EXCLUDED(mu_);

  // Reads the log and its head in full and checks every entry and the chain; a changed,
  // removed, inserted or reordered entry, entries cut off the end, and a changed head are all
  // reported, with the position of the first bad entry. The status is an error only when the
  // files cannot be read (NotFound when neither exists). Streams the file: memory stays
  // small however long the log. Run on a log a live process is writing, it may see a batch
  // half-written; use the process's own Verify() then.
  static absl::StatusOr<AuditVerifyReport> Verify(const std::string& path);
  // Flushes first, then checks the log up to the entry its head records at that moment (all
  // that was appended before the call) while the writer goes on appending after it.
  absl::StatusOr<AuditVerifyReport> Verify() const ABSL_LOCKS_EXCLUDED(mu_);

  // A page of entries, newest first (AuditStore::ReadNewest): for ListAuditEntries.
  absl::StatusOr<AuditPage> ReadNewest(std::optional<uint64_t> before, size_t limit) const;

  // The file's path, or "postgresql".
  const std::string& location() const { return store_->location(); }

 private:
  explicit AuditLog(std::unique_ptr<AuditStore> store);

  void WriterLoop() ABSL_LOCKS_EXCLUDED(mu_);
  // What the writer waits for: something to write, or the order to stop.
  bool WriterHasWork() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status FlushPending() const ABSL_LOCKS_EXCLUDED(mu_);

  // Written by the writer thread alone (without mu_: Append goes on queueing while a batch
  // is written); read by Verify and ReadNewest on any thread.
  const std::unique_ptr<AuditStore> store_;

  // The queue between Append and the writer. The writer waits on mu_ for WriterHasWork();
  // Flush waits on it for durable_ to reach what was appended (or for a failed write).
  mutable base::Mutex mu_;
  std::deque<AuditEntry> pending_ ABSL_GUARDED_BY(mu_);
  uint64_t appended_ ABSL_GUARDED_BY(mu_) = 0;    // entries accepted
  uint64_t durable_ ABSL_GUARDED_BY(mu_) = 0;     // of those, durable
  uint64_t dropped_ ABSL_GUARDED_BY(mu_) = 0;     // refused since the last write
  uint64_t failures_ ABSL_GUARDED_BY(mu_) = 0;    // failed batch writes so far
  absl::Status last_error_ ABSL_GUARDED_BY(mu_);  // of the last failed write
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  mutable int flush_waiters_ ABSL_GUARDED_BY(mu_) = 0;  // in FlushPending now
  std::thread writer_;
};

}  // namespace herald::ledger
