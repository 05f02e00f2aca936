// component/ledger/usage_store.h
//
// Where the usage ledger keeps its figures and limits: the interface UsageLedger writes through,
// and the records that cross it. Two stores exist: SqliteUsageStore, one file on this host (the
// default), and PostgresUsageStore, one database that several instances share ([storage]
// backend = "postgresql", docs/scale-out.md). The ledger validates everything before a store
// sees it; a store only keeps and finds.
//
// Threads: a store is thread-safe. Its calls block on I/O: worker threads only.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "component/ledger/price_table.h"
#include "component/ledger/usage_window.h"

namespace herald::ledger {

enum class LimitMode { kBlock, kWarn };

// "block" | "warn", and back (nullopt for anything else).
std::string_view LimitModeName(LimitMode mode);
std::optional<LimitMode> ParseLimitMode(std::string_view name);

// One LLM call.
struct UsageRecord {
  std::string jid;  // bare JID of the user (or a room JID, or "api:<name>" for gRPC conversations)
  std::string model;  // "<provider>:<model>" as the router reports it
  int64_t input_tokens = 0;
  int64_t output_tokens = 0;
  absl::Time time;  // when the call was made; it counts in the windows that contain this time
};

// The totals of one (jid, model) in one window. Rows are always per (jid, model): a query for
// every JID or every model returns one row per pair, never a sum.
struct UsageRow {
  std::string jid;
  std::string model;
  Window window = Window::kDay;
  absl::Time window_start;
  int64_t input_tokens = 0, output_tokens = 0, calls = 0;
  // Estimated with the price table in force at each call; calls to a model without a price
  // count 0 here and are counted in unpriced_calls (so "$0" can be told from "unknown").
  double cost_usd = 0;
  int64_t unpriced_calls = 0;
};

// A limit on the tokens (input + output) used in a window. Who is counted:
//   jid set, model ""    — that JID's calls to every model;
//   jid set, model set   — that JID's calls to that model;
//   jid "", model set    — every JID's calls to that model, together (a cap on the model).
// jid and model cannot both be "". max_tokens 0 blocks (or warns about) every call it covers.
struct Limit {
  std::string jid;
  std::string model;
  Window window = Window::kDay;  // any window, lifetime included
  int64_t max_tokens = 0;
  LimitMode mode = LimitMode::kBlock;

  friend bool operator==(const Limit&, const Limit&) = default;
};

class UsageStore {
 public:
  virtual ~UsageStore() = default;

  // The secret that authenticates page tokens: made (32 random bytes) the first time and kept,
  // so that tokens outlive a restart and every instance accepts every other's.
  virtual absl::StatusOr<std::string> PageTokenKey() = 0;

  // Every explicit limit, ordered by (jid, model, window).
  virtual absl::StatusOr<std::vector<Limit>> ReadLimits() = 0;

  // The tokens (input + output) of one (jid, model) in one window.
  struct WindowTokens {
    Window window = Window::kDay;
    std::string jid;
    std::string model;
    absl::Time start;
    int64_t tokens = 0;
  };
  // For each (window kind, jid, model), its latest window: all that the ledger's pre-call
  // check needs when it opens, whatever the time.
  virtual absl::StatusOr<std::vector<WindowTokens>> ReadLatestWindows() = 0;
  // Every (jid, model)'s totals in the four windows that contain `at`: what a running ledger
  // re-reads to see the calls other instances recorded (an index range each).
  virtual absl::StatusOr<std::vector<WindowTokens>> ReadWindowsAt(absl::Time at) = 0;

  // Adds one call to the totals of the four windows that contain record.time, all or none.
  virtual absl::Status Add(const UsageRecord& record, const PriceTable::Estimate& cost) = 0;

  // Up to `limit` rows of one window, (jid, model) after the cursor, bytewise ordered. "" for
  // jid or model means every one.
  struct PageRequest {
    Window window = Window::kDay;
    int64_t window_start = 0;  // Unix seconds
    std::string_view jid;
    std::string_view model;
    std::string_view after_jid;
    std::string_view after_model;
    int limit = 100;
  };
  virtual absl::StatusOr<std::vector<UsageRow>> ReadPage(const PageRequest& request) = 0;

  // Durable when they return. PutLimit replaces the limit with the same (jid, model, window);
  // DeleteLimit says whether there was one.
  virtual absl::Status PutLimit(const Limit& limit) = 0;
  virtual absl::StatusOr<bool> DeleteLimit(const std::string& jid, const std::string& model,
                                           Window window) = 0;

  // Reservations: tokens set aside for a call near a block limit while it runs, so that two
  // instances cannot both spend the last tokens of one limit. Only a store that several
  // instances share keeps them; on any other the ledger's memory is the whole truth, and these
  // calls are Unimplemented.
  virtual bool shared() const { return false; }

  struct ReserveRequest {
    std::string_view jid;
    std::string_view model;
    int64_t tokens = 0;
    absl::Time time;            // the call's: it counts in the windows that contain it
    std::vector<Limit> limits;  // the block limits that apply to the call
    absl::Duration hold;        // how long the reservation counts if never settled
  };
  struct ReserveResult {
    int64_t id = 0;  // the reservation, to settle or give back; 0: refused
    // For each of request.limits: its tokens used and reserved (by every instance) in its
    // current window, before this reservation. A limit with used + reserved >= max_tokens
    // refuses the reservation.
    struct Held {
      int64_t used = 0;
      int64_t reserved = 0;
    };
    std::vector<Held> limits;
  };
  // Counts the limits' tokens and, when none is reached, sets `tokens` aside; one at a time
  // per limit across every instance.
  virtual absl::StatusOr<ReserveResult> Reserve(const ReserveRequest& request);
  // Adds the call (as Add) and drops reservation `id`, all or none.
  virtual absl::Status Settle(int64_t id, const UsageRecord& record,
                              const PriceTable::Estimate& cost);
  // Drops reservation `id` (the call was not made, or failed).
  virtual absl::Status Unreserve(int64_t id);
};

}  // namespace herald::ledger
