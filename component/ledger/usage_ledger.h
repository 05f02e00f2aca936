// component/ledger/usage_ledger.h
//
// UsageLedger is Herald's token ledger (SPEC Q1, Q2, C4). Every LLM call is recorded with its
// tokens in and out and a cost estimate, per JID and model, in fixed UTC windows (day, ISO
// week, month, lifetime: usage_window.h); usage can be read back per window with cursor
// paging; and limits per JID and/or model and window are checked before each call: `block`
// limits stop the call, `warn` limits are reported for the caller to emit an event. A default
// per-JID daily limit ([quota] daily_tokens) applies to every JID without a day limit of its
// own.
//
// Storage is a UsageStore (usage_store.h): one SQLite database in WAL mode by default, or the
// PostgreSQL database that several instances share (docs/ledger.md has both schemas): per-window
// totals, the limits, and the key that authenticates page tokens. Figures and limits survive
// restarts; Check's in-memory counters are rebuilt from the store at Open.
//
// A call near a block limit sets its estimated tokens aside while it runs (Admit, and Confirm
// with a store several instances share; then Settle or Cancel), so that two calls cannot both
// spend the last tokens of a limit (docs/ledger.md, "Reservations").
//
// Threads: every method is thread-safe. Record, Settle, Confirm, Usage, SetLimit and
// RemoveLimit do blocking I/O — call them from a worker thread. Check, Admit, LimitStates,
// Limits and SetDefaultDailyTokens touch memory only and may run on the I/O loop.
//
//   auto ledger = UsageLedger::Open("./data/ledger.db", prices, /*default_daily_tokens=*/100000);
//   Decision d = (*ledger)->Check("alice@example.org", "openai:gpt-4o", absl::Now());
//   if (d.blocked) { /* answer with a friendly limit message; no LLM call */ }
//   for (const LimitState& w : d.warnings) { /* emit a "limit reached" event */ }
//   ... after the call, on a worker thread:
//   absl::Status s = (*ledger)->Record({.jid = "alice@example.org", .model = "openai:gpt-4o",
//                                       .input_tokens = 1200, .output_tokens = 300,
//                                       .time = absl::Now()});
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "component/base/mutex.h"
#include "component/ledger/page_token.h"
#include "component/ledger/price_table.h"
#include "component/ledger/usage_counters.h"
#include "component/ledger/usage_store.h"
#include "component/ledger/usage_window.h"

namespace herald::ledger {

struct UsageQuery {
  std::string jid;    // "" = every JID
  std::string model;  // "" = every model
  Window window = Window::kDay;
  absl::Time at;           // the window that contains this time (set it: absl::Time() is 1970)
  int page_size = 100;     // clamped to 1..1000; <= 0 means the default, 100
  std::string page_token;  // opaque cursor from a previous page; "" = first page
};

struct UsagePage {
  std::vector<UsageRow> rows;   // ordered by (jid, model), bytewise
  std::string next_page_token;  // "" at the end
};

struct LimitState {
  Limit limit;
  int64_t used = 0;  // tokens counted by the limit in the current window
  // Block-mode limits: tokens set aside for calls still running (Admit; with a shared store
  // and Confirm, those of every instance).
  int64_t reserved = 0;
  absl::Time window_start, window_end;  // the current window (end: when it resets)
  bool reached = false;                 // used + reserved >= limit.max_tokens
  bool is_default = false;              // the [quota] daily_tokens default for this JID
};

struct Decision {
  bool blocked = false;
  // The block-mode limit that blocks; when several do, the one whose window ends last (the
  // time from which the JID can be served again is blocking->window_end).
  std::optional<LimitState> blocking;
  std::vector<LimitState> warnings;  // warn-mode limits reached (the caller emits events)
};

// A call that Admit let through with tokens set aside against the block limits that apply to
// it, until Settle records what the call used or Cancel gives the tokens back. Exactly one of
// the two must follow, once.
struct Reservation {
  std::string jid;
  std::string model;
  int64_t tokens = 0;  // 0: no block limit applies, nothing was set aside
  absl::Time time;
  // The block limits the call was admitted under; with a shared store, Confirm checks them
  // against every instance's calls.
  std::vector<Limit> limits;
  bool default_first = false;  // limits[0] is the [quota] daily_tokens default
  int64_t stored_id = 0;       // the store's reservation, after Confirm
};

struct Admission {
  Decision decision;
  Reservation reservation;  // when !decision.blocked
  // The store is shared and block limits apply: call Confirm (on a worker) before the call.
  bool needs_confirmation = false;
};

class UsageLedger {
 public:
  // Opens or creates the database at `path` (creating parent folders with mode 0700; the
  // database file and its WAL get mode 0600). default_daily_tokens: the [quota] daily_tokens
  // default per-JID daily limit in block mode (0 = none); an explicit limit with this JID,
  // model "" and window day replaces the default for that JID. Fails on a database that is
  // not a ledger, or one written by a newer Herald (FailedPrecondition).
  static absl::StatusOr<std::unique_ptr<UsageLedger>> Open(const std::string& path,
                                                           PriceTable prices,
                                                           int64_t default_daily_tokens);
  // The same over any store (a PostgresUsageStore for several instances).
  static absl::StatusOr<std::unique_ptr<UsageLedger>> Open(std::unique_ptr<UsageStore> store,
                                                           PriceTable prices,
                                                           int64_t default_daily_tokens);
  ~UsageLedger();
  UsageLedger(const UsageLedger&) = delete;
  UsageLedger& operator=(const UsageLedger&) = delete;

