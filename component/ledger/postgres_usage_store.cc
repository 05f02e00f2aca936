#include "component/ledger/postgres_usage_store.h"

#include <openssl/rand.h>

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "component/base/absl_string_view.h"
#include "component/base/hex.h"

namespace herald::ledger {
namespace {

using base::PostgresConnection;
using base::PostgresResult;
using base::SqlParams;

// Version i + 1 of the ledger's tables is made by kMigrations[i] (base::ApplySchema).
constexpr std::string_view kMigrations[] = {
    R"sql(
CREATE TABLE ledger_usage (
  time_window text NOT NULL,          -- 'day' | 'week' | 'month' | 'lifetime'
  window_start bigint NOT NULL,       -- Unix seconds, UTC; 0 for lifetime
  jid text COLLATE "C" NOT NULL,
  model text COLLATE "C" NOT NULL,
  input_tokens bigint NOT NULL,
  output_tokens bigint NOT NULL,
  calls bigint NOT NULL,
  cost_usd double precision NOT NULL,
  unpriced_calls bigint NOT NULL,
  PRIMARY KEY (time_window, window_start, jid, model)
);
CREATE TABLE ledger_limits (
  jid text COLLATE "C" NOT NULL,      -- '' = every JID
  model text COLLATE "C" NOT NULL,    -- '' = every model
  time_window text NOT NULL,
  max_tokens bigint NOT NULL,
  mode text NOT NULL,                 -- 'block' | 'warn'
  PRIMARY KEY (jid, model, time_window)
);
CREATE TABLE ledger_meta (
  key text PRIMARY KEY,
  value bytea NOT NULL
);
)sql",
};

// The four windows of one call in one statement: $1..$8 are (window, start) pairs, $9 jid,
// $10 model, $11/$12 tokens in and out, $13 cost, $14 unpriced (0 or 1).
constexpr char kAddUsage[] = R"sql(
INSERT INTO ledger_usage AS u (time_window, window_start, jid, model, input_tokens,
                               output_tokens, calls, cost_usd, unpriced_calls)
SELECT w.time_window, w.window_start, $9::text, $10::text, $11::bigint, $12::bigint, 1,
       $13::double precision, $14::bigint
FROM (VALUES ($1::text, $2::bigint), ($3, $4), ($5, $6), ($7, $8))
     AS w (time_window, window_start)
ON CONFLICT (time_window, window_start, jid, model) DO UPDATE SET
  input_tokens = u.input_tokens + excluded.input_tokens,
  output_tokens = u.output_tokens + excluded.output_tokens,
  calls = u.calls + 1,
  cost_usd = u.cost_usd + excluded.cost_usd,
  unpriced_calls = u.unpriced_calls + excluded.unpriced_calls
)sql";

constexpr char kPageTokenKeyName[] = "page_token_key";

absl::Status BadDatabase(std::string_view what) {
  return absl::DataLossError(absl::StrCat("ledger (PostgreSQL): ", AbslView(what)));
}

// The rows of a (window, jid, model, window_start, tokens) query.
absl::StatusOr<std::vector<UsageStore::WindowTokens>> ReadWindowTokens(
    absl::StatusOr<PostgresResult> rows) {
  if (!rows.ok()) return rows.status();
  std::vector<UsageStore::WindowTokens> totals;
  totals.reserve(rows->rows());
  for (int i = 0; i < rows->rows(); ++i) {
    const std::optional<Window> window = ParseWindow(rows->Text(i, 0));
    if (!window) return BadDatabase("a usage row has an unknown window");
    totals.push_back(UsageStore::WindowTokens{.window = *window,
                                              .jid = std::string(rows->Text(i, 1)),
                                              .model = std::string(rows->Text(i, 2)),
                                              .start = absl::FromUnixSeconds(rows->Int64(i, 3)),
                                              .tokens = rows->Int64(i, 4)});
  }
  return totals;
}

}  // namespace

