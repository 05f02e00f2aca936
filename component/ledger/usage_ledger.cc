#include "component/ledger/usage_ledger.h"

#include <algorithm>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "component/base/absl_string_view.h"
#include "component/ledger/sqlite_usage_store.h"
#include "glog/logging.h"

namespace herald::ledger {
namespace {

constexpr size_t kMaxNameBytes = 3071;  // a JID's longest; models are much shorter
constexpr int64_t kMaxTokensPerCall = int64_t{1} << 40;
constexpr int kDefaultPageSize = 100;
constexpr int kMaxPageSize = 1000;
// Calls kept in memory while the store is away (about 200 bytes each).
constexpr size_t kMaxKeptRecords = 100000;
// The store is away (PostgreSQL restarting, the network cut, a full disk), not refusing the
// call: worth keeping the call for later.
bool IsOutage(const absl::Status& status) {
  return absl::IsUnavailable(status) || absl::IsAborted(status) ||
         absl::IsResourceExhausted(status);
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

}  // namespace

UsageLedger::UsageLedger(std::unique_ptr<UsageStore> store, PriceTable prices,
                         int64_t default_daily_tokens, std::string page_token_key)
    : page_tokens_(std::move(page_token_key)),
      store_(std::move(store)),
      default_daily_tokens_(std::max<int64_t>(0, default_daily_tokens)),
      prices_(std::move(prices)) {}

UsageLedger::~UsageLedger() = default;

absl::StatusOr<std::unique_ptr<UsageLedger>> UsageLedger::Open(const std::string& path,
                                                               PriceTable prices,
                                                               int64_t default_daily_tokens) {
  absl::StatusOr<std::unique_ptr<SqliteUsageStore>> store = SqliteUsageStore::Open(path);
  if (!store.ok()) return store.status();
  return Open(*std::move(store), std::move(prices), default_daily_tokens);
}

absl::StatusOr<std::unique_ptr<UsageLedger>> UsageLedger::Open(std::unique_ptr<UsageStore> store,
                                                               PriceTable prices,
                                                               int64_t default_daily_tokens) {
  absl::StatusOr<std::string> key = store->PageTokenKey();
  if (!key.ok()) return key.status();
  std::unique_ptr<UsageLedger> ledger(
      new UsageLedger(std::move(store), std::move(prices), default_daily_tokens, *std::move(key)));
  if (absl::Status s = ledger->Load(); !s.ok()) return s;
  return ledger;
}

absl::Status UsageLedger::Load() {
  absl::StatusOr<std::vector<Limit>> limits = store_->ReadLimits();
  if (!limits.ok()) return limits.status();
  absl::StatusOr<std::vector<UsageStore::WindowTokens>> latest = store_->ReadLatestWindows();
  if (!latest.ok()) return latest.status();
  Replace(*limits, *latest);
  return absl::OkStatus();
}

absl::Status UsageLedger::Refresh(absl::Time now) {
  if (absl::Status s = RecordKept(); !s.ok()) return s;
  absl::StatusOr<std::vector<Limit>> limits = store_->ReadLimits();
  if (!limits.ok()) return limits.status();
  absl::StatusOr<std::vector<UsageStore::WindowTokens>> current = store_->ReadWindowsAt(now);
  if (!current.ok()) return current.status();
  Replace(*limits, *current);
  return absl::OkStatus();
}

void UsageLedger::Replace(const std::vector<Limit>& limits,
                          const std::vector<UsageStore::WindowTokens>& windows) {
  UsageCounters counters;
  for (const UsageStore::WindowTokens& window : windows) {
    counters.AddToWindow(window.jid, window.model, window.window, window.start, window.tokens);
  }
  base::MutexLock lock(&state_mu_);
  // Calls not in the store yet count all the same.
  for (const KeptRecord& kept : kept_) {
    counters.Add(kept.record.jid, kept.record.model, kept.record.time,
                 kept.record.input_tokens + kept.record.output_tokens);
  }
  counters_ = std::move(counters);
  jid_limits_.clear();
  model_limits_.clear();
  for (const Limit& limit : limits) StoreLimitInMemory(limit);
}

namespace {

absl::Status CheckRecord(const UsageRecord& record) {
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
  return absl::OkStatus();
}

}  // namespace

absl::Status UsageLedger::Record(const UsageRecord& record) {
  if (absl::Status s = CheckRecord(record); !s.ok()) return s;
  return RecordSettling(record, nullptr);
}

absl::Status UsageLedger::Settle(const Reservation& reservation, const UsageRecord& record) {
  if (absl::Status s = CheckRecord(record); !s.ok()) {
    Cancel(reservation);
    return s;
  }
  return RecordSettling(record, &reservation);
}

absl::Status UsageLedger::RecordSettling(const UsageRecord& record, const Reservation* settles) {
  const int64_t stored_id = settles == nullptr ? 0 : settles->stored_id;
  PriceTable::Estimate cost;
  {
    base::MutexLock lock(&state_mu_);
    cost = prices_.Cost(record.model, record.input_tokens, record.output_tokens);
  }
  // Calls kept while the store was away go first, so that they are not overtaken for long.
  (void)RecordKept();
  absl::Status added =
      stored_id != 0 ? store_->Settle(stored_id, record, cost) : store_->Add(record, cost);
  if (!added.ok()) {
    base::MutexLock lock(&state_mu_);
    if (settles != nullptr) Unreserve(*settles);
    if (!IsOutage(added)) return added;
    if (kept_.size() >= kMaxKeptRecords) {
      return absl::ResourceExhaustedError(
          absl::StrCat("the ledger's store is away and ", kept_.size(),
                       " calls already wait for it: ", added.message()));
    }
    if (kept_.empty()) {
      LOG(WARNING) << "ledger: the store is away; calls are counted in memory and recorded "
                      "when it is back: "
                   << added;
    }
    kept_.push_back(KeptRecord{record, cost, stored_id});
    counters_.Add(record.jid, record.model, record.time,
                  record.input_tokens + record.output_tokens);
    return absl::OkStatus();
  }
  // Adding is order-independent, so two Records that commit in one order and count in the
  // other leave the same totals. The call's reservation gives way to what it used at once.
  base::MutexLock lock(&state_mu_);
  if (settles != nullptr) Unreserve(*settles);
  counters_.Add(record.jid, record.model, record.time, record.input_tokens + record.output_tokens);
  return absl::OkStatus();
}

absl::Status UsageLedger::RecordKept() {
  for (;;) {
    KeptRecord next;
    {
      base::MutexLock lock(&state_mu_);
      if (kept_.empty()) return absl::OkStatus();
      next = std::move(kept_.front());
      kept_.pop_front();
    }
    // Already in the counters since it was kept.
    absl::Status added = next.settles != 0 ? store_->Settle(next.settles, next.record, next.cost)
                                           : store_->Add(next.record, next.cost);
    if (!added.ok()) {
      base::MutexLock lock(&state_mu_);
      kept_.push_front(std::move(next));
      return added;
    }
    base::MutexLock lock(&state_mu_);
    if (kept_.empty()) LOG(INFO) << "ledger: the store is back; every kept call is recorded";
  }
}

size_t UsageLedger::kept_records() const {
  base::MutexLock lock(&state_mu_);
  return kept_.size();
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

  absl::StatusOr<std::vector<UsageRow>> rows =
      store_->ReadPage({.window = query.window,
                        .window_start = cursor.window_start,
                        .jid = query.jid,
                        .model = query.model,
                        .after_jid = cursor.after_jid,
                        .after_model = cursor.after_model,
                        .limit = page_size + 1});
  if (!rows.ok()) return rows.status();
  UsagePage page;
  if (static_cast<int>(rows->size()) > page_size) {
    // There is more: the token resumes after the last row served.
    rows->resize(page_size);
    cursor.after_jid = rows->back().jid;
    cursor.after_model = rows->back().model;
    page.next_page_token = page_tokens_.Encode(cursor);
  }
  page.rows = *std::move(rows);
  return page;
}

absl::Status UsageLedger::SetLimit(const Limit& limit) {
  if (absl::Status s = CheckLimit(limit); !s.ok()) return s;
  if (absl::Status s = store_->PutLimit(limit); !s.ok()) return s;
  base::MutexLock lock(&state_mu_);
  StoreLimitInMemory(limit);
  return absl::OkStatus();
}

absl::Status UsageLedger::RemoveLimit(const std::string& jid, const std::string& model,
                                      Window window) {
  if (!IsWindow(window)) return absl::InvalidArgumentError("window is not valid");
  absl::StatusOr<bool> removed = store_->DeleteLimit(jid, model, window);
  if (!removed.ok()) return removed.status();
  if (!*removed) {
    return absl::NotFoundError(absl::StrCat("no ", AbslView(WindowName(window)), " limit for jid '",
                                            jid, "' and model '", model, "'"));
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
  if (limit.mode == LimitMode::kBlock) {
    state.reserved = reserved_.Used(limit.jid, limit.model, limit.window, state.window_start);
  }
  state.reached = state.used + state.reserved >= limit.max_tokens;
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
  base::MutexLock lock(&state_mu_);
  return CheckLocked(jid, model, now);
}

Decision UsageLedger::CheckLocked(std::string_view jid, std::string_view model,
                                  absl::Time now) const {
  Decision decision;
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

std::vector<Limit> UsageLedger::BlockLimitsFor(std::string_view jid, std::string_view model) const {
  std::vector<Limit> limits;
  if (std::optional<Limit> fallback = DefaultLimitFor(jid)) limits.push_back(*fallback);
  if (!jid.empty()) {
    if (const auto it = jid_limits_.find(AbslView(jid)); it != jid_limits_.end()) {
      for (const Limit& limit : it->second) {
        if (limit.mode == LimitMode::kBlock && (limit.model.empty() || limit.model == model)) {
          limits.push_back(limit);
        }
      }
    }
  }
  for (const Limit& limit : model_limits_) {
    if (limit.mode == LimitMode::kBlock && limit.model == model) limits.push_back(limit);
  }
  return limits;
}

Admission UsageLedger::Admit(std::string_view jid, std::string_view model, int64_t tokens,
                             absl::Time now) {
  Admission admission;
  base::MutexLock lock(&state_mu_);
  admission.decision = CheckLocked(jid, model, now);
  if (admission.decision.blocked) return admission;
  std::vector<Limit> limits = BlockLimitsFor(jid, model);
  if (limits.empty()) return admission;
  admission.reservation = Reservation{.jid = std::string(jid),
                                      .model = std::string(model),
                                      .tokens = std::clamp<int64_t>(tokens, 1, kMaxTokensPerCall),
                                      .time = now,
                                      .limits = std::move(limits),
                                      .default_first = DefaultLimitFor(jid).has_value()};
  reserved_.Add(jid, model, now, admission.reservation.tokens);
  admission.needs_confirmation = store_->shared();
  return admission;
}

Decision UsageLedger::Confirm(Reservation& reservation) {
  if (reservation.tokens == 0 || reservation.stored_id != 0 || !store_->shared()) return {};
  absl::StatusOr<UsageStore::ReserveResult> result = store_->Reserve({.jid = reservation.jid,
                                                                      .model = reservation.model,
                                                                      .tokens = reservation.tokens,
                                                                      .time = reservation.time,
                                                                      .limits = reservation.limits,
                                                                      .hold = kReservationHold});
  if (!result.ok()) {
    // Once per outage, not once per call.
    if (!confirm_failing_.exchange(true)) {
      LOG(WARNING) << "ledger: no reservations in the store; calls go ahead on this "
                      "instance's counts until it is back: "
                   << result.status();
    }
    return {};
  }
  if (confirm_failing_.exchange(false)) {
    LOG(INFO) << "ledger: reservations are made in the store again";
  }
  if (result->id != 0) {
    reservation.stored_id = result->id;
    return {};
  }
  Decision decision;
  for (size_t i = 0; i < reservation.limits.size() && i < result->limits.size(); ++i) {
    const Limit& limit = reservation.limits[i];
    LimitState state{.limit = limit,
                     .used = result->limits[i].used,
                     .reserved = result->limits[i].reserved,
                     .window_start = WindowStart(limit.window, reservation.time),
                     .window_end = WindowEnd(limit.window, reservation.time)};
    state.reached = state.used + state.reserved >= limit.max_tokens;
    state.is_default = reservation.default_first && i == 0;
    if (!state.reached) continue;
    if (!decision.blocking || state.window_end > decision.blocking->window_end) {
      decision.blocked = true;
      decision.blocking = std::move(state);
    }
  }
  base::MutexLock lock(&state_mu_);
  Unreserve(reservation);
  reservation.tokens = 0;  // given back: a Cancel after this is harmless
  return decision;
}

void UsageLedger::Cancel(const Reservation& reservation) {
  {
    base::MutexLock lock(&state_mu_);
    Unreserve(reservation);
  }
  if (reservation.stored_id == 0) return;
  // A reservation left behind only holds tokens until kReservationHold has passed.
  if (absl::Status s = store_->Unreserve(reservation.stored_id); !s.ok()) {
    LOG(WARNING) << "ledger: a reservation was not given back (it lapses by itself): " << s;
  }
}

void UsageLedger::Unreserve(const Reservation& reservation) {
  if (reservation.tokens <= 0) return;
  // At the reservation's own time: a counter that moved on to a later window ignores it, as
  // it never counted it.
  reserved_.Add(reservation.jid, reservation.model, reservation.time, -reservation.tokens);
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
