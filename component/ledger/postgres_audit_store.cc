#include "component/ledger/postgres_audit_store.h"

#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "component/base/absl_string_view.h"

namespace herald::ledger {
namespace {

using base::PostgresConnection;
using base::PostgresResult;
using base::SqlParams;

// Version i + 1 of the audit tables is made by kMigrations[i] (base::ApplySchema).
constexpr std::string_view kMigrations[] = {
    R"sql(
CREATE TABLE audit_entries (
  seq bigint PRIMARY KEY,
  line text NOT NULL                  -- the entry exactly as audit_format.h encodes it, no '\n'
);
CREATE TABLE audit_head (
  one boolean PRIMARY KEY DEFAULT true CHECK (one),
  entries bigint NOT NULL,
  last_hash text NOT NULL
);
INSERT INTO audit_head (entries, last_hash)
VALUES (0, '0000000000000000000000000000000000000000000000000000000000000000');
)sql",
};

// Rows read at a time by Verify.
constexpr int kVerifyPage = 1000;

absl::Status Damaged(std::string_view what) {
  return absl::DataLossError(absl::StrCat(
      "the audit chain in PostgreSQL: ", AbslView(what),
      ". Not continuing a chain that may have been tampered with: docs/ledger.md (\"The audit "
      "chain on PostgreSQL\") says how to find where, and how to start a new chain"));
}

struct Head {
  uint64_t entries = 0;
  std::string last_hash;
};

absl::StatusOr<Head> ReadHead(PostgresConnection& c, bool for_update) {
  absl::StatusOr<PostgresResult> row =
      c.Exec(for_update ? "SELECT entries, last_hash FROM audit_head FOR UPDATE"
                        : "SELECT entries, last_hash FROM audit_head");
  if (!row.ok()) return row.status();
  if (row->rows() != 1 || row->Int64(0, 0) < 0) return Damaged("its head row is missing");
  return Head{.entries = static_cast<uint64_t>(row->Int64(0, 0)),
              .last_hash = std::string(row->Text(0, 1))};
}

}  // namespace

absl::StatusOr<std::unique_ptr<PostgresAuditStore>> PostgresAuditStore::Open(
    std::shared_ptr<base::PostgresDatabase> db) {
  if (absl::Status s = base::ApplySchema(*db, "audit", kMigrations); !s.ok()) return s;
  absl::Status checked = db->Transaction([](PostgresConnection& c) -> absl::Status {
    absl::StatusOr<Head> head = ReadHead(c, /*for_update=*/false);
    if (!head.ok()) return head.status();
    absl::StatusOr<PostgresResult> last = c.Exec("SELECT COALESCE(MAX(seq), 0) FROM audit_entries");
    if (!last.ok()) return last.status();
    if (static_cast<uint64_t>(last->Int64(0, 0)) != head->entries) {
      return Damaged(absl::StrCat("its head records ", head->entries,
                                  " entries but the last entry is number ", last->Int64(0, 0)));
    }
    if (head->entries == 0) {
      if (head->last_hash != kGenesisHash) return Damaged("its head does not describe no entries");
      return absl::OkStatus();
    }
    absl::StatusOr<PostgresResult> row =
        c.Exec("SELECT line FROM audit_entries WHERE seq = $1",
               SqlParams().Int64(static_cast<int64_t>(head->entries)));
    if (!row.ok()) return row.status();
    absl::StatusOr<ParsedAuditLine> parsed = ParseAuditLine(row->Text(0, 0));
    if (!parsed.ok() || parsed->seq != head->entries || parsed->hash != head->last_hash ||
        parsed->actual_hash != parsed->hash) {
      return Damaged(absl::StrCat("its last entry does not match its head (entry ", head->entries,
                                  " or the head was changed)"));
    }
    return absl::OkStatus();
  });
  if (!checked.ok()) return checked;
  return std::unique_ptr<PostgresAuditStore>(new PostgresAuditStore(std::move(db)));
}

absl::Status PostgresAuditStore::Write(const std::vector<AuditEntry>& batch, absl::Time now) {
  if (batch.empty()) return absl::OkStatus();
  return db_->Transaction([&](PostgresConnection& c) -> absl::Status {
    // Durable when acknowledged, whatever the server's default, as the file is fdatasynced.
    if (absl::Status s = c.Exec("SET LOCAL synchronous_commit TO on").status(); !s.ok()) return s;
    // The head row's lock makes the instances take turns: each batch chains after the last.
    absl::StatusOr<Head> head = ReadHead(c, /*for_update=*/true);
    if (!head.ok()) return head.status();
    // The lines, one per line (an encoded entry holds no '\n'), inserted in one statement.
    std::string lines;
    std::string hash = head->last_hash;
    for (size_t i = 0; i < batch.size(); ++i) {
      std::string next_hash;
      std::string line = EncodeAuditLine(head->entries + 1 + i, CanonicalAuditEntry(batch[i], now),
                                         hash, &next_hash);
      line.pop_back();  // its '\n'
      if (i > 0) lines.push_back('\n');
      lines += line;
      hash = std::move(next_hash);
    }
    const int64_t first = static_cast<int64_t>(head->entries) + 1;
    absl::StatusOr<PostgresResult> inserted = c.Exec(
        "INSERT INTO audit_entries (seq, line) SELECT $1::bigint + ordinality - 1, line "
        "FROM unnest(string_to_array($2::text, chr(10))) WITH ORDINALITY AS t (line, ordinality)",
        SqlParams().Int64(first).Text(lines));
    if (!inserted.ok()) return inserted.status();
    if (inserted->affected() != static_cast<int64_t>(batch.size())) {
      return absl::InternalError("the audit batch was not inserted whole");
    }
    return c
        .Exec("UPDATE audit_head SET entries = $1, last_hash = $2",
              SqlParams().Int64(first - 1 + static_cast<int64_t>(batch.size())).Text(hash))
        .status();
  });
}