absl::StatusOr<std::unique_ptr<PostgresUsageStore>> PostgresUsageStore::Open(
    std::shared_ptr<base::PostgresDatabase> db) {
  if (absl::Status s = base::ApplySchema(*db, "ledger", kMigrations); !s.ok()) return s;
  return std::unique_ptr<PostgresUsageStore>(new PostgresUsageStore(std::move(db)));
}

absl::StatusOr<std::string> PostgresUsageStore::PageTokenKey() {
  std::string key(32, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(key.data()), static_cast<int>(key.size())) != 1) {
    return absl::InternalError("ledger: no random bytes for the page-token key");
  }
  // The first instance's key wins; every other reads it back.
  absl::StatusOr<PostgresResult> insert =
      db_->Exec("INSERT INTO ledger_meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING",
                SqlParams().Text(kPageTokenKeyName).Bytes(key));
  if (!insert.ok()) return insert.status();
  // As hex whatever the server's bytea_output says.
  absl::StatusOr<PostgresResult> row =
      db_->Exec("SELECT encode(value, 'hex') FROM ledger_meta WHERE key = $1",
                SqlParams().Text(kPageTokenKeyName));
  if (!row.ok()) return row.status();
  if (row->rows() != 1) return BadDatabase("the page-token key is missing");
  std::optional<std::string> kept = base::HexDecode(row->Text(0, 0));
  if (!kept.has_value() || kept->size() < 16) {
    return BadDatabase("the page-token key is not 16 bytes or more");
  }
  return *std::move(kept);
}

absl::StatusOr<std::vector<Limit>> PostgresUsageStore::ReadLimits() {
  absl::StatusOr<PostgresResult> rows = db_->Exec(
      "SELECT jid, model, time_window, max_tokens, mode FROM ledger_limits "
      "ORDER BY jid, model, time_window");
  if (!rows.ok()) return rows.status();
  std::vector<Limit> limits;
  for (int i = 0; i < rows->rows(); ++i) {
    const std::optional<Window> window = ParseWindow(rows->Text(i, 2));
    const std::optional<LimitMode> mode = ParseLimitMode(rows->Text(i, 4));
    if (!window || !mode) return BadDatabase("a limit has an unknown window or mode");
    limits.push_back(Limit{.jid = std::string(rows->Text(i, 0)),
                           .model = std::string(rows->Text(i, 1)),
                           .window = *window,
                           .max_tokens = rows->Int64(i, 3),
                           .mode = *mode});
  }
  return limits;
}

absl::StatusOr<std::vector<UsageStore::WindowTokens>> PostgresUsageStore::ReadLatestWindows() {
  return ReadWindowTokens(db_->Exec(
      "SELECT DISTINCT ON (time_window, jid, model) time_window, jid, model, window_start, "
      "input_tokens + output_tokens FROM ledger_usage "
      "ORDER BY time_window, jid, model, window_start DESC"));
}

absl::StatusOr<std::vector<UsageStore::WindowTokens>> PostgresUsageStore::ReadWindowsAt(
    absl::Time at) {
  return ReadWindowTokens(
      db_->Exec("SELECT time_window, jid, model, window_start, input_tokens + output_tokens "
                "FROM ledger_usage WHERE (time_window = 'day' AND window_start = $1) "
                "OR (time_window = 'week' AND window_start = $2) "
                "OR (time_window = 'month' AND window_start = $3) OR time_window = 'lifetime'",
                SqlParams()
                    .Int64(absl::ToUnixSeconds(WindowStart(Window::kDay, at)))
                    .Int64(absl::ToUnixSeconds(WindowStart(Window::kWeek, at)))
                    .Int64(absl::ToUnixSeconds(WindowStart(Window::kMonth, at)))));
}