  // Adds one call to the totals of the four windows containing record.time (one transaction)
  // and to Check's counters. InvalidArgument for an empty or over-long jid or model, one with
  // control characters, negative token counts or more than 2^40 in one call, or an infinite
  // time. While the store is away (Unavailable, Aborted, ResourceExhausted: a database
  // restarting, a full disk) the call is counted and kept in memory, and recorded at the next
  // Record or Refresh that finds the store back; up to 100,000 calls wait so, after which
  // Record fails. Blocking I/O: call it from a worker thread.
  absl::Status Record(const UsageRecord& record) ABSL_LOCKS_EXCLUDED(state_mu_);

  // One page of the totals in the window of kind query.window containing query.at, one row per
  // (jid, model), ordered stably by (jid, model). InvalidArgument for a page_token that this
  // ledger did not give for this same query (same jid and model filters, window kind and window).
  absl::StatusOr<UsagePage> Usage(const UsageQuery& query) const;

  // Limits persist in the database, durably before these return. SetLimit replaces the limit
  // with the same (jid, model, window); InvalidArgument on a bad limit (both jid and model "",
  // negative max_tokens, bad names). RemoveLimit: NotFound if there is none.
  absl::Status SetLimit(const Limit& limit) ABSL_LOCKS_EXCLUDED(state_mu_);
  absl::Status RemoveLimit(const std::string& jid, const std::string& model, Window window)
      ABSL_LOCKS_EXCLUDED(state_mu_);
  // The explicit limits (not the default), ordered by (jid, model, window).
  std::vector<Limit> Limits() const ABSL_LOCKS_EXCLUDED(state_mu_);

  // Whether a call by `jid` to `model` may go ahead at `now`. Memory only (no SQLite, no
  // blocking I/O): call it on the I/O loop before every LLM call. The limits that apply are
  // those of the JID (for every model, or for this one), those of this model for every JID,
  // and the default daily limit unless the JID has its own (jid, "", day) limit. A limit is
  // reached when used >= max_tokens; checking comes before the call, so the call that crosses
  // a limit is served and the next one is not.
  Decision Check(std::string_view jid, std::string_view model, absl::Time now) const
      ABSL_LOCKS_EXCLUDED(state_mu_);

  // Check, and, when the call may go ahead, `tokens` (what the call may use, estimated) set
  // aside in this instance's memory until Settle or Cancel: a second call checked meanwhile
  // counts them, so two calls cannot both spend the last tokens of a block limit. A call is
  // let through when used + reserved is below max_tokens, the same rule as Check's. Memory
  // only: call it on the I/O loop.
  Admission Admit(std::string_view jid, std::string_view model, int64_t tokens, absl::Time now)
      ABSL_LOCKS_EXCLUDED(state_mu_);
  // With a shared store (Admission::needs_confirmation): sets the tokens aside in the store
  // too, after counting every instance's calls and reservations under the limits (one
  // instance at a time per limit). A refusal gives the tokens back and returns the blocking
  // limit's state. While the store is away the call is let through on what this instance
  // knows (logged). Blocking I/O: call it from a worker thread.
  Decision Confirm(Reservation& reservation) ABSL_LOCKS_EXCLUDED(state_mu_);
  // Records `record` (as Record) and gives the reservation back, in one transaction with a
  // shared store. Blocking I/O: call it from a worker thread.
  absl::Status Settle(const Reservation& reservation, const UsageRecord& record)
      ABSL_LOCKS_EXCLUDED(state_mu_);
  // Gives the reservation back: the call was not made, or failed. Blocking I/O when the
  // reservation is in the store (stored_id != 0); memory only otherwise.
  void Cancel(const Reservation& reservation) ABSL_LOCKS_EXCLUDED(state_mu_);
  // How long a stored reservation counts if its instance dies before settling it.
  static constexpr absl::Duration kReservationHold = absl::Minutes(10);

