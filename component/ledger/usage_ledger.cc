#include "component/ledger/usage_ledger.h"

#include <openssl/rand.h>

#include <algorithm>
#include <tuple>
#include <utility>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "component/base/absl_string_view.h"
#include "component/base/private_files.h"

namespace herald::ledger {
namespace {

// The schema this code reads and writes (PRAGMA user_version).
constexpr int kSchemaVersion = 1;
constexpr size_t kMaxNameBytes = 3071;  // a JID's longest; models are much shorter
constexpr int64_t kMaxTokensPerCall = int64_t{1} << 40;
constexpr int kDefaultPageSize = 100;
constexpr int kMaxPageSize = 1000;
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

absl::Status CheckName(std::string_view field, std::string_view value) {
  if (value.empty()) return absl::InvalidArgumentError(absl::StrCat(AbslView(field), " is empty"));
  if (value.size() > kMaxNameBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(AbslView(field), " is longer than ", kMaxNameBytes, " bytes"));
  }
  for (const char c : value) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f) {
      return absl::InvalidArgumentError(
          absl::StrCat(AbslView(field), " contains a control character"));
    }
  }
  return absl::OkStatus();
}

bool IsWindow(Window window) {
  return static_cast<int>(window) >= static_cast<int>(Window::kDay) &&
         static_cast<int>(window) <= static_cast<int>(Window::kLifetime);
}

absl::Status CheckLimit(const Limit& limit) {
  if (limit.jid.empty() && limit.model.empty()) {
    return absl::InvalidArgumentError("a limit needs a jid, a model or both");
  }
  if (!limit.jid.empty()) {
    if (absl::Status s = CheckName("limit jid", limit.jid); !s.ok()) return s;
  }
  if (!limit.model.empty()) {
    if (absl::Status s = CheckName("limit model", limit.model); !s.ok()) return s;
  }
  if (!IsWindow(limit.window)) return absl::InvalidArgumentError("limit window is not valid");
  if (limit.mode != LimitMode::kBlock && limit.mode != LimitMode::kWarn) {
    return absl::InvalidArgumentError("limit mode is not valid");
  }
  if (limit.max_tokens < 0) return absl::InvalidArgumentError("limit max_tokens is negative");
  return absl::OkStatus();
}

bool LimitOrder(const Limit& a, const Limit& b) {
  return std::tie(a.jid, a.model, a.window) < std::tie(b.jid, b.model, b.window);
}

absl::Status BadDatabase(const std::string& path, std::string_view what) {
  return absl::DataLossError(absl::StrCat("ledger ", path, ": ", AbslView(what)));
}

}  // namespace

std::string_view LimitModeName(LimitMode mode) {
  return mode == LimitMode::kWarn ? "warn" : "block";
}

std::optional<LimitMode> ParseLimitMode(std::string_view name) {
  if (name == "block") return LimitMode::kBlock;
  if (name == "warn") return LimitMode::kWarn;
  return std::nullopt;
}

UsageLedger::UsageLedger(std::unique_ptr<base::SqliteDatabase> db, PriceTable prices,
                         int64_t default_daily_tokens, std::string page_token_key)
    : page_tokens_(std::move(page_token_key)),
      db_(std::move(db)),
      default_daily_tokens_(std::max<int64_t>(0, default_daily_tokens)),
      prices_(std::move(prices)) {}

UsageLedger::~UsageLedger() = default;

