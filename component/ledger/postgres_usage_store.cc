#include "component/ledger/postgres_usage_store.h"

#include <openssl/rand.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "component/base/absl_string_view.h"
#include "component/base/hex.h"
#include "component/ledger/usage_ledger.h"

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
    R"sql(
CREATE TABLE ledger_reservations (  -- the calls running now: a few rows
  id bigserial PRIMARY KEY,
  jid text COLLATE "C" NOT NULL,
  model text COLLATE "C" NOT NULL,
  tokens bigint NOT NULL,
  at bigint NOT NULL,                 -- the call's time, Unix seconds
  expires_at timestamptz NOT NULL     -- on the database's clock
);
CREATE INDEX ledger_reservations_expiry ON ledger_reservations (expires_at);
-- A limit's sum reads its jid's or its model's rows, not the dead ones every call leaves.
CREATE INDEX ledger_reservations_jid ON ledger_reservations (jid, at);
CREATE INDEX ledger_reservations_model ON ledger_reservations (model, at);
CREATE TABLE ledger_settled (       -- reservations settled lately, so none is settled twice
  id bigint PRIMARY KEY,
  expires_at timestamptz NOT NULL
);
CREATE INDEX ledger_settled_expiry ON ledger_settled (expires_at);
)sql",
    // Whose calls the reservations are for, so that the instances that live can release those
    // of an instance that died (storage::InstanceRegistry) before they lapse.
    R"sql(
ALTER TABLE ledger_reservations ADD COLUMN instance text COLLATE "C" NOT NULL DEFAULT '';
)sql",
};

// Reserve takes one transaction-scoped advisory lock per limit: (this class, hash of the limit).
constexpr int32_t kLimitLockClass = 0x4c656467;  // "Ledg"

// The four windows of one call: $1..$8 are (window, start) pairs, $9 jid, $10 model, $11/$12
// tokens in and out, $13 cost, $14 unpriced (0 or 1). AddUsageSql adds them in one statement.
constexpr char kUsageRows[] = R"sql(
INSERT INTO ledger_usage AS u (time_window, window_start, jid, model, input_tokens,
                               output_tokens, calls, cost_usd, unpriced_calls)
SELECT w.time_window, w.window_start, $9::text, $10::text, $11::bigint, $12::bigint, 1,
       $13::double precision, $14::bigint
FROM (VALUES ($1::text, $2::bigint), ($3, $4), ($5, $6), ($7, $8))
     AS w (time_window, window_start)
)sql";
constexpr char kUsageUpsert[] = R"sql(
ON CONFLICT (time_window, window_start, jid, model) DO UPDATE SET
  input_tokens = u.input_tokens + excluded.input_tokens,
  output_tokens = u.output_tokens + excluded.output_tokens,
  calls = u.calls + 1,
  cost_usd = u.cost_usd + excluded.cost_usd,
  unpriced_calls = u.unpriced_calls + excluded.unpriced_calls
)sql";
const std::string& AddUsageSql() {
  static const std::string* const sql = new std::string(absl::StrCat(kUsageRows, kUsageUpsert));
  return *sql;
}

// Settle in one statement (atomic without a transaction): the call's usage as AddUsageSql's, $15
// the reservation, $16 how long its settled mark is kept. A reservation marked settled already
// adds nothing: a Settle whose commit was lost to an outage and is tried again does not count
// the call twice. One whose hold passed (deleted by a Reserve) is recorded all the same.
const std::string& SettleSql() {
  static const std::string* const sql =
      new std::string(absl::StrCat(R"sql(
WITH mark AS (
  INSERT INTO ledger_settled (id, expires_at)
  VALUES ($15::bigint, now() + make_interval(secs => $16::double precision))
  ON CONFLICT (id) DO NOTHING RETURNING id
), dropped AS (
  DELETE FROM ledger_reservations WHERE id IN (SELECT id FROM mark)
))sql",
                                   kUsageRows, "WHERE EXISTS (SELECT 1 FROM mark)", kUsageUpsert));
  return *sql;
}

// Reserve deletes lapsed reservations and old settled marks at most this often per instance.
constexpr absl::Duration kPruneEvery = absl::Seconds(1);

SqlParams AddUsageParams(const UsageRecord& record, const PriceTable::Estimate& cost) {
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
  return params;
}

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
    std::shared_ptr<base::PostgresDatabase> db, std::string instance) {
  if (absl::Status s = base::ApplySchema(*db, "ledger", kMigrations); !s.ok()) return s;
  return std::unique_ptr<PostgresUsageStore>(
      new PostgresUsageStore(std::move(db), std::move(instance)));
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
  return db_->Exec(AddUsageSql(), AddUsageParams(record, cost)).status();
}