  // Every limit that can apply to this jid, with its state: its own limits, the per-model
  // limits for every JID, and the default (is_default) unless replaced. For /usage.
  std::vector<LimitState> LimitStates(std::string_view jid, absl::Time now) const
      ABSL_LOCKS_EXCLUDED(state_mu_);

  // Re-reads the limits and the totals of the windows containing `now` from the store, for
  // Check: with a store several instances share, this is how one instance learns of the
  // calls and the limit changes of the others (main runs it every few seconds). Between two
  // refreshes an instance counts its own calls at once and the others' at the next one; a
  // change it makes itself while a refresh reads may be missed until the refresh after.
  // Blocking I/O: call it from a worker thread.
  absl::Status Refresh(absl::Time now) ABSL_LOCKS_EXCLUDED(state_mu_);
  // Calls kept while the store was away and not recorded yet.
  size_t kept_records() const ABSL_LOCKS_EXCLUDED(state_mu_);

  // Config reload: the [quota] daily_tokens default (0 = none), and the price table used for
  // the cost of calls recorded from now on (stored costs do not change).
  void SetDefaultDailyTokens(int64_t tokens) ABSL_LOCKS_EXCLUDED(state_mu_);
  void SetPrices(PriceTable prices) ABSL_LOCKS_EXCLUDED(state_mu_);
  // What `input_tokens` and `output_tokens` of `model` cost with the prices in force.
  PriceTable::Estimate EstimateCost(std::string_view model, int64_t input_tokens,
                                    int64_t output_tokens) const ABSL_LOCKS_EXCLUDED(state_mu_);
  int64_t default_daily_tokens() const ABSL_LOCKS_EXCLUDED(state_mu_);

 private:
  UsageLedger(std::unique_ptr<UsageStore> store, PriceTable prices, int64_t default_daily_tokens,
              std::string page_token_key);

  absl::Status Load() ABSL_LOCKS_EXCLUDED(state_mu_);
  // Record, giving back `settles` (if not null) when the call counts instead, in the store's
  // transaction when it is stored.
  absl::Status RecordSettling(const UsageRecord& record, const Reservation* settles)
      ABSL_LOCKS_EXCLUDED(state_mu_);
  Decision CheckLocked(std::string_view jid, std::string_view model, absl::Time now) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(state_mu_);
  // The block limits that apply to a call (the default among them unless replaced).
  std::vector<Limit> BlockLimitsFor(std::string_view jid, std::string_view model) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(state_mu_);
  void Unreserve(const Reservation& reservation) ABSL_EXCLUSIVE_LOCKS_REQUIRED(state_mu_);
  // Records the calls kept while the store was away, oldest first, until one fails.
  absl::Status RecordKept() ABSL_LOCKS_EXCLUDED(state_mu_);
  // Check's counters and limits become exactly these.
  void Replace(const std::vector<Limit>& limits,
               const std::vector<UsageStore::WindowTokens>& windows) ABSL_LOCKS_EXCLUDED(state_mu_);

  LimitState StateOf(const Limit& limit, absl::Time now, bool is_default) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(state_mu_);
  std::optional<Limit> DefaultLimitFor(std::string_view jid) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(state_mu_);
  void StoreLimitInMemory(const Limit& limit) ABSL_EXCLUSIVE_LOCKS_REQUIRED(state_mu_);
  void EraseLimitInMemory(const std::string& jid, const std::string& model, Window window)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(state_mu_);

  const PageTokenCodec page_tokens_;

  // Thread-safe itself; the ledger never holds state_mu_ while it does I/O.
  const std::unique_ptr<UsageStore> store_;

  // What Check reads.
  mutable base::Mutex state_mu_;
  UsageCounters counters_ ABSL_GUARDED_BY(state_mu_);
  // The last Confirm could not reach the store (logged once per outage).
  std::atomic<bool> confirm_failing_{false};
  // Tokens set aside for this instance's running calls (Admit), in the same shape.
  UsageCounters reserved_ ABSL_GUARDED_BY(state_mu_);
  // Calls counted while the store was away, waiting to be recorded, with their cost.
  struct KeptRecord {
    UsageRecord record;
    PriceTable::Estimate cost;
    int64_t settles = 0;  // the stored reservation it settles, if any
  };
  std::deque<KeptRecord> kept_ ABSL_GUARDED_BY(state_mu_);
  // Limits with a jid, by jid; limits for a model and every JID.
  absl::flat_hash_map<std::string, std::vector<Limit>> jid_limits_ ABSL_GUARDED_BY(state_mu_);
  std::vector<Limit> model_limits_ ABSL_GUARDED_BY(state_mu_);
  int64_t default_daily_tokens_ ABSL_GUARDED_BY(state_mu_);
  PriceTable prices_ ABSL_GUARDED_BY(state_mu_);
};

}  // namespace herald::ledger