absl::StatusOr<std::unique_ptr<UsageLedger>> UsageLedger::Open(const std::string& path,
                                                               PriceTable prices,
                                                               int64_t default_daily_tokens) {
  // A commit is one sequential append, not fsynced (checkpoints are): a power cut can lose
  // the last moments of usage, never corrupt the database. Limits are written with FULL.
  absl::StatusOr<std::unique_ptr<base::SqliteDatabase>> db = base::OpenPrivateDatabase(
      path, {.what = "ledger", .schema_version = kSchemaVersion, .schema = kSchema});
  if (!db.ok()) return db.status();
  base::SqliteDatabase& sql = **db;

  // The page-token key: made once, kept so that tokens outlive a restart.
  std::string key;
  {
    absl::StatusOr<base::SqliteStatement> select =
        sql.Prepare("SELECT value FROM meta WHERE key = ?1");
    if (!select.ok()) return select.status();
    if (absl::Status s = select->BindText(1, kPageTokenKeyName); !s.ok()) return s;
    absl::StatusOr<bool> row = select->Step();
    if (!row.ok()) return row.status();
    if (*row) key = select->ColumnBlob(0);
  }
  if (key.size() < 16) {
    key.resize(32);
    if (RAND_bytes(reinterpret_cast<unsigned char*>(key.data()), static_cast<int>(key.size())) !=
        1) {
      return absl::InternalError("ledger: no random bytes for the page-token key");
    }
    absl::StatusOr<base::SqliteStatement> insert =
        sql.Prepare("INSERT OR REPLACE INTO meta (key, value) VALUES (?1, ?2)");
    if (!insert.ok()) return insert.status();
    if (absl::Status s = insert->BindText(1, kPageTokenKeyName); !s.ok()) return s;
    if (absl::Status s = insert->BindBlob(2, key); !s.ok()) return s;
    if (absl::Status s = insert->Run(); !s.ok()) return s;
  }

  std::unique_ptr<UsageLedger> ledger(
      new UsageLedger(std::move(*db), std::move(prices), default_daily_tokens, std::move(key)));
  if (absl::Status s = ledger->PrepareStatements(); !s.ok()) return s;
  if (absl::Status s = ledger->LoadLimits(); !s.ok()) return s;
  if (absl::Status s = ledger->LoadCounters(); !s.ok()) return s;
  return ledger;
}