absl::StatusOr<AuditVerifyReport> PostgresAuditStore::Verify() {
  AuditVerifyReport report;
  const auto fail = [&report](uint64_t position, std::string problem) {
    report.ok = false;
    report.first_bad_entry = position;
    report.problem = std::move(problem);
    return absl::OkStatus();
  };
  absl::Status read = db_->Transaction([&](PostgresConnection& c) -> absl::Status {
    report = AuditVerifyReport{};
    // One snapshot: the head and the entries as they were together, while others append.
    if (absl::Status s =
            c.Exec("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY").status();
        !s.ok()) {
      return s;
    }
    absl::StatusOr<Head> head = ReadHead(c, /*for_update=*/false);
    if (!head.ok()) return head.status();
    std::string last_hash(kGenesisHash);
    std::string hash_at_head(kGenesisHash);
    uint64_t position = 0;
    int64_t after = 0;
    for (;;) {
      absl::StatusOr<PostgresResult> rows =
          c.Exec("SELECT seq, line FROM audit_entries WHERE seq > $1 ORDER BY seq LIMIT $2",
                 SqlParams().Int64(after).Int64(kVerifyPage));
      if (!rows.ok()) return rows.status();
      for (int i = 0; i < rows->rows(); ++i) {
        ++position;
        after = rows->Int64(i, 0);
        absl::StatusOr<ParsedAuditLine> parsed = ParseAuditLine(rows->Text(i, 1));
        if (!parsed.ok()) {
          return fail(position, absl::StrCat("entry ", position, " (row ", after, ") is ",
                                             parsed.status().message(), " (it was changed)"));
        }
        if (static_cast<uint64_t>(after) != parsed->seq) {
          return fail(position, absl::StrCat("entry ", position, " is stored under number ", after,
                                             " (the row was changed)"));
        }
        if (std::string problem = AuditChainProblem(*parsed, position, last_hash);
            !problem.empty()) {
          return fail(position, std::move(problem));
        }
        last_hash = std::move(parsed->hash);
        report.entries = position;
        if (position == head->entries) hash_at_head = last_hash;
      }
      if (rows->rows() < kVerifyPage) break;
    }
    if (head->entries > report.entries) {
      return fail(report.entries + 1,
                  absl::StrCat("the chain has ", report.entries, " entries but its head records ",
                               head->entries, ": entries ", report.entries + 1, " to ",
                               head->entries, " were cut off"));
    }
    if (hash_at_head != head->last_hash) {
      return fail(0, absl::StrCat("the head does not match entry ", head->entries,
                                  "'s hash (the head was changed)"));
    }
    report.entries_after_head = report.entries - head->entries;
    if (report.entries_after_head > 0) {
      return fail(head->entries + 1,
                  absl::StrCat("entries ", head->entries + 1, " to ", report.entries,
                               " are chained but not recorded in the head: they were added, or "
                               "the head was moved back"));
    }
    return absl::OkStatus();
  });
  if (!read.ok()) return read;
  return report;
}

absl::StatusOr<AuditPage> PostgresAuditStore::ReadNewest(std::optional<uint64_t> before,
                                                         size_t limit) {
  AuditPage page;
  if (before.has_value() && *before == 0) return page;  // nothing is older than the first
  if (before.has_value() && *before > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    return absl::InvalidArgumentError("the cursor is past the end of the audit chain");
  }
  absl::Status read = db_->Transaction([&](PostgresConnection& c) -> absl::Status {
    page = AuditPage{};
    if (before.has_value()) {
      absl::StatusOr<Head> head = ReadHead(c, /*for_update=*/false);
      if (!head.ok()) return head.status();
      if (*before > head->entries + 1) {
        return absl::InvalidArgumentError(absl::StrCat("entry ", *before,
                                                       " is past the end of the audit chain (",
                                                       head->entries, " entries)"));
      }
    }
    absl::StatusOr<PostgresResult> rows =
        c.Exec("SELECT seq, line FROM audit_entries WHERE seq < $1 ORDER BY seq DESC LIMIT $2",
               SqlParams()
                   .Int64(before.has_value() ? static_cast<int64_t>(*before)
                                             : std::numeric_limits<int64_t>::max())
                   .Int64(static_cast<int64_t>(std::max<size_t>(1, limit))));
    if (!rows.ok()) return rows.status();
    for (int i = 0; i < rows->rows(); ++i) {
      absl::StatusOr<ParsedAuditLine> parsed = ParseAuditLine(rows->Text(i, 1));
      if (!parsed.ok()) {
        return absl::DataLossError(
            absl::StrCat("audit entry ", rows->Int64(i, 0), " in PostgreSQL is not an entry (",
                         parsed.status().message(), "): run `heraldctl audit verify`"));
      }
      page.entries.push_back(*std::move(parsed));
    }
    if (!page.entries.empty() && page.entries.back().seq > 1) page.older = page.entries.back().seq;
    return absl::OkStatus();
  });
  if (!read.ok()) return read;
  return page;
}

}  // namespace herald::ledger
