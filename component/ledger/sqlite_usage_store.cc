#include "component/ledger/sqlite_usage_store.h"

#include <openssl/rand.h>

#include <utility>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "component/base/absl_string_view.h"

namespace herald::ledger {
namespace {

// The schema this code reads and writes (PRAGMA user_version).
constexpr int kSchemaVersion = 1;
constexpr char kPageTokenKeyName[] = "page_token_key";

constexpr char kSchema[] = R"sql(
CREATE TABLE IF NOT EXISTS usage (
  window TEXT NOT NULL,              -- 'day' | 'week' | 'month' | 'lifetime'
  window_start INTEGER NOT NULL,     -- Unix seconds, UTC; 0 for lifetime
  jid TEXT NOT NULL,
  model TEXT NOT NULL,
  input_tokens INTEGER NOT NULL,
  output_tokens INTEGER NOT NULL,
  calls INTEGER NOT NULL,
  cost_usd REAL NOT NULL,
  unpriced_calls INTEGER NOT NULL,
  PRIMARY KEY (window, window_start, jid, model)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS limits (
  jid TEXT NOT NULL,                 -- '' = every JID
  model TEXT NOT NULL,               -- '' = every model
  window TEXT NOT NULL,
  max_tokens INTEGER NOT NULL,
  mode TEXT NOT NULL,                -- 'block' | 'warn'
  PRIMARY KEY (jid, model, window)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS meta (
  key TEXT PRIMARY KEY,
  value BLOB NOT NULL
) WITHOUT ROWID;
)sql";

constexpr char kAddUsage[] = R"sql(
INSERT INTO usage (window, window_start, jid, model, input_tokens, output_tokens, calls,
                   cost_usd, unpriced_calls)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, 1, ?7, ?8)
ON CONFLICT (window, window_start, jid, model) DO UPDATE SET
  input_tokens = input_tokens + excluded.input_tokens,
  output_tokens = output_tokens + excluded.output_tokens,
  calls = calls + 1,
  cost_usd = cost_usd + excluded.cost_usd,
  unpriced_calls = unpriced_calls + excluded.unpriced_calls
)sql";

// The usage page query for each combination of filters: bit 0 = jid set, bit 1 = model set.
// Values are always bound: ?1 window, ?2 window_start, ?3 jid, ?4 model, ?5/?6 the cursor,
// ?7 the number of rows.
std::string UsagePageSql(int filters) {
  return absl::StrCat(
      "SELECT jid, model, input_tokens, output_tokens, calls, cost_usd, unpriced_calls "
      "FROM usage WHERE window = ?1 AND window_start = ?2",
      (filters & 1) ? " AND jid = ?3" : "", (filters & 2) ? " AND model = ?4" : "",
      " AND (jid, model) > (?5, ?6) ORDER BY jid, model LIMIT ?7");
}

absl::Status BadDatabase(const std::string& path, std::string_view what) {
  return absl::DataLossError(absl::StrCat("ledger ", path, ": ", AbslView(what)));
}

}  // namespace

absl::StatusOr<std::unique_ptr<SqliteUsageStore>> SqliteUsageStore::Open(const std::string& path) {
  absl::StatusOr<std::unique_ptr<base::SqliteDatabase>> db = base::OpenPrivateDatabase(
      path, {.what = "ledger", .schema_version = kSchemaVersion, .schema = kSchema});
  if (!db.ok()) return db.status();
  std::unique_ptr<SqliteUsageStore> store(new SqliteUsageStore(*std::move(db)));
  if (absl::Status s = store->PrepareStatements(); !s.ok()) return s;
  return store;
}

