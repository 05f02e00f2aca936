// component/ledger/sqlite_usage_store.h
//
// The usage ledger's store in one SQLite file on this host, in WAL mode (the default store;
// docs/ledger.md has the schema). A commit of usage is one sequential append, not fsynced
// (checkpoints are): a power cut can lose the last moments of usage, never corrupt the file.
// Limits, an operator's changes, are fsynced before PutLimit and DeleteLimit return.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "component/base/mutex.h"
#include "component/base/sqlite_database.h"
#include "component/ledger/usage_store.h"

namespace herald::ledger {

class SqliteUsageStore : public UsageStore {
 public:
  // Opens or creates the database at `path` (parent folders 0700, the file and its WAL 0600).
  // Fails on a file that is not a ledger, or one written by a newer Herald (FailedPrecondition).
  static absl::StatusOr<std::unique_ptr<SqliteUsageStore>> Open(const std::string& path);

  absl::StatusOr<std::string> PageTokenKey() override ABSL_LOCKS_EXCLUDED(mu_);
  absl::StatusOr<std::vector<Limit>> ReadLimits() override ABSL_LOCKS_EXCLUDED(mu_);
  absl::StatusOr<std::vector<WindowTokens>> ReadLatestWindows() override ABSL_LOCKS_EXCLUDED(mu_);
  absl::StatusOr<std::vector<WindowTokens>> ReadWindowsAt(absl::Time at) override
      ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status Add(const UsageRecord& record, const PriceTable::Estimate& cost) override
      ABSL_LOCKS_EXCLUDED(mu_);
  absl::StatusOr<std::vector<UsageRow>> ReadPage(const PageRequest& request) override
      ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status PutLimit(const Limit& limit) override ABSL_LOCKS_EXCLUDED(mu_);
  absl::StatusOr<bool> DeleteLimit(const std::string& jid, const std::string& model,
                                   Window window) override ABSL_LOCKS_EXCLUDED(mu_);

 private:
  explicit SqliteUsageStore(std::unique_ptr<base::SqliteDatabase> db) : db_(std::move(db)) {}

  absl::Status PrepareStatements() ABSL_LOCKS_EXCLUDED(mu_);
  // The rows of a (window, jid, model, window_start, tokens) query.
  absl::StatusOr<std::vector<WindowTokens>> ReadWindowTokens(base::SqliteStatement& select)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Runs `statement` with synchronous=FULL, so that its commit is on disk when it returns.
  absl::Status RunDurably(base::SqliteStatement& statement) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  base::Mutex mu_;
  std::unique_ptr<base::SqliteDatabase> db_ ABSL_GUARDED_BY(mu_);
  std::optional<base::SqliteStatement> begin_ ABSL_GUARDED_BY(mu_);
  std::optional<base::SqliteStatement> commit_ ABSL_GUARDED_BY(mu_);
  std::optional<base::SqliteStatement> rollback_ ABSL_GUARDED_BY(mu_);
  std::optional<base::SqliteStatement> add_usage_ ABSL_GUARDED_BY(mu_);
  // By filter: bit 0 set when the query names a jid, bit 1 when it names a model.
  std::optional<base::SqliteStatement> usage_pages_[4] ABSL_GUARDED_BY(mu_);
};

}  // namespace herald::ledger