namespace {

// The tokens a limit counts in the window that contains `at`: used (ledger_usage) and reserved
// by calls still running. An index range on ledger_usage's key for a limit with a jid.
absl::StatusOr<UsageStore::ReserveResult::Held> HeldUnder(PostgresConnection& c, const Limit& limit,
                                                          absl::Time at) {
  SqlParams params;
  params.Text(WindowName(limit.window))
      .Int64(absl::ToUnixSeconds(WindowStart(limit.window, at)))
      .Int64(absl::ToUnixSeconds(WindowEnd(limit.window, at)));
  std::string usage_filter = "time_window = $1 AND window_start = $2";
  std::string reserved_filter = "expires_at > now() AND at >= $2 AND at < $3";
  for (auto [column, value] : {std::pair{"jid", std::string_view(limit.jid)},
                               std::pair{"model", std::string_view(limit.model)}}) {
    if (value.empty()) continue;
    params.Text(value);
    const std::string condition = absl::StrCat(" AND ", column, " = $", params.size());
    absl::StrAppend(&usage_filter, condition);
    absl::StrAppend(&reserved_filter, condition);
  }
  absl::StatusOr<PostgresResult> row = c.Exec(
      absl::StrCat("SELECT (SELECT COALESCE(SUM(input_tokens + output_tokens), 0)::bigint "
                   "FROM ledger_usage WHERE ",
                   usage_filter,
                   "), (SELECT COALESCE(SUM(tokens), 0)::bigint FROM ledger_reservations WHERE ",
                   reserved_filter, ")"),
      params);
  if (!row.ok()) return row.status();
  if (row->rows() != 1) return BadDatabase("a limit's sum has no row");
  return UsageStore::ReserveResult::Held{.used = row->Int64(0, 0), .reserved = row->Int64(0, 1)};
}

}  // namespace

absl::StatusOr<UsageStore::ReserveResult> PostgresUsageStore::Reserve(
    const ReserveRequest& request) {
  // One lock per limit, taken in one order by every instance (no deadlock): two calls that
  // count against one limit take turns; calls under different limits do not wait.
  std::vector<std::string> keys;
  for (const Limit& limit : request.limits) {
    keys.push_back(
        absl::StrCat(limit.jid, "\n", limit.model, "\n", AbslView(WindowName(limit.window))));
  }
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  ReserveResult result;
  absl::Status s = db_->Transaction([&](PostgresConnection& c) -> absl::Status {
    result = ReserveResult{};
    for (const std::string& key : keys) {
      absl::Status locked = c.Exec("SELECT pg_advisory_xact_lock($1::integer, hashtext($2))",
                                   SqlParams().Int64(kLimitLockClass).Text(key))
                                .status();
      if (!locked.ok()) return locked;
    }
    // Reservations of instances that died before settling them, and old settled marks.
    const int64_t now = absl::ToUnixMillis(absl::Now());
    int64_t last = last_prune_ms_.load();
    if (now - last >= absl::ToInt64Milliseconds(kPruneEvery) &&
        last_prune_ms_.compare_exchange_strong(last, now)) {
      for (const char* table : {"ledger_reservations", "ledger_settled"}) {
        if (absl::Status s =
                c.Exec(absl::StrCat("DELETE FROM ", table, " WHERE expires_at < now()")).status();
            !s.ok()) {
          return s;
        }
      }
    }
    bool refused = false;
    for (const Limit& limit : request.limits) {
      absl::StatusOr<ReserveResult::Held> held = HeldUnder(c, limit, request.time);
      if (!held.ok()) return held.status();
      refused = refused || held->used + held->reserved >= limit.max_tokens;
      result.limits.push_back(*held);
    }
    if (refused) return absl::OkStatus();
    absl::StatusOr<PostgresResult> row = c.Exec(
        "INSERT INTO ledger_reservations (jid, model, tokens, at, expires_at, instance) "
        "VALUES ($1, $2, $3, $4, now() + make_interval(secs => $5), $6) RETURNING id",
        SqlParams()
            .Text(request.jid)
            .Text(request.model)
            .Int64(request.tokens)
            .Int64(absl::ToUnixSeconds(request.time))
            .Double(absl::ToDoubleSeconds(request.hold))
            .Text(instance_));
    if (!row.ok()) return row.status();
    if (row->rows() != 1) return BadDatabase("a reservation has no id");
    result.id = row->Int64(0, 0);
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  return result;
}

absl::Status PostgresUsageStore::Settle(int64_t id, const UsageRecord& record,
                                        const PriceTable::Estimate& cost) {
  SqlParams params = AddUsageParams(record, cost);
  params.Int64(id).Double(absl::ToDoubleSeconds(UsageLedger::kReservationHold));
  return db_->Exec(SettleSql(), params).status();
}

absl::Status PostgresUsageStore::Unreserve(int64_t id) {
  return db_->Exec("DELETE FROM ledger_reservations WHERE id = $1", SqlParams().Int64(id)).status();
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