absl::Status SqliteUsageStore::PrepareStatements() {
  base::MutexLock lock(&mu_);
  for (auto [statement, sql] : {std::pair{&begin_, "BEGIN IMMEDIATE"},
                                std::pair{&commit_, "COMMIT"}, std::pair{&rollback_, "ROLLBACK"}}) {
    absl::StatusOr<base::SqliteStatement> prepared = db_->Prepare(sql);
    if (!prepared.ok()) return prepared.status();
    statement->emplace(std::move(*prepared));
  }
  absl::StatusOr<base::SqliteStatement> add = db_->Prepare(kAddUsage);
  if (!add.ok()) return add.status();
  add_usage_.emplace(std::move(*add));
  for (int filters = 0; filters < 4; ++filters) {
    absl::StatusOr<base::SqliteStatement> page = db_->Prepare(UsagePageSql(filters));
    if (!page.ok()) return page.status();
    usage_pages_[filters].emplace(std::move(*page));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> SqliteUsageStore::PageTokenKey() {
  base::MutexLock lock(&mu_);
  {
    absl::StatusOr<base::SqliteStatement> select =
        db_->Prepare("SELECT value FROM meta WHERE key = ?1");
    if (!select.ok()) return select.status();
    if (absl::Status s = select->BindText(1, kPageTokenKeyName); !s.ok()) return s;
    absl::StatusOr<bool> row = select->Step();
    if (!row.ok()) return row.status();
    if (*row) {
      std::string key = select->ColumnBlob(0);
      if (key.size() >= 16) return key;
    }
  }
  std::string key(32, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(key.data()), static_cast<int>(key.size())) != 1) {
    return absl::InternalError("ledger: no random bytes for the page-token key");
  }
  absl::StatusOr<base::SqliteStatement> insert =
      db_->Prepare("INSERT OR REPLACE INTO meta (key, value) VALUES (?1, ?2)");
  if (!insert.ok()) return insert.status();
  if (absl::Status s = insert->BindText(1, kPageTokenKeyName); !s.ok()) return s;
  if (absl::Status s = insert->BindBlob(2, key); !s.ok()) return s;
  if (absl::Status s = insert->Run(); !s.ok()) return s;
  return key;
}

absl::StatusOr<std::vector<Limit>> SqliteUsageStore::ReadLimits() {
  base::MutexLock lock(&mu_);
  absl::StatusOr<base::SqliteStatement> select = db_->Prepare(
      "SELECT jid, model, window, max_tokens, mode FROM limits ORDER BY jid, model, window");
  if (!select.ok()) return select.status();
  std::vector<Limit> limits;
  for (;;) {
    absl::StatusOr<bool> row = select->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    const std::optional<Window> window = ParseWindow(select->ColumnText(2));
    const std::optional<LimitMode> mode = ParseLimitMode(select->ColumnText(4));
    if (!window || !mode) return BadDatabase(db_->path(), "a limit has an unknown window or mode");
    limits.push_back(Limit{.jid = select->ColumnText(0),
                           .model = select->ColumnText(1),
                           .window = *window,
                           .max_tokens = select->ColumnInt64(3),
                           .mode = *mode});
  }
  return limits;
}

absl::StatusOr<std::vector<UsageStore::WindowTokens>> SqliteUsageStore::ReadLatestWindows() {
  base::MutexLock lock(&mu_);
  // SQLite takes the bare columns of a MAX() aggregate from the row holding the maximum: this
  // is each (jid, model)'s latest window of each kind.
  absl::StatusOr<base::SqliteStatement> select = db_->Prepare(
      "SELECT window, jid, model, MAX(window_start), input_tokens + output_tokens "
      "FROM usage GROUP BY window, jid, model");
  if (!select.ok()) return select.status();
  return ReadWindowTokens(*select);
}

absl::StatusOr<std::vector<UsageStore::WindowTokens>> SqliteUsageStore::ReadWindowsAt(
    absl::Time at) {
  base::MutexLock lock(&mu_);
  absl::StatusOr<base::SqliteStatement> select = db_->Prepare(
      "SELECT window, jid, model, window_start, input_tokens + output_tokens FROM usage "
      "WHERE (window = 'day' AND window_start = ?1) OR (window = 'week' AND window_start = ?2) "
      "OR (window = 'month' AND window_start = ?3) OR window = 'lifetime'");
  if (!select.ok()) return select.status();
  int index = 1;
  for (Window window : {Window::kDay, Window::kWeek, Window::kMonth}) {
    if (absl::Status s = select->BindInt64(index++, absl::ToUnixSeconds(WindowStart(window, at)));
        !s.ok()) {
      return s;
    }
  }
  return ReadWindowTokens(*select);
}

absl::StatusOr<std::vector<UsageStore::WindowTokens>> SqliteUsageStore::ReadWindowTokens(
    base::SqliteStatement& select) {
  std::vector<WindowTokens> totals;
  for (;;) {
    absl::StatusOr<bool> row = select.Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    const std::optional<Window> window = ParseWindow(select.ColumnText(0));
    if (!window) return BadDatabase(db_->path(), "a usage row has an unknown window");
    totals.push_back(WindowTokens{.window = *window,
                                  .jid = select.ColumnText(1),
                                  .model = select.ColumnText(2),
                                  .start = absl::FromUnixSeconds(select.ColumnInt64(3)),
                                  .tokens = select.ColumnInt64(4)});
  }
  return totals;
}

absl::Status SqliteUsageStore::Add(const UsageRecord& record, const PriceTable::Estimate& cost) {
  base::MutexLock lock(&mu_);
  const auto run = [](base::SqliteStatement& statement) {
    absl::Status s = statement.Run();
    statement.Reset();
    return s;
  };
  if (absl::Status s = run(*begin_); !s.ok()) return s;
  for (Window window : kAllWindows) {
    base::SqliteStatement& add = *add_usage_;
    absl::Status s = add.BindText(1, WindowName(window));
    if (s.ok()) s = add.BindInt64(2, absl::ToUnixSeconds(WindowStart(window, record.time)));
    if (s.ok()) s = add.BindText(3, record.jid);
    if (s.ok()) s = add.BindText(4, record.model);
    if (s.ok()) s = add.BindInt64(5, record.input_tokens);
    if (s.ok()) s = add.BindInt64(6, record.output_tokens);
    if (s.ok()) s = add.BindDouble(7, cost.usd);
    if (s.ok()) s = add.BindInt64(8, cost.known ? 0 : 1);
    if (s.ok()) s = add.Run();
    add.Reset();
    if (!s.ok()) {
      (void)run(*rollback_);
      return s;
    }
  }
  if (absl::Status s = run(*commit_); !s.ok()) {
    (void)run(*rollback_);
    return s;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<UsageRow>> SqliteUsageStore::ReadPage(const PageRequest& request) {
  base::MutexLock lock(&mu_);
  base::SqliteStatement& select =
      *usage_pages_[(request.jid.empty() ? 0 : 1) | (request.model.empty() ? 0 : 2)];
  absl::Cleanup reset = [&select] { select.Reset(); };
  absl::Status s = select.BindText(1, WindowName(request.window));
  if (s.ok()) s = select.BindInt64(2, request.window_start);
  if (s.ok()) s = select.BindText(3, request.jid);
  if (s.ok()) s = select.BindText(4, request.model);
  if (s.ok()) s = select.BindText(5, request.after_jid);
  if (s.ok()) s = select.BindText(6, request.after_model);
  if (s.ok()) s = select.BindInt64(7, request.limit);
  if (!s.ok()) return s;
  std::vector<UsageRow> rows;
  for (;;) {
    absl::StatusOr<bool> row = select.Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    rows.push_back(UsageRow{.jid = select.ColumnText(0),
                            .model = select.ColumnText(1),
                            .window = request.window,
                            .window_start = absl::FromUnixSeconds(request.window_start),
                            .input_tokens = select.ColumnInt64(2),
                            .output_tokens = select.ColumnInt64(3),
                            .calls = select.ColumnInt64(4),
                            .cost_usd = select.ColumnDouble(5),
                            .unpriced_calls = select.ColumnInt64(6)});
  }
  return rows;
}

absl::Status SqliteUsageStore::RunDurably(base::SqliteStatement& statement) {
  absl::Status s = db_->Exec("PRAGMA synchronous=FULL");
  if (s.ok()) s = statement.Run();
  const absl::Status restore = db_->Exec("PRAGMA synchronous=NORMAL");
  return s.ok() ? restore : s;
}

absl::Status SqliteUsageStore::PutLimit(const Limit& limit) {
  base::MutexLock lock(&mu_);
  absl::StatusOr<base::SqliteStatement> upsert = db_->Prepare(
      "INSERT OR REPLACE INTO limits (jid, model, window, max_tokens, mode) "
      "VALUES (?1, ?2, ?3, ?4, ?5)");
  if (!upsert.ok()) return upsert.status();
  absl::Status s = upsert->BindText(1, limit.jid);
  if (s.ok()) s = upsert->BindText(2, limit.model);
  if (s.ok()) s = upsert->BindText(3, WindowName(limit.window));
  if (s.ok()) s = upsert->BindInt64(4, limit.max_tokens);
  if (s.ok()) s = upsert->BindText(5, LimitModeName(limit.mode));
  if (!s.ok()) return s;
  return RunDurably(*upsert);
}

absl::StatusOr<bool> SqliteUsageStore::DeleteLimit(const std::string& jid, const std::string& model,
                                                   Window window) {
  base::MutexLock lock(&mu_);
  absl::StatusOr<base::SqliteStatement> remove =
      db_->Prepare("DELETE FROM limits WHERE jid = ?1 AND model = ?2 AND window = ?3");
  if (!remove.ok()) return remove.status();
  absl::Status s = remove->BindText(1, jid);
  if (s.ok()) s = remove->BindText(2, model);
  if (s.ok()) s = remove->BindText(3, WindowName(window));
  if (s.ok()) s = RunDurably(*remove);
  if (!s.ok()) return s;
  return db_->Changes() > 0;
}

}  // namespace herald::ledger
