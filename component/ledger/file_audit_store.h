// component/ledger/file_audit_store.h
//
// The audit chain in two files on this host (the default AuditStore): <path>, the entries as
// JSON lines (mode 0600, O_APPEND, locked against a second process with flock), and
// <path>.head, replaced atomically after every batch, which records how many entries there
// are, where the last one ends and its hash. A batch is one write and one fdatasync, then the
// head. Open reads only the end of the log and mends what a crash leaves after the head
// (docs/ledger.md, "Open: continuing the chain, never repairing tampering").
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "component/ledger/audit_store.h"

namespace herald::ledger {

class FileAuditStore : public AuditStore {
 public:
  // Opens the log at `path` (creating it, its head and parent folders when missing) and
  // continues its chain; see AuditLog::Open for what is refused (DataLoss, FailedPrecondition)
  // and mended. What was mended is put in *recovered_note ("" when nothing), for AuditLog to
  // write as an "audit.recovered" entry.
  static absl::StatusOr<std::unique_ptr<FileAuditStore>> Open(const std::string& path,
                                                              std::string* recovered_note);
  ~FileAuditStore() override;
  FileAuditStore(const FileAuditStore&) = delete;
  FileAuditStore& operator=(const FileAuditStore&) = delete;

  // Checks a log that no process writes (AuditLog::Verify(path)): every entry, the chain, and
  // that the head matches the end. NotFound when neither file exists.
  static absl::StatusOr<AuditVerifyReport> VerifyFile(const std::string& path);

  absl::Status Write(const std::vector<AuditEntry>& batch, absl::Time now) override;
  // Up to the entry the head records when it starts, while Write goes on appending after it.
  absl::StatusOr<AuditVerifyReport> Verify() override;
  // audit_reader.h: the cursor is a byte offset.
  absl::StatusOr<AuditPage> ReadNewest(std::optional<uint64_t> before, size_t limit) override;
  const std::string& location() const override { return path_; }

 private:
  struct ChainState {
    uint64_t entries = 0;  // the last sequence number written
    uint64_t bytes = 0;    // the log's size
    std::string last_hash = std::string(kGenesisHash);
  };

  FileAuditStore(std::string path, int log_fd, int folder_fd, ChainState state);

  const std::string path_;
  const std::string head_path_;
  const int log_fd_;     // O_APPEND, locked with flock
  const int folder_fd_;  // for fsyncing the head's rename
  ChainState chain_;     // Write's alone
};

}  // namespace herald::ledger
