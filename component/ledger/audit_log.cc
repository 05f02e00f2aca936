#include "component/ledger/audit_log.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "component/ledger/file_audit_store.h"
#include "glog/logging.h"

namespace herald::ledger {
namespace {

constexpr size_t kMaxPending = 65536;
constexpr size_t kMaxBatch = 1024;
// How long the writer lets entries gather after the first before writing them: one write, two
// syncs and a rename (or one transaction) serve every call of those milliseconds (a Flush
// that comes meanwhile waits for the rest of it).
constexpr absl::Duration kBatchLinger = absl::Milliseconds(5);
constexpr absl::Duration kRetryAfterFailure = absl::Seconds(1);

}  // namespace

absl::StatusOr<std::unique_ptr<AuditLog>> AuditLog::Open(const std::string& path) {
  std::string recovered;
  absl::StatusOr<std::unique_ptr<FileAuditStore>> store = FileAuditStore::Open(path, &recovered);
  if (!store.ok()) return store.status();
  std::unique_ptr<AuditLog> log = Open(*std::move(store));
  if (!recovered.empty()) {
    log->Append(AuditEntry{.time = absl::Now(),
                           .actor = "herald",
                           .action = "audit.recovered",
                           .outcome = "OK",
                           .detail = recovered});
  }
  return log;
}

std::unique_ptr<AuditLog> AuditLog::Open(std::unique_ptr<AuditStore> store) {
  return std::unique_ptr<AuditLog>(new AuditLog(std::move(store)));
}

absl::StatusOr<AuditVerifyReport> AuditLog::Verify(const std::string& path) {
  return FileAuditStore::VerifyFile(path);
}

AuditLog::AuditLog(std::unique_ptr<AuditStore> store) : store_(std::move(store)) {
  writer_ = std::thread([this] { WriterLoop(); });
}

AuditLog::~AuditLog() {
  {
    base::MutexLock lock(&mu_);
    stopping_ = true;
  }
  writer_.join();
  base::MutexLock lock(&mu_);
  if (!pending_.empty()) {
    LOG(ERROR) << "audit log " << store_->location() << ": " << pending_.size()
               << " entries could not be written before stopping: " << last_error_;
  }
}

void AuditLog::Append(AuditEntry entry) {
  if (entry.time == absl::Time()) entry.time = absl::Now();
  base::MutexLock lock(&mu_);
  if (pending_.size() >= kMaxPending) {
    ++dropped_;
    return;
  }
  pending_.push_back(std::move(entry));
  ++appended_;
}

absl::Status AuditLog::Flush() { return FlushPending(); }

absl::Status AuditLog::FlushPending() const {
  base::MutexLock lock(&mu_);
  const uint64_t target = appended_;
  const uint64_t failures = failures_;
  const auto written_or_failed = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return durable_ >= target || failures_ != failures;
  };
  ++flush_waiters_;  // the writer stops lingering
  mu_.Await(written_or_failed);
  --flush_waiters_;
  return durable_ >= target ? absl::OkStatus() : last_error_;
}

absl::StatusOr<AuditVerifyReport> AuditLog::Verify() const {
  if (absl::Status s = FlushPending(); !s.ok()) return s;
  return store_->Verify();
}

absl::StatusOr<AuditPage> AuditLog::ReadNewest(std::optional<uint64_t> before, size_t limit) const {
  return store_->ReadNewest(before, limit);
}

bool AuditLog::WriterHasWork() const { return stopping_ || !pending_.empty() || dropped_ > 0; }

void AuditLog::WriterLoop() {
  for (;;) {
    // One batch: everything queued (up to kMaxBatch), written with one write and one sync.
    std::vector<AuditEntry> batch;
    uint64_t dropped = 0;
    size_t taken = 0;
    bool linger = false;
    {
      base::MutexLock lock(&mu_);
      mu_.Await([this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return WriterHasWork(); });
      linger = !stopping_ && flush_waiters_ == 0 && pending_.size() < kMaxBatch;
    }
    // Asleep, not waiting on mu_: a waiter on mu_ would be woken by every Append.
    if (linger) std::this_thread::sleep_for(absl::ToChronoNanoseconds(kBatchLinger));
    {
      base::MutexLock lock(&mu_);
      if (pending_.empty() && dropped_ == 0) return;  // stopping, and all written
      dropped = std::exchange(dropped_, 0);
      if (dropped > 0) {
        batch.push_back(AuditEntry{
            .time = absl::Now(),
            .actor = "herald",
            .action = "audit.dropped",
            .outcome = "RESOURCE_EXHAUSTED",
            .detail =
                absl::StrCat(dropped, " entries were dropped while the log could not be written")});
      }
      taken = std::min(pending_.size(), kMaxBatch);
      batch.reserve(batch.size() + taken);
      for (size_t i = 0; i < taken; ++i) {
        batch.push_back(std::move(pending_.front()));
        pending_.pop_front();
      }
    }
    const absl::Status status = store_->Write(batch, absl::Now());
    base::MutexLock lock(&mu_);
    if (status.ok()) {
      durable_ += taken;  // wakes Flush (mu_'s waiters re-check their conditions on unlock)
      continue;
    }
    // Keep the entries, in order, for the next attempt.
    for (size_t i = 0; i < taken; ++i) pending_.push_front(std::move(batch[batch.size() - 1 - i]));
    dropped_ += dropped;
    last_error_ = status;
    ++failures_;
    LOG(ERROR) << "audit log " << store_->location() << ": cannot write " << taken
               << " entries: " << status;
    if (stopping_) return;
    mu_.AwaitWithTimeout([this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stopping_; },
                         kRetryAfterFailure);
  }
}

}  // namespace herald::ledger