absl::Status UsageLedger::PrepareStatements() {
  base::MutexLock lock(&db_mu_);
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

absl::Status UsageLedger::LoadLimits() {
  base::MutexLock db_lock(&db_mu_);
  absl::StatusOr<base::SqliteStatement> select =
      db_->Prepare("SELECT jid, model, window, max_tokens, mode FROM limits ORDER BY jid, model");
  if (!select.ok()) return select.status();
  base::MutexLock state_lock(&state_mu_);
  for (;;) {
    absl::StatusOr<bool> row = select->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    const std::optional<Window> window = ParseWindow(select->ColumnText(2));
    const std::optional<LimitMode> mode = ParseLimitMode(select->ColumnText(4));
    if (!window || !mode) return BadDatabase(db_->path(), "a limit has an unknown window or mode");
    StoreLimitInMemory(Limit{.jid = select->ColumnText(0),
                             .model = select->ColumnText(1),
                             .window = *window,
                             .max_tokens = select->ColumnInt64(3),
                             .mode = *mode});
  }
  return absl::OkStatus();
}

absl::Status UsageLedger::LoadCounters() {
  base::MutexLock db_lock(&db_mu_);
  // SQLite takes the bare columns of a MAX() aggregate from the row holding the maximum: this
  // is each (jid, model)'s latest window of each kind, which is all Check needs.
  absl::StatusOr<base::SqliteStatement> select = db_->Prepare(
      "SELECT window, jid, model, MAX(window_start), input_tokens + output_tokens "
      "FROM usage GROUP BY window, jid, model");
  if (!select.ok()) return select.status();
  base::MutexLock state_lock(&state_mu_);
  for (;;) {
    absl::StatusOr<bool> row = select->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    const std::optional<Window> window = ParseWindow(select->ColumnText(0));
    if (!window) return BadDatabase(db_->path(), "a usage row has an unknown window");
    counters_.AddToWindow(select->ColumnText(1), select->ColumnText(2), *window,
                          absl::FromUnixSeconds(select->ColumnInt64(3)), select->ColumnInt64(4));
  }
  return absl::OkStatus();
}

absl::Status UsageLedger::Record(const UsageRecord& record) {
  if (absl::Status s = CheckName("jid", record.jid); !s.ok()) return s;
  if (absl::Status s = CheckName("model", record.model); !s.ok()) return s;
  if (record.input_tokens < 0 || record.output_tokens < 0) {
    return absl::InvalidArgumentError("token counts cannot be negative");
  }
  if (record.input_tokens > kMaxTokensPerCall || record.output_tokens > kMaxTokensPerCall) {
    return absl::InvalidArgumentError(
        absl::StrCat("more than ", kMaxTokensPerCall, " tokens in one call"));
  }
  if (record.time == absl::InfinitePast() || record.time == absl::InfiniteFuture()) {
    return absl::InvalidArgumentError("the call's time is not a time");
  }
  PriceTable::Estimate cost;
  {
    base::MutexLock lock(&state_mu_);
    cost = prices_.Cost(record.model, record.input_tokens, record.output_tokens);
  }
  {
    base::MutexLock lock(&db_mu_);
    if (absl::Status s = WriteRecord(record, cost); !s.ok()) return s;
  }
  // Counters only ever hold committed usage. Adding is order-independent, so two Records
  // that commit in one order and count in the other leave the same totals.
  base::MutexLock lock(&state_mu_);
  counters_.Add(record.jid, record.model, record.time, record.input_tokens + record.output_tokens);
  return absl::OkStatus();
}

absl::Status UsageLedger::WriteRecord(const UsageRecord& record, const PriceTable::Estimate& cost) {
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

absl::StatusOr<UsagePage> UsageLedger::Usage(const UsageQuery& query) const {
  if (!IsWindow(query.window)) return absl::InvalidArgumentError("window is not valid");
  if (query.at == absl::InfinitePast() || query.at == absl::InfiniteFuture()) {
    return absl::InvalidArgumentError("'at' is not a time");
  }
  if (!query.jid.empty()) {
    if (absl::Status s = CheckName("jid", query.jid); !s.ok()) return s;
  }
  if (!query.model.empty()) {
    if (absl::Status s = CheckName("model", query.model); !s.ok()) return s;
  }
  const int page_size =
      query.page_size <= 0 ? kDefaultPageSize : std::min(query.page_size, kMaxPageSize);
  const absl::Time window_start = WindowStart(query.window, query.at);

  PageCursor cursor{.window = query.window,
                    .window_start = absl::ToUnixSeconds(window_start),
                    .jid_filter = query.jid,
                    .model_filter = query.model};
  if (!query.page_token.empty()) {
    absl::StatusOr<PageCursor> previous = page_tokens_.Decode(query.page_token);
    if (!previous.ok()) return previous.status();
    if (previous->window != cursor.window || previous->window_start != cursor.window_start ||
        previous->jid_filter != cursor.jid_filter ||
        previous->model_filter != cursor.model_filter) {
      return absl::InvalidArgumentError(
          "page_token belongs to another query (jid, model, window or time differ)");
    }
    cursor = *std::move(previous);
  }

  UsagePage page;
  base::MutexLock lock(&db_mu_);
  base::SqliteStatement& select =
      *usage_pages_[(query.jid.empty() ? 0 : 1) | (query.model.empty() ? 0 : 2)];
  absl::Cleanup reset = [&select] { select.Reset(); };
  absl::Status s = select.BindText(1, WindowName(query.window));
  if (s.ok()) s = select.BindInt64(2, cursor.window_start);
  if (s.ok()) s = select.BindText(3, query.jid);
  if (s.ok()) s = select.BindText(4, query.model);
  if (s.ok()) s = select.BindText(5, cursor.after_jid);
  if (s.ok()) s = select.BindText(6, cursor.after_model);
  if (s.ok()) s = select.BindInt64(7, page_size + 1);
  if (!s.ok()) return s;
  for (;;) {
    absl::StatusOr<bool> row = select.Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    if (static_cast<int>(page.rows.size()) == page_size) {
      // There is more: the token resumes after the last row served.
      cursor.after_jid = page.rows.back().jid;
      cursor.after_model = page.rows.back().model;
      page.next_page_token = page_tokens_.Encode(cursor);
      break;
    }
    page.rows.push_back(UsageRow{.jid = select.ColumnText(0),
                                 .model = select.ColumnText(1),
                                 .window = query.window,
                                 .window_start = window_start,
                                 .input_tokens = select.ColumnInt64(2),
                                 .output_tokens = select.ColumnInt64(3),
                                 .calls = select.ColumnInt64(4),
                                 .cost_usd = select.ColumnDouble(5),
                                 .unpriced_calls = select.ColumnInt64(6)});
  }
  return page;
}

absl::Status UsageLedger::SetLimit(const Limit& limit) {
  if (absl::Status s = CheckLimit(limit); !s.ok()) return s;
  {
    base::MutexLock lock(&db_mu_);
    absl::StatusOr<base::SqliteStatement> upsert = db_->Prepare(
        "INSERT OR REPLACE INTO limits (jid, model, window, max_tokens, mode) "
        "VALUES (?1, ?2, ?3, ?4, ?5)");
    if (!upsert.ok()) return upsert.status();
    absl::Status s = upsert->BindText(1, limit.jid);
    if (s.ok()) s = upsert->BindText(2, limit.model);
    if (s.ok()) s = upsert->BindText(3, WindowName(limit.window));
    if (s.ok()) s = upsert->BindInt64(4, limit.max_tokens);
    if (s.ok()) s = upsert->BindText(5, LimitModeName(limit.mode));
    // An operator's change is durable when it is acknowledged: fsync this commit.
    if (s.ok()) s = db_->Exec("PRAGMA synchronous=FULL");
    if (s.ok()) s = upsert->Run();
    const absl::Status restore = db_->Exec("PRAGMA synchronous=NORMAL");
    if (!s.ok()) return s;
    if (!restore.ok()) return restore;
  }
  base::MutexLock lock(&state_mu_);
  StoreLimitInMemory(limit);
  return absl::OkStatus();
}

absl::Status UsageLedger::RemoveLimit(const std::string& jid, const std::string& model,
                                      Window window) {
  if (!IsWindow(window)) return absl::InvalidArgumentError("window is not valid");
  {
    base::MutexLock lock(&db_mu_);
    absl::StatusOr<base::SqliteStatement> remove =
        db_->Prepare("DELETE FROM limits WHERE jid = ?1 AND model = ?2 AND window = ?3");
    if (!remove.ok()) return remove.status();
    absl::Status s = remove->BindText(1, jid);
    if (s.ok()) s = remove->BindText(2, model);
    if (s.ok()) s = remove->BindText(3, WindowName(window));
    if (s.ok()) s = db_->Exec("PRAGMA synchronous=FULL");
    if (s.ok()) s = remove->Run();
    const absl::Status restore = db_->Exec("PRAGMA synchronous=NORMAL");
    if (!s.ok()) return s;
    if (!restore.ok()) return restore;
    if (db_->Changes() == 0) {
      return absl::NotFoundError(absl::StrCat("no ", AbslView(WindowName(window)),
                                              " limit for jid '", jid, "' and model '", model,
                                              "'"));
    }
  }
  base::MutexLock lock(&state_mu_);
  EraseLimitInMemory(jid, model, window);
  return absl::OkStatus();
}

void UsageLedger::StoreLimitInMemory(const Limit& limit) {
  std::vector<Limit>& limits = limit.jid.empty() ? model_limits_ : jid_limits_[limit.jid];
  auto it = std::lower_bound(limits.begin(), limits.end(), limit, LimitOrder);
  if (it != limits.end() && !LimitOrder(limit, *it)) {
    *it = limit;
  } else {
    limits.insert(it, limit);
  }
}

void UsageLedger::EraseLimitInMemory(const std::string& jid, const std::string& model,
                                     Window window) {
  auto erase_from = [&](std::vector<Limit>& limits) {
    std::erase_if(limits, [&](const Limit& l) {
      return l.jid == jid && l.model == model && l.window == window;
    });
  };
  if (jid.empty()) {
    erase_from(model_limits_);
    return;
  }
  const auto it = jid_limits_.find(jid);
  if (it == jid_limits_.end()) return;
  erase_from(it->second);
  if (it->second.empty()) jid_limits_.erase(it);
}

std::vector<Limit> UsageLedger::Limits() const {
  base::MutexLock lock(&state_mu_);
  std::vector<Limit> limits = model_limits_;
  for (const auto& [jid, own] : jid_limits_) limits.insert(limits.end(), own.begin(), own.end());
  std::sort(limits.begin(), limits.end(), LimitOrder);
  return limits;
}

LimitState UsageLedger::StateOf(const Limit& limit, absl::Time now, bool is_default) const {
  LimitState state{.limit = limit,
                   .window_start = WindowStart(limit.window, now),
                   .window_end = WindowEnd(limit.window, now),
                   .is_default = is_default};
  state.used = counters_.Used(limit.jid, limit.model, limit.window, state.window_start);
  state.reached = state.used >= limit.max_tokens;
  return state;
}

std::optional<Limit> UsageLedger::DefaultLimitFor(std::string_view jid) const {
  if (default_daily_tokens_ <= 0 || jid.empty()) return std::nullopt;
  const auto it = jid_limits_.find(AbslView(jid));
  if (it != jid_limits_.end()) {
    for (const Limit& limit : it->second) {
      if (limit.model.empty() && limit.window == Window::kDay) return std::nullopt;
    }
  }
  return Limit{.jid = std::string(jid),
               .model = "",
               .window = Window::kDay,
               .max_tokens = default_daily_tokens_,
               .mode = LimitMode::kBlock};
}

Decision UsageLedger::Check(std::string_view jid, std::string_view model, absl::Time now) const {
  Decision decision;
  base::MutexLock lock(&state_mu_);
  auto consider = [&](const Limit& limit,
                      bool is_default) ABSL_EXCLUSIVE_LOCKS_REQUIRED(state_mu_) {
    LimitState state = StateOf(limit, now, is_default);
    if (!state.reached) return;
    if (limit.mode == LimitMode::kWarn) {
      decision.warnings.push_back(std::move(state));
    } else if (!decision.blocking || state.window_end > decision.blocking->window_end) {
      decision.blocked = true;
      decision.blocking = std::move(state);
    }
  };
  if (std::optional<Limit> fallback = DefaultLimitFor(jid)) consider(*fallback, true);
  if (!jid.empty()) {
    if (const auto it = jid_limits_.find(AbslView(jid)); it != jid_limits_.end()) {
      for (const Limit& limit : it->second) {
        if (limit.model.empty() || limit.model == model) consider(limit, false);
      }
    }
  }
  for (const Limit& limit : model_limits_) {
    if (limit.model == model) consider(limit, false);
  }
  return decision;
}

std::vector<LimitState> UsageLedger::LimitStates(std::string_view jid, absl::Time now) const {
  std::vector<LimitState> states;
  base::MutexLock lock(&state_mu_);
  if (std::optional<Limit> fallback = DefaultLimitFor(jid)) {
    states.push_back(StateOf(*fallback, now, true));
  }
  if (!jid.empty()) {
    if (const auto it = jid_limits_.find(AbslView(jid)); it != jid_limits_.end()) {
      for (const Limit& limit : it->second) states.push_back(StateOf(limit, now, false));
    }
  }
  for (const Limit& limit : model_limits_) states.push_back(StateOf(limit, now, false));
  return states;
}

void UsageLedger::SetDefaultDailyTokens(int64_t tokens) {
  base::MutexLock lock(&state_mu_);
  default_daily_tokens_ = std::max<int64_t>(0, tokens);
}

void UsageLedger::SetPrices(PriceTable prices) {
  base::MutexLock lock(&state_mu_);
  prices_ = std::move(prices);
}

PriceTable::Estimate UsageLedger::EstimateCost(std::string_view model, int64_t input_tokens,
                                               int64_t output_tokens) const {
  base::MutexLock lock(&state_mu_);
  return prices_.Cost(model, input_tokens, output_tokens);
}

int64_t UsageLedger::default_daily_tokens() const {
  base::MutexLock lock(&state_mu_);
  return default_daily_tokens_;
}

}  // namespace herald::ledger