absl::Status PostgresUsageStore::Add(const UsageRecord& record, const PriceTable::Estimate& cost) {
  SqlParams params;
  for (Window window : kAllWindows) {
    params.Text(WindowName(window)).Int64(absl::ToUnixSeconds(WindowStart(window, record.time)));
  }
  params.Text(record.jid)
      .Text(record.model)
      .Int64(record.input_tokens)
      .Int64(record.output_tokens)
      .Double(cost.usd)
      .Int64(cost.known ? 0 : 1);
  return db_->Exec(kAddUsage, params).status();
}

absl::StatusOr<std::vector<UsageRow>> PostgresUsageStore::ReadPage(const PageRequest& request) {
  // Only the parameters a statement uses may be sent (PostgreSQL must infer each one's type).
  SqlParams params;
  params.Text(WindowName(request.window)).Int64(request.window_start);
  std::string sql =
      "SELECT jid, model, input_tokens, output_tokens, calls, cost_usd, unpriced_calls "
      "FROM ledger_usage WHERE time_window = $1 AND window_start = $2";
  for (auto [column, value] : {std::pair{"jid", request.jid}, std::pair{"model", request.model}}) {
    if (value.empty()) continue;
    params.Text(value);
    absl::StrAppend(&sql, " AND ", column, " = $", params.size());
  }
  params.Text(request.after_jid).Text(request.after_model).Int64(request.limit);
  const int after = params.size() - 2;
  absl::StrAppend(&sql, " AND (jid, model) > ($", after, ", $", after + 1,
                  ") ORDER BY jid, model LIMIT $", after + 2);
  absl::StatusOr<PostgresResult> rows = db_->Exec(sql, params);
  if (!rows.ok()) return rows.status();
  std::vector<UsageRow> page;
  page.reserve(rows->rows());
  for (int i = 0; i < rows->rows(); ++i) {
    page.push_back(UsageRow{.jid = std::string(rows->Text(i, 0)),
                            .model = std::string(rows->Text(i, 1)),
                            .window = request.window,
                            .window_start = absl::FromUnixSeconds(request.window_start),
                            .input_tokens = rows->Int64(i, 2),
                            .output_tokens = rows->Int64(i, 3),
                            .calls = rows->Int64(i, 4),
                            .cost_usd = rows->Double(i, 5),
                            .unpriced_calls = rows->Int64(i, 6)});
  }
  return page;
}

absl::Status PostgresUsageStore::PutLimit(const Limit& limit) {
  return db_->Transaction([&](PostgresConnection& c) -> absl::Status {
    // An operator's change is durable when it is acknowledged, whatever the server's default.
    if (absl::Status s = c.Exec("SET LOCAL synchronous_commit TO on").status(); !s.ok()) return s;
    return c
        .Exec(
            "INSERT INTO ledger_limits (jid, model, time_window, max_tokens, mode) "
            "VALUES ($1, $2, $3, $4, $5) ON CONFLICT (jid, model, time_window) DO UPDATE SET "
            "max_tokens = excluded.max_tokens, mode = excluded.mode",
            SqlParams()
                .Text(limit.jid)
                .Text(limit.model)
                .Text(WindowName(limit.window))
                .Int64(limit.max_tokens)
                .Text(LimitModeName(limit.mode)))
        .status();
  });
}

absl::StatusOr<bool> PostgresUsageStore::DeleteLimit(const std::string& jid,
                                                     const std::string& model, Window window) {
  int64_t removed = 0;
  absl::Status s = db_->Transaction([&](PostgresConnection& c) -> absl::Status {
    if (absl::Status s = c.Exec("SET LOCAL synchronous_commit TO on").status(); !s.ok()) return s;
    absl::StatusOr<PostgresResult> result =
        c.Exec("DELETE FROM ledger_limits WHERE jid = $1 AND model = $2 AND time_window = $3",
               SqlParams().Text(jid).Text(model).Text(WindowName(window)));
    if (!result.ok()) return result.status();
    removed = result->affected();
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  return removed > 0;
}

}  // namespace herald::ledger
